"""The movingai page's must-cross question on epcg's public interface.

Which placements of ``k`` must-cross hexagons on a ``width`` x ``height`` Witness
panel leave the fewest paths (but at least one) that cross them all?
"""

import numpy as np
from numba import njit

from epcg.combinatorics import Combinations
from epcg.combinatorics.binomial import BINOMIAL
from epcg.combinatorics.bits import popcount
from epcg.domains.witness.bitsets import bitsets_for
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
    crossing = np.ascontiguousarray(bitsets_for(width, height).cross)  # (positions, words): paths through each
    return ScanSpace(max_rank=Combinations(len(crossing), k).max_rank, evaluate=count_solutions,
                     data=(crossing, k, BINOMIAL), name=f"must-cross {width}x{height} k={k}")
