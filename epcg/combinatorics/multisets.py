"""Multisets of size k over m types, lexicographic over non-decreasing sequences.

A state is the non-decreasing sequence ``(b_0 <= ... <= b_{k-1})`` of types in
``[0, m)``. Adding ``i`` to ``b_i`` gives a strictly increasing k-combination
of ``m+k-1`` items, and this bijection keeps the lexicographic order, so there
are C(m+k-1, k) states ranked exactly like
:class:`~epcg.combinatorics.combinations.Combinations` ``(m+k-1, k)``.

>>> g = Multisets(3, 2)
>>> g.max_rank, g.unrank_range(0, 6).tolist()
(6, [[0, 0], [0, 1], [0, 2], [1, 1], [1, 2], [2, 2]])
>>> g.rank((1, 2)), g.increment((0, 2)), g.increment((2, 2))
(4, (1, 1), None)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL
from epcg.combinatorics._base import Kernels, RowGenerator
from epcg.combinatorics._checks import check_fits, check_size
from epcg.combinatorics.binomial import BINOMIAL, TABLE_SIZE, binomial
from epcg.combinatorics.combinations import _unrank_lex

__all__ = ["Multisets"]


@njit(**KERNEL)
def _unrank_multiset(rank, m, k, out):
    """Fill ``out[0:k]`` with the multiset of lexicographic ``rank`` (via the combination of m+k-1).

    Unchecked: ``0 <= rank < C(m+k-1, k)``, ``m + k - 1 < TABLE_SIZE``.
    """
    _unrank_lex(rank, m + k - 1, k, out)
    for i in range(k):
        out[i] -= i


@njit(**KERNEL)
def _rank_multiset(items, m, k):
    """Lexicographic rank of the non-decreasing ``items[0:k]``: ``_rank_lex`` of ``items[i] + i``, O(k)."""
    if k == 0:
        return 0
    n = m + k - 1
    total = BINOMIAL[n, k] - 1
    for i in range(k):
        total -= BINOMIAL[n - 1 - items[i] - i, k - i]
    return total


@njit(**KERNEL)
def _increment_multiset(items, m, k):
    """Advance ``items[0:k]`` to the next multiset in place; False (unchanged) after the last.

    Raises the last item below ``m-1`` by one and copies it to every later place.
    """
    i = k - 1
    while i >= 0 and items[i] == m - 1:
        i -= 1
    if i < 0:
        return False
    value = items[i] + 1
    for j in range(i, k):
        items[j] = value
    return True


@njit(**KERNEL)
def _unrank_range_multiset(start, count, m, k, out):
    """Rows ``out[0:count]`` = multisets of ranks ``start ..``: one unrank, then increments."""
    if count == 0:
        return
    _unrank_multiset(start, m, k, out[0])
    for row in range(1, count):
        out[row, :] = out[row - 1, :]
        _increment_multiset(out[row], m, k)


@njit(**KERNEL)
def _unrank_rows_multiset(ranks, m, k, out):
    """``_unrank_multiset(ranks[i], m, k, out[i])`` for every i."""
    for row in range(ranks.shape[0]):
        _unrank_multiset(ranks[row], m, k, out[row])


@njit(**KERNEL)
def _rank_rows_multiset(states, m, k, out):
    """``out[i] = _rank_multiset(states[i], m, k)`` for every row."""
    for row in range(states.shape[0]):
        out[row] = _rank_multiset(states[row], m, k)


class Multisets(RowGenerator):
    """The C(m+k-1, k) multisets of ``k`` items drawn from ``m`` types, lexicographic."""

    _kernels = Kernels(_unrank_multiset, _rank_multiset, _increment_multiset,
                       _unrank_range_multiset, _unrank_rows_multiset, _rank_rows_multiset)

    def __init__(self, m: int, k: int) -> None:
        self.m = check_size("m", m)
        self.k = check_size("k", k)
        if self.m + self.k - 1 >= TABLE_SIZE:
            raise ValueError(f"m + k - 1 must be < {TABLE_SIZE}, got {self.m + self.k - 1}")
        self.width = self.k
        self.max_rank = 1 if self.k == 0 else binomial(self.m + self.k - 1, self.k)
        check_fits(self.max_rank, repr(self))
        self._args = (self.m, self.k)

    def __repr__(self) -> str:
        return f"Multisets({self.m}, {self.k})"

    def check_state(self, state) -> np.ndarray:
        """``state`` as an int64 array, or ValueError unless non-decreasing in ``[0, m)``."""
        items = self._items(state)
        if self.k and (items[0] < 0 or items[-1] >= self.m or np.any(np.diff(items) < 0)):
            raise ValueError(f"{self!r}: items must be non-decreasing in [0, {self.m}), got {state!r}")
        return items
