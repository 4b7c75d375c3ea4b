"""Exact cover of a region by fixed-orientation pieces, and which paths solve a piece panel.

The piece rule: the path cuts the panel into regions; every region holding piece
symbols must be tiled exactly by those pieces (each cell covered once, nothing
outside the region, no rotation or reflection); regions without symbols stay
empty. A region is a cell bitmask (bit ``c`` = cell ``y*w + x``).

Exact cover backtracks over the **lowest uncovered cell**: whichever piece covers
it must have it as its anchor (``pieces.py``), so each tiling is found once and
each step tries only ``len(library)`` placements.

>>> from epcg.games.witness.domain.pieces import parse_library
>>> lib = parse_library(["#", "##", "#/#", "##/#."])
>>> can_tile(0b11011, 3, 3, [1, 1], lib)     # cells 0,1 and 3,4: two horizontal dominoes
True
>>> can_tile(0b11011, 3, 3, [2, 2], lib)     # or two vertical ones
True
>>> can_tile(0b11011, 3, 3, [3, 0], lib)     # an L (top row '##') and a monomino
True
>>> can_tile(0b11011, 3, 3, [1, 0], lib)     # three cells for a 4-cell region
False
>>> region_tilings(0b11011, 2, 3, 3, lib)    # every multiset of two types that tiles it
[(0, 3), (1, 1), (2, 2)]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL
from epcg.combinatorics.bits import ctz, popcount
from epcg.games.witness.domain.geometry import Geometry
from epcg.games.witness.domain.pieces import Piece, placement_masks

__all__ = ["can_tile", "region_tilings", "tiling_multisets", "tiling_placements"]

_ONE = np.uint64(1)


@njit(**KERNEL)
def _can_tile(region, counts, place):
    """True when the multiset ``counts[t]`` (pieces of type t) tiles ``region`` exactly.

    Iterative backtracking over the lowest uncovered cell; ``counts`` is used as
    scratch and restored. Unchecked: piece areas sum to ``popcount(region)``,
    ``place`` as from ``placement_masks``, at most 64 pieces.
    """
    p = place.shape[0]
    total = 0
    for t in range(p):
        total += counts[t]
    if total == 0:
        return region == 0
    chosen = np.full(total, -1, dtype=np.int64)
    covered = np.zeros(total + 1, dtype=np.uint64)
    d = 0
    while d >= 0:
        if chosen[d] >= 0:
            counts[chosen[d]] += 1
        rest = region & ~covered[d]
        c = ctz(rest)
        t = chosen[d] + 1
        while t < p:
            mask = place[t, c]
            if counts[t] > 0 and mask != 0 and (mask & ~rest) == 0:
                break
            t += 1
        if t == p:
            chosen[d] = -1
            d -= 1
            continue
        chosen[d] = t
        counts[t] -= 1
        covered[d + 1] = covered[d] | place[t, c]
        if d + 1 == total:
            for i in range(total):
                counts[chosen[i]] += 1
            return True
        d += 1
    return False


@njit(**KERNEL)
def _region_tilings(region, m, place, out):
    """Every tiling of ``region`` by exactly ``m`` pieces, as the types in placement order.

    Writes rows of ``out`` while they fit and returns the number of tilings (a
    multiset appears once per distinct tiling). Unchecked: ``region != 0``, ``m >= 1``.
    """
    p = place.shape[0]
    chosen = np.full(m, -1, dtype=np.int64)
    covered = np.zeros(m + 1, dtype=np.uint64)
    n = 0
    d = 0
    while d >= 0:
        rest = region & ~covered[d]
        c = ctz(rest)
        t = chosen[d] + 1
        while t < p:
            mask = place[t, c]
            if mask != 0 and (mask & ~rest) == 0:
                break
            t += 1
        if t == p:
            chosen[d] = -1
            d -= 1
            continue
        chosen[d] = t
        done = (covered[d] | place[t, c]) == region
        if d + 1 == m:
            if done:
                if n < out.shape[0]:
                    out[n, :] = chosen
                n += 1
        elif not done:
            covered[d + 1] = covered[d] | place[t, c]
            d += 1
    return n


def _check_region(region: int, width: int, height: int) -> int:
    g = Geometry(width, height)
    region = int(region)
    if not 0 < region < (1 << g.num_cells):
        raise ValueError(f"region must be a non-empty cell mask of a {width}x{height} board, got {region}")
    return region


def region_tilings(region: int, m: int, width: int, height: int, library: Sequence[Piece]) -> list[tuple[int, ...]]:
    """The sorted multisets of ``m`` piece types that tile ``region`` exactly, ascending."""
    region = _check_region(region, width, height)
    if m < 1:
        raise ValueError(f"m must be at least 1, got {m}")
    return tiling_multisets(region, m, placement_masks(library, width, height))


def tiling_multisets(region: int, m: int, place: np.ndarray) -> list[tuple[int, ...]]:
    """``region_tilings`` on a prepared ``placement_masks`` table (unchecked: ``region != 0``, ``m >= 1``)."""
    cap = 64
    while True:
        out = np.zeros((cap, m), dtype=np.int64)
        n = _region_tilings(np.uint64(region), m, place, out)
        if n <= cap:
            return sorted({tuple(sorted(r)) for r in out[:n].tolist()})
        cap = n


def can_tile(region: int, width: int, height: int, types: Sequence[int], library: Sequence[Piece]) -> bool:
    """True when pieces ``types`` (indices into ``library``) tile the cell mask ``region`` exactly."""
    region = _check_region(region, width, height)
    counts = np.zeros(len(library), dtype=np.int64)
    for t in types:
        if not 0 <= int(t) < len(library):
            raise ValueError(f"piece type {t} is out of range for a library of {len(library)}")
        counts[int(t)] += 1
    if sum(library[int(t)].size for t in types) != int(popcount(np.uint64(region))):
        return False
    return bool(_can_tile(np.uint64(region), counts, placement_masks(library, width, height)))


def tiling_placements(region: int, width: int, height: int, types: Sequence[int],
                      library: Sequence[Piece]) -> list[tuple[int, int]] | None:
    """One exact cover of ``region`` by pieces ``types``, as ``(type, anchor cell)`` pairs; None if none.

    For pictures (the virtual pieces of a solution), so plain Python.

    >>> from epcg.games.witness.domain.pieces import parse_library
    >>> tiling_placements(0b11011, 3, 3, [3, 0], parse_library(["#", "##", "#/#", "##/#."]))
    [(3, 0), (0, 1)]
    """
    region = _check_region(region, width, height)
    place = placement_masks(library, width, height)
    left = sorted(int(t) for t in types)

    def cover(rest: int, left: list[int]) -> list[tuple[int, int]] | None:
        if not left:
            return [] if rest == 0 else None
        if rest == 0:
            return None
        c = (rest & -rest).bit_length() - 1
        for t in sorted(set(left)):
            mask = int(place[t, c])
            if mask and mask & ~rest == 0:
                others = list(left)
                others.remove(t)
                found = cover(rest & ~mask, others)
                if found is not None:
                    return [(t, c)] + found
        return None

    return cover(region, left)
