"""Public scan API of the Witness domain: one call = one rank range (one Dask task).

``scan_range`` returns the smallest non-zero solution count in ``[start, stop)``
and every rank reaching it, with each one's longest solution. Partials of
adjacent ranges merge exactly (keep the smaller min; at a tie concatenate), so
any chunking gives the same table.

>>> r = scan_range("must-cross", 3, 3, 3, 0, max_rank("must-cross", 3, 3, 3))
>>> r.examined, r.min_solutions, len(r.ranks)
(9880, 4, 36)
>>> decode("must-cross", 3, 3, 3, int(r.ranks[0])).cross
(1, 19, 33)
>>> scan_range("regions", 3, 3, 5, 0, 2016).min_solutions
1
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from epcg.domains.witness.bitsets import bitsets_for
from epcg.domains.witness.geometry import Geometry
from epcg.domains.witness.kernels import _scan_cross, _scan_regions
from epcg.domains.witness.paths import paths_for
from epcg.domains.witness.puzzles import Puzzle, decode, max_rank, parse_k, solutions

__all__ = ["MinPartial", "Puzzle", "decode", "max_rank", "scan_range", "solutions"]

_INITIAL_ROOM = 4096
MAX_BUFFER_BYTES = 1 << 30
"""Largest per-call work buffer: the regions DFS keeps ``k * 2**(k-1)`` bitsets."""


class MinPartial(NamedTuple):
    """Result of scanning one rank range."""

    examined: int
    """Puzzles in ``[start, stop)``."""
    solvable: int
    """Puzzles with at least one solution."""
    min_solutions: int
    """Smallest non-zero solution count in the range, 0 if none."""
    ranks: np.ndarray
    """uint64, ascending: every rank in the range with ``min_solutions`` solutions."""
    longest: np.ndarray
    """uint8: longest solution (edges) of each of those puzzles."""


def scan_range(kind: str, width: int, height: int, k, start: int, stop: int) -> MinPartial:
    """Scan the puzzles of ranks ``[start, stop)`` (see ``puzzles.py`` for the rank spaces)."""
    kc, kr = parse_k(kind, width, height, k)
    total = max_rank(kind, width, height, k)
    start, stop = int(start), int(stop)
    if not 0 <= start <= stop <= total:
        raise ValueError(f"range [{start}, {stop}) not within [0, {total}]")
    if start == stop:
        return MinPartial(0, 0, 0, np.zeros(0, np.uint64), np.zeros(0, np.uint8))
    g = Geometry(width, height)
    if kr and kr * (1 << (kr - 1)) * 8 * ((len(paths_for(width, height)) + 63) // 64) > MAX_BUFFER_BYTES:
        raise ValueError(f"k_regions={kr} needs more than {MAX_BUFFER_BYTES >> 30} GiB of bitsets on {width}x{height}")
    bits = bitsets_for(width, height)
    room = _INITIAL_ROOM
    while True:
        acc = np.array([bits.num_paths + 1, 0, 0], dtype=np.int64)
        ranks = np.zeros(room, dtype=np.int64)
        longs = np.zeros(room, dtype=np.int64)
        if kind == "regions":
            _scan_regions(bits.separated, bits.pair_index, bits.lengths, bits.num_paths,
                          g.num_cells, kr, start, stop, acc, ranks, longs)
        else:
            _scan_cross(bits.cross, bits.separated, bits.pair_index, bits.lengths, bits.num_paths,
                        g.num_positions, kc, g.num_cells, kr, start, stop, acc, ranks, longs)
        if acc[1] <= room:
            break
        room = int(acc[1])
    solvable = int(acc[2])
    n = int(acc[1]) if solvable else 0
    order = np.argsort(ranks[:n], kind="stable")
    return MinPartial(
        examined=stop - start,
        solvable=solvable,
        min_solutions=int(acc[0]) if solvable else 0,
        ranks=ranks[:n][order].astype(np.uint64),
        longest=longs[:n][order].astype(np.uint8),
    )
