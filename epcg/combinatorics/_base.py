"""Python wrappers shared by the generators whose states are rows of int64 items.

A subclass sets ``width`` (items per state), ``max_rank``, ``_args`` (the
parameters its kernels take after the rank/state) and ``_kernels``, and
implements ``check_state``. The kernels follow one calling convention::

    unrank(rank, *args, out)               fill out[0:width]
    rank(items, *args) -> int64
    increment(items, *args) -> bool        in place; False (unchanged) after the last
    unrank_range(start, count, *args, out) rows out[0:count] = ranks start..start+count-1
    unrank_rows(ranks, *args, out)         out[i] = state of ranks[i]
    rank_rows(states, *args, out)          out[i] = rank of states[i]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, NamedTuple

import numpy as np

from epcg.combinatorics._checks import as_items, check_range, check_rank


class Kernels(NamedTuple):
    """The numba kernels behind one generator class."""

    unrank: Callable
    rank: Callable
    increment: Callable
    unrank_range: Callable
    unrank_rows: Callable
    rank_rows: Callable


class RowGenerator:
    """max_rank / unrank / rank / increment and their array forms, for int64-row states."""

    _kernels: ClassVar[Kernels]
    width: int
    """Number of int64 items in one state."""
    max_rank: int
    """Number of states (exact)."""
    _args: tuple

    def check_state(self, state) -> np.ndarray:
        """``state`` as a fresh int64 array, or ValueError if it is not a state."""
        raise NotImplementedError

    def _items(self, state) -> np.ndarray:
        return as_items(state, self.width, repr(self))

    def unrank(self, rank: int) -> tuple[int, ...]:
        """The state of ``rank``."""
        rank = check_rank(rank, self.max_rank)
        out = np.empty(self.width, dtype=np.int64)
        self._kernels.unrank(rank, *self._args, out)
        return tuple(out.tolist())

    def rank(self, state) -> int:
        """The rank of ``state``."""
        return int(self._kernels.rank(self.check_state(state), *self._args))

    def increment(self, state) -> tuple[int, ...] | None:
        """The state of the next rank, or None after the last."""
        items = self.check_state(state)
        if not self._kernels.increment(items, *self._args):
            return None
        return tuple(items.tolist())

    def unrank_range(self, start: int, stop: int) -> np.ndarray:
        """States of ranks ``start .. stop-1`` as a ``(stop-start, width)`` int64 array."""
        start, stop = check_range(start, stop, self.max_rank)
        out = np.empty((stop - start, self.width), dtype=np.int64)
        self._kernels.unrank_range(start, stop - start, *self._args, out)
        return out

    def unrank_rows(self, ranks) -> np.ndarray:
        """States of an array of ranks as a ``(len(ranks), width)`` int64 array."""
        ranks = np.ascontiguousarray(ranks, dtype=np.int64).reshape(-1)
        if ranks.size and (ranks.min() < 0 or ranks.max() >= self.max_rank):
            raise ValueError(f"{self!r}: ranks must lie in [0, {self.max_rank})")
        out = np.empty((ranks.shape[0], self.width), dtype=np.int64)
        self._kernels.unrank_rows(ranks, *self._args, out)
        return out

    def rank_rows(self, states) -> np.ndarray:
        """Ranks (int64) of the rows of an ``(m, width)`` array of states."""
        states = np.asarray(states)
        if states.ndim != 2 or states.shape[1] != self.width:
            raise ValueError(f"{self!r}: expected an (m, {self.width}) array, got shape {states.shape}")
        states = np.ascontiguousarray(np.stack([self.check_state(row) for row in states])
                                      if len(states) else states.astype(np.int64))
        out = np.empty(states.shape[0], dtype=np.int64)
        self._kernels.rank_rows(states, *self._args, out)
        return out
