"""The movingai page's must-cross question on epcg's public interface.

Which placements of ``k`` must-cross hexagons on a ``width`` x ``height`` Witness
panel leave the fewest paths (but at least one) that cross them all?
"""

import numpy as np
from numba import njit

from epcg.api.witness import crossing_bitsets, must_cross_figure
from epcg.combinatorics import BINOMIAL, Combinations, popcount
from epcg.search import ScanSpace, scan_family


@njit(cache=True)
def count_solutions(rank, crossing, k, binomial):
    """Paths crossing all ``k`` positions of combination ``rank`` (unranked as in the page's code)."""
    n = crossing.shape[0]
    solutions = crossing[0] | ~crossing[0]  # every path (bits past the last path are never set below)
    position = 0
    for i in range(k):
        while rank >= binomial[n - position - 1, k - i - 1]:
            rank -= binomial[n - position - 1, k - i - 1]
            position += 1
        solutions &= crossing[position]
        position += 1
    return sum([popcount(word) for word in solutions])


@scan_family
def must_cross(width: int, height: int, k: int) -> ScanSpace:
    """All placements of ``k`` hexagons; a placement's score is its number of solutions."""
    crossing = crossing_bitsets(width, height)  # (positions, words): the paths through each position
    placements = Combinations(len(crossing), k)
    return ScanSpace(max_rank=placements.max_rank, evaluate=count_solutions, data=(crossing, k, BINOMIAL),
                     name=f"must-cross {width}x{height} k={k}", decode=placements.unrank,
                     render=lambda positions: must_cross_figure(width, height, positions))
