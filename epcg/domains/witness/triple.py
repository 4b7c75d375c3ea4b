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

import numpy as np
from numba import njit

from epcg.domains.witness.bitsets import _ctz, popcount
from epcg.domains.witness.paths import paths_for
from epcg.domains.witness.pieces import LIBRARY
from epcg.domains.witness.triple_problem import TripleProblem, build_problem, problem_for

__all__ = ["LIBRARY", "MODES", "BBResult", "TripleInfo", "TripleProblem", "build_problem", "count_arrangements",
           "expand", "merge_results", "problem_for", "score", "search_range", "triple_info"]

MODES = ("all", "first")
"""``"all"``: every optimal triple; ``"first"``: the first optimal triple in search order."""

_ONE = np.uint64(1)


# ---------------------------------------------------------------- the search


@njit(cache=True, nogil=True)
def _lower_bound(data, lo, hi, value):
    """First index in ``data[lo:hi]`` (ascending) holding ``>= value``, or ``hi``."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if data[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _search_first(i, bits, counts, sep, use_sep, inv_start, inv_data, best, shared, first_mode,
                  out, n_out, stats, slot, touched, overlap, comp, paths_a, lst):
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
    ``stats``: [nodes evaluated, nodes pruned, improvements], see ``BBResult``.
    Unchecked: arrays from one ``TripleProblem`` and its inverted index,
    ``slot`` all -1, scratch sized ``len(counts)`` rows (``comp``: ``ceil(max count/64)`` words).
    """
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
            p = w * 64 + _ctz(x)
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
            p = paths_a[first_word * 64 + _ctz(comp[sj, first_word] & comp[sk, first_word])]
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


def _scratch(problem: TripleProblem) -> tuple[np.ndarray, ...]:
    """Work arrays of ``_search_first``: slot, touched, overlap, comp, paths_a, lst."""
    D = problem.num_sets
    wmax = (int(problem.counts[0]) + 63) // 64 if D else 1
    return (np.full(D, -1, dtype=np.int64), np.zeros(D, dtype=np.int64), np.zeros(D, dtype=np.int64),
            np.zeros((D, wmax), dtype=np.uint64), np.zeros(64 * wmax, dtype=np.int64), np.zeros(D, dtype=np.int64))


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
    inv_start, inv_data = problem.inverted
    scratch = _scratch(problem)
    for i in range(first_start, first_stop):
        if (i - first_start) % batch == 0 and i > first_start and get_incumbent is not None:
            shared = max(shared, int(get_incumbent()))
        if problem.counts[i] < max(shared, best + first_mode, 1):
            stats[1] += first_stop - i  # sorted: no later first class can reach the target
            break
        while True:
            before = stats.copy()
            new_best, n = _search_first(i, problem.bits, problem.counts, problem.sep, problem.separate,
                                        inv_start, inv_data, best, shared, first_mode, out, 0, stats, *scratch)
            new_best, n = int(new_best), int(n)
            if n <= out.shape[0]:
                break
            stats[:] = before
            out = np.zeros((2 * n, 3), dtype=np.int64)
        if new_best > best:
            found = []
            if publish is not None and get_incumbent is not None and new_best > shared:
                shared = max(shared, int(get_incumbent()))  # improvements are rare: skip stale publishes
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
