"""The rules of the cell symbols on one path, compiled: regions, colours, triangles, tetris and eliminations.

A panel's cell symbols are ``(cells, types, values)`` arrays (types: indices
into ``rules.CELL_TYPES``). On a path (its region label and touched edges per
cell), each region must satisfy every symbol in it:

- triangle ``n``: the path runs along exactly ``n`` of the cell's four edges;
- squares: all squares of a region have one colour;
- star: its region holds exactly one other square or star of its colour;
- tetris and negatives: the pieces (rotated if the row allows) placed on the
  board so that every cell of the region is covered once and every other cell
  as often by pieces as by negatives; pieces and negatives of equal area cancel
  when they can be laid over each other; a region with none is fine;
- elimination marks: each one erases one other cell symbol of its region, or
  two marks erase each other; every mark is used, the region is right after the
  erasures, and each erased symbol would be broken were it the only one put
  back.

Hexagons, gaps, starts and exits are not cell symbols: the scan ANDs their
bitsets before these checks run (``rule_kernel.py``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL
from epcg.combinatorics.bits import popcount

TRIANGLE, SQUARE, STAR, ELIMINATION, TETRIS, NEGATIVE = range(6)
MAX_VARIANTS = 4
"""Orientations a piece has at most."""

_ONE = np.uint64(1)


@njit(**KERNEL)
def fit(pos, npos, neg, nneg, region, voff, place, vsize, ncells):
    """Whether pieces ``pos[:npos]`` and negatives ``neg[:nneg]`` (piece ids) fill the cell mask ``region``.

    Negatives go anywhere on the board first (each adds one to the cover its
    cells need), then pieces fill the lowest cell still needing cover, in every
    orientation (``place[v, c]``: cells of variant ``v`` anchored at ``c``, 0 off
    the board; piece ``p``'s variants are ``voff[p] .. voff[p+1]-1``).
    """
    if npos + nneg == 0:
        return True
    area = 0
    for i in range(npos):
        area += vsize[voff[pos[i]]]
    for i in range(nneg):
        area -= vsize[voff[neg[i]]]
    if area < 0 or (area > 0 and area != popcount(region)):
        return False
    need = np.zeros(ncells, dtype=np.int64)
    if area > 0:
        for c in range(ncells):
            need[c] = (region >> np.uint64(c)) & _ONE
    total = npos + nneg
    choice = np.full(total, -1, dtype=np.int64)
    applied = np.zeros(total, dtype=np.uint64)
    slot = np.zeros(total, dtype=np.int64)
    used = np.zeros(max(npos, 1), dtype=np.bool_)
    d = 0
    while d >= 0:
        if choice[d] >= 0:  # take the previous choice at this depth back
            m = applied[d]
            for c in range(ncells):
                if (m >> np.uint64(c)) & _ONE:
                    need[c] += -1 if d < nneg else 1
            if d >= nneg:
                used[slot[d]] = False
        found = False
        t = choice[d] + 1
        m = np.uint64(0)
        if d < nneg:
            p = neg[d]
            while t < (voff[p + 1] - voff[p]) * ncells:
                m = place[voff[p] + t // ncells, t % ncells]
                if m != 0:
                    found = True
                    break
                t += 1
        else:
            c0 = -1
            for c in range(ncells):
                if need[c] > 0:
                    c0 = c
                    break
            while c0 >= 0 and t < npos * MAX_VARIANTS:
                k = t // MAX_VARIANTS
                v = t % MAX_VARIANTS
                p = pos[k]
                fresh = not used[k]
                for j in range(k):
                    if not used[j] and pos[j] == p:
                        fresh = False  # the same piece in an earlier free slot was tried already
                if fresh and v < voff[p + 1] - voff[p]:
                    m = place[voff[p] + v, c0]
                    if m != 0:
                        fits = True
                        for c in range(ncells):
                            if (m >> np.uint64(c)) & _ONE and need[c] <= 0:
                                fits = False
                                break
                        if fits:
                            found = True
                            slot[d] = k
                            break
                t += 1
        if not found:
            choice[d] = -1
            d -= 1
            continue
        choice[d] = t
        applied[d] = m
        for c in range(ncells):
            if (m >> np.uint64(c)) & _ONE:
                need[c] += 1 if d < nneg else -1
        if d >= nneg:
            used[slot[d]] = True
        if d + 1 < total:
            d += 1
            continue
        done = True
        for c in range(ncells):
            if need[c] != 0:
                done = False
                break
        if done:
            return True
    return False


@njit(**KERNEL)
def _broken(s, kept, idx, k, cells, types, values, touch, npieces, region, voff, place, vsize, ncells, pos, neg):
    """Whether symbol ``idx[s]`` is wrong among the region's symbols ``idx[j]`` for bits ``j`` of ``kept``."""
    me = idx[s]
    t = types[me]
    if t == TRIANGLE:
        return touch[cells[me]] != values[me]
    if t == SQUARE:
        for j in range(k):
            o = idx[j]
            if (kept >> j) & 1 and types[o] == SQUARE and values[o] != values[me]:
                return True
        return False
    if t == STAR:
        same = 0
        for j in range(k):
            o = idx[j]
            if (kept >> j) & 1 and (types[o] == SQUARE or types[o] == STAR) and values[o] == values[me]:
                same += 1
        return same != 2
    if t == TETRIS or t == NEGATIVE:
        npos = 0
        nneg = 0
        for j in range(k):
            o = idx[j]
            if (kept >> j) & 1:
                if types[o] == TETRIS:
                    pos[npos] = values[o]
                    npos += 1
                elif types[o] == NEGATIVE:
                    neg[nneg] = npieces + values[o]
                    nneg += 1
        return not fit(pos, npos, neg, nneg, region, voff, place, vsize, ncells)
    return False


@njit(**KERNEL)
def _region_right(kept, idx, k, cells, types, values, touch, npieces, region, voff, place, vsize, ncells, pos,
                  neg):
    """Whether every symbol of ``kept`` is right (a tiling is checked once for all pieces)."""
    tiled = False
    for j in range(k):
        if not (kept >> j) & 1:
            continue
        t = types[idx[j]]
        if t == TETRIS or t == NEGATIVE:
            if tiled:
                continue
            tiled = True
        if _broken(j, kept, idx, k, cells, types, values, touch, npieces, region, voff, place, vsize, ncells,
                   pos, neg):
            return False
    return True


@njit(**KERNEL)
def path_ok(regions, touch, n, cells, types, values, npieces, voff, place, vsize, idx, pos, neg):
    """Whether a path (``regions``, ``touch``: its cells' region labels and edges on it) satisfies every
    cell symbol ``0..n-1``. ``idx``, ``pos`` and ``neg`` are scratch of length ``n``."""
    ncells = regions.shape[0]
    done = 0
    for i in range(n):
        if (done >> i) & 1:
            continue
        r = regions[cells[i]]
        k = 0
        marks = 0
        for j in range(i, n):
            if regions[cells[j]] == r:
                done |= np.int64(1) << j
                if types[j] == ELIMINATION:
                    marks += 1
                else:
                    idx[k] = j
                    k += 1
        region = np.uint64(0)
        for c in range(ncells):
            if regions[c] == r:
                region |= _ONE << np.uint64(c)
        whole = (np.int64(1) << k) - 1
        if marks == 0:
            if not _region_right(whole, idx, k, cells, types, values, touch, npieces, region, voff, place,
                                 vsize, ncells, pos, neg):
                return False
            continue
        right = False
        for erased in range(whole + 1):
            e = popcount(np.uint64(erased))
            if e > marks or (marks - e) % 2:
                continue
            kept = whole & ~erased
            if not _region_right(kept, idx, k, cells, types, values, touch, npieces, region, voff, place, vsize,
                                 ncells, pos, neg):
                continue
            needed = True
            for j in range(k):
                if (erased >> j) & 1 and not _broken(j, kept | (np.int64(1) << j), idx, k, cells, types, values,
                                                     touch, npieces, region, voff, place, vsize, ncells, pos, neg):
                    needed = False
                    break
            if needed:
                right = True
                break
        if not right:
            return False
    return True
