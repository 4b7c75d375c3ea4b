"""A prefix-shared walk over combinations: a user's scan space at the speed of a hand-written kernel.

Many content spaces are combinations built one element at a time: ``k``
hexagons among ``n`` positions, ``k`` pieces among ``n`` cells. Scoring each
rank from scratch redoes the work of its prefixes for every rank; a
depth-first walk extends one state per depth and shares each prefix with every
combination below it. A :class:`PrefixWalk` is that walk, with the game left
to four small ``@njit`` functions over a fixed-size state (a NumPy array shaped
like ``state``; ``*data`` is the walk's ``data`` tuple):

- ``empty(state, *data)``: fill ``state`` with the empty combination's state;
- ``extend(parent, element, child, *data)``: write into ``child`` the state of
  ``parent`` with ``element`` added (elements come in ascending order);
- ``score(state, *data) -> int``: the score of a full state (``k`` elements);
- ``dead(state, *data) -> bool`` (optional): True when every combination
  extending this prefix (of fewer than ``k`` elements, the empty one too)
  scores ``dead_score``; the walk then skips the whole subtree and counts its
  ranks as ``dead_score`` without visiting them.

Most ranks are leaves, so ``score_last(parent, element, *data)`` may replace
``score``: the score of ``parent`` plus its last element, without writing that
state; ``score_upto(parent, element, limit, *data)`` may moreover stop once
past the ``limit`` the walk passes (see :class:`PrefixWalk`).

Ranks are those of :class:`epcg.combinatorics.Combinations` (lexicographic:
rank 0 is ``(0, 1, ..., k-1)``), and every subtree is a contiguous block of
ranks, so :func:`walk_range` walks any ``[start, stop)`` and enters only the
blocks that meet it. It computes every reduction of :mod:`epcg.search.scan`
(count, ignored, argmin with every rank, top-k, histogram with a cap) exactly,
so partials of any chunking merge to the same result. :meth:`PrefixWalk.space`
is an ordinary :class:`~epcg.search.scan.ScanSpace` whose ``evaluate_range`` is
the walk (and whose ``evaluate`` builds one rank's state from scratch), so the
``scan`` job kind runs it from a job file like any other space.

The sum of ``k`` chosen weights, with subtrees pruned once the sum passes a
limit (they all score -1):

>>> from numba import njit
>>> @njit
... def empty(state, weights, limit):
...     state[0] = 0
>>> @njit
... def extend(parent, element, child, weights, limit):
...     child[0] = parent[0] + weights[element]
>>> @njit
... def score(state, weights, limit):
...     return state[0] if state[0] <= limit else -1
>>> @njit
... def dead(state, weights, limit):
...     return state[0] > limit
>>> walk = PrefixWalk(n=6, k=3, state=np.zeros(1, np.int64), empty=empty, extend=extend, score=score,
...                   dead=dead, dead_score=-1, data=(np.array([1, 2, 3, 5, 8, 13]), 12))
>>> walk.max_rank
20
>>> reductions = Reductions(ignore=-1, top=2, histogram=True)
>>> whole = walk_range(walk, 0, 20, reductions)
>>> whole.argmin.value, whole.argmin.ranks.tolist(), whole.top.scores.tolist(), whole.ignored
(6, [0], [12, 11], 14)
>>> ScanPartial.merge([walk_range(walk, a, b, reductions) for a, b in ((0, 7), (7, 20))]) == whole
True

As a scan space it runs in the ``scan`` job kind; without its walk, it scores
every rank from scratch, to the same result:

>>> from dataclasses import replace
>>> from epcg.search.scan import scan_range
>>> scan_range(replace(walk.space(), evaluate_range=None), 0, 20, reductions) == whole
True

Permutations and products fit the same construct (a prefix of a permutation
is an arrangement of distinct elements, a prefix of a product a tuple of
digits; each subtree is again a contiguous rank block in lexicographic order);
only combinations are implemented.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL, UNCACHED, UNCACHED_INLINE
from epcg.combinatorics import Combinations
from epcg.combinatorics.binomial import BINOMIAL
from epcg.combinatorics.combinations import _unrank_lex
from epcg.search.scan import ArgMin, Histogram, Reductions, ScanPartial, ScanSpace, TopK

__all__ = ["PrefixWalk", "walk_range"]

INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min
_ZERO = np.int64(0)
_ONE = np.int64(1)
HIST_LIMIT = 1 << 20
"""Scores in ``[0, HIST_LIMIT)`` are tallied in a dense array; others one by one in a list."""

# acc: the walk's counters, shared with the Python wrapper
_IGNORED, _HAS_BEST, _BEST, _AT_MIN, _TOP_N, _TOP_FULL, _TOP_THRESHOLD, _ABOVE, _OTHERS, _NEED, _NEED_SIZE = range(11)
_ACC = 11
# what a walk that stopped early needs before it can go on (acc[_NEED])
_ROOM_MIN, _ROOM_HIST, _ROOM_OTHERS = 1, 2, 3


@njit(**UNCACHED)
def never(state, *data):
    """The default ``dead``: no prefix is ever pruned."""
    return False


@njit(**UNCACHED)
def _unused_score(state, *data):
    return 0


@njit(**UNCACHED)
def _unused_score_last(parent, element, *data):
    return 0


@njit(**UNCACHED)
def _unused_score_upto(parent, element, limit, *data):
    return 0


_EXTEND_AND_SCORE, _SCORE_LAST, _SCORE_UPTO = 0, 1, 2


@dataclass(frozen=True)
class PrefixWalk:
    """The ``C(n, k)`` combinations of ``k`` of ``n`` elements, scored by a state built element by element.

    ``state`` is a prototype array: its shape and dtype are those of one
    state (the walk keeps ``k + 1`` of them, one per depth). ``empty``,
    ``extend``, ``score`` and ``dead`` are ``@njit`` functions (see the module
    docstring); ``data`` is handed to each of them after its own arguments.
    Instead of (or beside) ``score``, ``score_last(parent, element, *data) ->
    int`` may give the score of ``parent`` extended by its last element without
    writing that state (one pass over the state instead of two: most ranks are
    leaves); the walk then uses it for every rank. ``score_upto(parent,
    element, limit, *data) -> int`` is the same score, allowed to stop once it
    is past ``limit`` and return any value above it: the walk passes the
    largest score that still matters to its reductions (the minimum so far,
    the histogram's cap, the ignored score), so a count can end early.
    """

    n: int
    k: int
    state: np.ndarray
    empty: Callable[..., None]
    extend: Callable[..., None]
    score: Callable[..., int] | None = None
    dead: Callable[..., bool] = never
    dead_score: int = 0
    """The score of every combination below a prefix that ``dead`` rejects."""
    data: tuple = ()
    score_last: Callable[..., int] | None = None
    score_upto: Callable[..., int] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "n", operator.index(self.n))
        object.__setattr__(self, "k", operator.index(self.k))
        object.__setattr__(self, "dead_score", operator.index(self.dead_score))
        Combinations(self.n, self.k)  # checks n and k
        if self.score is None and self.score_last is None and self.score_upto is None:
            raise ValueError("a PrefixWalk needs score, score_last or score_upto")
        if self.score is None and self.k == 0:
            raise ValueError("k = 0 has no last element: give score (the empty combination's), not only score_last")
        for name in ("empty", "extend", "score", "dead", "score_last", "score_upto"):
            function = getattr(self, name)
            if function is not None and not hasattr(function, "py_func"):
                raise ValueError(f"{name} must be a numba @njit function, got {function!r}")
        state = np.asarray(self.state)
        if state.ndim == 0:
            raise ValueError("state must be an array of at least one dimension (one state's shape and dtype)")
        object.__setattr__(self, "state", state)
        object.__setattr__(self, "data", tuple(self.data))

    @property
    def max_rank(self) -> int:
        return Combinations(self.n, self.k).max_rank

    def functions(self) -> tuple[Any, Any, Any, Any, Any, int, Any]:
        """``(empty, extend, score, score_last, score_upto, leaf, dead)`` as the kernels take them.

        Placeholders stand for the unset ones; ``leaf`` says how a leaf is scored (the last of them given).
        """
        leaf = _SCORE_UPTO if self.score_upto is not None else _SCORE_LAST if self.score_last is not None \
            else _EXTEND_AND_SCORE
        return (self.empty, self.extend, self.score or _unused_score, self.score_last or _unused_score_last,
                self.score_upto or _unused_score_upto, leaf, self.dead)

    def space(self, name: str = "space", decode: Callable[[int], Any] | None = None,
              render: Callable[[Any], Any] | None = None) -> ScanSpace:
        """This walk as a :class:`ScanSpace`: ``evaluate_range`` is the walk, ``evaluate`` one rank from scratch.

        ``decode`` defaults to the rank's combination (a tuple of elements), and then ``encode`` ranks one.
        """
        combinations = Combinations(self.n, self.k)
        return ScanSpace(
            max_rank=combinations.max_rank,
            evaluate=_evaluate_rank,
            data=(self.n, self.k, *self.functions(), self.dead_score, self.state, self.data),
            name=name,
            evaluate_range=self._evaluate_range,
            decode=decode if decode is not None else combinations.unrank,
            render=render,
            encode=(lambda items: combinations.rank(tuple(items))) if decode is None else None,
        )

    def _evaluate_range(self, start: int, stop: int, reductions: Reductions) -> ScanPartial | None:
        """The walk, or None (the scan then scores rank by rank) for the reductions it does not compute: ``max``
        and ``keep``."""
        return None if reductions.max or reductions.keep else walk_range(self, start, stop, reductions)


@njit(**UNCACHED)
def _evaluate_rank(rank, n, k, empty, extend, score, score_last, score_upto, leaf, dead, dead_score, state, data):
    """The score of one rank: unrank it, build its state from the empty one, prune as the walk does."""
    items = np.empty(k, dtype=np.int64)
    _unrank_lex(rank, n, k, items)
    states = np.empty((k + 1,) + state.shape, dtype=state.dtype)
    empty(states[0], *data)
    for i in range(k):
        if dead(states[i], *data):
            return dead_score
        if leaf == _SCORE_LAST and i == k - 1:
            return score_last(states[i], items[i], *data)
        if leaf == _SCORE_UPTO and i == k - 1:
            return score_upto(states[i], items[i], INT64_MAX, *data)
        extend(states[i], items[i], states[i + 1], *data)
    return score(states[k], *data)


def walk_range(walk: PrefixWalk, start: int, stop: int, reductions: Reductions = Reductions()) -> ScanPartial:
    """The reductions of ranks ``[start, stop)`` of ``walk``, computed by one depth-first walk."""
    start, stop = operator.index(start), operator.index(stop)
    if not 0 <= start <= stop <= walk.max_rank:
        raise ValueError(f"range [{start}, {stop}) not within [0, {walk.max_rank}]")
    r = reductions
    acc = np.zeros(_ACC, dtype=np.int64)
    mins = np.zeros(256 if r.min else 0, dtype=np.int64)
    top_scores = np.zeros(2 * r.top, dtype=np.int64)
    top_ranks = np.zeros(2 * r.top, dtype=np.int64)
    hist = np.zeros(min(r.cap + 1, 1024) if r.cap is not None else 1024, dtype=np.int64) if r.histogram \
        else np.zeros(0, dtype=np.int64)
    others = np.zeros((64 if r.histogram else 0, 2), dtype=np.int64)
    states = np.empty((walk.k + 1, *walk.state.shape), dtype=walk.state.dtype)
    items = np.zeros(max(walk.k, 1), dtype=np.int64)
    bases = np.zeros(max(walk.k, 1), dtype=np.int64)
    at = start
    while at < stop:
        acc[_NEED] = 0
        at = _walk(walk.n, walk.k, *walk.functions(), walk.dead_score, walk.data, states, items, bases, at, stop,
                   r.min, r.ignore is not None, r.ignore or 0, r.top, r.histogram, r.cap is not None, r.cap or 0,
                   acc, mins, top_scores, top_ranks, hist, others)
        if acc[_NEED] == _ROOM_MIN:
            mins = np.concatenate([mins, np.zeros(len(mins), dtype=np.int64)])
        elif acc[_NEED] == _ROOM_HIST:
            size = min(max(2 * len(hist), int(acc[_NEED_SIZE])), HIST_LIMIT)
            grown = np.zeros(size if r.cap is None else min(size, r.cap + 1), dtype=np.int64)
            grown[: len(hist)] = hist
            hist = grown
        elif acc[_NEED] == _ROOM_OTHERS:
            others = np.concatenate([others, np.zeros_like(others)])
    return _partial(walk, start, stop, r, acc, mins, top_scores, top_ranks, hist, others)


def _partial(walk: PrefixWalk, start: int, stop: int, r: Reductions, acc: np.ndarray, mins: np.ndarray,
             top_scores: np.ndarray, top_ranks: np.ndarray, hist: np.ndarray, others: np.ndarray) -> ScanPartial:
    """The :class:`ScanPartial` the walk's counters and buffers stand for."""
    argmin = top = histogram = None
    if r.min:
        argmin = ArgMin(int(acc[_BEST]), mins[: acc[_AT_MIN]].astype(np.uint64)) if acc[_HAS_BEST] \
            else ArgMin.empty()
    if r.top:
        n = int(acc[_TOP_N])
        top = TopK.of(top_scores[:n], top_ranks[:n], r.top)
    if r.histogram:
        tally = Histogram.of(others[: acc[_OTHERS], 0], weights=others[: acc[_OTHERS], 1]).counts
        dense = np.flatnonzero(hist)
        tally.update(zip(dense.tolist(), hist[dense].tolist()))
        histogram = Histogram(dict(sorted(tally.items())), int(acc[_ABOVE]), r.cap)
    ignored = int(acc[_IGNORED]) if r.ignore is not None else 0
    return ScanPartial(stop - start, ignored, argmin, top, histogram, r.top)


@njit(**KERNEL)
def _compact_top(top_scores, top_ranks, k, acc):
    """Keep the ``k`` best of the full top buffer (score descending, then rank ascending)."""
    order = np.argsort(-top_scores, kind="mergesort")[:k]
    kept_scores = top_scores[order]
    kept_ranks = top_ranks[order]
    top_scores[:k] = kept_scores
    top_ranks[:k] = kept_ranks
    acc[_TOP_N] = k
    acc[_TOP_FULL] = 1
    acc[_TOP_THRESHOLD] = kept_scores[k - 1]


@njit(**KERNEL)
def _offer_top(s, rank, top, acc, top_scores, top_ranks):
    """Keep ``(s, rank)`` if it may be among the ``top`` best; ranks come in ascending order."""
    if acc[_TOP_FULL] == 0 or s > acc[_TOP_THRESHOLD]:
        n = acc[_TOP_N]
        if n == top_scores.shape[0]:
            _compact_top(top_scores, top_ranks, top, acc)
            if s <= acc[_TOP_THRESHOLD]:
                return
            n = acc[_TOP_N]
        top_scores[n] = s
        top_ranks[n] = rank
        acc[_TOP_N] = n + 1


@njit(**KERNEL)
def _take(s, rank, weight, want_min, has_ignore, ignore, top, want_hist, has_cap, cap,
          acc, mins, top_scores, top_ranks, hist, others):
    """Fold ``weight`` ranks from ``rank`` on, all scoring ``s``, into the reductions; False if out of room.

    A block (``weight > 1``, a dead subtree) is folded at once only when the
    minimum does not need its ranks (its score is ignored, or no minimum is
    kept); the top-k gets the block's first ranks. Nothing is folded when it
    returns False.
    """
    ignored = has_ignore and s == ignore
    at_min = want_min and not ignored and (acc[_HAS_BEST] == 0 or s <= acc[_BEST])
    if at_min:
        if acc[_HAS_BEST] != 0 and s == acc[_BEST] and acc[_AT_MIN] == mins.shape[0]:
            acc[_NEED] = _ROOM_MIN
            return False
    if want_hist and not (has_cap and s > cap):
        if s >= hist.shape[0] and s < HIST_LIMIT:
            acc[_NEED] = _ROOM_HIST
            acc[_NEED_SIZE] = s + 1
            return False
        if (s < 0 or s >= HIST_LIMIT) and acc[_OTHERS] == others.shape[0]:
            acc[_NEED] = _ROOM_OTHERS
            return False
    if ignored:
        acc[_IGNORED] += weight
    if want_hist:
        if has_cap and s > cap:
            acc[_ABOVE] += weight
        elif s >= 0 and s < HIST_LIMIT:
            hist[s] += weight
        else:
            o = acc[_OTHERS]
            others[o, 0] = s
            others[o, 1] = weight
            acc[_OTHERS] = o + 1
    if at_min:
        if acc[_HAS_BEST] == 0 or s < acc[_BEST]:
            acc[_HAS_BEST] = 1
            acc[_BEST] = s
            acc[_AT_MIN] = 0
        mins[acc[_AT_MIN]] = rank
        acc[_AT_MIN] += 1
    if top > 0:
        for j in range(min(weight, top)):
            _offer_top(s, rank + j, top, acc, top_scores, top_ranks)
    return True


@njit(**KERNEL)
def _take_block(s, lo, hi, want_min, has_ignore, ignore, top, want_hist, has_cap, cap,
                acc, mins, top_scores, top_ranks, hist, others):
    """Fold the ranks ``[lo, hi)`` of a dead block; returns the first rank not folded (``hi`` when all are)."""
    if want_min and not (has_ignore and s == ignore):
        for rank in range(lo, hi):  # the minimum needs every rank: fold them one by one
            if not _take(s, rank, _ONE, want_min, has_ignore, ignore, top, want_hist, has_cap, cap,
                         acc, mins, top_scores, top_ranks, hist, others):
                return rank
        return hi
    if not _take(s, lo, hi - lo, want_min, has_ignore, ignore, top, want_hist, has_cap, cap,
                 acc, mins, top_scores, top_ranks, hist, others):
        return lo
    return hi


@njit(**KERNEL)
def _limit(best, want_min, has_ignore, ignore, top, want_hist, has_cap, cap):
    """The largest score the reductions still need exactly (``best``: the minimum so far, or INT64_MAX)."""
    if top > 0 or (want_hist and not has_cap):
        return INT64_MAX
    limit = INT64_MIN
    if want_min:
        limit = best
    if want_hist:
        limit = max(limit, cap)
    if has_ignore:
        limit = max(limit, ignore)
    return limit


@njit(**UNCACHED_INLINE)
def _leaves(n, k, extend, score, score_last, score_upto, leaf, data, states, q0, b0, start, stop,
            want_min, has_ignore, ignore, top, want_hist, has_cap, cap, acc, mins, top_scores, top_ranks, hist, others):
    """Score the leaves below ``states[k-1]``: element ``q`` (``q0 <= q < n``) is rank ``b0 + q - q0``.

    Returns the rank it stopped at (``stop`` when the walk is over, -1 when the
    leaves are done). A leaf that only adds to counters is folded here with the
    counters in locals; the rest (a score at or below the minimum, a top-k
    candidate, a score outside the histogram) goes through ``_take``.
    """
    last = k - 1
    hist_n = hist.shape[0]
    ignored = 0
    above = 0
    best = acc[_BEST] if acc[_HAS_BEST] != 0 else INT64_MAX
    top_open = top > 0 and acc[_TOP_FULL] == 0
    top_gate = acc[_TOP_THRESHOLD]
    limit = _limit(best, want_min, has_ignore, ignore, top, want_hist, has_cap, cap)
    out = -1
    for q in range(max(q0, q0 + start - b0), n):
        rank = b0 + q - q0
        if rank >= stop:
            out = stop
            break
        if leaf == _SCORE_UPTO:
            s = score_upto(states[last], q, limit, *data)
        elif leaf == _SCORE_LAST:
            s = score_last(states[last], q, *data)
        else:
            extend(states[last], q, states[k], *data)
            s = score(states[k], *data)
        is_ignored = has_ignore and s == ignore
        fast = not ((want_min and s <= best and not is_ignored) or top_open or (top > 0 and s > top_gate))
        if fast and want_hist:
            fast = (s >= 0 and s < hist_n) or (has_cap and s > cap)
        if fast:
            if is_ignored:
                ignored += 1
            if want_hist:
                if s >= 0 and s < hist_n:
                    hist[s] += 1
                else:
                    above += 1
            continue
        acc[_IGNORED] += ignored
        acc[_ABOVE] += above
        ignored = 0
        above = 0
        if not _take(s, rank, _ONE, want_min, has_ignore, ignore, top, want_hist, has_cap, cap,
                     acc, mins, top_scores, top_ranks, hist, others):
            out = rank
            break
        best = acc[_BEST] if acc[_HAS_BEST] != 0 else INT64_MAX
        top_open = top > 0 and acc[_TOP_FULL] == 0
        top_gate = acc[_TOP_THRESHOLD]
        limit = _limit(best, want_min, has_ignore, ignore, top, want_hist, has_cap, cap)
    acc[_IGNORED] += ignored
    acc[_ABOVE] += above
    return out


@njit(**UNCACHED)
def _walk(n, k, empty, extend, score, score_last, score_upto, leaf, dead, dead_score, data, states, items, bases,
          start, stop, want_min, has_ignore, ignore, top, want_hist, has_cap, cap,
          acc, mins, top_scores, top_ranks, hist, others):
    """Walk ranks ``[start, stop)`` depth first; returns the rank it stopped at (``stop``, or a buffer was full).

    ``items[i]`` is the element at depth ``i``, ``bases[i]`` the first rank of
    its next sibling's block. Trusts its caller: ``0 <= start < stop <= C(n, k)``.
    """
    empty(states[0], *data)
    if k == 0:  # one rank, the full state itself (``dead`` only ever judges proper prefixes)
        if _take(score(states[0], *data), _ZERO, _ONE, want_min, has_ignore, ignore, top, want_hist, has_cap, cap,
                 acc, mins, top_scores, top_ranks, hist, others):
            return stop
        return start
    if dead(states[0], *data):
        return _take_block(dead_score, start, stop, want_min, has_ignore, ignore, top, want_hist, has_cap, cap,
                           acc, mins, top_scores, top_ranks, hist, others)
    last = k - 1
    i = 0
    items[0] = -1
    bases[0] = 0
    while i >= 0:
        if i == last:
            out = _leaves(n, k, extend, score, score_last, score_upto, leaf, data, states, items[i] + 1, bases[i],
                          start, stop, want_min, has_ignore, ignore, top, want_hist, has_cap, cap,
                          acc, mins, top_scores, top_ranks, hist, others)
            if out >= 0:
                return out
            i -= 1
            continue
        q = items[i] + 1
        if q > n - k + i:
            i -= 1
            continue
        items[i] = q
        lo = bases[i]
        size = BINOMIAL[n - 1 - q, last - i]
        bases[i] = lo + size
        if lo + size <= start:
            continue
        if lo >= stop:
            return stop
        extend(states[i], q, states[i + 1], *data)
        if dead(states[i + 1], *data):
            hi = min(lo + size, stop)
            done = _take_block(dead_score, max(lo, start), hi, want_min, has_ignore, ignore, top, want_hist,
                               has_cap, cap, acc, mins, top_scores, top_ranks, hist, others)
            if done < hi:
                return done
            continue
        i += 1
        items[i] = q
        bases[i] = lo
    return stop
