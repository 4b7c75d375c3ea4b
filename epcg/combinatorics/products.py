"""Mixed products of generators, e.g. piece locations x piece types (The Witness).

A product's rank is a mixed-radix number whose digits are the factors' ranks,
**the first factor most significant**::

    rank = r_0 * (R_1 * R_2 * ...) + r_1 * (R_2 * ...) + ... + r_last

(``R_i`` = ``factors[i].max_rank``). So the last factor changes fastest as the
rank grows, and the order is lexicographic over ``(state_0, state_1, ...)``.
A product state is the flat concatenation of the factor states.

* :class:`Digits` — the ``p**k`` words of ``k`` digits in ``[0, p)`` (piece
  types at k locations), lexicographic (first digit most significant).
* :class:`Product` — any row generators, combined in Python/numpy (nestable).
* :class:`PiecePlacements` — ``Combinations(n, k) x Digits(p, k)`` with numba
  kernels: ``k`` pieces of ``p`` types on ``n`` cells, the cell set most
  significant. State = ``k`` ascending cells, then the ``k`` types in cell order.

>>> g = PiecePlacements(16, 3, 2)
>>> g.max_rank == Product(Combinations(16, 3), Digits(2, 3)).max_rank == 560 * 8
True
>>> g.unrank(0), g.unrank(1), g.unrank(8)
((0, 1, 2, 0, 0, 0), (0, 1, 2, 0, 0, 1), (0, 1, 3, 0, 0, 0))
>>> g.rank((0, 1, 3, 0, 0, 1)), g.increment((0, 1, 2, 1, 1, 1))
(9, (0, 1, 3, 0, 0, 0))
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL
from epcg.combinatorics._base import Kernels, RowGenerator
from epcg.combinatorics._checks import as_items, check_fits, check_range, check_rank, check_size
from epcg.combinatorics.combinations import Combinations, _increment_lex, _rank_lex, _unrank_lex

__all__ = ["Digits", "PiecePlacements", "Product"]


@njit(**KERNEL)
def _power(p, k):
    """``p ** k`` in int64 (unchecked overflow)."""
    result = 1
    for _ in range(k):
        result *= p
    return result


@njit(**KERNEL)
def _unrank_digits(rank, p, k, out):
    """Fill ``out[0:k]`` with the base-``p`` digits of ``rank``, most significant first.

    Unchecked: ``0 <= rank < p**k``.
    """
    for i in range(k - 1, -1, -1):
        out[i] = rank % p
        rank //= p


@njit(**KERNEL)
def _rank_digits(items, p, k):
    """The number whose base-``p`` digits are ``items[0:k]`` (most significant first)."""
    total = 0
    for i in range(k):
        total = total * p + items[i]
    return total


@njit(**KERNEL)
def _increment_digits(items, p, k):
    """Add one to the base-``p`` word ``items[0:k]`` in place; False (unchanged) after the last."""
    i = k - 1
    while i >= 0 and items[i] == p - 1:
        i -= 1
    if i < 0:
        return False
    items[i] += 1
    for j in range(i + 1, k):
        items[j] = 0
    return True


@njit(**KERNEL)
def _unrank_range_digits(start, count, p, k, out):
    """Rows ``out[0:count]`` = words of ranks ``start ..``: one unrank, then increments."""
    if count == 0:
        return
    _unrank_digits(start, p, k, out[0])
    for row in range(1, count):
        out[row, :] = out[row - 1, :]
        _increment_digits(out[row], p, k)


@njit(**KERNEL)
def _unrank_rows_digits(ranks, p, k, out):
    """``_unrank_digits(ranks[i], p, k, out[i])`` for every i."""
    for row in range(ranks.shape[0]):
        _unrank_digits(ranks[row], p, k, out[row])


@njit(**KERNEL)
def _rank_rows_digits(states, p, k, out):
    """``out[i] = _rank_digits(states[i], p, k)`` for every row."""
    for row in range(states.shape[0]):
        out[row] = _rank_digits(states[row], p, k)


class Digits(RowGenerator):
    """The ``p**k`` words of ``k`` digits in ``[0, p)``, lexicographic (base-``p`` counting).

    >>> Digits(2, 3).unrank_range(0, 4).tolist()
    [[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1]]
    """

    _kernels = Kernels(_unrank_digits, _rank_digits, _increment_digits,
                       _unrank_range_digits, _unrank_rows_digits, _rank_rows_digits)

    def __init__(self, p: int, k: int) -> None:
        self.p = check_size("p", p)
        self.k = check_size("k", k)
        self.width = self.k
        self.max_rank = self.p**self.k
        check_fits(self.max_rank, repr(self))
        self._args = (self.p, self.k)

    def __repr__(self) -> str:
        return f"Digits({self.p}, {self.k})"

    def check_state(self, state) -> np.ndarray:
        """``state`` as an int64 array, or ValueError unless k digits in ``[0, p)``."""
        items = self._items(state)
        if self.k and (items.min() < 0 or items.max() >= self.p):
            raise ValueError(f"{self!r}: digits must lie in [0, {self.p}), got {state!r}")
        return items


@njit(**KERNEL)
def _unrank_placed(rank, n, k, p, out):
    """Fill ``out[0:2k]`` with the cells then types of placement ``rank`` (cells most significant).

    Unchecked: ``0 <= rank < C(n, k) * p**k``, as ``_unrank_lex``.
    """
    pk = _power(p, k)
    _unrank_lex(rank // pk, n, k, out[:k])
    _unrank_digits(rank % pk, p, k, out[k:])


@njit(**KERNEL)
def _rank_placed(items, n, k, p):
    """Rank of the placement ``items[0:2k]`` = cells' lex rank * p**k + types' base-p value."""
    return _rank_lex(items[:k], n, k) * _power(p, k) + _rank_digits(items[k:], p, k)


@njit(**KERNEL)
def _increment_placed(items, n, k, p):
    """Next placement in place: count the types up; on wrap-around, step the cells and reset the types.

    False (unchanged) after the last.
    """
    if _increment_digits(items[k:], p, k):
        return True
    if not _increment_lex(items[:k], n, k):
        return False
    items[k:] = 0
    return True


@njit(**KERNEL)
def _unrank_range_placed(start, count, n, k, p, out):
    """Rows ``out[0:count]`` = placements of ranks ``start ..``: one unrank, then increments."""
    if count == 0:
        return
    _unrank_placed(start, n, k, p, out[0])
    for row in range(1, count):
        out[row, :] = out[row - 1, :]
        _increment_placed(out[row], n, k, p)


@njit(**KERNEL)
def _unrank_rows_placed(ranks, n, k, p, out):
    """``_unrank_placed(ranks[i], n, k, p, out[i])`` for every i."""
    for row in range(ranks.shape[0]):
        _unrank_placed(ranks[row], n, k, p, out[row])


@njit(**KERNEL)
def _rank_rows_placed(states, n, k, p, out):
    """``out[i] = _rank_placed(states[i], n, k, p)`` for every row."""
    for row in range(states.shape[0]):
        out[row] = _rank_placed(states[row], n, k, p)


class PiecePlacements(RowGenerator):
    """``k`` pieces with one of ``p`` types each on ``k`` of ``n`` cells: C(n, k) * p**k states.

    Same ranks as ``Product(Combinations(n, k), Digits(p, k))``, with numba kernels.
    """

    _kernels = Kernels(_unrank_placed, _rank_placed, _increment_placed,
                       _unrank_range_placed, _unrank_rows_placed, _rank_rows_placed)

    def __init__(self, n: int, k: int, p: int) -> None:
        self.cells = Combinations(n, k)
        self.types = Digits(p, k)
        self.n, self.k, self.p = self.cells.n, self.cells.k, self.types.p
        self.width = 2 * self.k
        self.max_rank = self.cells.max_rank * self.types.max_rank
        check_fits(self.max_rank, repr(self))
        self._args = (self.n, self.k, self.p)

    def __repr__(self) -> str:
        return f"PiecePlacements({self.n}, {self.k}, {self.p})"

    def check_state(self, state) -> np.ndarray:
        """``state`` as an int64 array, or ValueError unless k ascending cells then k types."""
        items = self._items(state)
        self.cells.check_state(items[: self.k])
        self.types.check_state(items[self.k :])
        return items


class Product:
    """The mixed-radix product of generators (first factor most significant), in Python/numpy.

    Factors need ``width``, ``max_rank``, ``unrank``, ``rank``, ``increment``,
    ``check_state``, ``unrank_rows`` and ``rank_rows`` (every row generator here,
    and ``Product`` itself). The array methods run each factor's kernels once
    per call, not once per state.

    >>> g = Product(Combinations(4, 2), Digits(2, 2))
    >>> g.max_rank, g.unrank(0), g.unrank(1), g.unrank(4), g.split(g.unrank(23))
    (24, (0, 1, 0, 0), (0, 1, 0, 1), (0, 2, 0, 0), ((2, 3), (1, 1)))
    """

    def __init__(self, *factors) -> None:
        if not factors:
            raise ValueError("Product needs at least one factor")
        self.factors = factors
        self.width: int = sum(f.width for f in factors)
        """Number of int64 items in one state (sum of the factors' widths)."""
        self.max_rank: int = math.prod(f.max_rank for f in factors)
        """Number of states, the product of the factors' ``max_rank``."""
        check_fits(self.max_rank, repr(self))
        self._strides = [math.prod(f.max_rank for f in factors[i + 1 :]) for i in range(len(factors))]
        bounds = np.cumsum([0] + [f.width for f in factors]).tolist()
        self._slices = [slice(a, b) for a, b in zip(bounds, bounds[1:])]

    def __repr__(self) -> str:
        return f"Product({', '.join(map(repr, self.factors))})"

    def split(self, state) -> tuple[tuple[int, ...], ...]:
        """The factor states of a flat product state (validated)."""
        items = self.check_state(state)
        return tuple(tuple(items[s].tolist()) for s in self._slices)

    def check_state(self, state) -> np.ndarray:
        """``state`` as a flat int64 array, or ValueError unless every part is a factor state."""
        items = as_items(state, self.width, repr(self))
        return np.concatenate([f.check_state(items[s]) for f, s in zip(self.factors, self._slices)]
                              + [np.empty(0, dtype=np.int64)])

    def unrank(self, rank: int) -> tuple[int, ...]:
        """The flat state of ``rank``."""
        rank = check_rank(rank, self.max_rank)
        return sum((f.unrank(rank // stride % f.max_rank) for f, stride in zip(self.factors, self._strides)), ())

    def rank(self, state) -> int:
        """The rank of a flat state."""
        items = self.check_state(state)
        return sum(f.rank(items[s]) * stride for f, s, stride in zip(self.factors, self._slices, self._strides))

    def increment(self, state) -> tuple[int, ...] | None:
        """The state of the next rank, or None after the last: the last factor steps, carrying leftwards."""
        parts = list(self.split(state))
        for i in range(len(parts) - 1, -1, -1):
            nxt = self.factors[i].increment(parts[i])
            if nxt is not None:
                parts[i] = nxt
                return sum(parts, ())
            parts[i] = self.factors[i].unrank(0)
        return None

    def unrank_range(self, start: int, stop: int) -> np.ndarray:
        """States of ranks ``start .. stop-1`` as a ``(stop-start, width)`` int64 array."""
        start, stop = check_range(start, stop, self.max_rank)
        return self.unrank_rows(np.arange(start, stop, dtype=np.int64))

    def unrank_rows(self, ranks) -> np.ndarray:
        """States of an array of ranks as a ``(len(ranks), width)`` int64 array."""
        ranks = np.asarray(ranks, dtype=np.int64).reshape(-1)
        if ranks.size and (ranks.min() < 0 or ranks.max() >= self.max_rank):
            raise ValueError(f"{self!r}: ranks must lie in [0, {self.max_rank})")
        out = np.empty((ranks.shape[0], self.width), dtype=np.int64)
        for f, s, stride in zip(self.factors, self._slices, self._strides):
            out[:, s] = f.unrank_rows(ranks // stride % f.max_rank)
        return out

    def rank_rows(self, states) -> np.ndarray:
        """Ranks (int64) of the rows of an ``(m, width)`` array of flat states."""
        states = np.asarray(states)
        if states.ndim != 2 or states.shape[1] != self.width:
            raise ValueError(f"{self!r}: expected an (m, {self.width}) array, got shape {states.shape}")
        out = np.zeros(states.shape[0], dtype=np.int64)
        for f, s, stride in zip(self.factors, self._slices, self._strides):
            out += f.rank_rows(states[:, s]) * stride
        return out
