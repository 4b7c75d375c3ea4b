"""k-permutations of n items (ordered selections of k distinct items), lexicographic.

A state is the sequence ``(a_0, ..., a_{k-1})`` of distinct items in ``[0, n)``;
ranks follow the lexicographic order of the sequences, so rank 0 is
``(0, 1, ..., k-1)`` and the last is ``(n-1, n-2, ..., n-k)``. The rank is the
mixed-radix number whose digit ``d_i`` (radix ``n-i``) counts the unused items
smaller than ``a_i``: ``rank = sum_i d_i * P(n-i-1, k-i-1)`` with
``P(m, j) = m!/(m-j)!`` (``FALLING[m, j]``). Items are tracked in a 64-bit mask,
so ``n <= 64``.

>>> g = KPermutations(4, 2)
>>> g.max_rank, g.unrank(0), g.unrank(1), g.unrank(3), g.unrank(11)
(12, (0, 1), (0, 2), (1, 0), (3, 2))
>>> g.rank((2, 0)), g.increment((0, 3)), g.increment((3, 2))
(6, (1, 0), None)
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL
from epcg.combinatorics._base import Kernels, RowGenerator
from epcg.combinatorics._checks import check_fits, check_size
from epcg.combinatorics.binomial import INT64_MAX
from epcg.combinatorics.bits import ctz, low_mask, popcount

__all__ = ["FALLING", "KPermutations"]

MAX_ITEMS = 64
"""Largest ``n``: the kernels keep the used items in one uint64 mask."""

_ONE = np.uint64(1)


def _build_falling(size: int) -> np.ndarray:
    table = np.zeros((size, size), dtype=np.int64)
    for m in range(size):
        for j in range(m + 1):
            table[m, j] = min(math.perm(m, j), INT64_MAX)
    return table


FALLING: np.ndarray = _build_falling(MAX_ITEMS + 1)
"""``FALLING[m, j]`` = m!/(m-j)! for ``0 <= j <= m <= 64`` (0 where j > m), saturated at INT64_MAX.

>>> int(FALLING[20, 20]), int(FALLING[5, 2])
(2432902008176640000, 20)
"""


@njit(**KERNEL)
def _unrank_kperm_lex(rank, n, k, out):
    """Fill ``out[0:k]`` with the k-permutation of lexicographic ``rank``, O(k * n).

    Unchecked: ``0 <= rank < P(n, k)``, ``0 <= k <= n <= 64``.
    """
    free = low_mask(n)
    for i in range(k):
        f = FALLING[n - i - 1, k - i - 1]
        d = rank // f
        rank -= d * f
        x = free
        for _ in range(d):
            x &= x - _ONE
        item = ctz(x)
        out[i] = item
        free ^= _ONE << np.uint64(item)


@njit(**KERNEL)
def _rank_kperm_lex(items, n, k):
    """Lexicographic rank of ``items[0:k]``, O(k). Unchecked: distinct items in ``[0, n)``, n <= 64."""
    used = np.uint64(0)
    total = 0
    for i in range(k):
        a = items[i]
        smaller_free = a - popcount(used & low_mask(a))
        total += smaller_free * FALLING[n - i - 1, k - i - 1]
        used |= _ONE << np.uint64(a)
    return total


@njit(**KERNEL)
def _increment_kperm_lex(items, n, k):
    """Advance ``items[0:k]`` in place to the next k-permutation; False (unchanged) after the last.

    From the right, frees items until one can be replaced by a larger free
    item, then refills the tail with the smallest free items in ascending order.
    Unchecked: distinct items in ``[0, n)``, n <= 64.
    """
    used = np.uint64(0)
    for i in range(k):
        used |= _ONE << np.uint64(items[i])
    for i in range(k - 1, -1, -1):
        a = items[i]
        used ^= _ONE << np.uint64(a)
        free = ~used & low_mask(n)
        above = free & ~low_mask(a + 1)
        if above:
            b = ctz(above)
            items[i] = b
            free ^= _ONE << np.uint64(b)
            for j in range(i + 1, k):
                items[j] = ctz(free)
                free &= free - _ONE
            return True
    return False


@njit(**KERNEL)
def _unrank_range_kperm_lex(start, count, n, k, out):
    """Rows ``out[0:count]`` = k-permutations of ranks ``start ..``: one unrank, then increments."""
    if count == 0:
        return
    _unrank_kperm_lex(start, n, k, out[0])
    for row in range(1, count):
        out[row, :] = out[row - 1, :]
        _increment_kperm_lex(out[row], n, k)


@njit(**KERNEL)
def _unrank_rows_kperm_lex(ranks, n, k, out):
    """``_unrank_kperm_lex(ranks[i], n, k, out[i])`` for every i."""
    for row in range(ranks.shape[0]):
        _unrank_kperm_lex(ranks[row], n, k, out[row])


@njit(**KERNEL)
def _rank_rows_kperm_lex(states, n, k, out):
    """``out[i] = _rank_kperm_lex(states[i], n, k)`` for every row."""
    for row in range(states.shape[0]):
        out[row] = _rank_kperm_lex(states[row], n, k)


KPERM_LEX_KERNELS = Kernels(_unrank_kperm_lex, _rank_kperm_lex, _increment_kperm_lex,
                            _unrank_range_kperm_lex, _unrank_rows_kperm_lex, _rank_rows_kperm_lex)
"""The kernels above, in the calling convention of ``RowGenerator`` (args ``n, k``)."""


def check_distinct(items: np.ndarray, n: int, what: str, state) -> np.ndarray:
    """``items``, or ValueError unless they are distinct and in ``[0, n)``."""
    if items.size and (items.min() < 0 or items.max() >= n or np.unique(items).size != items.size):
        raise ValueError(f"{what}: items must be distinct and in [0, {n}), got {state!r}")
    return items


class KPermutations(RowGenerator):
    """The n!/(n-k)! ordered selections of ``k`` distinct items out of ``n <= 64``, lexicographic."""

    _kernels = KPERM_LEX_KERNELS

    def __init__(self, n: int, k: int) -> None:
        self.n = check_size("n", n)
        self.k = check_size("k", k)
        if self.n > MAX_ITEMS:
            raise ValueError(f"n must be <= {MAX_ITEMS}, got {self.n}")
        self.width = self.k
        self.max_rank = math.perm(self.n, self.k) if self.k <= self.n else 0
        check_fits(self.max_rank, repr(self))
        self._args = (self.n, self.k)

    def __repr__(self) -> str:
        return f"KPermutations({self.n}, {self.k})"

    def check_state(self, state) -> np.ndarray:
        """``state`` as an int64 array, or ValueError unless k distinct items in ``[0, n)``."""
        return check_distinct(self._items(state), self.n, repr(self), state)
