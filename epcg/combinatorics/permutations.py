"""Permutations of n items: lexicographic order, and Myrvold-Ruskey order.

A state is the sequence ``(p_0, ..., p_{n-1})``, a rearrangement of ``range(n)``
(``p_i`` = item at position ``i``); ``n <= 20`` so that n! fits in int64.

* :class:`Permutations` ranks lexicographically (Lehmer code / factorial number
  system): rank 0 is the identity, the last is ``(n-1, ..., 0)``. These are the
  k-permutation kernels with ``k = n`` (O(n) rank, O(n^2) unrank worst case,
  O(n) increment = the classic next-permutation step).
* :class:`MyrvoldRuskeyPermutations` uses the linear-time rank/unrank of
  Myrvold & Ruskey (2001, "rank1"/"unrank1"). Its order is not lexicographic:
  ``unrank(r)`` starts from the identity and, for ``i = n, n-1, ..., 1``,
  swaps positions ``i-1`` and ``d_i`` where ``d_n = r mod n``,
  ``d_{n-1} = (r div n) mod (n-1)``, ... are the mixed-radix digits of ``r``
  (least significant first). So rank 0 is not the identity.

>>> Permutations(3).unrank_range(0, 6).tolist()
[[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]
>>> MyrvoldRuskeyPermutations(3).unrank_range(0, 6).tolist()
[[1, 2, 0], [2, 0, 1], [1, 0, 2], [2, 1, 0], [0, 2, 1], [0, 1, 2]]
>>> MyrvoldRuskeyPermutations(3).rank((0, 1, 2)), Permutations(3).increment((1, 2, 0))
(5, (2, 0, 1))
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL
from epcg.combinatorics._base import Kernels, RowGenerator
from epcg.combinatorics._checks import check_size
from epcg.combinatorics.kpermutations import FALLING, KPERM_LEX_KERNELS, check_distinct

__all__ = ["MyrvoldRuskeyPermutations", "Permutations"]

MAX_ITEMS = 20
"""Largest ``n``: 20! < 2**63 <= 21!."""


@njit(**KERNEL)
def _unrank_mr(rank, n, out):
    """Fill ``out[0:n]`` with the permutation of Myrvold-Ruskey ``rank`` (unrank1), O(n).

    Unchecked: ``0 <= rank < n!``, ``n <= 20``.
    """
    for i in range(n):
        out[i] = i
    for i in range(n, 0, -1):
        j = rank % i
        rank //= i
        out[i - 1], out[j] = out[j], out[i - 1]


@njit(**KERNEL)
def _rank_mr(items, n):
    """Myrvold-Ruskey rank (rank1) of the permutation ``items[0:n]``, O(n).

    Undoes ``_unrank_mr`` swap by swap on a copy, using the inverse permutation.
    Unchecked: ``items`` is a permutation of ``range(n)``.
    """
    perm = items[:n].copy()
    inv = np.empty(n, dtype=np.int64)
    for i in range(n):
        inv[perm[i]] = i
    digits = np.zeros(n + 1, dtype=np.int64)
    for i in range(n, 1, -1):
        s = perm[i - 1]
        j = inv[i - 1]
        digits[i] = s
        perm[i - 1], perm[j] = perm[j], perm[i - 1]
        inv[s], inv[i - 1] = inv[i - 1], inv[s]
    total = 0
    for i in range(2, n + 1):
        total = digits[i] + i * total
    return total


@njit(**KERNEL)
def _increment_mr(items, n):
    """Replace ``items`` by the permutation of the next Myrvold-Ruskey rank (rank, then unrank; O(n)).

    False (unchanged) after the last. Unchecked: ``items`` is a permutation of ``range(n)``.
    """
    rank = _rank_mr(items, n)
    if rank + 1 >= FALLING[n, n]:
        return False
    _unrank_mr(rank + 1, n, items)
    return True


@njit(**KERNEL)
def _unrank_range_mr(start, count, n, out):
    """Rows ``out[0:count]`` = permutations of Myrvold-Ruskey ranks ``start .. start+count-1``."""
    for row in range(count):
        _unrank_mr(start + row, n, out[row])


@njit(**KERNEL)
def _unrank_rows_mr(ranks, n, out):
    """``_unrank_mr(ranks[i], n, out[i])`` for every i."""
    for row in range(ranks.shape[0]):
        _unrank_mr(ranks[row], n, out[row])


@njit(**KERNEL)
def _rank_rows_mr(states, n, out):
    """``out[i] = _rank_mr(states[i], n)`` for every row."""
    for row in range(states.shape[0]):
        out[row] = _rank_mr(states[row], n)


class _PermutationsBase(RowGenerator):
    def __init__(self, n: int) -> None:
        self.n = check_size("n", n)
        if self.n > MAX_ITEMS:
            raise ValueError(f"n must be <= {MAX_ITEMS} (n! must fit in int64), got {self.n}")
        self.width = self.n
        self.max_rank = math.factorial(self.n)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.n})"

    def check_state(self, state) -> np.ndarray:
        """``state`` as an int64 array, or ValueError unless it is a permutation of ``range(n)``."""
        return check_distinct(self._items(state), self.n, repr(self), state)


class Permutations(_PermutationsBase):
    """The n! permutations of ``range(n)`` (``n <= 20``), lexicographic."""

    _kernels = KPERM_LEX_KERNELS

    def __init__(self, n: int) -> None:
        super().__init__(n)
        self._args = (self.n, self.n)


class MyrvoldRuskeyPermutations(_PermutationsBase):
    """The n! permutations of ``range(n)`` (``n <= 20``) in Myrvold-Ruskey order (O(n) rank and unrank)."""

    _kernels = Kernels(_unrank_mr, _rank_mr, _increment_mr, _unrank_range_mr, _unrank_rows_mr, _rank_rows_mr)

    def __init__(self, n: int) -> None:
        super().__init__(n)
        self._args = (self.n,)
