"""Ranking and unranking of combinatorial state spaces (paper: "Ranking and Unranking functions").

Every generator has ``max_rank`` (an exact int), ``unrank(rank)``,
``rank(state)`` and ``increment(state)`` (None after the last state), plus
array forms ``unrank_range(start, stop)``, ``unrank_rows(ranks)`` and
``rank_rows(states)``. States are tuples of ints (rows of an int64 array in
the array forms); bitboards are ints (uint64 arrays). The numba kernels the
classes wrap live beside them as ``_``-prefixed functions that trust their
callers; the classes validate and raise ValueError.

==============================  =========================  ===================
generator                       order                      max_rank
==============================  =========================  ===================
Combinations(n, k)              lexicographic (Alg. 2-4)   C(n, k)
BitboardCombinations(n, k)      lexicographic; colex too   C(n, k)
Permutations(n)                 lexicographic              n!
MyrvoldRuskeyPermutations(n)    Myrvold-Ruskey "rank1"     n!
KPermutations(n, k)             lexicographic              n!/(n-k)!
Multisets(m, k)                 lexicographic              C(m+k-1, k)
Digits(p, k)                    lexicographic              p**k
PiecePlacements(n, k, p)        cells, then types          C(n, k) * p**k
Product(*factors)               first factor major         product
==============================  =========================  ===================

>>> from epcg.combinatorics import Combinations
>>> Combinations(20, 4).unrank(4844)
(16, 17, 18, 19)

A content space's own numba kernels call the helpers of
:mod:`epcg.combinatorics.kernels` (``BINOMIAL``, ``popcount``,
``unrank_combination``, ``rank_colex``/``unrank_colex``/``next_colex``,
``rank_lex``/``unrank_lex``), all re-exported here.
"""

from epcg.combinatorics.bitboard import BitboardCombinations
from epcg.combinatorics.combinations import Combinations
from epcg.combinatorics.kernels import (
    BINOMIAL,
    next_colex,
    popcount,
    rank_colex,
    rank_lex,
    unrank_colex,
    unrank_combination,
    unrank_lex,
)
from epcg.combinatorics.kpermutations import KPermutations
from epcg.combinatorics.multisets import Multisets
from epcg.combinatorics.permutations import MyrvoldRuskeyPermutations, Permutations
from epcg.combinatorics.products import Digits, PiecePlacements, Product

__all__ = [
    "BINOMIAL",
    "BitboardCombinations",
    "Combinations",
    "Digits",
    "KPermutations",
    "Multisets",
    "MyrvoldRuskeyPermutations",
    "Permutations",
    "PiecePlacements",
    "Product",
    "next_colex",
    "popcount",
    "rank_colex",
    "rank_lex",
    "unrank_colex",
    "unrank_combination",
    "unrank_lex",
]
