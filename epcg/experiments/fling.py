"""Fling! retrograde analysis: one stage per piece count, then the expert evaluator.

Layer ``k`` is two Zarr arrays, ``solvable/k`` and ``unique/k``, of packed bits
in uint64 words (bit ``r % 64`` of word ``r // 64`` is the board of
lexicographic rank ``r``). One task computes one Zarr chunk of both arrays from
the whole of layer ``k-1``, which each worker loads once and keeps. The board is
a :class:`~epcg.search.retrograde.RetrogradeSpace` (``fling_space``) and the layers
go through the generic driver (:mod:`epcg.experiments.retrograde`), like any
other retrograde space.

Peak memory per worker, layer ``k``: the previous layer, ``2·C(n,k-1)/8`` bytes,
plus twice the task's output, ``2·8·chunk_words`` bytes, plus one Zarr chunk
being compressed. For 7×8 and k = 10: 2·C(56,9)/8 = 1.9 GB + 2·8·2^18 = 4 MB.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pydantic

from epcg.combinatorics.binomial import binomial
from epcg.combinatorics.bits import check_board, popcount_words
from epcg.domains.fling import evaluate
from epcg.domains.fling import layers as kernels
from epcg.domains.fling.rules import Board
from epcg.experiments import retrograde
from epcg.experiments.base import JobConfig, stage_records
from epcg.runtime.plan import Plan, Stage, Task, split_range
from epcg.runtime.store import RunDir
from epcg.search.retrograde import RetrogradeSpace, layer_checksum, layer_name, merge_layer

MAX_BOARDS = 1 << 43
"""Largest layer a job may name (C(56, 14) = 5.8e12 fits); whether it fits the workers is the plan's check."""


@lru_cache(maxsize=8)
def fling_space(width: int, height: int, max_pieces: int) -> RetrogradeSpace:
    """Fling! on a ``width × height`` board as a retrograde space: layer ``k`` = boards of ``k`` pieces.

    >>> s = fling_space(3, 1, 3)
    >>> [s.layer_size(k) for k in (1, 2, 3)], s.bits
    ([3, 3, 1], ('solvable', 'unique'))
    """

    def solve(k: int, previous: tuple[np.ndarray, ...], start: int, stop: int) -> tuple[np.ndarray, ...]:
        return kernels.solve_words(width, height, k, previous[0], previous[1], start, stop)

    return RetrogradeSpace(
        f"Fling! {width}x{height}",
        layer_size=lambda k: kernels.layer_size(width, height, k),
        first_layer=lambda: kernels.first_layer(width, height),
        solve=solve,
        last=max_pieces,
        bits=("solvable", "unique"),
    )


class Config(JobConfig):
    """A Fling! job: board size, deepest layer, task size, how many puzzles to report."""

    domain: Literal["fling"]
    width: int = pydantic.Field(7, ge=1, le=64)
    height: int = pydantic.Field(8, ge=1, le=64)
    max_pieces: int = pydantic.Field(8, ge=1)
    """Deepest layer: boards with 1..max_pieces pieces are solved."""
    chunk_words: int = pydantic.Field(1 << 18, ge=1, le=1 << 26)
    """uint64 words (64 boards each) per task and per Zarr chunk."""
    top_puzzles: int = pydantic.Field(20, ge=0, le=1000)
    """Uniquely solvable boards of the deepest layer to report, best ratio first (0: no evaluation)."""
    evaluate_chunk_words: int = pydantic.Field(1 << 15, ge=1, le=1 << 26)
    """Words of the deepest layer per evaluation task (evaluating is slower than solving)."""

    @pydantic.model_validator(mode="after")
    def _fits(self) -> Config:
        cells = check_board(self.width, self.height)
        if self.max_pieces > cells:
            raise ValueError(f"max_pieces must be 1..{cells} on a {self.width}x{self.height} board, got {self.max_pieces}")
        if binomial(cells, self.max_pieces) > MAX_BOARDS:
            raise ValueError(
                f"max_pieces={self.max_pieces} gives {binomial(cells, self.max_pieces):,} boards; "
                f"at most 2^43 per layer are supported"
            )
        return self

    def words(self, k: int) -> int:
        return kernels.layer_words(self.width, self.height, k)

    @property
    def space(self) -> RetrogradeSpace:
        return fling_space(self.width, self.height, self.max_pieces)


EVALUATE = "top"
COARSEN = ("chunk_words", "evaluate_chunk_words")
"""Keys the runtime may scale up to bound the task count: results do not depend on them."""
BOARDS_PER_SECOND = 14e6
"""Measured 7×8 layer kernel speed per single-threaded worker (docs/scaling.md)."""
COMPRESSED = (0.5, 0.03)
"""On-disk fraction of the raw solvable and unique arrays (measured, 7×8 layers 9 and 10: 0.40–0.54, 0.01–0.03)."""
EVALUATE_SECONDS = 3e-4 * 0.004
"""Expert evaluation per board of the deepest layer: 0.3 ms per unique board, about 0.4 % of boards unique."""


def estimate(config: Config) -> dict:
    """Per stage: bytes written, memory per worker beyond its base, compute (see the module docstring)."""
    from epcg.runtime.estimate import StageCost

    out = {}
    for k in range(1, config.max_pieces + 1):
        words = config.words(k)
        chunk = min(config.chunk_words, words)
        previous = 2 * 8 * config.words(k - 1) if k > 1 else 0
        out[layer_name(k)] = StageCost(
            bytes_written=2 * 8 * words,
            disk_bytes=round(8 * words * sum(COMPRESSED)),
            peak_memory=previous + 4 * 8 * chunk,
            cpu_seconds=kernels.layer_size(config.width, config.height, k) / BOARDS_PER_SECOND,
        )
    if config.top_puzzles:
        boards = kernels.layer_size(config.width, config.height, config.max_pieces)
        out[EVALUATE] = StageCost(peak_memory=8 * min(config.evaluate_chunk_words, config.words(config.max_pieces)),
                                  cpu_seconds=boards * EVALUATE_SECONDS)
    return out


def plan(config: Config) -> Plan:
    stages = retrograde.stages(config.space, config.chunk_words)
    if config.top_puzzles:
        top = config.words(config.max_pieces)
        stages += (Stage(EVALUATE, split_range(EVALUATE, top, config.evaluate_chunk_words),
                         after=(layer_name(config.max_pieces),), label="expert evaluation", size=top),)
    return Plan(stages)


def prepare(config: Config, run: RunDir) -> None:
    """Create every layer's arrays (empty) before any task writes a chunk."""
    retrograde.create_arrays(config.space, run, config.chunk_words, config.max_pieces)


def warm_up(config: Config) -> None:
    """Compile the layer kernels on a 3×3 board."""
    s, u = kernels.first_layer(3, 3)
    for k in (2, 3):
        s, u = kernels.solve_words(3, 3, k, s, u, 0, kernels.layer_words(3, 3, k))
    layer_checksum(s, 0)


def run_task(config: Config, task: Task, run: RunDir) -> dict[str, Any]:
    if task.stage == EVALUATE:
        return _evaluate_task(config, task, run)
    return retrograde.solve_task(config.space, task, run)


def _evaluate_task(config: Config, task: Task, run: RunDir) -> dict[str, Any]:
    """The best boards by expert ratio among this word range of the deepest layer's unique bits."""
    words = np.asarray(run.group[f"unique/{config.max_pieces}"][task.start:task.stop])
    best = evaluate.top_puzzles(config.width, config.height, config.max_pieces, words,
                                limit=config.top_puzzles, word_start=task.start)
    return {"evaluated": popcount_words(words), "top": [[rank, ratio] for rank, ratio, _moves in best]}


def _best_puzzles(config: Config, records: list[dict]) -> list[dict[str, Any]]:
    """Merge the tasks' lists by (ratio desc, rank asc) and decode the winners."""
    candidates = sorted((tuple(item) for r in records for item in r["result"]["top"]),
                        key=lambda item: (-item[1], item[0]))[: config.top_puzzles]
    out = []
    for rank, _ratio in candidates:
        board = Board.from_rank(config.width, config.height, config.max_pieces, int(rank))
        ev = evaluate.evaluate(board)
        out.append({
            "rank": int(rank),
            "ratio": ev.ratio,
            "brute_force_nodes": ev.brute,
            "expert_nodes": ev.expert,
            "solution": " ".join(board.move_name(m) for m in ev.solution),
            "board": str(board).splitlines(),
        })
    return out


def reduce(config: Config, plan: Plan, records: dict[str, dict], run: RunDir) -> dict[str, Any]:
    layers = []
    for k in range(1, config.max_pieces + 1):
        recs = stage_records(plan, layer_name(k), records)
        results = [r["result"] for r in recs]
        seconds = sum(r["seconds"] for r in recs)
        boards = kernels.layer_size(config.width, config.height, k)
        wall = max(r["ended_at"] for r in recs) - min(r["ended_at"] - r["seconds"] for r in recs)
        layers.append({
            "pieces": k,
            "boards": boards,
            **merge_layer(config.space, results),
            "tasks": len(recs),
            "seconds": round(seconds, 4),
            "boards_per_second": round(boards / seconds) if seconds else None,
            "wall_seconds": round(wall, 4),
            "boards_per_wall_second": round(boards / wall) if wall > 0 else None,
        })
    results: dict[str, Any] = {"width": config.width, "height": config.height, "rows": layers}
    if config.top_puzzles:
        recs = stage_records(plan, EVALUATE, records)
        results["evaluated"] = sum(r["result"]["evaluated"] for r in recs)
        results["evaluate_seconds"] = round(sum(r["seconds"] for r in recs), 4)
        results["puzzles"] = _best_puzzles(config, recs)
    return results


def report(config: Config, results: dict[str, Any], run: RunDir) -> tuple[str, list[Path]]:
    from epcg.experiments.fling_report import figures, summary

    return summary(config, results), figures(config, results, run)
