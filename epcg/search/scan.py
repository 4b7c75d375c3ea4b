"""Algorithm 1, methodical scan: evaluate every rank of a space and reduce the scores exactly.

A :class:`ScanSpace` is a content space: ``max_rank`` ranks and an evaluator
``evaluate(rank, *data) -> int`` compiled with numba. :func:`scan_range` walks
one rank range ``[start, stop)`` (one task of a job) and returns a
:class:`ScanPartial` holding the reductions asked for in :class:`Reductions`:

- ``count``: ranks examined (and ``ignored``: how many scored ``ignore``);
- ``argmin``: the lowest score, ignoring the score ``ignore`` (e.g. 0 = no
  solution), and every rank reaching it (:class:`ArgMin`);
- ``top``: the ``top`` highest scores, ties broken by the lower rank (:class:`TopK`);
- ``max``: the highest score and every rank reaching it (:class:`ArgMax`);
- ``histogram``: how many ranks have each score (:class:`Histogram`);
- ``keep``: every rank whose score lies in a band (:class:`Kept`), up to a cap of the lowest ranks.

Every reduction is exact and independent of chunk size, chunk order and the
number of workers: :meth:`ScanPartial.merge` is associative and commutative and
ties are kept whole or broken by rank, so any cut of ``0 .. max_rank-1`` merges
to the same result.

>>> from numba import njit
>>> @njit(cache=False)
... def digit_sum(rank, base):
...     total = 0
...     while rank:
...         total += rank % base
...         rank //= base
...     return total
>>> space = ScanSpace(max_rank=100, evaluate=digit_sum, data=(10,), name="digit sums")
>>> whole = scan_range(space, 0, 100, Reductions(ignore=0, top=2, histogram=True))
>>> whole.argmin.value, whole.argmin.ranks.tolist(), whole.top.ranks.tolist()
(1, [1, 10], [99, 89])
>>> whole.histogram.counts[9], whole.count, whole.ignored
(10, 100, 1)
>>> parts = [scan_range(space, a, b, Reductions(ignore=0, top=2, histogram=True)) for a, b in ((60, 100), (0, 60))]
>>> ScanPartial.merge(parts) == whole
True
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

import numba
import numpy as np
from numba import njit

from epcg.combinatorics.jit import UNCACHED
from numpy.typing import ArrayLike

BLOCK = 1 << 20
"""Ranks evaluated per call of the compiled driver (bounds the scores buffer: 8 MiB)."""


@dataclass(frozen=True, eq=False)
class ArgMin:
    """The smallest value seen and every rank that reaches it, ranks ascending.

    ``value`` is None when nothing was seen (e.g. no puzzle had a solution).
    ``payload`` holds one entry per rank (e.g. each puzzle's longest solution), or is empty.

    >>> a = ArgMin(4, np.array([3, 9], dtype=np.uint64))
    >>> b = ArgMin(2, np.array([12], dtype=np.uint64))
    >>> merged = ArgMin.merge([a, b, ArgMin.empty()])
    >>> merged.value, merged.ranks.tolist()
    (2, [12])
    """

    value: int | None
    ranks: np.ndarray
    payload: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @classmethod
    def empty(cls) -> Self:
        return cls(None, np.zeros(0, dtype=np.uint64))

    @staticmethod
    def best(values: Sequence[int | None]) -> int | None:
        """The minimum of the values that are not None."""
        seen = [v for v in values if v is not None]
        return min(seen) if seen else None

    @classmethod
    def merge(cls, parts: Sequence[ArgMin]) -> Self:
        value = cls.best([p.value for p in parts])
        keep = [p for p in parts if value is not None and p.value == value]
        if not keep:
            return cls.empty()
        ranks = np.concatenate([p.ranks for p in keep]).astype(np.uint64)
        payload = np.concatenate([p.payload for p in keep]) if len(keep[0].payload) else keep[0].payload
        order = np.argsort(ranks, kind="stable")
        return cls(value, ranks[order], payload[order] if len(payload) else payload)

    def __eq__(self, other: object) -> bool:
        return (type(self) is type(other) and self.value == other.value
                and np.array_equal(self.ranks, other.ranks) and np.array_equal(self.payload, other.payload))


class ArgMax(ArgMin):
    """The largest value seen and every rank that reaches it, ranks ascending: "every design at the maximum".

    The mirror of :class:`ArgMin`: associative and commutative, ties kept whole, so any cut of a
    space merges to the same ranks (where ``TopK`` would keep only ``k`` of them, broken by rank).

    >>> a = ArgMax(4, np.array([3, 9], dtype=np.uint64))
    >>> b = ArgMax(4, np.array([1], dtype=np.uint64))
    >>> merged = ArgMax.merge([a, ArgMax(2, np.array([12], dtype=np.uint64)), b, ArgMax.empty()])
    >>> merged.value, merged.ranks.tolist()
    (4, [1, 3, 9])
    """

    @staticmethod
    def best(values: Sequence[int | None]) -> int | None:
        """The maximum of the values that are not None."""
        seen = [v for v in values if v is not None]
        return max(seen) if seen else None



@dataclass(frozen=True, eq=False)
class TopK:
    """The ``k`` best (highest score) items; ties broken by the lower rank. Scores are ints or floats.

    >>> TopK.merge([TopK.of([5, 7], [0, 1], k=2), TopK.of([7, 1], [2, 3], k=2)], k=2).ranks.tolist()
    [1, 2]
    >>> TopK.of([0.5, 0.75, 0.5], [4, 9, 2], k=2).ranks.tolist()
    [9, 2]
    """

    scores: np.ndarray
    ranks: np.ndarray

    @classmethod
    def of(cls, scores: ArrayLike, ranks: ArrayLike, k: int) -> TopK:
        scores, ranks = np.asarray(scores), np.asarray(ranks, dtype=np.uint64)
        scores = scores.astype(np.float64 if scores.dtype.kind == "f" else np.int64)
        order = np.lexsort((ranks, -scores))[:k]
        return cls(scores[order], ranks[order])

    @classmethod
    def merge(cls, parts: Sequence[TopK], k: int) -> TopK:
        return cls.of(
            np.concatenate([p.scores for p in parts]), np.concatenate([p.ranks for p in parts]), k
        )

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TopK) and np.array_equal(self.scores, other.scores)
                and np.array_equal(self.ranks, other.ranks))


@dataclass(frozen=True)
class Histogram:
    """How many ranks have each score; with a ``cap``, scores above it are only counted in ``above``.

    >>> h = Histogram.merge([Histogram({0: 2, 3: 1}), Histogram({3: 4, 1: 1})])
    >>> h.counts, h.total
    ({0: 2, 1: 1, 3: 5}, 8)
    """

    counts: dict[int, int]
    """Score -> ranks with that score, scores ascending; only scores with a rank."""
    above: int = 0
    """Ranks whose score exceeds ``cap`` (not in ``counts``)."""
    cap: int | None = None

    @classmethod
    def of(cls, scores: np.ndarray, cap: int | None = None, weights: np.ndarray | None = None) -> Histogram:
        """The histogram of an array of integer scores; with ``weights``, score ``i`` counts ``weights[i]``
        ranks (e.g. one evaluated representative standing for its whole symmetry class).

        >>> Histogram.of(np.array([2, 5, 2]), weights=np.array([4, 1, 2])).counts
        {2: 6, 5: 1}
        """
        scores = np.asarray(scores, dtype=np.int64)
        if weights is not None:
            weights = np.asarray(weights, dtype=np.int64)
            if weights.shape != scores.shape:
                raise ValueError(f"weights {weights.shape} do not match scores {scores.shape}")
        above = 0
        if cap is not None:
            high = scores > cap
            above = int(np.count_nonzero(high)) if weights is None else int(weights[high].sum())
            scores = scores[~high]
            weights = weights[~high] if weights is not None else None
        if len(scores) and 0 <= scores.min() and scores.max() < 1 << 20:
            tally = np.bincount(scores) if weights is None else np.bincount(scores, weights).astype(np.int64)
        else:
            values, where = np.unique(scores, return_inverse=True)
            tally = np.zeros(len(values), dtype=np.int64)
            np.add.at(tally, where, 1 if weights is None else weights)
            keep = np.flatnonzero(tally)
            return cls(dict(zip(values[keep].tolist(), tally[keep].tolist())), above, cap)
        values = np.flatnonzero(tally)
        return cls(dict(zip(values.tolist(), tally[values].tolist())), above, cap)

    @classmethod
    def merge(cls, parts: Sequence[Histogram]) -> Histogram:
        caps = {p.cap for p in parts}
        if len(caps) > 1:
            raise ValueError(f"histograms with different caps do not merge: {sorted(caps, key=str)}")
        total: dict[int, int] = {}
        for part in parts:
            for score, n in part.counts.items():
                total[score] = total.get(score, 0) + n
        return cls(dict(sorted(total.items())), sum(p.above for p in parts), caps.pop() if caps else None)

    @property
    def total(self) -> int:
        return sum(self.counts.values()) + self.above


@dataclass(frozen=True, eq=False)
class Kept:
    """The ranks whose score lies in ``band`` (inclusive), the ``cap`` lowest of them, ranks ascending, with
    their scores (integers, or floats such as an expert ratio, whose band may end at infinity) and payloads;
    ``matched`` counts every rank in the band, so ``cut`` says when the cap cut.

    Merging keeps the ``cap`` lowest ranks of the union, so any cut of a space merges to the same ranks.

    >>> a = Kept((2, 3), 2, np.array([4, 9], np.uint64), np.array([2, 3]), matched=2)
    >>> b = Kept((2, 3), 2, np.array([1], np.uint64), np.array([3]), matched=1)
    >>> m = Kept.merge([a, b])
    >>> m.ranks.tolist(), m.scores.tolist(), m.matched, m.cut
    ([1, 4], [3, 2], 3, True)
    """

    band: tuple[float, float]
    cap: int
    ranks: np.ndarray
    scores: np.ndarray
    payload: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    matched: int = 0

    @classmethod
    def of(cls, band: tuple[float, float], cap: int, ranks: np.ndarray, scores: np.ndarray,
           payload: np.ndarray | None = None) -> Kept:
        """The kept part of candidate ``ranks`` (any order) with ``scores``: those in the band, the lowest ``cap``."""
        ranks, scores = np.asarray(ranks, dtype=np.uint64), np.asarray(scores)
        scores = scores.astype(np.float64 if scores.dtype.kind == "f" else np.int64)
        inside = (scores >= band[0]) & (scores <= band[1])
        order = np.argsort(ranks[inside], kind="stable")[:cap]
        empty = np.zeros(0, dtype=np.int64)
        kept_payload = empty if payload is None or not len(payload) else np.asarray(payload)[inside][order]
        return cls(band, cap, ranks[inside][order], scores[inside][order], kept_payload, int(inside.sum()))

    @classmethod
    def merge(cls, parts: Sequence[Kept]) -> Kept:
        first = parts[0]
        if any(p.band != first.band or p.cap != first.cap for p in parts):
            raise ValueError("kept bands with different bands or caps do not merge")
        ranks = np.concatenate([p.ranks for p in parts])
        order = np.argsort(ranks, kind="stable")[:first.cap]
        payloads = [p.payload for p in parts if len(p.payload)]
        payload = np.concatenate(payloads)[order] if payloads else first.payload
        return cls(first.band, first.cap, ranks[order], np.concatenate([p.scores for p in parts])[order], payload,
                   sum(p.matched for p in parts))

    @property
    def cut(self) -> bool:
        """Whether the cap left ranks in the band out."""
        return self.matched > len(self.ranks)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Kept) and (self.band, self.cap, self.matched) == (other.band, other.cap, other.matched)
                and np.array_equal(self.ranks, other.ranks) and np.array_equal(self.scores, other.scores)
                and np.array_equal(self.payload, other.payload))


@dataclass(frozen=True)
class Reductions:
    """Which reductions a scan keeps (``count`` always)."""

    min: bool = True
    """Keep the lowest score and every rank reaching it."""
    ignore: int | None = None
    """A score that is never the minimum (e.g. 0 = "no solution"); ``ScanPartial.ignored`` counts it."""
    top: int = 0
    """Keep the ``top`` highest scores and their ranks (0: none)."""
    histogram: bool = False
    """Keep how many ranks have each score."""
    cap: int | None = None
    """With ``histogram``: scores above ``cap`` are only counted, not tallied one by one."""
    max: bool = False
    """Keep the highest score and every rank reaching it (``ignore`` applies, as to the minimum)."""
    keep: tuple[tuple[int, int], ...] = ()
    """Score bands ``(low, high)``, inclusive: keep every rank whose score is in one (:class:`Kept`)."""
    keep_cap: int = 100_000
    """Ranks kept per band at most, the lowest."""

    def __post_init__(self) -> None:
        if self.top < 0 or (self.cap is not None and self.cap < 0) or self.keep_cap < 0:
            raise ValueError(f"top, cap and keep_cap must be non-negative, got top={self.top}, cap={self.cap}, "
                             f"keep_cap={self.keep_cap}")
        if any(low > high for low, high in self.keep):
            raise ValueError(f"a band is (low, high) with low <= high, got {self.keep}")


@dataclass(frozen=True)
class ScanPartial:
    """The reductions of one rank range; partials of disjoint ranges merge exactly."""

    count: int
    ignored: int = 0
    argmin: ArgMin | None = None
    top: TopK | None = None
    histogram: Histogram | None = None
    top_k: int = 0
    argmax: ArgMax | None = None
    kept: tuple[Kept, ...] = ()

    @classmethod
    def of_scores(cls, scores: np.ndarray, start: int, reductions: Reductions) -> ScanPartial:
        """The reductions of ``scores[i]``, the score of rank ``start + i``."""
        scores = np.asarray(scores, dtype=np.int64)
        keep = scores != reductions.ignore if reductions.ignore is not None else None
        ignored = len(scores) - int(np.count_nonzero(keep)) if keep is not None else 0
        argmin = argmax = top = histogram = None
        candidates = scores[keep] if keep is not None else scores
        for wanted, kind, pick in ((reductions.min, ArgMin, np.min), (reductions.max, ArgMax, np.max)):
            if not wanted:
                continue
            if len(candidates):
                value = int(pick(candidates))
                found = kind(value, (np.flatnonzero(scores == value) + start).astype(np.uint64))
            else:
                found = kind.empty()
            if kind is ArgMin:
                argmin = found
            else:
                argmax = found
        if reductions.top:
            k = min(reductions.top, len(scores))
            pick = np.argpartition(-scores, k - 1)[:k] if 0 < k < len(scores) else np.arange(len(scores))
            threshold = scores[pick].min() if k else 0
            tied = np.flatnonzero(scores >= threshold)
            top = TopK.of(scores[tied], tied.astype(np.uint64) + np.uint64(start), reductions.top)
        if reductions.histogram:
            histogram = Histogram.of(scores, reductions.cap)
        ranks = np.arange(start, start + len(scores), dtype=np.uint64)
        kept = tuple(Kept.of(band, reductions.keep_cap, ranks, scores) for band in reductions.keep)
        return cls(len(scores), ignored, argmin, top, histogram, reductions.top, argmax, kept)

    @classmethod
    def merge(cls, parts: Sequence[ScanPartial]) -> ScanPartial:
        """The partial of the union of the parts' disjoint ranges."""
        if not parts:
            raise ValueError("nothing to merge")
        first = parts[0]
        return cls(
            count=sum(p.count for p in parts),
            ignored=sum(p.ignored for p in parts),
            argmin=ArgMin.merge([p.argmin for p in parts]) if first.argmin is not None else None,
            top=TopK.merge([p.top for p in parts], first.top_k) if first.top is not None else None,
            histogram=Histogram.merge([p.histogram for p in parts]) if first.histogram is not None else None,
            top_k=first.top_k,
            argmax=ArgMax.merge([p.argmax for p in parts]) if first.argmax is not None else None,
            kept=tuple(Kept.merge(band) for band in zip(*(p.kept for p in parts))),
        )


class EvaluationError(ValueError):
    """An evaluator raised: ``rank`` is the rank it was evaluating."""

    def __init__(self, space: str, rank: int, message: str) -> None:
        super().__init__(f"evaluator of {space} failed at rank {rank}: {message}")
        self.rank = rank


class CompileError(ValueError):
    """numba could not compile an evaluator."""


@dataclass(frozen=True)
class ScanSpace:
    """A content space for Algorithm 1: ranks ``0 .. max_rank-1`` and a compiled evaluator.

    ``evaluate(rank, *data) -> int`` is an ``@njit`` function (a numba
    dispatcher); ``data`` is a tuple of arrays or numbers handed to it on every
    call. Optional: ``evaluate_range(start, stop, reductions)``, a fused kernel
    that returns the :class:`ScanPartial` of a range itself (or None for
    reductions it does not compute; it must agree with ``evaluate``),
    ``decode(rank)`` (the content object of a rank), ``encode(obj)`` (its
    inverse: the rank of an object, for ``epcg probe``), ``render(obj)`` (a
    picture of it: SVG text or a matplotlib figure) and ``pattern(rank)`` (a
    hashable value equal for designs that are the same puzzle to a designer,
    for ``designs(distinct="patterns")``).
    """

    algorithm: ClassVar[str] = "scan"
    max_rank: int
    evaluate: Callable[..., int]
    data: tuple = ()
    name: str = "space"
    evaluate_range: Callable[[int, int, Reductions], ScanPartial | None] | None = None
    decode: Callable[[int], Any] | None = None
    render: Callable[[Any], Any] | None = None
    encode: Callable[[Any], int] | None = None
    pattern: Callable[[int], Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_rank", operator.index(self.max_rank))
        if self.max_rank < 0:
            raise ValueError(f"max_rank must be >= 0, got {self.max_rank}")
        if not hasattr(self.evaluate, "py_func"):
            raise ValueError(f"{self.name}: evaluate must be a numba @njit function, got {self.evaluate!r}")
        object.__setattr__(self, "data", tuple(self.data))


def scan_family(function: Callable[..., ScanSpace]) -> Callable[..., ScanSpace]:
    """Mark a function of row parameters returning a :class:`ScanSpace` as a scan space (for job files)."""
    function.algorithm = "scan"  # type: ignore[attr-defined]
    return function


@njit(**UNCACHED)
def _drive(evaluate, data, start, scores, at):
    """``scores[i] = evaluate(start + i, *data)``; ``at[0]`` is the rank being evaluated."""
    for i in range(scores.shape[0]):
        at[0] = start + i
        scores[i] = evaluate(start + i, *data)


def _evaluator_name(space: ScanSpace) -> str:
    func = getattr(space.evaluate, "py_func", space.evaluate)
    return f"{func.__module__}.{func.__qualname__}"


def check(space: ScanSpace) -> None:
    """Compile the evaluator for the space's data without evaluating any rank (a kernel that crashes must not
    take this process with it); a CompileError names it and numba's first error line."""
    if space.max_rank == 0:
        return
    scores, at = np.empty(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    try:
        _drive.compile(tuple(numba.typeof(value) for value in (space.evaluate, space.data, 0, scores, at)))
    except Exception as exc:  # noqa: BLE001 - numba reports typing and lowering errors as many types
        raise CompileError(
            f"evaluator {_evaluator_name(space)} of {space.name} does not compile with numba: {_numba_line(exc)}"
        ) from None


def _numba_line(exc: Exception) -> str:
    """The line of a numba error that says what went wrong (not the pipeline step), with what it introduces
    (the signature after "found for signature:") and where (the user's file and line), on one line.

    >>> _numba_line(Exception("Failed in nopython mode\\nNo implementation of function add found for signature:\\n"
    ...                       " \\n >>> add(unicode_type, int64)\\n \\nThere are 2 candidates\\n"
    ...                       'File "space.py", line 4:\\n'))
    'No implementation of function add found for signature: add(unicode_type, int64) (space.py, line 4)'
    """
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith(("Failed in", "During:", "File ", "^"))]
    first = (useful or lines or [type(exc).__name__])[0]
    if first.endswith(":") and len(useful) > 1:
        first += " " + useful[1].removeprefix(">>>").strip()
    where = next((line for line in lines if line.startswith("File ")), None)
    if where:
        parts = where.removeprefix("File ").rstrip(":").split(", ")
        first += f" ({parts[0].strip(chr(34))}{', ' + parts[1] if len(parts) > 1 else ''})"
    return first


def _evaluate_block(space: ScanSpace, start: int, stop: int) -> np.ndarray:
    scores = np.empty(stop - start, dtype=np.int64)
    at = np.array([start], dtype=np.int64)
    try:
        _drive(space.evaluate, space.data, start, scores, at)
    except Exception as exc:
        if "nopython" in str(exc) or type(exc).__module__.startswith("numba"):
            raise
        raise EvaluationError(space.name, int(at[0]), f"{type(exc).__name__}: {exc}") from None
    return scores


def scan_range(space: ScanSpace, start: int, stop: int, reductions: Reductions = Reductions()) -> ScanPartial:
    """Algorithm 1 over ranks ``[start, stop)``: evaluate each and reduce (one task of a job)."""
    start, stop = operator.index(start), operator.index(stop)
    if not 0 <= start <= stop <= space.max_rank:
        raise ValueError(f"range [{start}, {stop}) not within [0, {space.max_rank}]")
    if space.evaluate_range is not None:
        fused = space.evaluate_range(start, stop, reductions)
        if fused is not None:
            return fused
    parts = [
        ScanPartial.of_scores(_evaluate_block(space, a, min(a + BLOCK, stop)), a, reductions)
        for a in range(start, stop, BLOCK)
    ]
    return ScanPartial.merge(parts) if parts else ScanPartial.of_scores(np.zeros(0, np.int64), start, reductions)


def scan(space: ScanSpace, reductions: Reductions = Reductions(), chunk: int = BLOCK) -> ScanPartial:
    """Algorithm 1 over the whole space in one process, chunk by chunk (for notebooks and tests)."""
    cuts = [*range(0, space.max_rank, chunk), space.max_rank]
    if len(cuts) == 1:
        return scan_range(space, 0, 0, reductions)
    return ScanPartial.merge([scan_range(space, a, b, reductions) for a, b in zip(cuts, cuts[1:])])
