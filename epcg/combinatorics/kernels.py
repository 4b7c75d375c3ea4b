"""The ranking helpers a content space's own numba kernels call: public, numba-callable, unchecked.

Each is an ``@njit`` function: call it from your evaluator or solver (inside
numba) or from Python. They trust their caller, as numba kernels do; the
classes of :mod:`epcg.combinatorics` check their inputs.

==========================================  =============================================================
``BINOMIAL[n, k]``                          C(n, k) as an int64 table, ``n < 130`` (saturated on overflow)
``popcount(x)``                             set bits of a 64-bit word
``unrank_combination(rank, n, k, out)``     the ``k`` items of lexicographic ``rank`` into ``out`` (ascending)
``rank_colex(board)``                       colex rank of a bitboard: ``sum_j C(t_j, j)`` over cells ``t_1 < t_2 < ...``
``unrank_colex(rank, n, k)``                the bitboard of colex ``rank`` among ``k`` of ``n`` cells
``next_colex(board, n, k)``                 the next bitboard with ``k`` bits (Gosper's hack), 0 after the last
``rank_lex(board, n, k)``, ``unrank_lex``   the same in lexicographic order (rank 0 is cells ``0 .. k-1``)
==========================================  =============================================================

Colex order is increasing numeric value of the bitboard: stepping a range of
ranks with ``next_colex`` costs a few instructions per board, so a kernel
unranks the first board of its range once and steps from there.

>>> import numpy as np
>>> board = unrank_colex(5, 6, 3)         # the 6th 3-subset of 6 cells, colex
>>> bin(board), rank_colex(board), popcount(board)
('0b10101', 5, 3)
>>> bin(next_colex(board, 6, 3)), next_colex(0b111000, 6, 3)
('0b10110', 0)
>>> out = np.zeros(3, dtype=np.int64)
>>> unrank_combination(4, 6, 3, out); out.tolist()
[0, 2, 3]
>>> rank_lex(unrank_lex(4, 6, 3), 6, 3), int(BINOMIAL[6, 3])
(4, 20)
"""

from epcg.combinatorics.binomial import BINOMIAL
from epcg.combinatorics.bitboard import (
    _increment_colex_bb as next_colex,
    _rank_colex_bb as rank_colex,
    _rank_lex_bb as rank_lex,
    _unrank_colex_bb as unrank_colex,
    _unrank_lex_bb as unrank_lex,
)
from epcg.combinatorics.bits import popcount
from epcg.combinatorics.combinations import _unrank_lex as unrank_combination

__all__ = ["BINOMIAL", "next_colex", "popcount", "rank_colex", "rank_lex", "unrank_colex", "unrank_combination",
           "unrank_lex"]
