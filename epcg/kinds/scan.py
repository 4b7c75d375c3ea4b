"""The generic ``scan`` job kind: Algorithm 1 over any :class:`~epcg.search.scan.ScanSpace`.

A job file names the space by import path, and optionally the rows of
parameters it is built from::

    name = "digits"
    space = "mypkg.spaces:digit_sums"     # a ScanSpace, or a function of the row's parameters
    rows = [{base = 10}, {base = 7}]
    chunk_size = 1_000_000
    ignore = 0                            # a score that is never the minimum
    top = 10                              # also keep the 10 highest scores
    keep = [{score = [5, 7]}]             # and every rank scoring 5..7 (epcg.kinds.keep)

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
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pydantic

from epcg.kinds.base import JobConfig, named_space, stage_records
from epcg.kinds.designs import decoded_text
from epcg.kinds.keep import Keeps, kept_lines, kept_of_record, kept_record, store_kept
from epcg.kinds.results import ScanResults
from epcg.report.figures import save_figure
from epcg.runtime.errors import UserError
from epcg.runtime.kind import JobKind
from epcg.runtime.readout import compute_seconds
from epcg.runtime.plan import Plan, Stage, Task, split_range
from epcg.runtime.registry import Untrusted
from epcg.runtime.store import RunDir
from epcg.runtime.text import figure_text, markdown, markdown_code
from epcg.search.scan import (
    BLOCK,
    ArgMax,
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


class Config(JobConfig, Keeps):
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
    max: bool = False
    """Keep the highest score and every rank reaching it (all of them, unlike ``top``)."""
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
        return Reductions(min=self.min, ignore=self.ignore, top=self.top, histogram=self.histogram,
                          cap=self.histogram_cap, max=self.max, keep=self.bands(), keep_cap=self.keep_cap)


def row_name(index: int) -> str:
    return f"row-{index:03d}"


def space_of(path: str, params: dict[str, Any]) -> ScanSpace:
    """The space a job row asks for (built once per process); a UserError if it is not one."""
    return named_space(path, json.dumps(params, sort_keys=True), ScanSpace, UserError)


def drawn_space(path: str, params: dict[str, Any]) -> ScanSpace | None:
    """The row's space for decoding and drawing what a run found; None while reading a run that may not import
    it (:func:`~epcg.runtime.registry.reading`): its designs are then shown by rank, without text or picture."""
    try:
        return space_of(path, params)
    except Untrusted:
        return None


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


CALIBRATION_SLICES = 8
"""Rank ranges spread over a row that ``epcg plan`` times the evaluator on."""
CALIBRATION_WIDTH = 256
"""Ranks in each calibration range (fewer in a small row)."""


def _sample(config: Config, params: dict[str, Any], space: ScanSpace) -> tuple[float, ScanPartial]:
    """Seconds per rank of this row's evaluator with the job's reductions, timed on this machine now on
    ``CALIBRATION_SLICES`` ranges spread over the row (CPU seconds of this thread), and the ranges' partial."""
    import time

    from epcg.runtime.estimate import calibrated

    total = space.max_rank
    width = max(1, min(CALIBRATION_WIDTH, total // CALIBRATION_SLICES or total, config.chunk_size))
    starts = sorted({min(total - width, total * i // CALIBRATION_SLICES) for i in range(CALIBRATION_SLICES)})
    parts: list[ScanPartial] = []

    def measure() -> tuple[float, float]:
        began = time.thread_time()
        parts[:] = [scan_range(space, a, a + width, config.reductions()) for a in starts]
        return len(starts) * width, time.thread_time() - began

    key = ("scan", config.space, json.dumps(params, sort_keys=True), width, config.reductions())
    try:
        rate = calibrated(key, measure, budget=0.02)
    except EvaluationError as exc:
        raise UserError(str(exc)) from None
    if not parts:
        measure()
    return rate, ScanPartial.merge(parts)


def samples(payload: str) -> str:
    """Per row of the job ``payload`` (its config as JSON): ``[seconds per rank, ranks sampled, ignored, at the
    sample's minimum]`` (:func:`_sample`); run in a child process by :func:`estimate`."""
    config = Config.model_validate_json(payload)
    out = []
    for params in config.rows:
        space = _checked(config, params)
        if space.max_rank == 0:
            out.append([0.0, 0, 0, 0])
            continue
        rate, part = _sample(config, params, space)
        out.append([rate, part.count, part.ignored, len(part.argmin.ranks) if part.argmin is not None else 0])
    return json.dumps(out)


def estimate(config: Config) -> dict[str, Any]:
    """Per row: compute from the space's evaluator timed on a sample of its ranks (:func:`_sample`, in a child
    process: a kernel that crashes ends the plan with one line, not the client); memory for the space's data
    arrays and a block of scores; bytes for the ranks at the minimum, as often as the sample's minimum occurs in
    the sample (the sample's minimum is never below the row's, so usually more)."""
    from epcg.runtime.estimate import StageCost
    from epcg.runtime.isolated import call

    timed = json.loads(call("epcg.kinds.scan:samples", config.model_dump_json(),
                            f"timing the evaluator of {config.space} on a sample of its ranks at plan time"))
    out = {}
    for i, (params, (per_rank, count, ignored, at_sample_min)) in enumerate(zip(config.rows, timed)):
        space = _checked(config, params)
        total = space.max_rank
        if total == 0:
            out[row_name(i)] = StageCost(cpu_seconds=0.0)
            continue
        share = at_sample_min / max(count - ignored, 1)
        at_min = round(share * (total - total * ignored / max(count, 1)))
        data = sum(np.asarray(d).nbytes for d in space.data)
        block = min(config.chunk_size, BLOCK, total)
        task_at_min = min(round(share * block), block)
        out[row_name(i)] = StageCost(bytes_written=8 * at_min, peak_memory=data + 4 * 8 * block + 16 * task_at_min,
                                     cpu_seconds=per_rank * total)
    return out


def estimate_basis(config: Config) -> str:
    """How :func:`estimate` got its compute figures, for ``epcg plan``."""
    return (f"compute from each row's evaluator timed here on {CALIBRATION_SLICES} ranges of up to "
            f"{CALIBRATION_WIDTH} ranks spread over the row")


CHECK_FIRST = 50_000
"""Ranks at the start of each row that ``epcg run --check`` evaluates with bounds checks."""
CHECK_SPREAD = 1_000
"""Ranks of each of ``CALIBRATION_SLICES`` ranges spread over a row that ``--check`` evaluates too."""


def check_slice(config: Config) -> None:
    """Evaluate a first slice of every row, and slices spread over it, in this (checked) process: an evaluator
    that indexes out of bounds raises a UserError naming the rank."""
    for params in config.rows:
        space = _checked(config, params)
        total = space.max_rank
        ranges = [(0, min(CHECK_FIRST, total))]
        ranges += [(a, min(a + CHECK_SPREAD, total)) for a in
                   sorted({total * i // CALIBRATION_SLICES for i in range(1, CALIBRATION_SLICES)}) if a < total]
        for a, b in ranges:
            try:
                scan_range(space, a, b, config.reductions())
            except EvaluationError as exc:
                raise UserError(str(exc)) from None


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
        record.update(_store_extreme(run, prefix, part.argmin))
    if part.argmax is not None:
        record["argmax"] = _store_extreme(run, f"{prefix}/max", part.argmax)
    if part.top is not None:
        record["top"] = [[int(r), int(s)] for r, s in zip(part.top.ranks, part.top.scores)]
        record["top_k"] = part.top_k
    if part.histogram is not None:
        record["histogram"] = [[score, n] for score, n in part.histogram.counts.items()]
        record["histogram_above"] = part.histogram.above
        record["histogram_cap"] = part.histogram.cap
    if part.kept:
        record["kept"] = kept_record(run, prefix, part.kept)
    return record


def _store_extreme(run: RunDir, prefix: str, found: ArgMin) -> dict[str, Any]:
    """The record fields of an ArgMin or ArgMax; its ranks inline when few, else in arrays under ``prefix``."""
    ranks, payload = found.ranks, found.payload
    record: dict[str, Any] = {"min": found.value, "at_min": int(len(ranks)), "payload": bool(len(payload))}
    if len(ranks) <= INLINE_RANKS:
        record["inline"] = {"ranks": ranks.tolist(), "payload": payload.tolist(), "dtype": str(payload.dtype)}
    else:
        run.arrays.write_array(f"{prefix}/ranks", ranks)
        if len(payload):
            run.arrays.write_array(f"{prefix}/payload", payload)
    return record


def _load_extreme(cls: type[ArgMin], run: RunDir, prefix: str, record: dict[str, Any], best: int | None) -> ArgMin:
    """A stored ArgMin or ArgMax; its ranks are read only when its value is ``best`` (else they cannot count)."""
    value = record["min"]
    if value is None:
        return cls.empty()
    if value != best:
        return cls(value, np.zeros(0, dtype=np.uint64))
    if "inline" in record:
        inline = record["inline"]
        ranks = np.array(inline["ranks"], dtype=np.uint64)
        return cls(value, ranks, np.array(inline["payload"], dtype=inline["dtype"]))
    payload = run.arrays.read_array(f"{prefix}/payload") if record["payload"] else np.zeros(0, np.int64)
    return cls(value, run.arrays.read_array(f"{prefix}/ranks"), payload)


def _load_partial(run: RunDir, prefix: str, record: dict[str, Any], best: int | None,
                  best_max: int | None = None) -> ScanPartial:
    """A stored partial; its ranks at the minimum (maximum) are read only when they are at ``best`` (``best_max``)."""
    argmin = argmax = top = histogram = None
    if "min" in record:
        argmin = _load_extreme(ArgMin, run, prefix, record, best)
    if "argmax" in record:
        argmax = _load_extreme(ArgMax, run, f"{prefix}/max", record["argmax"], best_max)
    if "top" in record:
        pairs = np.array(record["top"], dtype=np.int64).reshape(-1, 2)
        top = TopK(pairs[:, 1], pairs[:, 0].astype(np.uint64))
    if "histogram" in record:
        histogram = Histogram({s: n for s, n in record["histogram"]}, record["histogram_above"],
                              record["histogram_cap"])
    kept = kept_of_record(run, prefix, record.get("kept", []))
    return ScanPartial(record["count"], record["ignored"], argmin, top, histogram, record.get("top_k", 0), argmax,
                       kept)


def merge_stage(plan: Plan, stage: str, records: dict[str, dict], run: RunDir) -> ScanPartial:
    """The merged partial of one stage's tasks, from their records and stored ranks."""
    tasks = plan.by_name[stage].tasks
    recs = [r["result"] for r in stage_records(plan, stage, records)]
    best = ArgMin.best([r.get("min") for r in recs])
    best_max = ArgMax.best([r["argmax"]["min"] for r in recs if "argmax" in r])
    return ScanPartial.merge([
        _load_partial(run, f"{stage}/partial/{task.index:05d}", rec, best, best_max) for task, rec in zip(tasks, recs)
    ])


def histogram_json(histogram: Histogram | None) -> dict[str, int] | None:
    """A histogram as a results.json mapping, score (as text) → ranks."""
    return None if histogram is None else {str(score): n for score, n in histogram.counts.items()}


Results = ScanResults
"""The shape of results.json, checked when it is read back."""


def reduce(config: Config, plan: Plan, records: dict[str, dict], run: RunDir) -> dict[str, Any]:
    rows = []
    for i, params in enumerate(config.rows):
        name = row_name(i)
        merged = merge_stage(plan, name, records, run)
        row: dict[str, Any] = {"row": name, "params": params, "ranks": plan.by_name[name].size,
                               "count": merged.count, "ignored": merged.ignored}
        if merged.argmin is not None:
            run.arrays.write_array(f"{name}/at_min/ranks", merged.argmin.ranks)
            row.update({"min": merged.argmin.value, "at_min": int(len(merged.argmin.ranks)),
                        "first_at_min": merged.argmin.ranks[:MAX_LISTED].tolist(),
                        "store": f"store.zarr/{name}/at_min"})
        if merged.argmax is not None:
            run.arrays.write_array(f"{name}/at_max/ranks", merged.argmax.ranks)
            row.update({"max": merged.argmax.value, "at_max": int(len(merged.argmax.ranks)),
                        "first_at_max": merged.argmax.ranks[:MAX_LISTED].tolist(),
                        "store_max": f"store.zarr/{name}/at_max"})
        if merged.top is not None:
            row["top"] = [{"rank": int(r), "score": int(s)} for r, s in zip(merged.top.ranks, merged.top.scores)]
        if merged.histogram is not None:
            row["histogram"] = histogram_json(merged.histogram)
            row["histogram_above"] = merged.histogram.above
        if merged.kept:
            row["kept"] = store_kept(run, name, merged.kept)
        row["seconds"] = round(compute_seconds(stage_records(plan, name, records)), 4)
        rows.append(row)
    return {"space": config.space, "rows": rows}


def report(config: Config, results: dict[str, Any], run: RunDir) -> tuple[str, list[Path]]:
    lines = [f"# {config.name}: scan of {markdown(config.space)}", "",
             "| row | parameters | ranks | ignored | min | at min | max | at max | top score | distinct scores "
             "| seconds |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in results["rows"]:
        params = markdown(", ".join(f"{k}={v}" for k, v in row["params"].items())) or "–"
        top = row["top"][0]["score"] if row.get("top") else "–"
        distinct = len(row["histogram"]) if row.get("histogram") is not None else "–"
        ignored = f"{row['ignored']:,}" if config.ignore is not None else "–"
        lines.append(f"| {row['row']} | {params} | {row['ranks']:,} | {ignored} | {_cell(row, 'min')} | "
                     f"{_cell(row, 'at_min')} | {_cell(row, 'max')} | {_cell(row, 'at_max')} | {top} | {distinct} "
                     f"| {row['seconds']} |")
    ignore = f" (the job's `ignore` score {config.ignore} is counted in `ignored` and nowhere else)" \
        if config.ignore is not None else ""
    lines += ["", f"`min` is the lowest score, `at min` how many designs (ranks) reach it, stored under "
              f"`store.zarr/<row>/at_min`; `max` and `at max` likewise with `max = true` (`at_max`){ignore}. "
              f"Every count is of designs, one per rank."]
    spaces = [drawn_space(config.space, params) for params in config.rows]
    if None in spaces:
        lines += ["", f"Designs are shown by rank: this report was written reading the run, which never imports "
                  f"the space its job names ({markdown(config.space)}); 'epcg report --trust-space' writes it with the "
                  f"space's decode and pictures."]
    for space, row in zip(spaces, results["rows"]):
        lines += _row_details(space, row, config.ignore)
    return "\n".join(lines) + "\n", _figures(config, results, run) + _histogram_figures(config, results, run)


def _cell(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    return "–" if value is None else f"{value:,}"


SUMMARY_LISTED = 5
"""Designs listed per row and kind in summary.md (all are in results.json, the store and ``epcg export``)."""
SUMMARY_SCORES = 24
"""Histogram lines per row in summary.md at most (the rest are summed in one line)."""


def _row_details(space: ScanSpace | None, row: dict[str, Any], ignore: int | None = None) -> list[str]:
    """A row's section of summary.md: designs at the minimum, the top ones, those at the maximum (as the space's
    ``decode`` gives them, by rank alone without the space), and the histogram of scores."""
    def shown(rank: int) -> str:
        decode = getattr(space, "decode", None)
        return f"rank {rank}" + (f": {markdown_code(decoded_text(decode(rank)))}" if decode is not None else "")

    params = markdown(", ".join(f"{k}={v}" for k, v in row["params"].items()))
    out = ["", f"## {row['row']}{f' ({params})' if params else ''}", ""]
    if row.get("min") is not None:
        out += [f"{_designs(row['at_min'])} at the minimum score {row['min']}; the first:", ""]
        out += [f"- {shown(r)}" for r in row["first_at_min"][:SUMMARY_LISTED]]
    if row.get("top"):
        out += ["", f"The top {len(row['top'])} scores (ties: lower rank first):", ""]
        out += [f"- score {t['score']}, {shown(t['rank'])}" for t in row["top"][:SUMMARY_LISTED]]
    if row.get("max") is not None:
        out += ["", f"{_designs(row['at_max'])} at the maximum score {row['max']}; the first:", ""]
        out += [f"- {shown(r)}" for r in row["first_at_max"][:SUMMARY_LISTED]]
    if row.get("kept"):
        out += ["", "Kept in full (job key `keep`; `epcg export --where score=N` reads them):", ""]
        out += kept_lines(row["kept"], "score", "designs", row.get("histogram"))
    if row.get("histogram") is not None:
        pairs = list(row["histogram"].items())
        out += ["", "| score | designs |", "|---|---|"]
        out += [f"| {score}{' (ignored)' if int(score) == ignore else ''} | {n:,} |" for score, n in pairs[:SUMMARY_SCORES]]
        rest = sum(n for _, n in pairs[SUMMARY_SCORES:]) + (row.get("histogram_above") or 0)
        if rest:
            out.append(f"| higher | {rest:,} |")
    return out


def _designs(n: int) -> str:
    """``n`` designs, in words: '1 design', '1,024 designs'."""
    return f"{n:,} design{'' if n == 1 else 's'}"


def plotted_scores(row: dict[str, Any], ignore: int | None) -> list[tuple[int, int]]:
    """``(score, designs)`` of a row's histogram as its plot draws them: the ``ignore`` score left out.

    >>> plotted_scores({"histogram": {"-1": 40, "2": 7, "5": 1}}, -1)
    [(2, 7), (5, 1)]
    """
    return [(int(s), n) for s, n in (row.get("histogram") or {}).items() if int(s) != ignore]


def _histogram_figures(config: Config, results: dict[str, Any], run: RunDir) -> list[Path]:
    """One bar chart per row of how many designs have each score (``figures/<row>-histogram``), the job's
    ``ignore`` score left out (the title says how many designs had it)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    written: list[Path] = []
    for row in results["rows"]:
        pairs = plotted_scores(row, config.ignore)
        if not pairs:
            continue
        scores, counts = [s for s, _ in pairs], [n for _, n in pairs]
        fig = Figure(figsize=(6.5, 3.2), layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        ax.bar(scores, counts, color="#5e81ac", width=0.8 if len(scores) < 200 else 1.0)
        if max(counts) > 50 * max(min(counts), 1):
            ax.set_yscale("log")
        ax.set_xlabel("score")
        ax.set_ylabel("designs")
        params = ", ".join(f"{k}={v}" for k, v in row["params"].items())
        left_out = f"; {row['ignored']:,} with the ignored score {config.ignore} left out" \
            if config.ignore is not None and row.get("ignored") else ""
        ax.set_title(figure_text(f"scores of {row['row']}{f' ({params})' if params else ''}{left_out}"), fontsize=10)
        written += save_figure(fig, run.outputs.figures_dir / f"{row['row']}-histogram")
    return written


def _figures(config: Config, results: dict[str, Any], run: RunDir) -> list[Path]:
    """Pictures of the first ranks at each row's minimum (``<row>-rank-N``) and, with ``max = true``, at its
    maximum (``<row>-max-rank-N``), through the space's ``render``."""
    written: list[Path] = []
    for params, row in zip(config.rows, results["rows"]):
        space = drawn_space(config.space, params)
        if space is None or space.render is None or not config.figures_per_row:
            continue
        firsts = [(rank, "") for rank in row.get("first_at_min", [])[: config.figures_per_row]]
        firsts += [(rank, "max-") for rank in row.get("first_at_max", [])[: config.figures_per_row]]
        for rank, which in firsts:
            obj = space.decode(rank) if space.decode is not None else rank
            picture = space.render(obj)
            run.outputs.figures_dir.mkdir(parents=True, exist_ok=True)
            stem = run.outputs.figures_dir / f"{row['row']}-{which}rank-{rank}"
            if isinstance(picture, str):
                stem.with_suffix(".svg").write_text(picture)
                written.append(stem.with_suffix(".svg"))
            else:
                written += save_figure(picture, stem)
    return written


class ScanKind(JobKind):
    """The ``scan`` job kind, which walks a user's scan space: the functions above as its hooks."""

    Config = Config
    Results = Results
    plan = staticmethod(plan)
    run_task = staticmethod(run_task)
    reduce = staticmethod(reduce)
    report = staticmethod(report)
    warm_up = staticmethod(warm_up)
    estimate = staticmethod(estimate)
    estimate_basis = staticmethod(estimate_basis)
    check_slice = staticmethod(check_slice)
