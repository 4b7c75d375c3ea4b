"""Witness panels with the game's own symbols (``kind = "rules"``): every placement of a row, scanned.

A row is a table: a board and how many of each symbol it places, e.g.
``{size = "4x4", hexagons = 2, triangles = 2, exits = "border"}`` (the keys are
:class:`RowSpec`'s; ``docs/witness-rules.md`` has one example per symbol). One
stage per row, a task per rank range of its placements; each task runs
Algorithm 1 with the fused kernel of ``domain/rule_kernel.py`` and the
reduction merges the partials as the other Witness scans do: the solution-count
histogram, the fewest solutions on a solvable panel and every panel there with
its longest solution, and ``keep`` bands.

>>> c = Config.model_validate({"name": "t", "domain": "witness", "kind": "rules",
...                            "rows": [{"size": "3x3", "triangles": 2}]})
>>> [row.name for row in c.parsed_rows()], c.parsed_rows()[0].max_rank
(['3x3-t2'], 324)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import numpy as np
import pydantic

from epcg.games.witness.domain.rule_scan import puzzle_space, solution_path
from epcg.games.witness.domain.rule_tables import MAX_PATHS, universe_size
from epcg.games.witness.domain.rules import COLOUR_NAMES, RuleRow, decode
from epcg.games.witness.rows import MAX_PUZZLES
from epcg.kinds.base import JobConfig, stage_records
from epcg.kinds.keep import Keeps, store_kept
from epcg.kinds.scan import histogram_json, merge_stage, store_partial
from epcg.runtime.kind import JobKind
from epcg.runtime.readout import compute_seconds
from epcg.runtime.plan import Plan, Stage, Task, split_range
from epcg.runtime.store import RunDir
from epcg.search.scan import Reductions, scan_range

Places = Literal["corner", "corners", "border", "any"] | list[str]


class RowSpec(pydantic.BaseModel):
    """One row of a rules job as the job file writes it; unknown keys are errors."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)
    size: str = pydantic.Field(pattern=r"^[1-9]x[1-9]$")
    """The board, ``"WxH"`` (cells)."""
    name: str = pydantic.Field("", pattern=r"^([A-Za-z0-9][A-Za-z0-9_.+-]{0,63})?$")
    """The row's name (default: made from its keys, e.g. ``4x4-h2-t2-xborder``)."""
    hexagons: int = pydantic.Field(0, ge=0)
    gaps: int = pydantic.Field(0, ge=0)
    triangles: int = pydantic.Field(0, ge=0)
    squares: int = pydantic.Field(0, ge=0)
    stars: int = pydantic.Field(0, ge=0)
    eliminations: int = pydantic.Field(0, ge=0)
    tetris: int = pydantic.Field(0, ge=0)
    negatives: int = pydantic.Field(0, ge=0)
    triangle_counts: list[int] = [1, 2, 3]
    colours: int = 2
    pieces: list[str] = ["#"]
    negative_pieces: list[str] = ["#"]
    rotate: bool = False
    starts: Places = "corner"
    start_count: int = 1
    exits: Places = "corner"
    exit_count: int = 1

    def row(self) -> RuleRow:
        """The row it describes; ValueError names what does not fit the board."""
        w, h = (int(t) for t in self.size.split("x"))
        values = self.model_dump(exclude={"size", "name"})
        for key in ("triangle_counts", "pieces", "negative_pieces"):
            values[key] = tuple(values[key])
        for key in ("starts", "exits"):
            if isinstance(values[key], list):
                values[key] = tuple(values[key])
        return RuleRow(width=w, height=h, label=self.name, **values)


def parse_row(spec: RowSpec) -> RuleRow:
    """A row, checked against what one row may scan: its placements and its paths."""
    row = spec.row()
    if row.max_rank > MAX_PUZZLES:
        raise ValueError(f"row {row.name} has {row.max_rank:,} placements; epcg scans at most 2^40 a row")
    paths = universe_size(row.width, row.height, row.start_places, row.exit_places)
    if paths > MAX_PATHS:
        raise ValueError(f"row {row.name}: its starts and exits allow {paths:,} paths; at most {MAX_PATHS:,}")
    if paths == 0:
        raise ValueError(f"row {row.name}: no path joins its starts and exits")
    return row


class Config(JobConfig, Keeps):
    """A rules job: its rows; ``keep = [{solutions = [1, 2]}]`` stores every panel with 1 or 2 solutions."""

    KEEP_SCORE = "solutions"

    domain: Literal["witness"]
    kind: Literal["rules"]
    rows: list[RowSpec] = pydantic.Field(min_length=1)
    chunk_size: int = pydantic.Field(2_000_000, ge=1, le=1 << 32)
    """Placements per task."""
    figures_per_row: int = pydantic.Field(24, ge=0, le=400)
    """Panels drawn per row (those at the row's minimum, longest solutions first)."""
    decoded_per_row: int = pydantic.Field(8, ge=0, le=10_000)
    """Panels written out decoded in results.json per row."""

    @pydantic.field_validator("rows")
    @classmethod
    def _rows(cls, rows: list[RowSpec]) -> list[RowSpec]:
        names = []
        for i, spec in enumerate(rows):
            try:
                names.append(parse_row(spec).name)
            except ValueError as exc:
                raise ValueError(f"row {i + 1} ({spec.size}): {exc}") from None
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"rows repeat {', '.join(repeated)}: give each a different name")
        return rows

    def parsed_rows(self) -> list[RuleRow]:
        return [parse_row(spec) for spec in self.rows]

    def reductions(self) -> Reductions:
        return Reductions(min=True, ignore=0, histogram=True, keep=self.bands(), keep_cap=self.keep_cap)


COARSEN = ("chunk_size",)
"""Keys the runtime may scale up to bound the task count: results do not depend on them."""


def plan(config: Config) -> Plan:
    stages = []
    for row in config.parsed_rows():
        tasks = split_range(row.name, row.max_rank, config.chunk_size)
        stages.append(Stage(row.name, tasks, label=f"rules {row.name}", size=row.max_rank))
    return Plan(tuple(stages))


SAMPLE_SLICES = 8
"""Evenly spaced slices of a row's ranks timed by :func:`estimate`."""
SAMPLE_WIDTH = 512
"""Placements per slice (fewer if the row is smaller)."""


def estimate(config: Config) -> dict:
    """Per row: memory for its tables, the CPU seconds of building them (every worker does, once) and of its
    scan, from a few slices of its ranks timed in this process (CPU seconds of this thread)."""
    import time

    from epcg.games.witness.domain.rule_scan import compiled
    from epcg.runtime.estimate import StageCost

    reductions = config.reductions()
    scan_range(puzzle_space(RuleRow(width=1, height=1, triangles=1)), 0, 1, reductions)  # compile before timing
    out = {}
    for row in config.parsed_rows():
        began = time.thread_time()
        space = puzzle_space(row)
        setup = time.thread_time() - began
        width = max(1, min(SAMPLE_WIDTH, row.max_rank // SAMPLE_SLICES))
        starts = sorted({row.max_rank * i // SAMPLE_SLICES for i in range(SAMPLE_SLICES)})
        began = time.thread_time()
        sampled = 0
        for a in starts:
            stop = min(a + width, row.max_rank)
            scan_range(space, a, stop, reductions)
            sampled += stop - a
        per = (time.thread_time() - began) / max(sampled, 1)
        t = compiled(row).tables
        memory = t.rows.nbytes + t.regions.nbytes + t.touch.nbytes + t.lengths.nbytes
        out[row.name] = StageCost(peak_memory=2 * memory, cpu_seconds=per * row.max_rank, setup_seconds=setup)
    return out


def warm_up(config: Config) -> None:
    """Compile the kernels on a tiny row (numba caches them on disk), then build every row's tables."""
    tiny = RuleRow(width=1, height=1, triangles=1)
    scan_range(puzzle_space(tiny), 0, 1, config.reductions())
    for row in config.parsed_rows():
        puzzle_space(row)


def _row(config: Config, stage: str) -> RuleRow:
    return next(row for row in config.parsed_rows() if row.name == stage)


def run_task(config: Config, task: Task, run: RunDir) -> dict[str, Any]:
    row = _row(config, task.stage)
    part = scan_range(puzzle_space(row), task.start, task.stop, config.reductions())
    return store_partial(run, f"{task.stage}/partial/{task.index:05d}", part)


def reduce(config: Config, plan: Plan, records: dict[str, dict], run: RunDir) -> dict[str, Any]:
    return {"kind": "rules", "rows": [_reduce_row(config, plan, row, records, run) for row in config.parsed_rows()]}


def _reduce_row(config: Config, plan: Plan, row: RuleRow, records: dict, run: RunDir) -> dict[str, Any]:
    merged = merge_stage(plan, row.name, records, run)
    ranks = merged.argmin.ranks.astype(np.uint64)
    longest = merged.argmin.payload.astype(np.uint8)
    run.arrays.write_array(f"{row.name}/at_min/ranks", ranks)
    run.arrays.write_array(f"{row.name}/at_min/longest", longest)
    top = int(longest.max()) if len(longest) else None
    order = np.lexsort((ranks, -longest.astype(np.int64)))
    out: dict[str, Any] = {
        "name": row.name,
        "width": row.width,
        "height": row.height,
        "symbols": symbol_counts(row),
        "puzzles": row.max_rank,
        "examined": merged.count,
        "solvable": merged.count - merged.ignored,
        "min_solutions": merged.argmin.value,
        "puzzles_at_min": int(len(ranks)),
        "longest_solution": top,
        "puzzles_at_longest": int(np.count_nonzero(longest == top)) if top is not None else 0,
        "seconds": round(compute_seconds(stage_records(plan, row.name, records)), 4),
        "store": f"store.zarr/{row.name}/at_min",
        "first": [decoded(row, int(ranks[i])) for i in order[: config.decoded_per_row]],
        "solution_counts": histogram_json(merged.histogram),
        "solution_counts_above": merged.histogram.above,
        "solution_counts_cap": merged.histogram.cap,
    }
    if merged.kept:
        out["kept"] = store_kept(run, row.name, merged.kept)
    return out


def symbol_counts(row: RuleRow) -> dict[str, Any]:
    """What a row places, as its job file's keys (those that are not 0)."""
    keys = ("hexagons", "gaps", "triangles", "squares", "stars", "eliminations", "tetris", "negatives")
    out: dict[str, Any] = {k: getattr(row, k) for k in keys if getattr(row, k)}
    if row.start_places != (row.geometry.start,) or row.start_count != 1:
        out["starts"] = f"{row.start_count} of {len(row.start_places)}"
    if row.exit_places != (row.geometry.goal,) or row.exit_count != 1:
        out["exits"] = f"{row.exit_count} of {len(row.exit_places)}"
    return out


def _xy(row: RuleRow, vertex: int) -> str:
    x, y = row.geometry.vertex_xy(vertex)
    return f"{x},{y}"


def decoded(row: RuleRow, rank: int) -> dict[str, Any]:
    """A placement written out: every symbol, its solution count and longest solution (vertices ``"x,y"``)."""
    panel = decode(row, rank)
    g = row.geometry
    path, count = solution_path(row, rank)
    symbols = []
    for cell, kind, value in panel.cell_symbols:
        entry: dict[str, Any] = {"cell": list(g.cell_xy(cell)), "symbol": kind}
        if kind == "triangle":
            entry["count"] = value
        elif kind in ("square", "star"):
            entry["colour"] = COLOUR_NAMES[value]
        elif kind in ("tetris", "negative"):
            entry["piece"] = (row.pieces if kind == "tetris" else row.negative_pieces)[value]
        symbols.append(entry)
    return {
        "rank": rank,
        "starts": [_xy(row, v) for v in panel.starts],
        "exits": [_xy(row, v) for v in panel.exits],
        "hexagons": [g.position_name(p) for p in panel.hexagons],
        "gaps": [g.position_name(g.num_vertices + e) for e in panel.gaps],
        "cells": symbols,
        "solutions": count,
        "solution": None if path is None else [_xy(row, v) for v in path],
    }


def report(config: Config, results: dict[str, Any], run: RunDir) -> tuple[str, list[Path]]:
    from epcg.games.witness.rule_report import figures, summary

    return summary(config, results), figures(config, results, run)


class RulesKind(JobKind):
    """The ``witness`` kind's scans of the game's own symbols (``kind = "rules"``): the functions and settings
    above as its hooks."""

    Config = Config
    COARSEN = COARSEN
    plan = staticmethod(plan)
    run_task = staticmethod(run_task)
    reduce = staticmethod(reduce)
    report = staticmethod(report)
    warm_up = staticmethod(warm_up)
    estimate = staticmethod(estimate)
