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
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pydantic

from epcg.experiments.base import JobConfig, stage_records
from epcg.runtime.plan import Plan, Stage, Task
from epcg.runtime.registry import load_object
from epcg.runtime.store import RunDir
from epcg.search.retrograde import (
    RetrogradeSpace, Words, fill_name, is_reduced, layer_name, layer_plan, layer_words, merge_layer, parse_stage,
    solve_part, summarize,
)


class Config(JobConfig):
    """A retrograde job: the space, the deepest layer, the task size."""

    domain: Literal["retrograde"] = "retrograde"
    space: str
    """Import path of a RetrogradeSpace, ``'package.module:NAME'``."""
    last: int | None = pydantic.Field(None, ge=1)
    """Deepest layer to solve (default: the space's ``last``)."""
    chunk_words: int = pydantic.Field(1 << 16, ge=1, le=1 << 26)
    """uint64 words (64 states each) per task and per Zarr chunk."""
    partitions: int = pydantic.Field(1, ge=1, le=1 << 16)
    """A task reads the previous layer in this many parts, one at a time (needs the space's solve_partial)."""

    @pydantic.model_validator(mode="after")
    def _space(self) -> Config:
        space = self.retrograde_space()
        if self.last is not None and not space.first <= self.last <= space.last:
            raise ValueError(f"last must be {space.first}..{space.last} for {space.name}, got {self.last}")
        if self.partitions > 1 and not space.partitioned:
            raise ValueError(f"partitions > 1 needs a space with solve_partial; {space.name} has none")
        return self

    def retrograde_space(self) -> RetrogradeSpace:
        space = load_object(self.space)
        if not isinstance(space, RetrogradeSpace):
            raise ValueError(f"space {self.space!r} is a {type(space).__name__}, not an epcg.search.RetrogradeSpace")
        return space

    @property
    def deepest(self) -> int:
        return self.retrograde_space().last if self.last is None else self.last


def stages(space: RetrogradeSpace, chunk_words: int, last: int | None = None) -> tuple[Stage, ...]:
    """The runtime stages of :func:`~epcg.search.retrograde.layer_plan`: one task per word range."""
    return tuple(
        Stage(layer.name, tuple(Task(layer.name, i, a, b) for i, (a, b) in enumerate(layer.ranges)),
              after=layer.after, label=f"{'fill layer' if layer.fill else 'layer'} {layer.level}", size=layer.words)
        for layer in layer_plan(space, chunk_words, last)
    )


def array_names(space: RetrogradeSpace, k: int, reduced: bool = False) -> tuple[str, ...]:
    """Layer ``k``'s arrays, one per bit: ``<bit>/<k>``, or the reduced form ``orbits/<bit>/<k>``."""
    prefix = "orbits/" if reduced else ""
    return tuple(f"{prefix}{bit}/{k}" for bit in space.bits)


def written_by(space: RetrogradeSpace, stage: str) -> tuple[str, ...]:
    """The arrays a stage's tasks write: a layer stage its layer (reduced or not), a fill the full layer."""
    k, fill = parse_stage(stage)
    return array_names(space, k, reduced=is_reduced(space, k) and not fill)


def read_by(space: RetrogradeSpace, stage: str) -> tuple[str, ...]:
    """The whole layer a stage's tasks read: the full previous layer, or for a fill the reduced layer."""
    k, fill = parse_stage(stage)
    return array_names(space, k, reduced=True) if fill else array_names(space, k - 1)


def create_arrays(space: RetrogradeSpace, run: RunDir, chunk_words: int, last: int) -> None:
    """Create every array a stage of the plan writes (empty) before any task writes a chunk (idempotent)."""
    for layer in layer_plan(space, chunk_words, last):
        for name in written_by(space, layer.name):
            if not run.has_array(name):
                run.group.create_array(name, shape=(layer.words,), dtype="uint64",
                                       chunks=(max(1, min(chunk_words, layer.words)),), fill_value=0)


Loader = Callable[[RunDir, tuple[str, ...], "tuple[int, int] | None"], Words]
"""Reads arrays of a finished layer: ``load(run, names, span)``, one array per name, all of each or words
``[a, b)`` if ``span = (a, b)``."""


def read_layer(run: RunDir, names: tuple[str, ...], span: tuple[int, int] | None = None) -> Words:
    """The default :data:`Loader`: a private in-memory copy of each array (or of its span)."""
    if span is None:
        return tuple(run.read_array(name) for name in names)
    return tuple(np.asarray(run.group[name][span[0]:span[1]]) for name in names)


def solve_task(space: RetrogradeSpace, task: Task, run: RunDir, load: Loader = read_layer,
               partitions: int = 1) -> dict[str, int]:
    """Solve (or fill) one word range of one stage, store it, return its counts and checksums.

    ``load`` reads the layer the stage needs, once per worker process (the
    :class:`~epcg.search.retrograde.LayerCache` is keyed by the run's
    ``cache_key``, so another run or epoch never sees it); with ``partitions > 1``
    a layer stage reads the previous layer one part at a time instead, each
    task all of it, holding one part (1/partitions of it) at a time.
    """
    k, fill = parse_stage(task.stage)
    names = read_by(space, task.stage)
    words, counts = solve_part(space, k, task.start, task.stop, lambda: load(run, names, None),
                               key=run.cache_key, fill=fill, partitions=partitions,
                               load_range=lambda a, b: load(run, names, (a, b)))
    for name, w in zip(written_by(space, task.stage), words):
        run.write_slice(name, task.start, w)
    return summarize(space, words, task.start, counts)


def layer_rows(space: RetrogradeSpace, plan: Plan, records: dict[str, dict], last: int) -> list[dict[str, Any]]:
    """One row per layer: states, set bits (states represented, if reduced) and checksum per bit array,
    tasks, seconds; a filled layer also the checksum of its full layer and the fill's seconds."""
    rows = []
    for k in range(space.first, last + 1):
        recs = stage_records(plan, layer_name(k), records)
        row = {"layer": k, "states": space.layer_size(k), **merge_layer(space, [r["result"] for r in recs]),
               "tasks": len(recs), "seconds": round(sum(r["seconds"] for r in recs), 4)}
        if fill_name(k) in plan.by_name:
            fill = stage_records(plan, fill_name(k), records)
            row["full_checksum"] = merge_layer(space, [r["result"] for r in fill])["checksum"]
            row["fill_seconds"] = round(sum(r["seconds"] for r in fill), 4)
        rows.append(row)
    return rows


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

    space = config.retrograde_space()
    bits = len(space.bits)
    out, rate = {}, 0.0
    for layer in layer_plan(space, config.chunk_words, config.deepest):
        k = layer.level
        source = layer_words(space, k if layer.fill else k - 1) if k > space.first else 0
        if k > space.first and source <= CALIBRATION_MAX_WORDS:
            rate = _rate(space, k, layer.fill, config.chunk_words)
        held = 8 * bits * source // (config.partitions if not layer.fill else 1)
        task = 8 * bits * min(config.chunk_words, layer.words)
        out[layer.name] = StageCost(bytes_written=8 * bits * layer.words, peak_memory=held + 2 * task,
                                    cpu_seconds=rate * layer.states if k > space.first else 0.0)
    return out


def estimate_basis(config: Config) -> str:
    """How :func:`estimate` got its compute figures, for ``epcg plan``."""
    return (f"compute from the space's kernel timed here on {CALIBRATION_RANGES} ranges of "
            f"{CALIBRATION_WORDS * 64} states per layer, against an empty previous layer (an upper bound)")


def check_slice(config: Config) -> None:
    """Solve the first words of every layer (and fill) in this (checked) process, against an empty and a full
    previous layer: a kernel that indexes out of bounds raises a UserError naming the layer and the words."""
    space = config.retrograde_space()
    for layer in layer_plan(space, config.chunk_words, config.deepest):
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
                text = str(exc).strip().splitlines()
                raise UserError(f"{space.name}: {'filling' if layer.fill else 'solving'} layer {k}, states "
                                f"[0, {64 * stop}): {type(exc).__name__}: {text[0] if text else ''}") from None


def plan(config: Config) -> Plan:
    return Plan(stages(config.retrograde_space(), config.chunk_words, config.deepest))


def prepare(config: Config, run: RunDir) -> None:
    create_arrays(config.retrograde_space(), run, config.chunk_words, config.deepest)


def run_task(config: Config, task: Task, run: RunDir) -> dict[str, Any]:
    return solve_task(config.retrograde_space(), task, run, partitions=config.partitions)


def reduce(config: Config, plan: Plan, records: dict[str, dict], run: RunDir) -> dict[str, Any]:
    space = config.retrograde_space()
    return {"space": space.name, "bits": list(space.bits), "rows": layer_rows(space, plan, records, config.deepest)}


def report(config: Config, results: dict[str, Any], run: RunDir) -> tuple[str, list[Path]]:
    bits = results["bits"]
    out = [f"# {config.name}: retrograde analysis of {results['space']}", "",
           "| layer | states | " + " | ".join(bits) + " | checksum | tasks | seconds |",
           "|---|---|" + "---|" * len(bits) + "---|---|---|"]
    for r in results["rows"]:
        out.append(f"| {r['layer']} | {r['states']:,} | " + " | ".join(f"{r[b]:,}" for b in bits)
                   + f" | `{r['checksum']}` | {r['tasks']} | {r['seconds']:.2f} |")
    space = config.retrograde_space()
    if space.describe is not None:
        out += _deepest_states(space, results, run)
    return "\n".join(out) + "\n", [_layers_figure(results, run)]


SUMMARY_STATES = 5
"""States of the deepest layer described in summary.md (``epcg export`` lists them all)."""


def _deepest_states(space: RetrogradeSpace, results: dict[str, Any], run: RunDir) -> list[str]:
    """The first states of the deepest layer with the space's first bit set, as ``describe`` gives them."""
    bit, deepest = space.bits[0], results["rows"][-1]["layer"]
    name = f"{bit}/{deepest}" if run.has_array(f"{bit}/{deepest}") else f"orbits/{bit}/{deepest}"
    words = run.read_array(name)
    ranks = np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little"))[:SUMMARY_STATES]
    lines = ["", f"The first states of layer {deepest} that are {bit}:", ""]
    return lines + [f"- rank {int(r)}: `{space.describe(deepest, int(r))}`" for r in ranks]


def _layers_figure(results: dict[str, Any], run: RunDir) -> Path:
    """``figures/layers.png``: states per layer, and those with each bit."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from epcg.figures import save_figure

    rows, bits = results["rows"], results["bits"]
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
    ax.set_title(f"{results['space']}: states per layer", fontsize=10)
    return next(p for p in save_figure(fig, run.figures_dir / "layers") if p.suffix == ".png")
