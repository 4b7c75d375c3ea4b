"""Sub-panels with piece constraints: ranks, decoding, and the solution set of every panel.

A panel puts ``k`` piece symbols on ``k`` distinct cells of a ``w×h`` board, each
naming a piece type of a library of ``p`` pieces. Ranks are those of
``PiecePlacements(cells, k, p)``: the cell set (lexicographic combination)
most significant, then the types in cell order as a base-``p`` number. A
3×3 board with 3 of the paper's 24 pieces has C(9,3)·24³ = 1,161,216 panels.

A path *solves* a panel when every region holding symbols is tiled exactly by
their pieces (``tiling.py``); it *separates* the panel when, besides, the
``k`` symbols lie in ``k`` different regions (the paper's Figure 4 rule).

**How ``solution_sets`` is fast.** Instead of testing each of the ``p**k``
type words against each path, it goes the other way round. For one cell set
and one path the symbols fall into groups by region; a group of ``m`` symbols
in region ``R`` is satisfied exactly by the ordered ``m``-tuples of types that
tile ``R``, listed once per distinct region mask (tables built once per board,
``k`` and library). The type words that the path solves are the product of
the groups' lists, usually a handful, so the kernel sets just those bits:
work grows with the number of (panel, path) solutions, not with ``p**k``.
All 1,161,216 panels of 3×3 take about 0.05 s (113,296 solvable, the
paper's count); the 7,741,440 of 4×4 about 10 s (5,367,102 solvable).

>>> from epcg.games.witness.domain.pieces import LIBRARY
>>> s = solution_sets(3, 3, 3, LIBRARY, 0, 1)       # the cell set {0, 1, 2} only
>>> len(s.ranks), int(s.counts().max())
(1306, 13)
>>> panel = decode(3, 3, 3, len(LIBRARY), int(s.ranks[0]))
>>> panel.cells, [LIBRARY[t] for t in panel.types]
((0, 1, 2), ['#', '#', '#'])
>>> solutions(panel, LIBRARY).tolist() == np.flatnonzero(unpack(s.bits[0], 184)).tolist()
True
"""

from __future__ import annotations

import itertools
import operator
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL
from epcg.combinatorics import Combinations, PiecePlacements
from epcg.combinatorics.bits import popcount
from epcg.games.witness.domain.geometry import Geometry
from epcg.games.witness.domain.paths import paths_for
from epcg.games.witness.domain.pieces import Piece, parse_library, placement_masks
from epcg.games.witness.domain.tiling import _can_tile, tiling_multisets

__all__ = ["PiecePanel", "SolutionSets", "check_panel_space", "decode", "encode", "max_rank",
           "separates", "solution_sets", "solutions", "unpack"]


@dataclass(frozen=True)
class PiecePanel:
    """One sub-panel: piece symbols on ascending ``cells``, ``types[i]`` the piece at ``cells[i]``."""

    width: int
    height: int
    cells: tuple[int, ...]
    types: tuple[int, ...]

    @property
    def geometry(self) -> Geometry:
        return Geometry(self.width, self.height)


def check_panel_space(width: int, height: int, k: int, library: Sequence[str]) -> tuple[Piece, ...]:
    """Validate a panel space (board, ``k`` pieces, library); return the parsed library.

    ValueError, one line, on a bad board, ``k`` outside ``1..cells`` or a bad library.
    """
    g = Geometry(width, height)
    pieces = parse_library(library)
    try:
        k = operator.index(k)
    except TypeError:
        raise ValueError(f"pieces per panel must be an integer, got {k!r}") from None
    if not 1 <= k <= g.num_cells:
        raise ValueError(f"{k} pieces do not fit a {width}x{height} panel: pieces per panel must be 1..{g.num_cells}")
    if all(piece.width > width or piece.height > height for piece in pieces):
        raise ValueError(f"no piece of the library fits a {width}x{height} panel (the smallest is "
                         f"{min(pieces, key=lambda p: p.size).text!r}): every panel would be unsolvable")
    return pieces


def max_rank(width: int, height: int, k: int, p: int) -> int:
    """Number of panels: C(cells, k) · p**k."""
    return PiecePlacements(width * height, k, p).max_rank


def decode(width: int, height: int, k: int, p: int, rank: int) -> PiecePanel:
    """The panel of a rank."""
    state = PiecePlacements(width * height, k, p).unrank(rank)
    return PiecePanel(width, height, state[:k], state[k:])


def encode(panel: PiecePanel, p: int) -> int:
    """The rank of a panel (inverse of ``decode``)."""
    k = len(panel.cells)
    return PiecePlacements(panel.width * panel.height, k, p).rank(panel.cells + panel.types)


def unpack(bits: np.ndarray, num_paths: int) -> np.ndarray:
    """A bitset row (uint64 words) as a bool array over the paths."""
    words = np.asarray(bits, dtype=np.uint64)
    out = (words[:, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)
    return out.reshape(-1)[:num_paths].astype(bool)


def _check_panel(panel: PiecePanel, pieces: Sequence[Piece]) -> None:
    g = panel.geometry
    if len(panel.cells) != len(panel.types):
        raise ValueError(f"panel has {len(panel.cells)} cells but {len(panel.types)} piece types")
    if len(set(panel.cells)) != len(panel.cells) or not all(0 <= c < g.num_cells for c in panel.cells):
        raise ValueError(f"panel cells must be distinct cells 0..{g.num_cells - 1}, got {panel.cells}")
    if not all(0 <= t < len(pieces) for t in panel.types):
        raise ValueError(f"piece types must be 0..{len(pieces) - 1}, got {panel.types}")


def separates(panel: PiecePanel) -> np.ndarray:
    """Bool per path: the panel's symbols lie in pairwise different regions."""
    regions = paths_for(panel.width, panel.height).regions
    labels = regions[:, list(panel.cells)]
    labels = np.sort(labels, axis=1)
    return np.all(labels[:, 1:] != labels[:, :-1], axis=1)


def solutions(panel: PiecePanel, library: Sequence[str], *, separate: bool = False) -> np.ndarray:
    """Indices of the paths solving ``panel`` (ascending); with ``separate``, only those that separate it.

    The checked path: exact cover of each region by its pieces, path by path.
    """
    pieces = parse_library(library)
    _check_panel(panel, pieces)
    place = placement_masks(pieces, panel.width, panel.height)
    paths = paths_for(panel.width, panel.height)
    sizes = [pieces[t].size for t in panel.types]
    out = []
    for s in range(len(paths)):
        labels = paths.regions[s]
        ok = True
        for lab in sorted({int(labels[c]) for c in panel.cells}):
            region = sum(1 << c for c in range(labels.shape[0]) if labels[c] == lab)
            counts = np.zeros(len(pieces), dtype=np.int64)
            area = 0
            for c, t, a in zip(panel.cells, panel.types, sizes):
                if labels[c] == lab:
                    counts[t] += 1
                    area += a
            if area != region.bit_count() or not _can_tile(np.uint64(region), counts, place):
                ok = False
                break
        if ok:
            out.append(s)
    idx = np.array(out, dtype=np.int64)
    if separate:
        idx = idx[separates(panel)[idx]]
    return idx


class _Tables(NamedTuple):
    """Per (board, k, library): region ids of every path and the type tuples tiling each region."""

    num_paths: int
    words: int
    regions: np.ndarray
    """``(P, C)`` uint8 region label of each cell (``PathSet.regions``)."""
    region_id: np.ndarray
    """``(P, C)`` int64: distinct-region-mask id of region label ``l`` of path ``s`` (-1 unused)."""
    tup_start: np.ndarray
    """``(k+1, R)`` int64: start in ``tup_data`` of the ordered ``m``-tuples tiling region ``r``."""
    tup_stop: np.ndarray
    tup_data: np.ndarray
    """Flat int64: ordered type tuples, ``m`` items each."""


_TABLES_LOCK = threading.Lock()


def _tables(width: int, height: int, k: int, library: tuple[str, ...]) -> _Tables:
    """The tables of a panel space, built once per process (thread-safe, 8 kept)."""
    with _TABLES_LOCK:
        return _build_tables(width, height, k, library)


@lru_cache(maxsize=8)
def _build_tables(width: int, height: int, k: int, library: tuple[str, ...]) -> _Tables:
    pieces = check_panel_space(width, height, k, library)
    paths = paths_for(width, height)
    P, C = paths.regions.shape
    place = placement_masks(pieces, width, height)
    labels = paths.regions.astype(np.int64)
    masks = np.zeros((P, C), dtype=np.int64)
    np.add.at(masks, (np.repeat(np.arange(P), C), labels.reshape(-1)), np.tile(1 << np.arange(C), P))
    distinct, inverse = np.unique(masks, return_inverse=True)
    inverse = inverse.reshape(P, C)
    has_zero = int(distinct[0] == 0)  # mask 0 (sorted first) marks labels a path does not use
    region_id = np.where(masks == 0, -1, inverse - has_zero)
    distinct = distinct[has_zero:]
    R = len(distinct)
    sizes = np.array([p.size for p in pieces])
    tup_start = np.zeros((k + 1, R), dtype=np.int64)
    tup_stop = np.zeros((k + 1, R), dtype=np.int64)
    data: list[int] = []
    for r, region in enumerate(distinct.tolist()):
        area = region.bit_count()
        for m in range(1, k + 1):
            tup_start[m, r] = len(data)
            if m * sizes.min() <= area <= m * sizes.max():
                multisets = tiling_multisets(region, m, place)
            else:
                multisets = []
            for ms in multisets:
                for perm in sorted(set(itertools.permutations(ms))):
                    data.extend(perm)
            tup_stop[m, r] = len(data)
    tup_data = np.array(data, dtype=np.int64)
    words = (P + 63) // 64
    return _Tables(P, words, np.ascontiguousarray(paths.regions), region_id, tup_start, tup_stop, tup_data)


@njit(**KERNEL)
def _location_sets(cells, p, regions, region_id, tup_start, tup_stop, tup_data,
                   block, sep_block, touched, is_touched):
    """Solution bits of every type word on one cell set; returns the number of words touched.

    Sets bit ``s`` of ``block[w]`` (and of ``sep_block[w]`` when path ``s`` also
    separates the symbols) for every type word ``w`` (base-``p`` rank) that path
    ``s`` solves, and lists each newly non-zero row once in ``touched``.
    Unchecked: ``block``/``sep_block`` zero on entry for untouched rows, sized
    ``(p**k, words)``; tables from ``_tables`` for this board, ``k`` and library.
    """
    k = cells.shape[0]
    g_label = np.zeros(k, dtype=np.int64)
    g_size = np.zeros(k, dtype=np.int64)
    g_members = np.zeros((k, k), dtype=np.int64)
    g_lo = np.zeros(k, dtype=np.int64)
    g_n = np.zeros(k, dtype=np.int64)
    idx = np.zeros(k, dtype=np.int64)
    types = np.zeros(k, dtype=np.int64)
    n = 0
    for s in range(regions.shape[0]):
        ng = 0
        for i in range(k):
            lab = regions[s, cells[i]]
            found = -1
            for g in range(ng):
                if g_label[g] == lab:
                    found = g
                    break
            if found < 0:
                found = ng
                g_label[ng] = lab
                g_size[ng] = 0
                ng += 1
            g_members[found, g_size[found]] = i
            g_size[found] += 1
        ok = True
        for g in range(ng):
            rid = region_id[s, g_label[g]]
            m = g_size[g]
            lo = tup_start[m, rid]
            hi = tup_stop[m, rid]
            if lo == hi:
                ok = False
                break
            g_lo[g] = lo
            g_n[g] = (hi - lo) // m
            idx[g] = 0
        if not ok:
            continue
        separate = ng == k
        word = s >> 6
        bit = np.uint64(1) << np.uint64(s & 63)
        while True:
            for g in range(ng):
                base = g_lo[g] + idx[g] * g_size[g]
                for q in range(g_size[g]):
                    types[g_members[g, q]] = tup_data[base + q]
            r = 0
            for i in range(k):
                r = r * p + types[i]
            if not is_touched[r]:
                is_touched[r] = True
                touched[n] = r
                n += 1
            block[r, word] |= bit
            if separate:
                sep_block[r, word] |= bit
            g = ng - 1
            while g >= 0:
                idx[g] += 1
                if idx[g] < g_n[g]:
                    break
                idx[g] = 0
                g -= 1
            if g < 0:
                break
    return n


class SolutionSets(NamedTuple):
    """The solvable panels of a range of cell sets, ascending by rank.

    Few panels can be separated (3×3: 380 of 113,296), so their separating
    solutions are stored sparsely.
    """

    ranks: np.ndarray
    """``(n,)`` int64 panel ranks (``PiecePlacements`` order)."""
    bits: np.ndarray
    """``(n, words)`` uint64: bit ``s`` set when path ``s`` solves the panel."""
    sep_index: np.ndarray
    """``(m,)`` int64, ascending: rows of the panels that some solving path separates."""
    sep_bits: np.ndarray
    """``(m, words)`` uint64: the separating solutions of those panels."""

    def counts(self) -> np.ndarray:
        """``(n,)`` int64 number of solutions of each panel."""
        return _row_counts(self.bits)

    def separating(self) -> np.ndarray:
        """``(n, words)`` uint64: the separating solutions of every panel (dense; for small ranges)."""
        out = np.zeros_like(self.bits)
        out[self.sep_index] = self.sep_bits
        return out


@njit(**KERNEL)
def _row_counts(bits):
    out = np.zeros(bits.shape[0], dtype=np.int64)
    for i in range(bits.shape[0]):
        for w in range(bits.shape[1]):
            out[i] += popcount(bits[i, w])
    return out


@njit(**KERNEL)
def _range_sets(cell_rows, first_loc, p, regions, region_id, tup_start, tup_stop, tup_data,
                block, sep_block, touched, is_touched, fill, ranks, bits, sep_index, sep_bits):
    """``_location_sets`` for each cell set in ``cell_rows``; returns ``(panels, separable panels)``.

    With ``fill`` it also writes the ``SolutionSets`` arrays (sized by a first
    run without). Rows of ``block``/``sep_block`` are cleared after each cell set.
    """
    pk = block.shape[0]
    words = block.shape[1]
    n = 0
    ns = 0
    for loc in range(cell_rows.shape[0]):
        m = _location_sets(cell_rows[loc], p, regions, region_id, tup_start, tup_stop, tup_data,
                           block, sep_block, touched, is_touched)
        rows = np.sort(touched[:m])
        for q in range(m):
            r = rows[q]
            has_sep = False
            for w in range(words):
                if sep_block[r, w] != 0:
                    has_sep = True
                    break
            if fill:
                ranks[n] = (first_loc + loc) * pk + r
                bits[n, :] = block[r, :]
                if has_sep:
                    sep_index[ns] = n
                    sep_bits[ns, :] = sep_block[r, :]
            ns += has_sep
            n += 1
            block[r, :] = 0
            sep_block[r, :] = 0
            is_touched[r] = False
    return n, ns


def solution_sets(width: int, height: int, k: int, library: Sequence[str],
                  start: int = 0, stop: int | None = None) -> SolutionSets:
    """Every solvable panel whose cell set has combination rank in ``[start, stop)`` (default: all).

    Splitting ``[0, C(cells, k))`` into ranges and concatenating the results in
    order gives the same arrays as one call. ValueError (one line) on bad input.
    """
    p = len(check_panel_space(width, height, k, library))
    t = _tables(width, height, k, tuple(library))
    combos = Combinations(width * height, k)
    stop = combos.max_rank if stop is None else stop
    if not 0 <= start <= stop <= combos.max_rank:
        raise ValueError(f"cell-set range [{start}, {stop}) is not within [0, {combos.max_rank})")
    pk = p**k
    block = np.zeros((pk, t.words), dtype=np.uint64)
    sep_block = np.zeros((pk, t.words), dtype=np.uint64)
    touched = np.zeros(pk, dtype=np.int64)
    is_touched = np.zeros(pk, dtype=np.bool_)
    cell_rows = combos.unrank_range(start, stop) if stop > start else np.zeros((0, k), np.int64)
    args = (cell_rows, start, p, t.regions, t.region_id, t.tup_start, t.tup_stop, t.tup_data,
            block, sep_block, touched, is_touched)
    none = np.zeros((0, t.words), dtype=np.uint64)
    n, ns = _range_sets(*args, False, np.zeros(0, dtype=np.int64), none, np.zeros(0, dtype=np.int64), none)
    out = SolutionSets(np.zeros(n, dtype=np.int64), np.zeros((n, t.words), dtype=np.uint64),
                       np.zeros(ns, dtype=np.int64), np.zeros((ns, t.words), dtype=np.uint64))
    _range_sets(*args, True, *out)
    return out
