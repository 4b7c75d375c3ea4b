"""Variation of self-driving automata: two-point crossover of the state list, then mutation.

Crossover draws two cut points ``i, j`` uniformly from ``0..states`` (sorted;
equal cuts exchange nothing) and swaps states ``i..j-1`` between the parents.
A state carries its string and both transitions; the initial state's string is
state 0's string, so it travels with the first state. A mutation picks a state
uniformly and, with equal chance, either gives it a fresh random string (length
1 or 2 uniform, random bits) or redirects one of its two transitions to a
uniform state; the new value may equal the old one. Each child gets a uniform
number of mutations in ``1..mnm``.

>>> import numpy as np
>>> from epcg.games.dwp.domain.sda import random_sda
>>> rng = np.random.default_rng(7)
>>> a, b = random_sda(12, rng), random_sda(12, rng)
>>> c, d = vary(a, b, rng, mnm=3)
>>> c.shape, d.shape
((12, 5), (12, 5))
"""

from __future__ import annotations

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL
from epcg.games.dwp.domain.sda import NEXT0, _random_state, check_sda

__all__ = ["crossover", "mutate", "vary"]


@njit(**KERNEL)
def _crossover(a, b, rng):
    """Two-point crossover of state lists; returns two new children. Unchecked: equal shapes."""
    n = a.shape[0]
    i = rng.integers(0, n + 1)
    j = rng.integers(0, n + 1)
    if i > j:
        i, j = j, i
    c = a.copy()
    d = b.copy()
    c[i:j] = b[i:j]
    d[i:j] = a[i:j]
    return c, d


@njit(**KERNEL)
def _mutate(genome, rng, count):
    """Apply ``count`` mutations to ``genome`` in place. Unchecked: a valid genome."""
    n = genome.shape[0]
    for _ in range(count):
        s = rng.integers(0, n)
        if rng.integers(0, 2) == 0:
            _random_state(genome, s, rng)
        else:
            genome[s, NEXT0 + rng.integers(0, 2)] = rng.integers(0, n)


@njit(**KERNEL)
def _vary(a, b, rng, mnm):
    """Crossover of ``a`` and ``b``, then ``1..mnm`` mutations on each child. Unchecked: ``mnm >= 1``."""
    c, d = _crossover(a, b, rng)
    _mutate(c, rng, rng.integers(1, mnm + 1))
    _mutate(d, rng, rng.integers(1, mnm + 1))
    return c, d


def _pair(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = check_sda(a), check_sda(b)
    if a.shape != b.shape:
        raise ValueError(f"parents must have the same number of states, got {a.shape[0]} and {b.shape[0]}")
    return a, b


def crossover(a: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two-point crossover of two machines with the same number of states (new arrays)."""
    return _crossover(*_pair(a, b), rng)


def mutate(genome: np.ndarray, rng: np.random.Generator, count: int = 1) -> np.ndarray:
    """A copy of ``genome`` with ``count`` mutations applied."""
    if count < 0:
        raise ValueError(f"number of mutations must be >= 0, got {count}")
    child = check_sda(genome).copy()
    _mutate(child, rng, int(count))
    return child


def vary(a: np.ndarray, b: np.ndarray, rng: np.random.Generator, mnm: int) -> tuple[np.ndarray, np.ndarray]:
    """Two children of ``a`` and ``b``: crossover, then ``1..mnm`` mutations each."""
    if mnm < 1:
        raise ValueError(f"maximum number of mutations must be >= 1, got {mnm}")
    return _vary(*_pair(a, b), rng, int(mnm))
