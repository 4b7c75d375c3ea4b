"""Which placements of ``k`` hexagons on a Witness panel leave the fewest paths (at least one) crossing them all?
Built hexagon by hexagon (a PrefixWalk); a placement's state is the set of paths crossing all its hexagons."""

import numpy as np
from numba import njit

from epcg.games.witness import crossing_bitsets, must_cross_figure
from epcg.combinatorics import popcount
from epcg.search import PrefixWalk, scan_family


@njit(cache=True)
def every_path(paths, crossing):
    paths[:] = ~np.uint64(0)  # bits past the last path are cleared by the first hexagon

@njit(cache=True)
def add_hexagon(paths, position, out, crossing):
    for w in range(crossing.shape[1]):
        out[w] = paths[w] & crossing[position, w]

@njit(cache=True)
def no_path(paths, crossing):
    return not paths.any()

@njit(cache=True)
def solutions_with_last(paths, position, crossing):
    count = 0
    for w in range(crossing.shape[1]):
        count += popcount(paths[w] & crossing[position, w])
    return count


@scan_family
def must_cross(width: int, height: int, k: int):
    """All placements of ``k`` hexagons; a placement's score is its number of solutions."""
    crossing = np.ascontiguousarray(crossing_bitsets(width, height))  # (positions, words): paths through each
    walk = PrefixWalk(n=len(crossing), k=k, state=np.zeros(crossing.shape[1], np.uint64), empty=every_path,
                      extend=add_hexagon, dead=no_path, score_last=solutions_with_last, data=(crossing,))
    return walk.space(name=f"must-cross {width}x{height} k={k}",
                      render=lambda positions: must_cross_figure(width, height, positions))
