"""Witness design-space exploration: path counts and scans of must-cross, region and joint puzzles.

A paths row lists its board's paths where they can be listed (up to
``MAX_SIDE`` a side) and counts them with the frontier programme
(``epcg.games.witness.domain.frontier``) beyond, up to ``MAX_SLOTS - 2`` cells on
the shorter side and ``MAX_COUNT_SIDE`` on the longer; counts are exact
integers of any size. One stage per table row; a stage's tasks are rank ranges of its puzzle space
(a :class:`~epcg.search.scan.ScanSpace`, see ``epcg.games.witness.domain.scan``).
Each task runs Algorithm 1 (``epcg.search.scan_range``) and stores the ranks at
its own minimum number of solutions; the reduction merges the tasks' partials
exactly as the generic ``scan`` job kind does.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pydantic

from epcg.games.witness import paper
from epcg.games.witness.domain import scan
from epcg.games.witness.domain.bitsets import bitsets_for, build_seconds
from epcg.games.witness.domain.frontier import count_paths
from epcg.games.witness.domain.paths import paths_for
from epcg.games.witness.rows import Row, parse_row
from epcg.kinds.base import JobConfig, stage_records
from epcg.kinds.keep import Keeps, store_kept
from epcg.kinds.scan import histogram_json, merge_stage, store_partial
from epcg.runtime.kind import JobKind
from epcg.runtime.readout import compute_seconds
from epcg.runtime.plan import Plan, Stage, Task, split_range
from epcg.runtime.store import RunDir
from epcg.search.scan import Reductions, scan_range

Kind = Literal["paths", "must-cross", "regions", "joint"]
Cap = int | Literal["all"]
"""A solution-count cap: exact counts up to it, or "all"."""

COARSEN = ("chunk_size",)
"""Keys the runtime may scale up to bound the task count: results do not depend on them."""


class Config(JobConfig, Keeps):
    """A Witness job: one kind of constraint and the table rows to compute; ``keep = [{solutions = [2, 3]}]``
    stores every puzzle with 2 or 3 solutions too."""

    KEEP_SCORE = "solutions"
    KEEP_LOWEST = 1
    """A puzzle has at least one solution: 0 solutions is a constraint set nothing solves, never kept."""

    domain: Literal["witness"]
    kind: Kind
    rows: list[str] = pydantic.Field(min_length=1)
    chunk_size: int = pydantic.Field(2_000_000, ge=1, le=1 << 32)
    """Puzzles per task."""
    figures_per_row: int = pydantic.Field(24, ge=0, le=400)
    """Puzzles drawn per row (those at the row's minimum, longest solutions first)."""
    decoded_per_row: int = pydantic.Field(8, ge=0, le=10_000)
    """Puzzles written out decoded in results.json per row."""
    solution_counts: Cap | dict[str, Cap] = "all"
    """Puzzles per solution count in results.json: exact for counts up to this many, ``"all"`` (the
    default) for every count, or a table by board, e.g. ``{"5x5" = 1000}``: rows on a board it names
    use that cap, the others count every solution. A cap is cheaper where puzzles have many
    solutions (5x5: the kernel stops counting a puzzle above the cap and the row's minimum)."""
    split: Literal["cost", "ranks"] = "ranks"
    """How a must-cross row is cut into tasks: ranges of equal size, or of about equal estimated cost
    (``scan.cost_cuts``; measured no more even here, see docs/witness-beyond.md)."""

    @pydantic.field_validator("solution_counts")
    @classmethod
    def _cap(cls, caps: Cap | dict[str, Cap]) -> Cap | dict[str, Cap]:
        for board, cap in (caps.items() if isinstance(caps, dict) else [("", caps)]):
            if board and not re.fullmatch(r"[1-9][0-9]*x[1-9][0-9]*", board):
                raise ValueError(f"a board is written like '5x5', got {board!r}")
            if cap != "all" and cap < 0:
                raise ValueError("must be 'all' or a count >= 0")
        return caps

    def cap_for(self, row: Row) -> Cap:
        """The solution-count cap of ``row``'s board."""
        if isinstance(self.solution_counts, dict):
            return self.solution_counts.get(f"{row.width}x{row.height}", "all")
        return self.solution_counts

    def reductions(self, row: Row) -> Reductions:
        """Fewest non-zero solutions, every puzzle there, and the solution-count histogram of ``row``."""
        cap = self.cap_for(row)
        return Reductions(min=True, ignore=0, histogram=True, cap=None if cap == "all" else cap, keep=self.bands(),
                          keep_cap=self.keep_cap)

    @pydantic.field_validator("rows")
    @classmethod
    def _rows(cls, rows: list[str], info: pydantic.ValidationInfo) -> list[str]:
        kind = info.data.get("kind", "paths")
        names = [parse_row(text, kind).name for text in rows]
        if len(set(names)) != len(names):
            raise ValueError(f"rows repeat a board: {rows}")
        return rows

    @pydantic.model_validator(mode="after")
    def _keep_needs_puzzles(self) -> Config:
        if self.keep and self.kind == "paths":
            raise ValueError("keep stores puzzles of a score band, and a paths job has no puzzles; use must-cross, "
                             "regions or joint rows")
        return self

    def parsed_rows(self) -> list[Row]:
        return [parse_row(text, self.kind) for text in self.rows]


def notes(config: Config) -> list[str]:
    """What the job asks for that does nothing and looks like a slip: a solution-count cap for a board no row
    has, but whose width and height swapped is a row's board. A cap for a board merely absent (the job file's
    5x5 cap, with ``--set rows=...`` naming smaller boards) says nothing.

    >>> notes(Config(name="t", domain="witness", kind="must-cross", rows=["4x5:3"], solution_counts={"5x4": 9}))[0][:36]
    'solution_counts names 5x4, the board'
    >>> notes(Config(name="t", domain="witness", kind="must-cross", rows=["4x4:3"], solution_counts={"5x5": 9}))
    []
    """
    if not isinstance(config.solution_counts, dict):
        return []
    boards = sorted({f"{row.width}x{row.height}" for row in config.parsed_rows()})
    swapped = {"x".join(reversed(b.split("x"))) for b in boards}
    stray = [board for board in config.solution_counts if board not in boards and board in swapped]
    return [f"solution_counts names {', '.join(stray)}, the board of no row: it caps nothing "
            f"(the rows' boards: {', '.join(boards)})"] if stray else []


def plan(config: Config) -> Plan:
    stages = []
    for row in config.parsed_rows():
        if config.kind == "paths":
            tasks = (Task(row.name, 0, 0, 1),)
            size = 1
        else:
            size = scan.max_rank(config.kind, row.width, row.height, row.kernel_k)
            tasks = split_range(row.name, size, config.chunk_size)
            if config.kind == "must-cross" and config.split == "cost" and len(tasks) > 1:
                cuts = scan.cost_cuts(row.width, row.height, row.kernel_k, len(tasks))
                tasks = tuple(Task(row.name, i, a, b) for i, (a, b) in enumerate(zip(cuts, cuts[1:])))
        stages.append(Stage(row.name, tasks, label=f"{config.kind} {row.name}", size=size))
    return Plan(tuple(stages))


CALIBRATION_SLICES = 16
"""Evenly spaced slices of a row's ranks timed by :func:`task_seconds`."""
CALIBRATION_WIDTH = 2048
"""Puzzles per slice (fewer if a task is smaller)."""


def task_seconds(config: Config, row: Row) -> tuple[float, float]:
    """``(start, per_puzzle)``: CPU seconds of a task's first slice of ``row`` and of each puzzle after it.

    A task's minimum starts above every count, so its first puzzles are counted
    exactly; as it falls, each puzzle's count stops sooner (above the minimum or
    the solution-count cap, whichever is higher). So each of a few slices spread
    over the row is timed twice: a fresh walk of its first puzzles, as a task
    starts, and a walk of the next ones from the lowest minimum the fresh walks
    met, as the rest of a task runs. CPU seconds of this thread: other processes
    on the machine do not inflate them.
    """
    import time

    from epcg.runtime.estimate import calibrated

    kind, k = config.kind, row.kernel_k
    total = scan.max_rank(kind, row.width, row.height, k)
    width = _slice_width(config, total)
    cap = _cap(config, row)
    starts = [total * i // CALIBRATION_SLICES for i in range(CALIBRATION_SLICES)]
    met = [bitsets_for(row.width, row.height).num_paths + 1]

    def fresh() -> tuple[float, float]:
        began = time.thread_time()
        for a in starts:
            met[0] = min(met[0], scan.walk(kind, row.width, row.height, k, a, a + width, cap)[0])
        return CALIBRATION_SLICES, time.thread_time() - began

    def steady() -> tuple[float, float]:
        began = time.thread_time()
        for a in starts:
            scan.walk(kind, row.width, row.height, k, a + width, min(a + 2 * width, total), cap, met[0])
        return CALIBRATION_SLICES * width, time.thread_time() - began

    key = ("witness", kind, row.name, cap, width)
    return calibrated((*key, "start"), fresh), calibrated((*key, "steady"), steady)


def _slice_width(config: Config, total: int) -> int:
    """Puzzles in each calibration slice of a row of ``total`` (two per slice fit in the row and one in a task)."""
    return max(1, min(total // (2 * CALIBRATION_SLICES), config.chunk_size, CALIBRATION_WIDTH))


def _cap(config: Config, row: Row) -> int:
    """The kernel's histogram cap for ``row`` (0: no histogram)."""
    paths = bitsets_for(row.width, row.height).num_paths
    cap = config.cap_for(row)
    return paths if cap == "all" else min(cap, paths)


def estimate(config: Config) -> dict:
    """Per row: memory for the path bitsets (and the regions search's buffer); compute from the kernel timed on
    slices of the row (:func:`task_seconds`) and the tables' build, which every worker does once per board."""
    from epcg.runtime.estimate import StageCost

    out, boards = {}, set()
    bitsets_for(2, 2)  # load the table kernels first, as a worker's warm-up does, so they are not timed
    for row in config.parsed_rows():
        if config.kind == "paths":
            out[row.name] = _paths_cost(row)
            continue
        paths = len(paths_for(row.width, row.height))
        words = (paths + 63) // 64
        g = row.geometry
        board = (row.width, row.height)
        setup = 0.0 if board in boards else build_seconds(*board)
        boards.add(board)
        puzzles = scan.max_rank(config.kind, row.width, row.height, row.kernel_k)
        tasks = -(-puzzles // config.chunk_size)
        start, per_puzzle = task_seconds(config, row)
        width = _slice_width(config, puzzles)
        compute = tasks * start + max(puzzles - tasks * width, 0) * per_puzzle
        kr = row.k[-1] if config.kind in ("regions", "joint") else 0
        buffers = (kr * (1 << max(kr - 1, 0)) + g.num_positions + g.num_cells) * words * 8
        out[row.name] = StageCost(peak_memory=paths * 32 + buffers, cpu_seconds=compute, setup_seconds=setup)
    return out


def _paths_cost(row: Row) -> Any:
    """A listed row: its path list; a counted row: the frontier's states, which grow about 2.7-fold per cell
    of the shorter side (348 at 6x6, 124,447 at 12x12), 40 bytes each in the step's three arrays."""
    from epcg.runtime.estimate import StageCost

    if row.listed:
        paths = len(paths_for(row.width, row.height))
        return StageCost(bytes_written=paths, peak_memory=paths * 32, cpu_seconds=paths * 1e-6)
    short, long = sorted((row.width, row.height))
    states = 348 * 2.7 ** (short - 6)
    steps = 2 * (short + 1) * (long + 1)
    return StageCost(peak_memory=int(states * 200), cpu_seconds=states * steps * 2e-7)


def warm_up(config: Config) -> None:
    """Compile the path and scan kernels on a tiny board (numba caches them on disk), then build every row's
    path bitsets, so that no scan task carries the tables' cost (a paths row's one task is that cost)."""
    paths_for(2, 2)
    count_paths(2, 2)
    if config.kind != "paths":
        k = (1, 1) if config.kind == "joint" else 1
        for row in config.parsed_rows():
            scan_range(scan.puzzle_space(config.kind, 2, 2, k), 0, 1, config.reductions(row))
            bitsets_for(row.width, row.height)


def _row(config: Config, stage: str) -> Row:
    return next(row for row in config.parsed_rows() if row.name == stage)


def run_task(config: Config, task: Task, run: RunDir) -> dict[str, Any]:
    row = _row(config, task.stage)
    if config.kind == "paths":
        if not row.listed:
            return {"paths": count_paths(row.width, row.height), "listed": False}
        paths = paths_for(row.width, row.height)
        run.arrays.write_array(f"paths/{row.name}/length", paths.length)
        return {"paths": len(paths), "listed": True}
    space = scan.puzzle_space(config.kind, row.width, row.height, row.kernel_k)
    part = scan_range(space, task.start, task.stop, config.reductions(row))
    return store_partial(run, f"{task.stage}/partial/{task.index:05d}", part)


def reduce(config: Config, plan: Plan, records: dict[str, dict], run: RunDir) -> dict[str, Any]:
    rows = [
        _reduce_paths(row, stage_records(plan, row.name, records))
        if config.kind == "paths"
        else _reduce_scan(config, plan, row, records, run)
        for row in config.parsed_rows()
    ]
    return {"kind": config.kind, "rows": rows}


def _reduce_paths(row: Row, records: list[dict]) -> dict[str, Any]:
    return {
        "width": row.width,
        "height": row.height,
        "paths": records[0]["result"]["paths"],
        "listed": row.listed,
        "paper_paths": paper.PATHS.get((row.width, row.height)),
        "seconds": round(compute_seconds(records), 4),
    }


def _reduce_scan(config: Config, plan: Plan, row: Row, records: dict, run: RunDir) -> dict[str, Any]:
    stage = plan.by_name[row.name]
    recs = stage_records(plan, row.name, records)
    merged = merge_stage(plan, row.name, records, run)
    best = merged.argmin.value
    ranks = merged.argmin.ranks.astype(np.uint64)
    longest = merged.argmin.payload.astype(np.uint8)
    run.arrays.write_array(f"{row.name}/at_min/ranks", ranks)
    run.arrays.write_array(f"{row.name}/at_min/longest", longest)
    top = int(longest.max()) if len(longest) else None
    order = np.lexsort((ranks, -longest.astype(np.int64)))
    g = row.geometry
    out: dict[str, Any] = {
        "width": row.width,
        "height": row.height,
        "k": row.k[0] if len(row.k) == 1 else list(row.k),
        "positions": g.num_positions if config.kind != "regions" else g.num_cells,
        "puzzles": stage.size,
        "examined": merged.count,
        "solvable": merged.count - merged.ignored,
        "min_solutions": best,
        "puzzles_at_min": int(len(ranks)),
        "patterns_at_min": scan.count_patterns(config.kind, row.width, row.height, row.kernel_k, ranks),
        "longest_solution": top,
        "puzzles_at_longest": int(np.count_nonzero(longest == top)) if top is not None else 0,
        "seconds": round(compute_seconds(recs), 4),
        "store": f"store.zarr/{row.name}/at_min",
        "first": [_decoded(config, row, int(ranks[i])) for i in order[: config.decoded_per_row]],
        "solution_counts": histogram_json(merged.histogram),
        "solution_counts_above": merged.histogram.above,
        "solution_counts_cap": merged.histogram.cap,
    }
    if merged.kept:
        out["kept"] = store_kept(run, row.name, merged.kept)
    out.update(_paper_columns(config.kind, row))
    return out


def _decoded(config: Config, row: Row, rank: int) -> dict[str, Any]:
    """A puzzle at the minimum, decoded: constraints, solution count, longest solution."""
    g = row.geometry
    puzzle = scan.decode(config.kind, row.width, row.height, row.kernel_k, rank)
    paths = paths_for(row.width, row.height)
    sols = scan.solutions(paths, puzzle)
    return {
        "rank": rank,
        "must_cross": [g.position_name(p) for p in puzzle.cross],
        "squares": [
            {"cell": list(g.cell_xy(c)), "colour": "white" if colour else "black"}
            for c, colour in zip(puzzle.cells, puzzle.colours)
        ],
        "solutions": int(len(sols)),
        "solution": paths.moves(int(sols[0])) if len(sols) else None,
    }


def _paper_columns(kind: str, row: Row) -> dict[str, Any]:
    key = (row.width, row.height, *row.k)
    if kind == "must-cross" and key in paper.MUST_CROSS:
        n, m, s = paper.MUST_CROSS[key]
        return {"paper_puzzles": n, "paper_min_solutions": m, "paper_seconds": s}
    if kind == "regions" and key in paper.REGIONS:
        n, m, s = paper.REGIONS[key]
        return {"paper_puzzles": n, "paper_min_solutions": m, "paper_seconds": s}
    if kind == "joint" and key in paper.JOINT:
        n, at_min, at_longest, s, m = paper.JOINT[key]
        return {
            "paper_examined": n,
            "paper_min_solutions": m,
            "paper_puzzles_at_min": at_min,
            "paper_puzzles_at_longest": at_longest,
            "paper_seconds": s,
        }
    return {}


def report(config: Config, results: dict[str, Any], run: RunDir) -> tuple[str, list[Path]]:
    from epcg.games.witness.report import figures, summary

    written = [] if config.kind == "paths" else figures(config, results, run)
    return summary(config, results), written


class ScansKind(JobKind):
    """The ``witness`` kind's scans (``kind`` paths, must-cross, regions, joint): the functions and settings above
    as its hooks."""

    Config = Config
    COARSEN = COARSEN
    plan = staticmethod(plan)
    run_task = staticmethod(run_task)
    reduce = staticmethod(reduce)
    report = staticmethod(report)
    warm_up = staticmethod(warm_up)
    notes = staticmethod(notes)
    estimate = staticmethod(estimate)
