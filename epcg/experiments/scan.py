"""The generic ``scan`` job kind: Algorithm 1 over any :class:`~epcg.search.scan.ScanSpace`.

A job file names the space by import path, and optionally the rows of
parameters it is built from::

    name = "digits"
    space = "mypkg.spaces:digit_sums"     # a ScanSpace, or a function of the row's parameters
    rows = [{base = 10}, {base = 7}]
    chunk_size = 1_000_000
    ignore = 0                            # a score that is never the minimum
    top = 10                              # also keep the 10 highest scores

One stage per row; its tasks are rank ranges. A task stores the ranks at its
own minimum (and its top ranks) and returns the rest of its
:class:`~epcg.search.scan.ScanPartial` as its record; the reduction merges the
partials with :meth:`ScanPartial.merge`. The helpers :func:`store_partial` and
:func:`merge_stage` are shared with the built-in Witness job.

Plugin mistakes are UserErrors raised before anything is written (the space is
built and its evaluator compiled in :func:`plan`), or, for an evaluator that
raises, by the task that meets the failing rank.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pydantic

from epcg.experiments.base import JobConfig, stage_records
from epcg.figures import save_figure
from epcg.runtime.errors import UserError
from epcg.runtime.plan import Plan, Stage, Task, split_range
from epcg.runtime.registry import load_object
from epcg.runtime.store import RunDir
from epcg.search.scan import (
    ArgMin,
    CompileError,
    EvaluationError,
    Histogram,
    Reductions,
    ScanPartial,
    ScanSpace,
    TopK,
    check,
    scan_range,
)

MAX_LISTED = 100
"""Ranks at the minimum listed per row in results.json (all are stored in the run's Zarr store)."""


class Config(JobConfig):
    """A scan job: a space (by import path), rows of its parameters, and the reductions to keep."""

    domain: Literal["scan"] = "scan"
    space: str
    """``"package.module:NAME"``: a ScanSpace, or a function of the row's parameters returning one."""
    rows: list[dict[str, Any]] = pydantic.Field(default_factory=lambda: [{}], min_length=1)
    """Keyword arguments of the space function, one table per row (``[{}]`` for a plain ScanSpace)."""
    chunk_size: int = pydantic.Field(1_000_000, ge=1, le=1 << 32)
    """Ranks per task."""
    min: bool = True
    """Keep the lowest score and every rank reaching it."""
    ignore: int | None = None
    """A score never taken as the minimum (e.g. 0 = no solution)."""
    top: int = pydantic.Field(0, ge=0, le=10_000)
    """Keep this many highest scores (ties: lower rank first)."""
    histogram: bool = True
    """Keep how many ranks have each score."""
    histogram_cap: int | None = pydantic.Field(None, ge=0)
    """With ``histogram``: scores above this are only counted together."""
    figures_per_row: int = pydantic.Field(8, ge=0, le=400)
    """Ranks at the minimum drawn per row, when the space has ``render``."""

    def reductions(self) -> Reductions:
        return Reductions(min=self.min, ignore=self.ignore, top=self.top,
                          histogram=self.histogram, cap=self.histogram_cap)


def row_name(index: int) -> str:
    return f"row-{index:03d}"


def space_of(path: str, params: dict[str, Any]) -> ScanSpace:
    """The space a job row asks for (built once per process); a UserError if it is not one."""
    return _space(path, json.dumps(params, sort_keys=True))


@lru_cache(maxsize=64)
def _space(path: str, params_json: str) -> ScanSpace:
    params = json.loads(params_json)
    obj = load_object(path)
    if isinstance(obj, ScanSpace):
        if params:
            raise UserError(f"space {path!r} is a ScanSpace, not a function: its rows take no parameters, got {params}")
        return obj
    if not callable(obj):
        raise UserError(f"space {path!r} is not an epcg.search.ScanSpace (it is a {type(obj).__name__})")
    try:
        space = obj(**params)
    except Exception as exc:  # noqa: BLE001 - the user's function, reported in one line
        raise UserError(f"space {path!r} with {params}: {type(exc).__name__}: {_first_line(exc)}") from None
    if not isinstance(space, ScanSpace):
        raise UserError(f"space {path!r} with {params} returned a {type(space).__name__}, not an epcg.search.ScanSpace")
    return space


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else ""


def _checked(config: Config, params: dict[str, Any]) -> ScanSpace:
    space = space_of(config.space, params)
    try:
        check(space)
    except (CompileError, EvaluationError) as exc:
        raise UserError(str(exc)) from None
    return space


def plan(config: Config) -> Plan:
    """One stage per row; builds every row's space and compiles its evaluator first."""
    stages = []
    for i, params in enumerate(config.rows):
        space = _checked(config, params)
        name = row_name(i)
        label = ", ".join(f"{k}={v}" for k, v in params.items()) or space.name
        stages.append(Stage(name, split_range(name, space.max_rank, config.chunk_size), label=label,
                            size=space.max_rank))
    return Plan(tuple(stages))


def warm_up(config: Config) -> None:
    """Build each row's space and compile its evaluator, and its ``evaluate_range`` on one rank, once per worker."""
    for params in config.rows:
        space = _checked(config, params)
        if space.evaluate_range is not None and space.max_rank:
            scan_range(space, 0, 1, config.reductions())


def run_task(config: Config, task: Task, run: RunDir) -> dict[str, Any]:
    params = config.rows[int(task.stage.removeprefix("row-"))]
    space = space_of(config.space, params)
    try:
        part = scan_range(space, task.start, task.stop, config.reductions())
    except EvaluationError as exc:
        raise UserError(str(exc)) from None
    return store_partial(run, f"{task.stage}/partial/{task.index:05d}", part)


INLINE_RANKS = 1024
"""A partial with at most this many ranks at its minimum keeps them in its record (sealed and fsynced with it)
rather than in Zarr arrays of its own, which cost a task several file creations and fsyncs."""


def store_partial(run: RunDir, prefix: str, part: ScanPartial) -> dict[str, Any]:
    """Store a partial's rank arrays under ``prefix`` (small ones in the record); return the record."""
    record: dict[str, Any] = {"count": part.count, "ignored": part.ignored}
    if part.argmin is not None:
        ranks, payload = part.argmin.ranks, part.argmin.payload
        record["min"] = part.argmin.value
        record["at_min"] = int(len(ranks))
        record["payload"] = bool(len(payload))
        if len(ranks) <= INLINE_RANKS:
            record["inline"] = {"ranks": ranks.tolist(), "payload": payload.tolist(), "dtype": str(payload.dtype)}
        else:
            run.write_array(f"{prefix}/ranks", ranks)
            if len(payload):
                run.write_array(f"{prefix}/payload", payload)
    if part.top is not None:
        record["top"] = [[int(r), int(s)] for r, s in zip(part.top.ranks, part.top.scores)]
        record["top_k"] = part.top_k
    if part.histogram is not None:
        record["histogram"] = [[score, n] for score, n in part.histogram.counts.items()]
        record["histogram_above"] = part.histogram.above
        record["histogram_cap"] = part.histogram.cap
    return record


def _load_partial(run: RunDir, prefix: str, record: dict[str, Any], best: int | None) -> ScanPartial:
    """A stored partial; its ranks at the minimum are read only when they are at ``best``."""
    argmin = top = histogram = None
    if "min" in record:
        value = record["min"]
        if value is not None and value == best and "inline" in record:
            inline = record["inline"]
            argmin = ArgMin(value, np.array(inline["ranks"], dtype=np.uint64),
                            np.array(inline["payload"], dtype=inline["dtype"]))
        elif value is not None and value == best:
            ranks = run.read_array(f"{prefix}/ranks")
            payload = run.read_array(f"{prefix}/payload") if record["payload"] else np.zeros(0, np.int64)
            argmin = ArgMin(value, ranks, payload)
        else:
            argmin = ArgMin(value, np.zeros(0, dtype=np.uint64)) if value is not None else ArgMin.empty()
    if "top" in record:
        pairs = np.array(record["top"], dtype=np.int64).reshape(-1, 2)
        top = TopK(pairs[:, 1], pairs[:, 0].astype(np.uint64))
    if "histogram" in record:
        histogram = Histogram({s: n for s, n in record["histogram"]}, record["histogram_above"],
                              record["histogram_cap"])
    return ScanPartial(record["count"], record["ignored"], argmin, top, histogram, record.get("top_k", 0))


def merge_stage(plan: Plan, stage: str, records: dict[str, dict], run: RunDir) -> ScanPartial:
    """The merged partial of one stage's tasks, from their records and stored ranks."""
    tasks = plan.by_name[stage].tasks
    recs = [r["result"] for r in stage_records(plan, stage, records)]
    best = ArgMin.best([r.get("min") for r in recs])
    return ScanPartial.merge([
        _load_partial(run, f"{stage}/partial/{task.index:05d}", rec, best) for task, rec in zip(tasks, recs)
    ])


def histogram_json(histogram: Histogram | None) -> dict[str, int] | None:
    """A histogram as a results.json mapping, score (as text) → ranks."""
    return None if histogram is None else {str(score): n for score, n in histogram.counts.items()}


def reduce(config: Config, plan: Plan, records: dict[str, dict], run: RunDir) -> dict[str, Any]:
    rows = []
    for i, params in enumerate(config.rows):
        name = row_name(i)
        merged = merge_stage(plan, name, records, run)
        row: dict[str, Any] = {"row": name, "params": params, "ranks": plan.by_name[name].size,
                               "count": merged.count, "ignored": merged.ignored}
        if merged.argmin is not None:
            run.write_array(f"{name}/at_min/ranks", merged.argmin.ranks)
            row.update({"min": merged.argmin.value, "at_min": int(len(merged.argmin.ranks)),
                        "first_at_min": merged.argmin.ranks[:MAX_LISTED].tolist(),
                        "store": f"store.zarr/{name}/at_min"})
        if merged.top is not None:
            row["top"] = [{"rank": int(r), "score": int(s)} for r, s in zip(merged.top.ranks, merged.top.scores)]
        if merged.histogram is not None:
            row["histogram"] = histogram_json(merged.histogram)
            row["histogram_above"] = merged.histogram.above
        row["seconds"] = round(sum(r["seconds"] for r in stage_records(plan, name, records)), 4)
        rows.append(row)
    return {"space": config.space, "rows": rows}


def report(config: Config, results: dict[str, Any], run: RunDir) -> tuple[str, list[Path]]:
    lines = [f"# {config.name}: scan of {config.space}", "",
             "| row | parameters | ranks | min | at min | top score | distinct scores | seconds |",
             "|---|---|---|---|---|---|---|---|"]
    for row in results["rows"]:
        params = ", ".join(f"{k}={v}" for k, v in row["params"].items()) or "–"
        top = row["top"][0]["score"] if row.get("top") else "–"
        distinct = len(row["histogram"]) if row.get("histogram") is not None else "–"
        lines.append(f"| {row['row']} | {params} | {row['ranks']:,} | {row.get('min', '–')} | "
                     f"{row.get('at_min', '–')} | {top} | {distinct} | {row['seconds']} |")
    lines += ["", "`min` is the lowest score (ignoring the job's `ignore` score), `at min` how many ranks "
              "reach it; all of them are stored under `store.zarr/<row>/at_min`."]
    return "\n".join(lines) + "\n", _figures(config, results, run)


def _figures(config: Config, results: dict[str, Any], run: RunDir) -> list[Path]:
    """Pictures of the first ranks at each row's minimum, through the space's ``render``."""
    written: list[Path] = []
    for params, row in zip(config.rows, results["rows"]):
        space = space_of(config.space, params)
        if space.render is None or not config.figures_per_row:
            continue
        for rank in row.get("first_at_min", [])[: config.figures_per_row]:
            obj = space.decode(rank) if space.decode is not None else rank
            picture = space.render(obj)
            run.figures_dir.mkdir(parents=True, exist_ok=True)
            stem = run.figures_dir / f"{row['row']}-rank-{rank}"
            if isinstance(picture, str):
                stem.with_suffix(".svg").write_text(picture)
                written.append(stem.with_suffix(".svg"))
            else:
                written += save_figure(picture, stem)
    return written
