"""k-combinations of n items in the paper's lexicographic order (Algorithms 2-4).

A state is the ascending tuple of the k chosen items (board cells). Rank 0 is
``(0, 1, ..., k-1)``; the rank grows lexicographically (Table 1 of the paper):

>>> c = Combinations(20, 4)
>>> c.max_rank
4845
>>> [c.unrank(r) for r in (0, 1, 2)]
[(0, 1, 2, 3), (0, 1, 2, 4), (0, 1, 2, 5)]
>>> [c.unrank(r) for r in range(4841, 4845)]
[(15, 16, 17, 19), (15, 16, 18, 19), (15, 17, 18, 19), (16, 17, 18, 19)]
>>> c.rank((15, 17, 18, 19)), c.increment((0, 1, 2, 19)), c.increment((16, 17, 18, 19))
(4843, (0, 1, 3, 4), None)

The kernels are iterative versions of the paper's recursive algorithms and read
binomials from ``BINOMIAL``. Every binomial they touch is at most C(n, k), so
they are exact whenever C(n, k) fits in int64 and n < TABLE_SIZE (the class
checks both). Closed form of the rank, used by ``_rank_lex``:
``rank = C(n,k) - 1 - sum_i C(n-1-a_i, k-i)`` for ascending items ``a_0..a_{k-1}``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL
from epcg.combinatorics._base import Kernels, RowGenerator
from epcg.combinatorics._checks import check_fits, check_size
from epcg.combinatorics.binomial import BINOMIAL, TABLE_SIZE, binomial

__all__ = ["Combinations"]


@njit(**KERNEL)
def _unrank_lex(rank, n, k, out):
    """Fill ``out[0:k]`` with the ascending combination of lexicographic ``rank``.

    Algorithm 2 without recursion: walk the cells; place a piece at ``cell``
    when fewer than C(cells left after it, pieces left after it) ranks remain,
    otherwise skip the cell and subtract those ranks. O(n).
    Unchecked: ``0 <= rank < C(n, k)``, ``0 <= k <= n < TABLE_SIZE``, ``len(out) >= k``.
    """
    cell = 0
    for i in range(k):
        while True:
            b = BINOMIAL[n - cell - 1, k - i - 1]
            if rank < b:
                break
            rank -= b
            cell += 1
        out[i] = cell
        cell += 1


@njit(**KERNEL)
def _rank_lex(items, n, k):
    """Lexicographic rank of the ascending combination ``items[0:k]`` (Algorithm 4).

    Uses the closed form ``C(n,k) - 1 - sum_i C(n-1-items[i], k-i)``, O(k).
    Unchecked: items strictly increasing in ``[0, n)``, ``0 <= k <= n < TABLE_SIZE``.
    """
    total = BINOMIAL[n, k] - 1
    for i in range(k):
        total -= BINOMIAL[n - 1 - items[i], k - i]
    return total


@njit(**KERNEL)
def _increment_lex(items, n, k):
    """Advance ``items[0:k]`` in place to the next combination (Algorithm 3).

    Moves the last piece that is not yet packed against the end one cell right
    and packs the pieces after it just behind it. Returns False, leaving
    ``items`` unchanged, when it was the last combination.
    Unchecked: items strictly increasing in ``[0, n)``.
    """
    i = k - 1
    while i >= 0 and items[i] == n - k + i:
        i -= 1
    if i < 0:
        return False
    nxt = items[i] + 1
    for j in range(i, k):
        items[j] = nxt + (j - i)
    return True


@njit(**KERNEL)
def _unrank_range_lex(start, count, n, k, out):
    """Fill rows ``out[0:count]`` with the combinations of ranks ``start .. start+count-1``.

    One unrank, then increments. Unchecked: ``start + count <= C(n, k)``, out shape.
    """
    if count == 0:
        return
    _unrank_lex(start, n, k, out[0])
    for row in range(1, count):
        out[row, :] = out[row - 1, :]
        _increment_lex(out[row], n, k)


@njit(**KERNEL)
def _unrank_rows_lex(ranks, n, k, out):
    """``_unrank_lex(ranks[i], n, k, out[i])`` for every i. Unchecked like ``_unrank_lex``."""
    for row in range(ranks.shape[0]):
        _unrank_lex(ranks[row], n, k, out[row])


@njit(**KERNEL)
def _rank_rows_lex(states, n, k, out):
    """``out[i] = _rank_lex(states[i], n, k)`` for every row. Unchecked like ``_rank_lex``."""
    for row in range(states.shape[0]):
        out[row] = _rank_lex(states[row], n, k)


class Combinations(RowGenerator):
    """The C(n, k) ways to choose ``k`` of ``n`` items, in lexicographic order.

    A state is the ascending tuple of the chosen items (``width == k``).

    >>> Combinations(5, 2).unrank_range(0, 4).tolist()
    [[0, 1], [0, 2], [0, 3], [0, 4]]
    """

    _kernels = Kernels(_unrank_lex, _rank_lex, _increment_lex, _unrank_range_lex,
                       _unrank_rows_lex, _rank_rows_lex)

    def __init__(self, n: int, k: int) -> None:
        self.n = check_size("n", n)
        self.k = check_size("k", k)
        if self.n >= TABLE_SIZE:
            raise ValueError(f"n must be < {TABLE_SIZE}, got {self.n}")
        self.width = self.k
        self.max_rank = binomial(self.n, self.k)
        check_fits(self.max_rank, repr(self))
        self._args = (self.n, self.k)

    def __repr__(self) -> str:
        return f"Combinations({self.n}, {self.k})"

    def check_state(self, state) -> np.ndarray:
        """``state`` as an int64 array, or ValueError unless strictly ascending in ``[0, n)``."""
        items = self._items(state)
        if self.k and (items[0] < 0 or items[-1] >= self.n or np.any(np.diff(items) <= 0)):
            raise ValueError(f"{self!r}: items must be strictly ascending in [0, {self.n}), got {state!r}")
        return items
