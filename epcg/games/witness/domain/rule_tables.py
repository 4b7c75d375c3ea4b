"""Every path a rules row's line may take, and the bitsets its scan ANDs, built once per board and endpoints.

A row's path universe is every path from one of its start places to one of
its exit places (a path may pass over other starts and exits), longest first,
ties by start, exit and DFS order, so the lowest set bit of a solution set is a
longest solution. Each path keeps its start, end, crossed positions, the region
of every cell and how many edges of every cell it runs along.

The table ``rows`` holds, one bitset over the universe per row: each start set
and exit set a row may place (one per combination), each must-cross position,
each gap (the paths that avoid an edge), each triangle (cell, count), each
pair of cells (paths separating them) and, for a row with stars, each pair of
cells again (paths keeping them in one region) and an empty row. ``offsets`` says where each block begins.

>>> u = universe_for(3, 3, (0,), (12, 15))
>>> u.num_paths, [int((u.end == v).sum()) for v in (15, 12)]
(362, [184, 178])
>>> tables_for(3, 3, (0,), (12, 15), 1, 2).rows.shape   # 1 start set, 1 exit set, 40 + 24 + 27 + 36 rows
(129, 6)
"""

from __future__ import annotations

import threading
from functools import lru_cache, cache
from typing import NamedTuple

import numpy as np

from epcg.combinatorics.combinations import Combinations
from epcg.games.witness.domain.geometry import Geometry
from epcg.games.witness.domain.paths import CROSS_WORDS, _cell_adjacent, _enumerate, _label_regions, _move_edges

MAX_PATHS = 1 << 22
"""Largest path universe of one row (its bitsets are this many bits a row)."""
MAX_SETS = 4096
"""Most start sets (or exit sets) one row may choose among."""


class Universe(NamedTuple):
    """Every path from ``starts`` to ``exits`` of one board (arrays read-only, longest path first)."""

    geometry: Geometry
    starts: tuple[int, ...]
    exits: tuple[int, ...]
    vertices: np.ndarray
    """``(P, V)`` int8 vertex sequences, padded with -1."""
    length: np.ndarray
    """``(P,)`` int64 edges."""
    start: np.ndarray
    """``(P,)`` int64 first vertex."""
    end: np.ndarray
    """``(P,)`` int64 last vertex."""
    cross: np.ndarray
    """``(P, positions)`` bool: the positions (vertices, then edges) the path passes."""
    regions: np.ndarray
    """``(P, C)`` uint8 region label of each cell."""
    touch: np.ndarray
    """``(P, C)`` uint8 edges of each cell on the path."""

    @property
    def num_paths(self) -> int:
        return int(self.length.shape[0])

    def path(self, i: int) -> tuple[int, ...]:
        return tuple(int(v) for v in self.vertices[i, : int(self.length[i]) + 1])


def _count(g: Geometry, s: int, e: int) -> int:
    empty = np.zeros((0, 0), dtype=np.int8)
    return _enumerate(np.ascontiguousarray(g.neighbours), _move_edges(g), e, g.num_vertices, False, empty,
                      np.zeros(0, np.uint8), np.zeros(0, np.uint64), np.zeros((0, CROSS_WORDS), np.uint64), s)


def universe_size(width: int, height: int, starts: tuple[int, ...], exits: tuple[int, ...]) -> int:
    """How many paths the universe of these endpoints holds (counted, not stored)."""
    Geometry(width, height)
    return sum(_count_cached(width, height, s, e) for s in starts for e in exits if s != e)


@cache
def _count_cached(width: int, height: int, s: int, e: int) -> int:
    return _count(Geometry(width, height), s, e)


_LOCK = threading.Lock()


def universe_for(width: int, height: int, starts: tuple[int, ...], exits: tuple[int, ...]) -> Universe:
    """The path universe of a board and endpoint places, built once per process (thread-safe)."""
    with _LOCK:
        return _universe(int(width), int(height), tuple(starts), tuple(exits))


@lru_cache(maxsize=16)
def _universe(width: int, height: int, starts: tuple[int, ...], exits: tuple[int, ...]) -> Universe:
    g = Geometry(width, height)
    nb, me, V = np.ascontiguousarray(g.neighbours), _move_edges(g), g.num_vertices
    parts = []
    for s in starts:
        for e in exits:
            if s == e:
                continue
            n = _count_cached(width, height, s, e)
            vertices = np.full((n, V), -1, dtype=np.int8)
            length = np.zeros(n, dtype=np.uint8)
            cross = np.zeros((n, CROSS_WORDS), dtype=np.uint64)
            _enumerate(nb, me, e, V, True, vertices, length, np.zeros(n, np.uint64), cross, s)
            parts.append((vertices, length, cross, np.full(n, s), np.full(n, e)))
    if not parts:
        raise ValueError("no path: every start is also the only exit")
    vertices, length, cross, start, end = (np.concatenate(a) for a in zip(*parts))
    order = np.argsort(-length.astype(np.int64), kind="stable")
    vertices, length, cross, start, end = vertices[order], length[order], cross[order], start[order], end[order]
    regions = np.zeros((len(length), g.num_cells), dtype=np.uint8)
    _label_regions(cross, V, _cell_adjacent(g), regions)
    bits = np.arange(g.num_positions)
    passes = ((cross[:, bits >> 6] >> (bits & 63).astype(np.uint64)) & np.uint64(1)).astype(bool)
    touch = np.zeros((len(length), g.num_cells), dtype=np.uint8)
    for c in range(g.num_cells):
        x, y = g.cell_xy(c)
        for a, b in (((x, y), (x + 1, y)), ((x, y + 1), (x + 1, y + 1)), ((x, y), (x, y + 1)),
                     ((x + 1, y), (x + 1, y + 1))):
            touch[:, c] += passes[:, V + g.edge_between(g.vertex(*a), g.vertex(*b))]
    out = Universe(g, starts, exits, vertices, length.astype(np.int64), start.astype(np.int64),
                   end.astype(np.int64), passes, regions, touch)
    for array in out[3:]:
        array.flags.writeable = False
    return out


def bitsets(rows: np.ndarray) -> np.ndarray:
    """``(R, P)`` bool -> ``(R, ceil(P/64))`` uint64: bit ``s % 64`` of word ``s // 64`` is ``rows[:, s]``.

    >>> bitsets(np.array([[True, False, True]])).tolist()
    [[5]]
    """
    rows = np.asarray(rows, dtype=bool)
    words = (rows.shape[1] + 63) // 64
    packed = np.packbits(rows, axis=1, bitorder="little")
    out = np.zeros((rows.shape[0], words * 8), dtype=np.uint8)
    out[:, : packed.shape[1]] = packed
    return out.view("<u8").astype(np.uint64)


class Tables(NamedTuple):
    """A row's bitsets (``rows``) and where each block starts (``offsets``: starts, exits, hexagons, gaps,
    triangles, pairs separated, pairs together then one empty row (for stars; else nothing), end)."""

    num_paths: int
    rows: np.ndarray
    offsets: np.ndarray
    pair_index: np.ndarray
    """``(C, C)`` int64: pair of cells -> its row within the pairs block (-1 on the diagonal)."""
    lengths: np.ndarray
    regions: np.ndarray
    touch: np.ndarray


def tables_for(width: int, height: int, starts: tuple[int, ...], exits: tuple[int, ...], start_count: int = 1,
               exit_count: int = 1, together: bool = False) -> Tables:
    """The bitsets of a row's universe (built once per process for each endpoint choice); ``together`` adds the
    block of pairs kept in one region (for stars)."""
    with _LOCK:
        return _tables(int(width), int(height), tuple(starts), tuple(exits), int(start_count), int(exit_count),
                       bool(together))


@lru_cache(maxsize=16)
def _tables(width: int, height: int, starts: tuple[int, ...], exits: tuple[int, ...], start_count: int,
            exit_count: int, together: bool) -> Tables:
    u = _universe(width, height, starts, exits)
    g = u.geometry
    blocks = []
    for places, count, at in ((u.starts, start_count, u.start), (u.exits, exit_count, u.end)):
        combos = Combinations(len(places), count)
        if combos.max_rank > MAX_SETS:
            raise ValueError(f"{combos.max_rank:,} sets of {count} of {len(places)} vertices: at most {MAX_SETS}")
        hit = at[None, :] == np.array(places)[:, None]
        blocks.append(np.stack([hit[list(combos.unrank(r))].any(axis=0) for r in range(combos.max_rank)]))
    blocks.append(u.cross.T)
    blocks.append(~u.cross[:, g.num_vertices:].T)
    blocks.append(np.stack([u.touch[:, c] == n for c in range(g.num_cells) for n in (1, 2, 3)]))
    pairs = [(a, b) for a in range(g.num_cells) for b in range(a + 1, g.num_cells)]
    pair_index = np.full((g.num_cells, g.num_cells), -1, dtype=np.int64)
    for i, (a, b) in enumerate(pairs):
        pair_index[a, b] = pair_index[b, a] = i
    separated = [u.regions[:, a] != u.regions[:, b] for a, b in pairs]
    blocks.append(np.stack(separated) if pairs else np.zeros((0, u.num_paths), dtype=bool))
    blocks.append(np.concatenate([~blocks[-1], np.zeros((1, u.num_paths), dtype=bool)]) if together
                  else np.zeros((0, u.num_paths), dtype=bool))
    offsets = np.cumsum([0] + [len(b) for b in blocks]).astype(np.int64)
    rows = bitsets(np.concatenate(blocks))
    for array in (rows, offsets, pair_index):
        array.flags.writeable = False
    return Tables(u.num_paths, rows, offsets, pair_index, u.length, u.regions, u.touch)
