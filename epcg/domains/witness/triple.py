"""Triple panels (paper Algorithm 6): three piece sub-panels that only one path solves together.

A triple is three sub-panels in a row, ``(A, B, C)``. Its joint solutions are
the paths solving all three (AND of their solution bitsets). It is
*admissible* when exactly one path solves all three, and its **score** is the
smallest number of joint solutions of any single sub-panel or pair::

    score = min(|A|, |B|, |C|, |A∧B|, |A∧C|, |B∧C|)     if |A∧B∧C| == 1

so no sub-panel or pair gives the answer away. The best triple maximises the
score. With ``separate=True`` (the paper's Figure 4) a triple is admissible
only if, besides, the single joint path puts the ``k`` symbols of **each**
sub-panel in ``k`` pairwise different regions; scores still count solutions
by the ordinary rules, since that is what a player can use.

**Distinct sets.** The score depends on the sub-panels only through their
solution sets, and many panels share one: on 3×3 the 113,296 solvable panels
have 7,316 distinct sets. The search runs over the distinct sets (*classes*),
sorted by solution count, largest first (ties: lowest panel rank first), and
each optimal class triple expands afterwards to its panels (``expand``).
Since the score is symmetric, class triples are enumerated unordered,
``i <= j <= k``; ``expand`` lists every ordered panel triple behind one. (A
class may repeat: then a pair equals a single set and the score is 1.)

**Bounds.** A partial set's score (the minimum over its non-empty subsets)
bounds every completion, so a node is cut when that bound cannot reach the
target. Classes are sorted by count, so once a class is too small every later
one is too, and whole sibling ranges end at once. A pair also needs a joint
solution (and, with ``separate``, one that every member can separate).

**Splitting and determinism.** ``search_range`` covers the first class
index in ``[first_start, first_stop)``. The answer never depends on how the
range is split, on when a shared incumbent is read, or on re-running:

- ``mode="all"``: nodes are cut only when **strictly** worse than the best
  known score, so each task finds every triple of its range at any score that
  is still optimal; ``merge_results`` keeps the tasks at the maximum score.
- ``mode="first"``: a task also cuts ties with its *own* best (every later
  triple of its range comes later in the search order), but only strictly
  worse nodes against the shared score; so each task returns the first triple
  of its range at its best score, and ``merge_results`` keeps the first one
  at the maximum score: the first optimal triple in search order.

Node counts (``nodes``, ``pruned``, ``improvements``) are diagnostics: they
depend on the split and on when incumbents arrive.

>>> prob = problem_for(2, 3, 2, ("#", "##/#.", "#./##"))   # 2x3 panels, 2 of 3 pieces
>>> prob.solvable, prob.num_sets
(62, 30)
>>> r = search_range(prob, 0, prob.num_sets)
>>> r.score, r.triples
(3, ((1, 2, 5), (2, 5, 6)))
>>> info = triple_info(prob, r.triples[0])
>>> info.moves, info.set_counts, info.pair_counts, info.arrangements
('RURULUR', (7, 7, 5), (5, 3, 3), 48)
>>> expand(prob, r.triples[0])[:2]
[(11, 83, 92), (11, 83, 96)]
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from numba import njit

from epcg.domains.witness.bitsets import _ctz, popcount
from epcg.domains.witness.piece_panels import (
    PiecePanel, SolutionSets, check_panel_space, decode, solution_sets,
)
from epcg.domains.witness.pieces import LIBRARY
from epcg.domains.witness.paths import paths_for

__all__ = ["LIBRARY", "MODES", "BBResult", "TripleInfo", "TripleProblem", "build_problem", "expand",
           "merge_results", "problem_for", "score", "search_range", "triple_info"]

MODES = ("all", "first")
"""``"all"``: every optimal triple; ``"first"``: the first optimal triple in search order."""

_ONE = np.uint64(1)


# ---------------------------------------------------------------- problem: distinct solution sets


@njit(cache=True, nogil=True)
def _row_hashes(bits):
    """A 64-bit hash of each row (multiply-xorshift over its words)."""
    out = np.zeros(bits.shape[0], dtype=np.uint64)
    for i in range(bits.shape[0]):
        h = np.uint64(0x9E3779B97F4A7C15)
        for w in range(bits.shape[1]):
            h ^= bits[i, w]
            h *= np.uint64(0xBF58476D1CE4E5B9)
            h ^= h >> np.uint64(31)
        out[i] = h
    return out


@njit(cache=True, nogil=True)
def _group_rows(bits, hashes, order):
    """Class id of each row: equal rows share one. ``order`` sorts ``hashes``.

    Rows with equal hashes are compared word by word, so a hash collision only
    costs time. Class ids are in order of first appearance along ``order``.
    """
    n = bits.shape[0]
    words = bits.shape[1]
    cls = np.full(n, -1, dtype=np.int64)
    reps = np.zeros(n, dtype=np.int64)  # a row of each class
    classes = 0
    a = 0
    while a < n:
        b = a
        while b < n and hashes[order[b]] == hashes[order[a]]:
            b += 1
        first_class = classes
        for t in range(a, b):
            row = order[t]
            for c in range(first_class, classes):
                r = reps[c]
                same = True
                for w in range(words):
                    if bits[row, w] != bits[r, w]:
                        same = False
                        break
                if same:
                    cls[row] = c
                    break
            if cls[row] < 0:
                cls[row] = classes
                reps[classes] = row
                classes += 1
        a = b
    return cls, classes


@dataclass(frozen=True, eq=False)
class TripleProblem:
    """The classes (distinct solution sets) a triple search runs over, and the panels behind them.

    Arrays are read-only. Classes are sorted by solution count, largest first,
    ties by lowest panel rank.
    """

    width: int
    height: int
    k: int
    library: tuple[str, ...]
    separate: bool
    solvable: int
    """Panels with at least one solution (all of them, also with ``separate``)."""
    bits: np.ndarray
    """``(D, words)`` uint64: the solution set of each class."""
    counts: np.ndarray
    """``(D,)`` int64: solutions of each class, non-increasing."""
    sep: np.ndarray
    """``(D, words)`` uint64: paths that separate at least one panel of the class."""
    member_start: np.ndarray
    """``(D+1,)`` int64: the panels of class ``d`` are ``member_ranks[member_start[d]:member_start[d+1]]``."""
    member_ranks: np.ndarray
    """``(N,)`` int64 panel ranks, ascending within each class."""
    member_sep: np.ndarray
    """``(N, words)`` uint64: the separating solutions of each member panel."""

    @property
    def num_sets(self) -> int:
        return int(self.counts.shape[0])

    @property
    def num_paths(self) -> int:
        return len(paths_for(self.width, self.height))

    def members(self, d: int) -> np.ndarray:
        """Ranks of the panels of class ``d``, ascending."""
        return self.member_ranks[self.member_start[d]:self.member_start[d + 1]]

    def panel(self, rank: int) -> PiecePanel:
        return decode(self.width, self.height, self.k, len(self.library), rank)


def build_problem(width: int, height: int, k: int, library: Sequence[str], separate: bool,
                  sets: SolutionSets) -> TripleProblem:
    """Group the solvable panels ``sets`` (all of them, ascending by rank) into classes.

    With ``separate``, panels without a separating solution cannot take part
    in an admissible triple and are left out before grouping.
    """
    check_panel_space(width, height, k, library)
    library = tuple(library)
    solvable = len(sets.ranks)
    ranks, bits, sep = sets.ranks, sets.bits, sets.sep
    if separate:
        keep = np.flatnonzero(sep.any(axis=1))
        ranks, bits, sep = ranks[keep], bits[keep], sep[keep]
    hashes = _row_hashes(bits)
    order = np.argsort(hashes, kind="stable")
    cls, D = _group_rows(bits, hashes, order)
    first = np.full(D, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, cls, np.arange(len(cls)))
    counts = _popcounts(bits[first]) if D else np.zeros(0, dtype=np.int64)
    rank_of_class = np.lexsort((ranks[first], -counts))  # count desc, then lowest rank
    new_id = np.empty(D, dtype=np.int64)
    new_id[rank_of_class] = np.arange(D)
    cls = new_id[cls]
    members = np.lexsort((ranks, cls))
    member_start = np.searchsorted(cls[members], np.arange(D + 1))
    class_sep = np.zeros((D, bits.shape[1]), dtype=np.uint64)
    np.bitwise_or.at(class_sep, cls, sep)
    out = TripleProblem(
        width, height, k, library, bool(separate), solvable,
        bits=np.ascontiguousarray(bits[first][rank_of_class]),
        counts=counts[rank_of_class],
        sep=class_sep,
        member_start=member_start.astype(np.int64),
        member_ranks=ranks[members],
        member_sep=np.ascontiguousarray(sep[members]),
    )
    for a in (out.bits, out.counts, out.sep, out.member_start, out.member_ranks, out.member_sep):
        a.flags.writeable = False
    return out


@njit(cache=True, nogil=True)
def _popcounts(bits):
    out = np.zeros(bits.shape[0], dtype=np.int64)
    for i in range(bits.shape[0]):
        for w in range(bits.shape[1]):
            out[i] += popcount(bits[i, w])
    return out


@lru_cache(maxsize=4)
def problem_for(width: int = 3, height: int = 3, k: int = 3, library: tuple[str, ...] = LIBRARY,
                separate: bool = False) -> TripleProblem:
    """The problem of a panel space, generated and grouped in this process (cached per process)."""
    library = tuple(library)
    check_panel_space(width, height, k, library)
    return build_problem(width, height, k, library, separate, solution_sets(width, height, k, library))


# ---------------------------------------------------------------- the search


@njit(cache=True, nogil=True)
def _search_first(i, bits, counts, sep, use_sep, best, shared, first_mode, out, n_out, stats):
    """Branch and bound below first class ``i``; returns ``(best, n_out)``.

    Leaves are class triples ``i <= j <= k``. A leaf at score ``>= need``
    becomes the new best (``stats[2] += 1`` when it raises it, and ``out``
    restarts); ``need = max(best, shared, 1)``, or ``max(best + 1, shared, 1)``
    in first mode. Triples at the best are written to ``out[n_out]`` while
    they fit (``n_out`` may exceed its length; the caller reruns with room).
    ``stats``: nodes evaluated, nodes pruned (cut partial sets, plus siblings
    skipped because the sorted counts fell below ``need``), improvements.
    Unchecked: arrays from a ``TripleProblem``, ``0 <= i < len(counts)``.
    """
    D = counts.shape[0]
    words = bits.shape[1]
    ab = np.zeros(words, dtype=np.uint64)
    need = max(best + 1 if first_mode else best, shared, 1)
    stats[0] += 1
    if counts[i] < need:
        stats[1] += 1
        return best, n_out
    for j in range(i, D):
        if counts[j] < need:
            stats[1] += D - j
            break
        stats[0] += 1
        nab = 0
        alive = False
        for w in range(words):
            x = bits[i, w] & bits[j, w]
            ab[w] = x
            nab += popcount(x)
            if use_sep and (x & sep[i, w] & sep[j, w]) != 0:
                alive = True
        if nab < need or (use_sep and not alive):
            stats[1] += 1
            continue
        for k in range(j, D):
            if counts[k] < need:
                stats[1] += D - k
                break
            stats[0] += 1
            nabc = 0
            wp = 0
            for w in range(words):
                x = ab[w] & bits[k, w]
                if x != 0:
                    nabc += popcount(x)
                    if nabc > 1:
                        break
                    wp = w
            if nabc != 1:
                continue
            x = ab[wp] & bits[k, wp]
            if use_sep and (x & sep[i, wp] & sep[j, wp] & sep[k, wp]) == 0:
                continue
            nac = 0
            nbc = 0
            for w in range(words):
                nac += popcount(bits[i, w] & bits[k, w])
                nbc += popcount(bits[j, w] & bits[k, w])
            sc = min(counts[k], nab, nac, nbc)
            if sc < need:
                continue
            if sc > best:
                best = sc
                n_out = 0
                stats[2] += 1
                need = max(best + 1 if first_mode else best, shared, 1)
            if n_out < out.shape[0]:
                out[n_out, 0] = i
                out[n_out, 1] = j
                out[n_out, 2] = k
            n_out += 1
            if first_mode:
                need = max(best + 1, shared, 1)
    return best, n_out


@dataclass(frozen=True)
class BBResult:
    """What a search over a range of first classes found."""

    score: int
    """Best score found in the range (0: no admissible triple reached the target)."""
    triples: tuple[tuple[int, int, int], ...]
    """Class triples ``i <= j <= k`` at ``score``, in search order ("first": at most one)."""
    nodes: int = 0
    """Partial and complete sets evaluated."""
    pruned: int = 0
    """Partial sets cut by the bound, plus sibling sets skipped by the sorted count cut-off."""
    improvements: int = 0
    """Times this range raised its own best score."""
    mode: str = "all"
    first_start: int = 0
    first_stop: int = 0
    meta: dict = field(default_factory=dict, compare=False)
    """Free-form diagnostics (e.g. seconds) that ``merge_results`` ignores."""


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")


def search_range(
    problem: TripleProblem,
    first_start: int,
    first_stop: int,
    incumbent: int = 0,
    get_incumbent: Callable[[], int] | None = None,
    publish: Callable[[int], None] | None = None,
    batch: int = 64,
    mode: str = "all",
) -> BBResult:
    """Branch and bound over the triples whose first class lies in ``[first_start, first_stop)``.

    ``incumbent``: a score some admissible triple is known to reach (0: none).
    Every ``batch`` first classes ``get_incumbent()`` may raise it (a stale
    value only prunes less); ``publish(score)`` is called when this range beats
    the best score it knows of. See the module docstring for ``mode``.
    """
    _check_mode(mode)
    D = problem.num_sets
    if not 0 <= first_start <= first_stop <= D:
        raise ValueError(f"first-class range [{first_start}, {first_stop}) is not within [0, {D}]")
    if batch < 1:
        raise ValueError(f"batch must be at least 1, got {batch}")
    shared = max(int(incumbent), 0)
    best = 0
    stats = np.zeros(3, dtype=np.int64)
    found: list[tuple[int, int, int]] = []
    out = np.zeros((256, 3), dtype=np.int64)
    first_mode = mode == "first"
    for i in range(first_start, first_stop):
        if (i - first_start) % batch == 0 and i > first_start and get_incumbent is not None:
            shared = max(shared, int(get_incumbent()))
        if problem.counts[i] < max(shared, best + first_mode, 1):
            stats[1] += first_stop - i  # sorted: no later first class can reach the target
            break
        while True:
            before = stats.copy()
            new_best, n = _search_first(i, problem.bits, problem.counts, problem.sep, problem.separate,
                                        best, shared, first_mode, out, 0, stats)
            if n <= out.shape[0]:
                break
            stats[:] = before
            out = np.zeros((2 * n, 3), dtype=np.int64)
        if new_best > best:
            found = []
            if publish is not None and new_best > shared:
                publish(new_best)
            shared = max(shared, new_best)
            best = new_best
        found.extend(map(tuple, out[:n].tolist()))
    return BBResult(best, tuple(found), int(stats[0]), int(stats[1]), int(stats[2]), mode,
                    first_start, first_stop)


def merge_results(results: Iterable[BBResult], mode: str = "all") -> BBResult:
    """Combine the results of disjoint ranges: the maximum score and its triples, in search order.

    "all" keeps every triple at the maximum, "first" the first one. Node counts are summed.
    """
    _check_mode(mode)
    results = list(results)
    best = max((r.score for r in results), default=0)
    triples = sorted({t for r in results if r.score == best for t in r.triples}) if best else []
    if mode == "first":
        triples = triples[:1]
    return BBResult(
        best, tuple(triples),
        sum(r.nodes for r in results), sum(r.pruned for r in results), sum(r.improvements for r in results),
        mode, min((r.first_start for r in results), default=0), max((r.first_stop for r in results), default=0),
    )


# ---------------------------------------------------------------- scoring and expanding triples


def _count(row: np.ndarray) -> int:
    return int(sum(int(w).bit_count() for w in row))


def score(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> int:
    """Score of three solution bitsets: 0 unless exactly one path solves all three.

    >>> one = np.array([0b0111], dtype=np.uint64)
    >>> score(one, np.array([0b1101], dtype=np.uint64), np.array([0b1011], dtype=np.uint64))
    2
    """
    if _count(a & b & c) != 1:
        return 0
    return min(_count(a), _count(b), _count(c), _count(a & b), _count(a & c), _count(b & c))


def _joint_path(problem: TripleProblem, triple: Sequence[int]) -> int:
    i, j, k = triple
    joint = problem.bits[i] & problem.bits[j] & problem.bits[k]
    if _count(joint) != 1:
        raise ValueError(f"class triple {tuple(triple)} has {_count(joint)} joint solutions, not one")
    w = int(np.flatnonzero(joint)[0])
    return 64 * w + (int(joint[w]) & -int(joint[w])).bit_length() - 1


def _members_for(problem: TripleProblem, d: int, path: int) -> np.ndarray:
    """Panels of class ``d`` that may sit in a triple whose joint path is ``path``."""
    lo, hi = problem.member_start[d], problem.member_start[d + 1]
    ranks = problem.member_ranks[lo:hi]
    if problem.separate:
        ok = (problem.member_sep[lo:hi, path >> 6] >> np.uint64(path & 63)) & _ONE
        ranks = ranks[ok.astype(bool)]
    return ranks


def expand(problem: TripleProblem, triple: Sequence[int], limit: int | None = None) -> list[tuple[int, int, int]]:
    """The ordered panel triples ``(rank_A, rank_B, rank_C)`` behind a class triple, ascending.

    Every arrangement of the three classes in the row, every panel of each class
    (with ``separate``, only panels the joint path separates). ``limit`` caps the list.
    """
    path = _joint_path(problem, triple)
    out: set[tuple[int, int, int]] = set()
    for order in set(itertools.permutations(tuple(int(t) for t in triple))):
        lists = [_members_for(problem, d, path).tolist() for d in order]
        out.update(itertools.product(*lists))
    result = sorted(out)
    return result if limit is None else result[:limit]


def count_arrangements(problem: TripleProblem, triple: Sequence[int]) -> int:
    """Number of ordered panel triples behind a class triple (``len(expand(...))`` without listing them)."""
    path = _joint_path(problem, triple)
    sizes = {d: len(_members_for(problem, d, path)) for d in set(int(t) for t in triple)}
    total = 0
    for order in set(itertools.permutations(tuple(int(t) for t in triple))):
        n = 1
        for d in order:
            n *= sizes[d]
        total += n  # orders give disjoint sets: a panel triple's classes name its order
    return total


@dataclass(frozen=True)
class TripleInfo:
    """A class triple decoded for a report: its score, joint path and representative panels."""

    classes: tuple[int, int, int]
    score: int
    path: int
    """Index of the single joint solution in ``paths_for(width, height)``."""
    moves: str
    """The joint solution as moves, e.g. ``'URDRUURU'``."""
    panels: tuple[int, int, int]
    """Ranks of the lowest-ranked panel of each class (that the path separates, with ``separate``), A B C."""
    set_counts: tuple[int, int, int]
    """Solutions of each class."""
    pair_counts: tuple[int, int, int]
    """Joint solutions of the pairs (A,B), (A,C), (B,C)."""
    arrangements: int
    """Ordered panel triples behind the class triple (``count_arrangements``)."""

    def to_dict(self, problem: TripleProblem) -> dict:
        """Plain-JSON form with each representative panel decoded (cells and piece texts)."""
        panels = []
        for r in self.panels:
            pz = problem.panel(r)
            panels.append({"rank": r, "cells": list(pz.cells), "pieces": [problem.library[t] for t in pz.types]})
        return {"classes": list(self.classes), "score": self.score, "path": self.path, "moves": self.moves,
                "panels": panels, "set_counts": list(self.set_counts), "pair_counts": list(self.pair_counts),
                "arrangements": self.arrangements}


def triple_info(problem: TripleProblem, triple: Sequence[int]) -> TripleInfo:
    """Decode a class triple found by ``search_range``."""
    i, j, k = (int(t) for t in triple)
    path = _joint_path(problem, (i, j, k))
    bits = problem.bits
    return TripleInfo(
        (i, j, k),
        score(bits[i], bits[j], bits[k]),
        path,
        paths_for(problem.width, problem.height).moves(path),
        tuple(int(_members_for(problem, d, path)[0]) for d in (i, j, k)),
        (_count(bits[i]), _count(bits[j]), _count(bits[k])),
        (_count(bits[i] & bits[j]), _count(bits[i] & bits[k]), _count(bits[j] & bits[k])),
        count_arrangements(problem, (i, j, k)),
    )
