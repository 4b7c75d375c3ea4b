"""Algorithm 1, methodical scan: exact reductions over chunks of a rank space.

A scan cuts ``0 .. max_rank-1`` into chunks, evaluates each chunk with a domain
kernel, and merges the chunks' partial results. Every reduction here is exact
and independent of chunk size, chunk order and the number of workers: merging
is associative and commutative, and ties are kept whole or broken by rank.

>>> a = ArgMin(4, np.array([3, 9], dtype=np.uint64))
>>> b = ArgMin(2, np.array([12], dtype=np.uint64))
>>> merged = ArgMin.merge([a, b, ArgMin.empty()])
>>> merged.value, merged.ranks.tolist()
(2, [12])
>>> TopK.merge([TopK.of([5, 7], [0, 1], k=2), TopK.of([7, 1], [2, 3], k=2)], k=2).ranks.tolist()
[1, 2]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class ArgMin:
    """The smallest value seen and every rank that reaches it, ranks ascending.

    ``value`` is None when nothing was seen (e.g. no puzzle had a solution).
    ``payload`` holds one row per rank (e.g. each puzzle's longest solution).
    """

    value: int | None
    ranks: np.ndarray
    payload: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @classmethod
    def empty(cls) -> ArgMin:
        return cls(None, np.zeros(0, dtype=np.uint64))

    @staticmethod
    def best(values: Sequence[int | None]) -> int | None:
        """The minimum of the values that are not None."""
        seen = [v for v in values if v is not None]
        return min(seen) if seen else None

    @classmethod
    def merge(cls, parts: Sequence[ArgMin]) -> ArgMin:
        value = cls.best([p.value for p in parts])
        keep = [p for p in parts if value is not None and p.value == value]
        if not keep:
            return cls.empty()
        ranks = np.concatenate([p.ranks for p in keep])
        payload = np.concatenate([p.payload for p in keep]) if len(keep[0].payload) else keep[0].payload
        order = np.argsort(ranks, kind="stable")
        return cls(value, ranks[order], payload[order] if len(payload) else payload)


@dataclass(frozen=True)
class TopK:
    """The ``k`` best (highest score) items; ties broken by the lower rank."""

    scores: np.ndarray
    ranks: np.ndarray

    @classmethod
    def of(cls, scores: Sequence[float], ranks: Sequence[int], k: int) -> TopK:
        scores, ranks = np.asarray(scores, dtype=np.float64), np.asarray(ranks, dtype=np.uint64)
        order = np.lexsort((ranks, -scores))[:k]
        return cls(scores[order], ranks[order])

    @classmethod
    def merge(cls, parts: Sequence[TopK], k: int) -> TopK:
        return cls.of(
            np.concatenate([p.scores for p in parts]), np.concatenate([p.ranks for p in parts]), k
        )


def merge_histograms(parts: Sequence[np.ndarray]) -> np.ndarray:
    """Sum histograms of possibly different lengths."""
    size = max((len(p) for p in parts), default=0)
    out = np.zeros(size, dtype=np.int64)
    for part in parts:
        out[: len(part)] += part
    return out


def scan(
    evaluate: Callable[[int, int], ArgMin], max_rank: int, chunk: int
) -> ArgMin:
    """Algorithm 1 in one process: evaluate every chunk and merge (for notebooks and tests)."""
    return ArgMin.merge(
        [evaluate(start, min(start + chunk, max_rank)) for start in range(0, max_rank, chunk)]
    )
