"""The ``retrograde`` job kind: any :class:`~epcg.search.retrograde.RetrogradeSpace`, named by import path.

A job file says ``space = "mypkg.game:SPACE"``; every layer is one stage after
the one before, every task one word range of a layer (one Zarr chunk of each
of the space's bit arrays, ``<bit>/<k>``), computed by
:func:`epcg.search.retrograde.solve_range` from the previous layer, which each
worker reads once. The helpers below (stages, arrays, tasks, layer rows) are
the whole data path; the Fling! job kind uses them too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pydantic

from epcg.experiments.base import JobConfig, stage_records
from epcg.runtime.plan import Plan, Stage, Task
from epcg.runtime.registry import load_object
from epcg.runtime.store import RunDir
from epcg.search.retrograde import (
    RetrogradeSpace, Words, layer_name, layer_plan, layer_words, merge_layer, solve_range, summarize,
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

    @pydantic.model_validator(mode="after")
    def _space(self) -> Config:
        space = self.retrograde_space()
        if self.last is not None and not space.first <= self.last <= space.last:
            raise ValueError(f"last must be {space.first}..{space.last} for {space.name}, got {self.last}")
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
              after=layer.after, label=f"layer {layer.level}", size=layer.words)
        for layer in layer_plan(space, chunk_words, last)
    )


def create_arrays(space: RetrogradeSpace, run: RunDir, chunk_words: int, last: int) -> None:
    """Create every layer's bit arrays (empty) before any task writes a chunk (idempotent)."""
    for k in range(space.first, last + 1):
        words = layer_words(space, k)
        for bit in space.bits:
            name = f"{bit}/{k}"
            if not run.has_array(name):
                run.group.create_array(name, shape=(words,), dtype="uint64",
                                       chunks=(max(1, min(chunk_words, words)),), fill_value=0)


def solve_task(space: RetrogradeSpace, task: Task, run: RunDir) -> dict[str, int]:
    """Solve one word range of one layer, store it, return its counts and checksums."""
    k = int(task.stage.removeprefix("k"))

    def previous() -> Words:
        return tuple(run.read_array(f"{bit}/{k - 1}") for bit in space.bits)

    words = solve_range(space, k, task.start, task.stop, previous, key=run.cache_key)
    for bit, w in zip(space.bits, words):
        run.write_slice(f"{bit}/{k}", task.start, w)
    return summarize(space, words, task.start)


def layer_rows(space: RetrogradeSpace, plan: Plan, records: dict[str, dict], last: int) -> list[dict[str, Any]]:
    """One row per layer: states, set bits and checksum per bit array, tasks, seconds."""
    rows = []
    for k in range(space.first, last + 1):
        recs = stage_records(plan, layer_name(k), records)
        rows.append({"layer": k, "states": space.layer_size(k), **merge_layer(space, [r["result"] for r in recs]),
                     "tasks": len(recs), "seconds": round(sum(r["seconds"] for r in recs), 4)})
    return rows


def plan(config: Config) -> Plan:
    return Plan(stages(config.retrograde_space(), config.chunk_words, config.deepest))


def prepare(config: Config, run: RunDir) -> None:
    create_arrays(config.retrograde_space(), run, config.chunk_words, config.deepest)


def run_task(config: Config, task: Task, run: RunDir) -> dict[str, Any]:
    return solve_task(config.retrograde_space(), task, run)


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
    return "\n".join(out) + "\n", []
