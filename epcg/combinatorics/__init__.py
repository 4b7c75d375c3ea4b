"""Ranking and unranking of combinatorial state spaces (paper: "Ranking and Unranking functions").

Each generator class has ``max_rank`` (exact int), ``unrank(rank)``,
``rank(state)``, ``increment(state)`` and ``unrank_range(start, stop)``; the
numba kernels they wrap live beside them as ``_``-prefixed functions.
"""

from epcg.combinatorics.bitboard import BitboardCombinations
from epcg.combinatorics.combinations import Combinations

__all__ = ["BitboardCombinations", "Combinations"]
