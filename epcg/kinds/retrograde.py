"""The ``retrograde`` job kind: any :class:`~epcg.search.retrograde.RetrogradeSpace`, named by import path.

A job file says ``space = "mypkg.game:SPACE"``; every layer is one stage after
the one before, every task one word range of a layer (one Zarr chunk of each
of the space's bit arrays, ``<bit>/<k>``), computed by
:func:`epcg.search.retrograde.solve_part` from the previous layer, which each
worker reads once. A reduced space's layer ``k > first`` is stored as
``orbits/<bit>/<k>`` and its fill stage ``fNN`` writes the full ``<bit>/<k>``
from it (not for the deepest layer). The helpers below (stages, arrays, tasks,
layer rows) are the whole data path; the Fling! job kind uses them too, with
its own loader of whole layers (``load``).

``space`` may instead name a ``@retrograde_family`` function of a row's keys:
``rows = [{side = 5}, {side = 6}]`` is one analysis per row, its stages
``r000-k01 ..`` and arrays ``r000/<bit>/<k>`` (a helper's ``row`` argument).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pydantic

from epcg.kinds.base import JobConfig, named_space, stage_records
from epcg.kinds.results import RetrogradeResults
from epcg.runtime.errors import UserError, one_line
from epcg.runtime.kind import JobKind
from epcg.runtime.readout import compute_seconds
from epcg.runtime.plan import Plan, Stage, Task
from epcg.runtime.registry import load_object, may_import
from epcg.runtime.store import RunDir
from epcg.runtime.text import figure_text, markdown, markdown_code
from epcg.search.retrograde import (
    RetrogradeSpace,
    Spans,
    Words,
    aligned_groups,
    fill_name,
    group_runs,
    is_reduced,
    layer_name,
    layer_plan,
    layer_words,
    merge_layer,
    parse_stage,
    solve_part,
    span_words,
    summarize,
)


class Config(JobConfig):
    """A retrograde job: the space, the deepest layer, the task size."""

    domain: Literal["retrograde"] = "retrograde"
    space: str
    """Import path of a RetrogradeSpace, or of a ``@retrograde_family`` function of the rows' keys."""
    rows: list[dict[str, Any]] = pydantic.Field(default_factory=lambda: [{}], min_length=1)
    """Keyword arguments of the family function, one table per row (``[{}]`` for a plain RetrogradeSpace)."""
    last: int | None = pydantic.Field(None, ge=1)
    """Deepest layer to solve (default: the space's ``last``)."""
    chunk_words: int = pydantic.Field(1 << 16, ge=1, le=1 << 26)
    """uint64 words (64 states each) per task and per Zarr chunk."""
    partitions: int = pydantic.Field(1, ge=1, le=1 << 16)
    """A task reads the previous layer in this many parts, one at a time (needs the space's solve_partial)."""

    @pydantic.model_validator(mode="after")
    def _space(self) -> Config:
        if not may_import():
            return self  # a run's job.toml, read as data: its space was checked when the run started
        bits = None
        for i in range(len(self.rows)):
            space = self.retrograde_space(i)
            if self.last is not None and not space.first <= self.last <= space.last:
                raise ValueError(f"last must be {space.first}..{space.last} for {space.name}, got {self.last}")
            if self.partitions > 1 and not space.partitioned:
                raise ValueError(f"partitions > 1 needs a space with solve_partial; {space.name} has none")
            if bits is not None and space.bits != bits:
                raise ValueError(f"every row's space must have the same bits, got {bits} and {space.bits}")
            bits = space.bits
        return self

    def retrograde_space(self, row: int = 0) -> RetrogradeSpace:
        """The space of row ``row`` (built once per process)."""
        params = json.dumps(self.rows[row], sort_keys=True)
        return named_space(self.space, params, RetrogradeSpace, ValueError)

    @property
    def family(self) -> bool:
        """The job names a family function (stages and arrays are per row), not one space."""
        return not isinstance(load_object(self.space), RetrogradeSpace)

    def row(self, i: int) -> str:
        """Row ``i``'s name in stage and array names (empty for one plain space)."""
        return f"r{i:03d}" if self.family else ""

    def deepest_of(self, row: int = 0) -> int:
        return self.retrograde_space(row).last if self.last is None else self.last

    @property
    def deepest(self) -> int:
        return self.deepest_of(0)


def stage_prefix(row: str) -> str:
    return f"{row}-" if row else ""


def array_prefix(row: str) -> str:
    return f"{row}/" if row else ""


def row_of(stage: str) -> tuple[str, str]:
    """A stage name's row and layer stage: ``"r001-k05"`` -> ``("r001", "k05")``, ``"k05"`` -> ``("", "k05")``."""
    row, _, name = stage.rpartition("-")
    return row, name


def stages(space: RetrogradeSpace, chunk_words: int, last: int | None = None, row: str = "") -> tuple[Stage, ...]:
    """The runtime stages of :func:`~epcg.search.retrograde.layer_plan`: one task per word range; a space with
    ``reads`` gives a layer's tasks that share read groups one ``Task.group`` (a cluster runs them together, so a
    group is read once) and the stage the bytes they read (each group once)."""
    pre = stage_prefix(row)
    label = f"{row} " if row else ""
    out = []
    for layer in layer_plan(space, chunk_words, last):
        runs = None if layer.fill else group_runs(space, layer.level, layer.ranges)
        tasks = tuple(Task(pre + layer.name, i, a, b, group=None if runs is None else runs[i])
                      for i, (a, b) in enumerate(layer.ranges))
        k = layer.level
        source = 8 * len(space.bits) * layer_words(space, k if layer.fill else k - 1) if k > space.first else 0
        out.append(Stage(pre + layer.name, tasks, after=tuple(pre + a for a in layer.after),
                         label=f"{label}{'fill layer' if layer.fill else 'layer'} {layer.level}", size=layer.words,
                         read_bytes=None if runs is None else 8 * len(space.bits) * group_reads(space, k, chunk_words),
                         source_bytes=source))
    return tuple(out)


def group_reads(space: RetrogradeSpace, k: int, chunk_words: int) -> int:
    """Words (per bit array) of layer ``k - 1`` that layer ``k``'s tasks of ``chunk_words`` words read in all, each
    of its read groups (:func:`~epcg.search.retrograde.aligned_groups`) once."""
    assert space.reads is not None and space.read_groups is not None
    bounds = aligned_groups(space.read_groups(k), chunk_words)
    return sum(span_words(space.reads(k, int(a), int(b))) for a, b in zip(bounds[:-1], bounds[1:]) if a < b)


def array_names(space: RetrogradeSpace, k: int, reduced: bool = False, row: str = "") -> tuple[str, ...]:
    """Layer ``k``'s arrays, one per bit: ``<bit>/<k>``, or the reduced form ``orbits/<bit>/<k>`` (under
    ``<row>/`` for a row of a family)."""
    prefix = array_prefix(row) + ("orbits/" if reduced else "")
    return tuple(f"{prefix}{bit}/{k}" for bit in space.bits)


def written_by(space: RetrogradeSpace, stage: str) -> tuple[str, ...]:
    """The arrays a stage's tasks write: a layer stage its layer (reduced or not), a fill the full layer."""
    row, name = row_of(stage)
    k, fill = parse_stage(name)
    return array_names(space, k, reduced=is_reduced(space, k) and not fill, row=row)


def read_by(space: RetrogradeSpace, stage: str) -> tuple[str, ...]:
    """The whole layer a stage's tasks read: the full previous layer, or for a fill the reduced layer."""
    row, name = row_of(stage)
    k, fill = parse_stage(name)
    return array_names(space, k, reduced=True, row=row) if fill else array_names(space, k - 1, row=row)


def create_arrays(space: RetrogradeSpace, run: RunDir, chunk_words: int, last: int, row: str = "") -> None:
    """Create every array a stage of the plan writes (empty) before any task writes a chunk (idempotent)."""
    for layer in layer_plan(space, chunk_words, last):
        for name in written_by(space, stage_prefix(row) + layer.name):
            if not run.arrays.has_array(name):
                run.arrays.group.create_array(name, shape=(layer.words,), dtype="uint64",
                                       chunks=(max(1, min(chunk_words, layer.words)),), fill_value=0)


Loader = Callable[[RunDir, tuple[str, ...], "Spans | None"], Words]
"""Reads arrays of a finished layer: ``load(run, names, spans)``, one array per name, all of each or (``spans``)
the words of those ranges one after another."""


READ_STEP_WORDS = 1 << 22
"""Words of an array read at a time (32 MiB raw) when spans of it are read: each step is copied into place, so a
process never holds a span twice while reading it."""


def read_steps(array: Any, spans: Spans) -> Iterator[tuple[int, int]]:
    """Bounds of the reads of ``spans`` of a chunked array: whole chunks, about ``READ_STEP_WORDS`` words at a
    time, but for each span's ends."""
    step = max(READ_STEP_WORDS // array.chunks[0], 1) * array.chunks[0]
    for a, b in spans:
        bounds = [a, *range(a - a % step + step, b, step), b]
        yield from zip(bounds, bounds[1:])


def read_layer(run: RunDir, names: tuple[str, ...], spans: Spans | None = None) -> Words:
    """The default :data:`Loader`: a private in-memory copy of each array (or of its spans)."""
    if spans is None:
        return tuple(run.arrays.read_array(name) for name in names)
    out = []
    for name in names:
        array = run.arrays.array(name)
        words, at = np.empty(span_words(spans), dtype=np.uint64), 0
        for lo, hi in read_steps(array, spans):
            words[at:at + hi - lo] = run.arrays.read_slice(name, lo, hi)
            at += hi - lo
        out.append(words)
    return tuple(out)


def solve_task(space: RetrogradeSpace, task: Task, run: RunDir, load: Loader = read_layer,
               partitions: int = 1) -> dict[str, int]:
    """Solve (or fill) one word range of one stage, store it, return its counts and checksums.

    ``load`` reads the layer the stage needs, once per worker process (the
    :class:`~epcg.search.retrograde.LayerCache` is keyed by the run's
    ``cache_key``, so another run or epoch never sees it); with ``partitions > 1``
    a layer stage reads the previous layer one part at a time instead, each
    task all of it, holding one part (1/partitions of it) at a time. A space
    with ``reads`` has a layer task read only the words of the previous layer
    that its read groups reach.
    The record's ``read_words`` counts the words per bit array the task read from
    the store (0 when its worker held them already), ``held_words`` the most it
    read at once.
    """
    row, name = row_of(task.stage)
    k, fill = parse_stage(name)
    names = read_by(space, task.stage)
    read: list[int] = []
    written = written_by(space, task.stage)
    words, counts = solve_part(space, k, task.start, task.stop, lambda: load(run, names, None),
                               key=(run.cache_key, row) if row else run.cache_key, fill=fill, partitions=partitions,
                               load_spans=lambda spans: load(run, names, spans), on_read=read.append,
                               align=run.arrays.array(written[0]).chunks[0])
    for name, w in zip(written, words):
        run.arrays.write_slice(name, task.start, w)
    return {**summarize(space, words, task.start, counts),
            "read_words": sum(read), "held_words": max(read, default=0)}


def layer_rows(space: RetrogradeSpace, plan: Plan, records: dict[str, dict], last: int,
               row: str = "") -> list[dict[str, Any]]:
    """One row per layer: states, set bits (states represented, if reduced) and checksum per bit array,
    tasks, seconds; a filled layer also the checksum of its full layer and the fill's seconds."""
    out = []
    pre = stage_prefix(row)
    for k in range(space.first, last + 1):
        recs = stage_records(plan, pre + layer_name(k), records)
        entry = {"layer": k, "states": space.layer_size(k), **merge_layer(space, [r["result"] for r in recs]),
                 "tasks": len(recs), "seconds": round(compute_seconds(recs), 4)}
        if pre + fill_name(k) in plan.by_name:
            fill = stage_records(plan, pre + fill_name(k), records)
            entry["full_checksum"] = merge_layer(space, [r["result"] for r in fill])["checksum"]
            entry["fill_seconds"] = round(compute_seconds(fill), 4)
        out.append(entry)
    return out


CALIBRATION_RANGES = 4
"""Word ranges spread over a layer that ``epcg plan`` times the space's kernel on."""
CALIBRATION_WORDS = 8
"""Words (64 states each) per calibration range."""
CALIBRATION_MAX_WORDS = 1 << 27
"""Largest previous layer (words per bit, 1 GiB) handed to the kernel at plan time; a deeper layer takes the
rate per state of the deepest layer timed."""


def _rate(space: RetrogradeSpace, k: int, fill: bool, chunk_words: int) -> float:
    """Seconds per state of layer ``k`` (its solve, or its fill), timed on this machine now on a few word
    ranges spread over the layer, against an all-zero previous layer (no successor solved: the kernel
    looks at every move, so this errs on the slow side); CPU seconds of this thread."""
    import time

    from epcg.runtime.estimate import calibrated

    words = layer_words(space, k)
    width = max(1, min(CALIBRATION_WORDS, chunk_words, words))
    starts = sorted({min(words - width, words * i // CALIBRATION_RANGES) for i in range(CALIBRATION_RANGES)})
    source = layer_words(space, k if fill else k - 1)
    zeros = tuple(np.zeros(source, dtype=np.uint64) for _ in space.bits)

    def measure() -> tuple[float, float]:
        began = time.thread_time()
        for a in starts:
            if fill:
                space.expand(k, zeros, a, a + width)
            elif space.reduced:
                space.solve_reduced(k, zeros, a, a + width)
            else:
                space.solve(k, zeros, a, a + width)
        return 64 * width * len(starts), time.thread_time() - began

    return calibrated(("retrograde", space.name, k, fill, width), measure, budget=0.01)


def estimate(config: Config) -> dict[str, Any]:
    """Per stage: the words its tasks write; memory for the previous layer a worker holds (1/partitions of it
    when solving in parts) and a task's output; compute from the space's kernel timed on a sample of the layer
    (:func:`_rate`)."""
    from epcg.runtime.estimate import StageCost
    from epcg.runtime.isolated import call

    rates = json.loads(call("epcg.kinds.retrograde:rates", config.model_dump_json(),
                            f"timing the kernel of {config.space} on a sample of each layer at plan time"))
    out = {}
    for i in range(len(config.rows)):
        space = config.retrograde_space(i)
        bits = len(space.bits)
        for layer in layer_plan(space, config.chunk_words, config.deepest_of(i)):
            k = layer.level
            source = layer_words(space, k if layer.fill else k - 1) if k > space.first else 0
            rate = rates[stage_prefix(config.row(i)) + layer.name]
            held = 8 * bits * source // (config.partitions if not layer.fill else 1)
            task = 8 * bits * min(config.chunk_words, layer.words)
            out[stage_prefix(config.row(i)) + layer.name] = StageCost(
                bytes_written=8 * bits * layer.words, peak_memory=held + 2 * task,
                cpu_seconds=rate * layer.states if k > space.first else 0.0)
    return out


def rates(payload: str) -> str:
    """Seconds per state of every stage of the job ``payload`` (its config as JSON), by :func:`_rate`; a layer
    whose previous layer is too large to hand over takes the rate of the deepest layer timed. Run in a child
    process by :func:`estimate`."""
    config = Config.model_validate_json(payload)
    out = {}
    for i in range(len(config.rows)):
        space, rate = config.retrograde_space(i), 0.0
        for layer in layer_plan(space, config.chunk_words, config.deepest_of(i)):
            k = layer.level
            source = layer_words(space, k if layer.fill else k - 1) if k > space.first else 0
            if k > space.first and source <= CALIBRATION_MAX_WORDS:
                rate = _rate(space, k, layer.fill, config.chunk_words)
            out[stage_prefix(config.row(i)) + layer.name] = rate if k > space.first else 0.0
    return json.dumps(out)


def estimate_basis(config: Config) -> str:
    """How :func:`estimate` got its compute figures, for ``epcg plan``."""
    return (f"compute from the space's kernel timed here on {CALIBRATION_RANGES} ranges of "
            f"{CALIBRATION_WORDS * 64} states per layer, against an empty previous layer")


def check_slice(config: Config) -> None:
    """Solve the first words of every layer (and fill) in this (checked) process, against an empty and a full
    previous layer: a kernel that indexes out of bounds raises a UserError naming the layer and the words."""
    for i in range(len(config.rows)):
        _check_row(config.retrograde_space(i), config.chunk_words, config.deepest_of(i))


def _check_row(space: RetrogradeSpace, chunk_words: int, last: int) -> None:
    for layer in layer_plan(space, chunk_words, last):
        k = layer.level
        if k == space.first:
            continue
        source = layer_words(space, k if layer.fill else k - 1)
        stop = min(CALIBRATION_WORDS, layer.words)
        for fill_value in (0, ~np.uint64(0)):
            given = tuple(np.full(source, fill_value, dtype=np.uint64) for _ in space.bits)
            try:
                if layer.fill:
                    space.expand(k, given, 0, stop)
                elif space.reduced:
                    space.solve_reduced(k, given, 0, stop)
                else:
                    space.solve(k, given, 0, stop)
            except Exception as exc:  # noqa: BLE001 - the user's kernel, reported in one line
                raise UserError(f"{space.name}: {'filling' if layer.fill else 'solving'} layer {k}, states "
                                f"[0, {64 * stop}): {one_line(exc, named=True)}") from None


def plan(config: Config) -> Plan:
    return Plan(tuple(stage for i in range(len(config.rows)) for stage in
                      stages(config.retrograde_space(i), config.chunk_words, config.deepest_of(i), config.row(i))))


def prepare(config: Config, run: RunDir) -> None:
    for i in range(len(config.rows)):
        create_arrays(config.retrograde_space(i), run, config.chunk_words, config.deepest_of(i), config.row(i))


def run_task(config: Config, task: Task, run: RunDir) -> dict[str, Any]:
    row, _ = row_of(task.stage)
    space = config.retrograde_space(int(row[1:]) if row else 0)
    return solve_task(space, task, run, partitions=config.partitions)


Results = RetrogradeResults
"""The shape of results.json, checked when it is read back."""


def reduce(config: Config, plan: Plan, records: dict[str, dict], run: RunDir) -> dict[str, Any]:
    """One results row per layer (per row of a family, each with its ``row`` and ``params``)."""
    space = config.retrograde_space()
    if not config.family:
        return {"space": space.name, "bits": list(space.bits),
                "rows": layer_rows(space, plan, records, config.deepest)}
    rows = [{"row": config.row(i), "params": params, "space": config.retrograde_space(i).name, **entry}
            for i, params in enumerate(config.rows)
            for entry in layer_rows(config.retrograde_space(i), plan, records, config.deepest_of(i), config.row(i))]
    return {"space": config.space, "bits": list(space.bits), "rows": rows}


def report(config: Config, results: dict[str, Any], run: RunDir) -> tuple[str, list[Path]]:
    bits, figures = results["bits"], []
    out = [f"# {config.name}: retrograde analysis of {markdown(results['space'])}"]
    for i in range(len(config.rows)):
        row = config.row(i)
        rows = [r for r in results["rows"] if r.get("row", "") == row]
        space = config.retrograde_space(i)
        if row:
            params = markdown(", ".join(f"{k}={v}" for k, v in config.rows[i].items()))
            out += ["", f"## {row}: {markdown(space.name)}" + (f" ({params})" if params else "")]
        out += ["", "| layer | states | " + " | ".join(bits) + " | checksum | tasks | seconds |",
                "|---|---|" + "---|" * len(bits) + "---|---|---|"]
        for r in rows:
            out.append(f"| {r['layer']} | {r['states']:,} | " + " | ".join(f"{r[b]:,}" for b in bits)
                       + f" | `{r['checksum']}` | {r['tasks']} | {r['seconds']:.2f} |")
        if space.describe is not None:
            out += _layer_states(space, rows, run, row)
        figures.append(_layers_figure(space.name, bits, rows, run, row))
    return "\n".join(out) + "\n", figures


SUMMARY_STATES = 5
"""States of each layer described in summary.md (``epcg export`` lists them all)."""


def _layer_states(space: RetrogradeSpace, rows: list[dict[str, Any]], run: RunDir, row: str = "") -> list[str]:
    """Every layer, deepest first: its first states with the space's first bit set, as ``describe`` gives them,
    or "none" when it has none."""
    bit = space.bits[0]
    lines = ["", f"The first states of each layer that are {bit} (`epcg export` lists them all):"]
    for entry in reversed(rows):
        k, count = entry["layer"], entry[bit]
        if not count:
            lines += ["", f"Layer {k}: none of its {entry['states']:,} states is {bit}."]
            continue
        ranks, reduced = _first_set(space, run, row, k, SUMMARY_STATES)
        head = (f"the first {len(ranks)} of its {count:,} {bit} states"
                if len(ranks) < count else f"all {count:,} of its {bit} states")
        if reduced:
            head = (f"{count:,} {bit} states in classes of symmetric states; one state of each of the first "
                    f"{len(ranks)}")
        lines += ["", f"Layer {k}, {head}:", ""]
        lines += [f"- rank {r}: {markdown_code(space.describe(k, r))}" for r in ranks]
    return lines


def _first_set(space: RetrogradeSpace, run: RunDir, row: str, k: int, count: int) -> tuple[list[int], bool]:
    """The ``count`` lowest ranks with the first bit set in layer ``k``, read a step at a time until they are
    found: of the full layer where it is stored, else of its reduced form (one state per class; then True)."""
    (name,) = array_names(space, k, row=row)[:1]
    reduced = not run.arrays.has_array(name)
    if reduced:
        (name,) = array_names(space, k, reduced=True, row=row)[:1]
    array, found = run.arrays.array(name), []
    for lo, hi in read_steps(array, [(0, array.shape[0])]):
        bits = np.unpackbits(np.asarray(array[lo:hi]).view(np.uint8), bitorder="little")
        found += [64 * lo + int(r) for r in np.flatnonzero(bits)[:count - len(found)]]
        if len(found) == count:
            break
    return found, reduced


def _layers_figure(name: str, bits: list[str], rows: list[dict[str, Any]], run: RunDir, row: str = "") -> Path:
    """``figures/layers.png`` (``<row>-layers.png``): states per layer, and those with each bit."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from epcg.report.figures import save_figure

    fig = Figure(figsize=(6.5, 3.4), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    x = np.arange(len(rows))
    width = 0.8 / (len(bits) + 1)
    for i, (label, values) in enumerate([("states", [r["states"] for r in rows])]
                                        + [(b, [r[b] for r in rows]) for b in bits]):
        ax.bar(x + (i - len(bits) / 2) * width, np.where(np.array(values) > 0, values, np.nan), width, label=label)
    ax.set_xticks(x, [str(r["layer"]) for r in rows])
    ax.set_yscale("log")
    ax.set_xlabel("layer")
    ax.set_ylabel("states")
    ax.legend(fontsize=8)
    ax.set_title(figure_text(f"{name}: states per layer"), fontsize=10)
    stem = run.outputs.figures_dir / (f"{row}-layers" if row else "layers")
    return next(p for p in save_figure(fig, stem) if p.suffix == ".png")


class RetrogradeKind(JobKind):
    """The ``retrograde`` job kind, which solves a user's retrograde space layer by layer: the
    functions above as its hooks."""

    Config = Config
    Results = Results
    plan = staticmethod(plan)
    run_task = staticmethod(run_task)
    reduce = staticmethod(reduce)
    report = staticmethod(report)
    prepare = staticmethod(prepare)
    estimate = staticmethod(estimate)
    estimate_basis = staticmethod(estimate_basis)
    check_slice = staticmethod(check_slice)
