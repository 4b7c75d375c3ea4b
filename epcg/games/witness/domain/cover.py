"""The fewest must-cross hexagons that give a panel exactly one solution, found from the solution side.

A set ``S`` of must-cross positions has the single solution ``P`` exactly when
``S`` lies on ``P`` and every other path ``Q`` misses some position of ``S``:
``S`` is a *hitting set* of the family ``{P \\ Q : Q != P}`` (positions as in
``geometry.py``: vertices, then ``num_vertices + edge``). For each path this
module finds every smallest such ``S`` by branch and bound over bitsets of
positions (one numba kernel, ``_cover_kernel``):

- *Seed sets without listing any Q*: when ``P``'s vertices are removed, every
  component of the remaining grid touching ``P`` at indices ``a < b`` (and
  every grid edge joining ``P[a]`` to ``P[b]``, ``b > a + 1``) gives a detour
  ``Q``; its ``P \\ Q`` is the run of ``P``'s positions strictly between
  ``P[a]`` and ``P[b]``. These runs are intervals along ``P``, so the fewest
  positions hitting all of them (greedy stabbing, exact for intervals) is a
  lower bound on ``P``'s answer; a path whose bound exceeds the best answer so
  far is discarded without search.
- *Branching*: on the elements of the smallest un-hit set (including the
  ``i``-th element excludes the first ``i-1``, so no set is reached twice).
- *Bound*: chosen positions plus a greedy packing of pairwise disjoint un-hit
  sets, taken in family order: the intervals by right end first (which packs
  as many intervals as possible), then the lazy sets. A node is cut only when
  that exceeds the best answer (``kmax``), so every set of the minimum size
  survives.
- *Lazy sets*: a node hitting every known set is checked against all paths
  (AND of the positions' solution bitsets, ``bitsets.py``). If it has other
  solutions, the ``seen`` smallest sets ``P \\ Q`` among them join the family
  and the search goes on from that node; otherwise it is a unique panel.

The search is exhaustive: every path is either searched to the end or
discarded by a valid lower bound, so no smaller ``k`` exists than the one
returned, and every panel at that ``k`` is listed.

>>> r = unique_covers(3, 3)
>>> r.k, len(r.paths)
(4, 166)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numba import njit

from epcg.combinatorics.jit import INLINE, KERNEL
from epcg.combinatorics.bits import popcount
from epcg.games.witness.domain.bitsets import bitsets_for
from epcg.games.witness.domain.geometry import Geometry
from epcg.games.witness.domain.paths import CROSS_WORDS, _move_edges, paths_for

__all__ = ["CoverResult", "NO_BOUND", "ScoreBoard", "unique_covers", "cover_positions"]

NO_BOUND = 127
"""``kmax`` meaning 'no answer known yet' (more than any board's positions)."""
SCORE_BASE = 1 << 20
"""Incumbents keep a maximum: a cover of ``k`` positions is offered as ``SCORE_BASE - k``."""

_ONE = np.uint64(1)
_ZERO = np.uint64(0)


class ScoreBoard(Protocol):
    """The shared incumbent of ``epcg.search.branch_bound`` (``get`` / ``offer`` of a maximum)."""

    def get(self) -> int: ...

    def offer(self, score: int) -> int: ...


@njit(**INLINE)
def _pc2(a0, a1):
    return np.int64(popcount(a0) + popcount(a1))


@njit(**INLINE)
def _set(mask, p):
    mask[p >> 6] |= _ONE << np.uint64(p & 63)


@njit(**KERNEL)
def _seed_sets(s, vertices, length, neighbours, move_edges, nv, onpath, index, comp, queue, sets, lohi):
    """Interval sets of path ``s`` (see the module doc) into ``sets``/``lohi``; returns ``(count, stabbing number)``.

    ``lohi[i]`` is the interval in path order: position ``2t`` is vertex ``t``,
    ``2t+1`` the edge from vertex ``t`` to ``t+1``. Scratch arrays are sized by
    the caller (``onpath``, ``index``, ``comp``, ``queue``: one per vertex).
    """
    L = np.int64(length[s])
    onpath[:] = False
    for t in range(L + 1):
        v = np.int64(vertices[s, t])
        onpath[v] = True
        index[v] = t
    n = 0
    # chords: P[a] adjacent to P[b], b > a + 1
    for a in range(L + 1):
        v = np.int64(vertices[s, a])
        for d in range(4):
            u = neighbours[v, d]
            if u >= 0 and onpath[u] and index[u] > a + 1:
                lohi[n, 0] = 2 * a + 1
                lohi[n, 1] = 2 * index[u] - 1
                n += 1
    # components of the grid off the path: consecutive attachment indices
    comp[:] = -1
    attach = np.zeros(L + 1, dtype=np.bool_)
    for v0 in range(nv):
        if onpath[v0] or comp[v0] >= 0:
            continue
        attach[:] = False
        comp[v0] = v0
        queue[0] = v0
        head, tail = 0, 1
        while head < tail:
            x = queue[head]
            head += 1
            for d in range(4):
                u = neighbours[x, d]
                if u < 0:
                    continue
                if onpath[u]:
                    attach[index[u]] = True
                elif comp[u] < 0:
                    comp[u] = v0
                    queue[tail] = u
                    tail += 1
        prev = -1
        for t in range(L + 1):
            if attach[t]:
                if prev >= 0:
                    lohi[n, 0] = 2 * prev + 1
                    lohi[n, 1] = 2 * t - 1
                    n += 1
                prev = t
    # sort by length, then build masks
    order = np.argsort(lohi[:n, 1])
    tmp = lohi[:n].copy()
    for i in range(n):
        lohi[i] = tmp[order[i]]
    for i in range(n):
        sets[i, 0] = _ZERO
        sets[i, 1] = _ZERO
        for q in range(lohi[i, 0], lohi[i, 1] + 1):
            t = q >> 1
            if q & 1:
                a = np.int64(vertices[s, t])
                b = np.int64(vertices[s, t + 1])
                for d in range(4):
                    if neighbours[a, d] == b:
                        _set(sets[i], nv + move_edges[a, d])
            else:
                _set(sets[i], np.int64(vertices[s, t]))
    # stabbing number: intervals by right end, stab at the right end
    byright = np.argsort(lohi[:n, 1])
    last = -1
    stabs = 0
    for i in range(n):
        j = byright[i]
        if lohi[j, 0] > last:
            last = lohi[j, 1]
            stabs += 1
    return n, stabs


@njit(**KERNEL)
def _evaluate(sets, nsets, c0, c1, x0, x1):
    """``(status, lower bound, branch word 0, branch word 1)`` of a node.

    status 0: some set is un-hit and cannot be hit any more (dead);
    1: every set is hit; 2: branch on the returned set.
    """
    best = 1 << 30
    b0 = _ZERO
    b1 = _ZERO
    u0 = _ZERO
    u1 = _ZERO
    lb = 0
    for i in range(nsets):
        a0 = sets[i, 0]
        a1 = sets[i, 1]
        if (a0 & c0) | (a1 & c1):
            continue
        e0 = a0 & ~x0
        e1 = a1 & ~x1
        size = _pc2(e0, e1)
        if size == 0:
            return 0, 0, b0, b1
        if size < best:
            best = size
            b0 = e0
            b1 = e1
        if ((e0 & u0) | (e1 & u1)) == 0:
            u0 |= e0
            u1 |= e1
            lb += 1
    if lb == 0:
        return 1, 0, b0, b1
    return 2, lb, b0, b1


@njit(**KERNEL)
def _verify(s, c0, c1, cross, cross_mask, npos, rows, found, sizes):
    """Other solutions ``Q`` of cover ``c``: the ``len(found)`` smallest sets ``P \\ Q`` go to ``found``.

    Returns how many were written; 0 means ``P`` is the only solution. Small
    sets cut the search most, so every solution is looked at.
    """
    W = cross.shape[1]
    keep = found.shape[0]
    k = 0
    for p in range(npos):
        word = c0 if p < 64 else c1
        if (word >> np.uint64(p & 63)) & _ONE:
            rows[k] = p
            k += 1
    n = 0
    worst = 0  # slot of the largest kept set once the buffer is full
    p0 = cross_mask[s, 0]
    p1 = cross_mask[s, 1]
    for w in range(W):
        x = ~_ZERO
        for r in range(k):
            x &= cross[rows[r], w]
        while x:
            low = x & (~x + _ONE)
            j = w * 64 + np.int64(popcount(low - _ONE))
            x ^= low
            if j == s:
                continue
            e0 = p0 & ~cross_mask[j, 0]
            e1 = p1 & ~cross_mask[j, 1]
            size = _pc2(e0, e1)
            if n < keep:
                slot = n
                n += 1
            elif size < sizes[worst]:
                slot = worst
            else:
                continue
            found[slot, 0] = e0
            found[slot, 1] = e1
            sizes[slot] = size
            if n == keep:
                worst = 0
                for i in range(1, keep):
                    if sizes[i] > sizes[worst]:
                        worst = i
    return n


@njit(**KERNEL)
def _cover_kernel(first, stop, kmax, vertices, length, cross_mask, cross, neighbours, move_edges,
                  nv, npos, seen, out_paths, out_masks, stats):
    """Smallest unique covers of paths ``[first, stop)`` no larger than ``kmax``.

    Returns the smallest size found (``kmax`` if none smaller); the covers of
    that size go to ``out_paths``/``out_masks`` while they fit, their number to
    ``stats[0]``. ``stats[1..4]``: paths discarded by the interval bound,
    nodes, nodes checked against all paths, sets added lazily.
    """
    nvert = neighbours.shape[0]
    onpath = np.zeros(nvert, dtype=np.bool_)
    index = np.zeros(nvert, dtype=np.int64)
    comp = np.zeros(nvert, dtype=np.int64)
    queue = np.zeros(nvert, dtype=np.int64)
    cap = 4 * nvert * nvert
    sets = np.zeros((cap, 2), dtype=np.uint64)
    lohi = np.zeros((cap, 2), dtype=np.int64)
    rows = np.zeros(npos, dtype=np.int64)
    found_sets = np.zeros((seen, 2), dtype=np.uint64)
    found_sizes = np.zeros(seen, dtype=np.int64)
    # DFS frames: chosen, excluded, remaining branch elements, exclusions for the next child
    depth_cap = npos + 2
    fc = np.zeros((depth_cap, 2), dtype=np.uint64)
    fx = np.zeros((depth_cap, 2), dtype=np.uint64)
    fb = np.zeros((depth_cap, 2), dtype=np.uint64)
    fe = np.zeros((depth_cap, 2), dtype=np.uint64)
    found = 0
    for s in range(first, stop):
        nsets, stabs = _seed_sets(s, vertices, length, neighbours, move_edges, nv,
                                  onpath, index, comp, queue, sets, lohi)
        if stabs > kmax:
            stats[1] += 1
            continue
        top = 0
        fc[0, 0] = _ZERO
        fc[0, 1] = _ZERO
        fx[0, 0] = _ZERO
        fx[0, 1] = _ZERO
        expand = True  # the frame on top has not been evaluated yet
        while top >= 0:
            if expand:
                expand = False
                stats[2] += 1
                c0 = fc[top, 0]
                c1 = fc[top, 1]
                size = _pc2(c0, c1)
                status, lb, b0, b1 = _evaluate(sets, nsets, c0, c1, fx[top, 0], fx[top, 1])
                if status == 0 or size + lb > kmax:
                    top -= 1
                    continue
                if status == 1:
                    stats[3] += 1
                    others = _verify(s, c0, c1, cross, cross_mask, npos, rows, found_sets, found_sizes)
                    if others == 0:
                        if size < kmax:
                            kmax = size
                            found = 0
                        if found < out_paths.shape[0]:
                            out_paths[found] = s
                            out_masks[found, 0] = c0
                            out_masks[found, 1] = c1
                        found += 1
                        top -= 1
                        continue
                    if nsets + others > cap:  # grow the family
                        bigger = np.zeros((2 * cap, 2), dtype=np.uint64)
                        bigger[:cap] = sets
                        sets = bigger
                        cap *= 2
                    sets[nsets:nsets + others] = found_sets[:others]
                    nsets += others
                    stats[4] += others
                    expand = True  # evaluate the same node again
                    continue
                fb[top, 0] = b0
                fb[top, 1] = b1
                fe[top, 0] = _ZERO
                fe[top, 1] = _ZERO
            # next child of the frame on top
            b0 = fb[top, 0]
            b1 = fb[top, 1]
            if (b0 | b1) == 0:
                top -= 1
                continue
            if b0:
                low0 = b0 & (~b0 + _ONE)
                low1 = _ZERO
            else:
                low0 = _ZERO
                low1 = b1 & (~b1 + _ONE)
            fb[top, 0] = b0 ^ low0
            fb[top, 1] = b1 ^ low1
            child = top + 1
            fc[child, 0] = fc[top, 0] | low0
            fc[child, 1] = fc[top, 1] | low1
            fx[child, 0] = fx[top, 0] | fe[top, 0]
            fx[child, 1] = fx[top, 1] | fe[top, 1]
            fe[top, 0] |= low0
            fe[top, 1] |= low1
            top = child
            expand = True
    stats[0] = found
    return kmax


@dataclass(frozen=True)
class CoverResult:
    """Smallest unique covers found over a range of paths."""

    k: int
    """Fewest positions of a unique cover in the range, or ``NO_BOUND`` if none is at most the bound."""
    paths: np.ndarray
    """int64: the path index of each cover of ``k`` positions (ascending)."""
    masks: np.ndarray
    """``(n, CROSS_WORDS)`` uint64: the positions of each cover."""
    discarded: int
    """Paths discarded by the interval bound alone."""
    nodes: int
    checked: int
    """Nodes checked against every path."""
    lazy_sets: int


def cover_positions(mask: np.ndarray) -> tuple[int, ...]:
    """The positions of a cover's mask, ascending.

    >>> cover_positions(np.array([5, 1], dtype=np.uint64))
    (0, 2, 64)
    """
    return tuple(w * 64 + b for w in range(len(mask)) for b in range(64) if (int(mask[w]) >> b) & 1)


def _kernel_args(width: int, height: int):
    ps = paths_for(width, height)
    g = ps.geometry
    bits = bitsets_for(width, height)
    assert CROSS_WORDS == 2
    return (ps.vertices, ps.length, ps.cross_mask, bits.cross,
            np.ascontiguousarray(g.neighbours), _move_edges(g), g.num_vertices, g.num_positions)


def unique_covers(width: int, height: int, first: int = 0, stop: int | None = None,
                  kmax: int = NO_BOUND, incumbent: ScoreBoard | None = None,
                  batch: int = 2048, seen: int = 16) -> CoverResult:
    """Every smallest unique cover of the paths ``[first, stop)`` with at most ``kmax`` positions.

    With an ``incumbent`` (see ``epcg.search.branch_bound``) the bound is read
    before each ``batch`` of paths and every improvement is offered, so tasks
    over other slices prune with it. Covers are kept only at the smallest size
    this call sees; merge slices by keeping the smallest ``k``. ``seen``: sets
    added per refuted node (any value gives the same answer; it trades nodes
    against the size of the family).
    """
    Geometry(width, height)
    args = _kernel_args(width, height)
    n = len(args[1])
    stop = n if stop is None else int(stop)
    if seen < 1:
        raise ValueError(f"seen must be at least 1, got {seen}")
    if not 0 <= first <= stop <= n:
        raise ValueError(f"path range [{first}, {stop}) not within [0, {n}]")
    best = int(kmax)
    paths: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    totals = np.zeros(5, dtype=np.int64)
    for lo in range(first, stop, batch):
        hi = min(stop, lo + batch)
        bound = best
        if incumbent is not None:
            shared = incumbent.get()
            if shared > 0:
                bound = min(bound, SCORE_BASE - shared)
        room = 1024
        while True:
            out_p = np.zeros(room, dtype=np.int64)
            out_m = np.zeros((room, 2), dtype=np.uint64)
            stats = np.zeros(5, dtype=np.int64)
            k = _cover_kernel(lo, hi, bound, *args, seen, out_p, out_m, stats)
            if stats[0] <= room:
                break
            room = int(stats[0])
        totals[1:] += stats[1:]
        found = int(stats[0])
        if found == 0:
            continue
        if k < best:
            best, paths, masks = k, [], []
        paths.append(out_p[:found])
        masks.append(out_m[:found])
        if incumbent is not None:
            incumbent.offer(SCORE_BASE - k)
    if not paths:
        return CoverResult(NO_BOUND, np.zeros(0, np.int64),
                           np.zeros((0, 2), np.uint64), *map(int, totals[1:]))
    p = np.concatenate(paths)
    m = np.concatenate(masks)
    order = np.lexsort((m[:, 1], m[:, 0], p))
    return CoverResult(best, p[order], m[order], *map(int, totals[1:]))
