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
solution sets, and many panels share one (``triple_problem.py``): 3×3 has
113,296 solvable panels but 7,316 distinct sets (15× fewer, so about 3,700×
fewer triples); 4×4 has 5,367,102 and 547,912 (10×, ~940× fewer triples).
With ``separate`` only panels that some solution separates can take part:
380 panels in 56 classes on 3×3; 6,969 classes on 4×4. The search runs over
the classes, sorted by solution count, largest first, and each optimal class
triple expands afterwards to its panels (``expand``). The score is symmetric,
so class triples are enumerated unordered, ``i <= j <= k``; ``expand`` lists
every ordered panel triple behind one. (A class may repeat: then a pair
equals a single set and the score is 1.)

**Bounds.** A partial set's score (the minimum over its non-empty subsets)
bounds every completion, so a node is cut when that bound cannot reach the
target ``need``. Classes are sorted by count, so the classes below ``need``
solutions are a suffix, cut at once. For a first class ``A``, an inverted
index (classes per path) counts ``|A∧X|`` for every class meeting ``A``; only
classes with ``|A∧X| >= need`` can be ``B`` or ``C``, and ``|A∧B∧C|`` is then
a popcount of their rows compacted to ``A``'s paths (``ceil(|A|/64)`` words
instead of all paths). With ``separate`` a pair also needs a joint solution
that both can separate. The 3×3 optimum takes 0.05 s; 4×4 about 4 s.

**Splitting and determinism.** ``search_range`` covers the first class
index in ``[first_start, first_stop)`` through the domain-free driver
:func:`epcg.search.branch_bound.search` (its modes "all" and "first", its
shared incumbent read between batches); :func:`epcg.search.branch_bound.merge`
combines ranges. The answer never depends on how the range is split, on when
the incumbent is read, or on re-running.

>>> prob = problem_for(2, 3, 2, ("#", "##/#.", "#./##"))   # 2x3 panels, 2 of 3 pieces
>>> prob.solvable, prob.num_sets
(62, 30)
>>> r = search_range(prob, 0, prob.num_sets)
>>> r.score, r.sets
(3, ((1, 2, 5), (2, 5, 6)))
>>> info = triple_info(prob, r.sets[0])
>>> info.moves, info.set_counts, info.pair_counts, info.arrangements
('RURULUR', (7, 7, 5), (5, 3, 3), 48)
>>> expand(prob, r.sets[0])[:2]
[(11, 83, 92), (11, 83, 96)]
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL
from epcg.combinatorics.bits import ctz, popcount, popcount_words
from epcg.games.witness.domain.paths import paths_for
from epcg.games.witness.domain.pieces import LIBRARY
from epcg.games.witness.domain.triple_problem import TripleProblem, build_problem, problem_for
from epcg.search.branch_bound import Incumbent, Result, search

__all__ = ["LIBRARY", "TripleInfo", "TripleProblem", "TripleSearch", "build_problem", "count_arrangements",
           "expand", "problem_for", "score", "search_range", "triple_info"]

_ONE = np.uint64(1)


# ---------------------------------------------------------------- the search


@njit(**KERNEL)
def _lower_bound(data, lo, hi, value):
    """First index in ``data[lo:hi]`` (ascending) holding ``>= value``, or ``hi``."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if data[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    return lo


class _Arrays(NamedTuple):
    """The read-only arrays of a ``TripleProblem`` the kernel reads (see ``TripleProblem``)."""

    bits: np.ndarray
    counts: np.ndarray
    sep: np.ndarray
    use_sep: bool
    inv_start: np.ndarray
    inv_data: np.ndarray


class _Scratch(NamedTuple):
    """Work arrays of one search, ``D`` = classes: ``slot`` (all -1 between calls), ``touched``,
    ``overlap``, ``lst`` (``D``), ``comp`` (``D × ceil(max count/64)``), ``paths_a`` (``64 ×`` that)."""

    slot: np.ndarray
    touched: np.ndarray
    overlap: np.ndarray
    comp: np.ndarray
    paths_a: np.ndarray
    lst: np.ndarray


@njit(**KERNEL)
def _search_first(i, prob, work, best, shared, first_mode, out, stats):
    """Branch and bound below first class ``i``; returns ``(best, n_out)``.

    ``need`` is the lowest score still wanted: ``max(best, shared, 1)``, or
    ``max(best + 1, shared, 1)`` in first mode. Classes below ``need``
    solutions form a suffix (counts are sorted), cut at ``cutoff``.

    1. For every path of ``A`` the inverted index lists the classes holding it;
       counting them gives ``|A∧X|`` for every class ``X`` in ``[i, cutoff)``
       that meets ``A``, and at the same time ``X∧A`` compacted to ``A``'s
       paths (bit ``t`` = the ``t``-th path of ``A``, ``ceil(|A|/64)`` words).
    2. Only classes with ``|A∧X| >= need`` can be ``B`` or ``C`` (list ``lst``,
       ascending). For each pair ``B <= C`` from it, ``|A∧B∧C|`` is a popcount
       of compacted rows; only when it is 1 are the full rows touched (``|B∧C|``).

    Leaves at score ``>= need`` raise ``best`` (``stats[2] += 1``, ``out``
    restarts) or join it; they are written to ``out[n_out]`` while they fit
    (``n_out`` may exceed its length: the caller reruns with room).
    ``stats``: [nodes evaluated, nodes pruned, improvements] (``epcg.search.branch_bound.Result``).
    Unchecked: ``prob`` from one ``TripleProblem`` and its inverted index,
    ``work`` from ``_scratch`` of the same problem.
    """
    bits, counts, sep, use_sep, inv_start, inv_data = prob
    slot, touched, overlap, comp, paths_a, lst = work
    n_out = 0
    D = counts.shape[0]
    words = bits.shape[1]
    need = max(best + 1 if first_mode else best, shared, 1)
    stats[0] += 1
    if counts[i] < need:
        stats[1] += 1
        return best, n_out
    lo = i
    hi = D
    while lo < hi:
        mid = (lo + hi) >> 1
        if counts[mid] >= need:
            lo = mid + 1
        else:
            hi = mid
    cutoff = lo
    wa = (counts[i] + 63) >> 6
    nt = 0
    t = 0
    for w in range(words):
        x = bits[i, w]
        while x != 0:
            p = w * 64 + ctz(x)
            x &= x - _ONE
            paths_a[t] = p
            word = t >> 6
            bit = _ONE << np.uint64(t & 63)
            for e in range(_lower_bound(inv_data, inv_start[p], inv_start[p + 1], i), inv_start[p + 1]):
                c = inv_data[e]
                if c >= cutoff:
                    break
                sc = slot[c]
                if sc < 0:
                    sc = nt
                    slot[c] = sc
                    touched[nt] = c
                    overlap[sc] = 0
                    for q in range(wa):
                        comp[sc, q] = 0
                    nt += 1
                overlap[sc] += 1
                comp[sc, word] |= bit
            t += 1
    nl = 0
    for sc in range(nt):
        if overlap[sc] >= need:
            lst[nl] = touched[sc]
            nl += 1
    stats[1] += (cutoff - i) - nl  # second classes meeting A in fewer than ``need`` paths
    lst[:nl].sort()
    for x in range(nl):
        j = lst[x]
        sj = slot[j]
        nab = overlap[sj]
        if counts[j] < need:
            stats[1] += nl - x
            break
        stats[0] += 1
        if nab < need:
            stats[1] += 1
            continue
        if use_sep:
            alive = False
            for w in range(words):
                if bits[i, w] & bits[j, w] & sep[i, w] & sep[j, w]:
                    alive = True
                    break
            if not alive:
                stats[1] += 1
                continue
        for y in range(x, nl):
            k = lst[y]
            if counts[k] < need:
                stats[1] += nl - y
                break
            sk = slot[k]
            if overlap[sk] < need:
                stats[1] += 1
                continue
            stats[0] += 1
            nabc = 0
            first_word = 0
            for q in range(wa):
                z = comp[sj, q] & comp[sk, q]
                if z != 0:
                    nabc += popcount(z)
                    if nabc > 1:
                        break
                    first_word = q
            if nabc != 1:
                continue
            p = paths_a[first_word * 64 + ctz(comp[sj, first_word] & comp[sk, first_word])]
            pw = p >> 6
            pb = _ONE << np.uint64(p & 63)
            if use_sep and (sep[i, pw] & sep[j, pw] & sep[k, pw] & pb) == 0:
                continue
            nbc = 0
            for w in range(words):
                nbc += popcount(bits[j, w] & bits[k, w])
            score = min(counts[k], nab, overlap[sk], nbc)
            if score < need:
                continue
            if score > best:
                best = score
                n_out = 0
                stats[2] += 1
            if n_out < out.shape[0]:
                out[n_out, 0] = i
                out[n_out, 1] = j
                out[n_out, 2] = k
            n_out += 1
            need = max(best + 1 if first_mode else best, shared, 1)
    for sc in range(nt):
        slot[touched[sc]] = -1
    return best, n_out


class TripleSearch:
    """A triple problem as a :class:`~epcg.search.branch_bound.BranchBoundSpace`: first class ``i``,
    bound ``counts[i]`` (non-increasing), sets ``(i, j, k)``. Holds one search's work arrays."""

    algorithm: ClassVar[str] = "branch_bound"
    arity = 3

    def __init__(self, problem: TripleProblem) -> None:
        inv_start, inv_data = problem.inverted
        self.arrays = _Arrays(problem.bits, problem.counts, problem.sep, problem.separate, inv_start, inv_data)
        self.size = problem.num_sets
        D = problem.num_sets
        wmax = (int(problem.counts[0]) + 63) // 64 if D else 1
        self.work = _Scratch(np.full(D, -1, dtype=np.int64), np.zeros(D, dtype=np.int64),
                             np.zeros(D, dtype=np.int64), np.zeros((D, wmax), dtype=np.uint64),
                             np.zeros(64 * wmax, dtype=np.int64), np.zeros(D, dtype=np.int64))
        self._args = (tuple(self.arrays), tuple(self.work))  # plain tuples: numba dispatches them faster

    def bound(self, first: int) -> int:
        return int(self.arrays.counts[first])

    def search_first(self, first: int, best: int, shared: int, first_mode: bool,
                     out: np.ndarray, stats: np.ndarray) -> tuple[int, int]:
        prob, work = self._args
        return _search_first(first, prob, work, best, shared, first_mode, out, stats)


def search_range(
    problem: TripleProblem,
    first_start: int,
    first_stop: int,
    incumbent: Incumbent | None = None,
    batch: int = 64,
    mode: str = "all",
    known: int = 0,
) -> Result:
    """Branch and bound over the class triples whose first class lies in ``[first_start, first_stop)``.

    :func:`epcg.search.branch_bound.search` on a :class:`TripleSearch`; its
    ``sets`` are class triples ``i <= j <= k``. ``incumbent`` (shared with
    other ranges) and ``known`` (a score some triple reaches) as there.
    """
    return search(TripleSearch(problem), first_start, first_stop, incumbent, batch, mode, known)



# ---------------------------------------------------------------- scoring and expanding triples


def score(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> int:
    """Score of three solution bitsets: 0 unless exactly one path solves all three.

    >>> one = np.array([0b0111], dtype=np.uint64)
    >>> score(one, np.array([0b1101], dtype=np.uint64), np.array([0b1011], dtype=np.uint64))
    2
    """
    if popcount_words(a & b & c) != 1:
        return 0
    return min(popcount_words(a), popcount_words(b), popcount_words(c), popcount_words(a & b), popcount_words(a & c), popcount_words(b & c))


def _joint_path(problem: TripleProblem, triple: Sequence[int]) -> int:
    i, j, k = triple
    joint = problem.bits[i] & problem.bits[j] & problem.bits[k]
    if popcount_words(joint) != 1:
        raise ValueError(f"class triple {tuple(triple)} has {popcount_words(joint)} joint solutions, not one")
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
        (popcount_words(bits[i]), popcount_words(bits[j]), popcount_words(bits[k])),
        (popcount_words(bits[i] & bits[j]), popcount_words(bits[i] & bits[k]), popcount_words(bits[j] & bits[k])),
        count_arrangements(problem, (i, j, k)),
    )
