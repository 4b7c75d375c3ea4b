"""Bitsets over a board's path list: one bit per path, bit ``s % 64`` of word ``s // 64``.

A constraint's solution set is a bitset; a puzzle's is the AND of its
constraints' sets. Two tables are built once per board from a ``PathSet``:

- ``cross[p]``: the paths that cross must-cross position ``p``;
- ``separated[pair_index[a, b]]``: the paths that put cells ``a`` and ``b`` in
  different regions (two cells of different colours must be separated).

Paths are ordered longest first (see ``PathSet``), so the first set bit of a
solution set is its longest solution.

>>> b = bitsets_for(2, 2)
>>> b.num_paths, b.words, b.cross.shape, b.separated.shape
(12, 1, (21, 1), (6, 1))

Bit primitives (popcount, ctz) are those of :mod:`epcg.combinatorics.bits`.
"""

from __future__ import annotations

import threading
import time
from functools import cache
from typing import NamedTuple

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL
from epcg.games.witness.domain import paths as paths_module
from epcg.games.witness.domain.paths import PathSet, paths_for

_ONE = np.uint64(1)


@njit(**KERNEL)
def _build_cross(cross_mask, num_positions, out):
    """``out[p]`` = paths whose must-cross mask has bit ``p``. Unchecked: ``out`` zeroed, shaped."""
    for s in range(cross_mask.shape[0]):
        word = s >> 6
        bit = _ONE << np.uint64(s & 63)
        for p in range(num_positions):
            if (cross_mask[s, p >> 6] >> np.uint64(p & 63)) & _ONE:
                out[p, word] |= bit


@njit(**KERNEL)
def _build_separated(regions, pair_cells, out):
    """``out[i]`` = paths with different region labels at the two cells of pair ``i``."""
    for s in range(regions.shape[0]):
        word = s >> 6
        bit = _ONE << np.uint64(s & 63)
        for i in range(pair_cells.shape[0]):
            if regions[s, pair_cells[i, 0]] != regions[s, pair_cells[i, 1]]:
                out[i, word] |= bit


class Bitsets(NamedTuple):
    """Solution-set tables of one board (read-only arrays)."""

    num_paths: int
    words: int
    """uint64 words per bitset, ``ceil(num_paths / 64)``."""
    cross: np.ndarray
    """``(num_positions, words)`` uint64: paths crossing each must-cross position."""
    separated: np.ndarray
    """``(num_pairs, words)`` uint64: paths separating each pair of cells."""
    pair_index: np.ndarray
    """``(num_cells, num_cells)`` int64: row of ``separated`` for cells ``a != b``; -1 on the diagonal."""
    pair_cells: np.ndarray
    """``(num_pairs, 2)`` int64: the two cells of each row of ``separated``, lower first."""
    lengths: np.ndarray
    """``(num_paths,)`` int64 edges of each path, non-increasing."""


_BUILD_LOCK = threading.Lock()


BUILD_SECONDS: dict[tuple[int, int], float] = {}
"""CPU seconds this process took to build each board's bitsets from its paths (set when first built)."""


def build_seconds(width: int, height: int) -> float:
    """CPU seconds this process spent on the board's tables: its paths listed and their bitsets built (now, if
    not built yet). What a worker spends once per board before it scans.

    >>> build_seconds(2, 2) >= 0.0
    True
    """
    bitsets_for(width, height)
    return paths_module.BUILD_SECONDS.get((width, height), 0.0) + BUILD_SECONDS[width, height]


def bitsets_for(width: int, height: int) -> Bitsets:
    """The ``Bitsets`` of a ``width × height`` board, computed once per process (thread-safe)."""
    paths = paths_for(width, height)
    with _BUILD_LOCK:
        return _build(paths)


@cache
def _build(paths: PathSet) -> Bitsets:
    began = time.thread_time()
    g = paths.geometry
    words = (len(paths) + 63) // 64
    cross = np.zeros((g.num_positions, words), dtype=np.uint64)
    _build_cross(paths.cross_mask, g.num_positions, cross)
    cells = g.num_cells
    pair_index = np.full((cells, cells), -1, dtype=np.int64)
    pairs = [(a, b) for a in range(cells) for b in range(a + 1, cells)]
    for i, (a, b) in enumerate(pairs):
        pair_index[a, b] = pair_index[b, a] = i
    pair_cells = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    separated = np.zeros((len(pairs), words), dtype=np.uint64)
    _build_separated(paths.regions, pair_cells, separated)
    lengths = paths.length.astype(np.int64)
    for array in (cross, separated, pair_index, pair_cells, lengths):
        array.flags.writeable = False
    BUILD_SECONDS[g.width, g.height] = time.thread_time() - began
    return Bitsets(len(paths), words, cross, separated, pair_index, pair_cells, lengths)
