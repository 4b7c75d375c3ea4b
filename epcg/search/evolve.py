"""Steady-state evolution with single tournament selection, domain-free.

One mating event draws ``tournament_size`` distinct members uniformly (by
rejection: ``rng.integers(0, members)`` until that many distinct indices are
drawn), ranks them by fitness, best first (ties keep drawing order), and lets
the two best produce two children ``(c, d) = vary(best, second, rng)``; ``c``
replaces the worst drawn member and ``d`` the second worst. Fitness is
maximised. The best fitness never decreases (a member can only be replaced by
a tournament that holds at least as good a one), and the history records it
sparsely: event 0 (the initial population), each event that raised it, and the
last event.

Two drivers draw from ``rng`` in exactly the same order, so for the same
functions they return the same result:

- :func:`evolve` runs the loop in Python; genomes are any objects,
  ``fitness(genome) -> float`` and ``vary(a, b, rng) -> (c, d)``;
- :func:`evolve_jit` runs it inside numba; the population is one array whose
  first axis is the member, and the two functions are ``@njit`` kernels taking
  an opaque ``context`` tuple: ``fitness(genome, context) -> float`` and
  ``vary(a, b, rng, context) -> (c, d)``. No Python runs per event.

>>> import numpy as np
>>> rng = np.random.default_rng(1)
>>> pop = [0.0] * 8
>>> result = evolve(pop, lambda x: -abs(x - 3.0), lambda a, b, r: (a + r.normal(), b + r.normal()), rng, 300)
>>> bool(result.history_best[-1] > -0.3), result.history_event[[0, -1]].tolist()
(True, [0, 300])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from epcg.combinatorics.jit import UNCACHED

__all__ = ["Evolution", "evolve", "evolve_jit"]


class Evolution(NamedTuple):
    """What an evolutionary run returns."""

    population: Any
    """The final population (a list for :func:`evolve`, an array for :func:`evolve_jit`)."""
    fitness: np.ndarray
    """float64 fitness of each final member."""
    history_event: np.ndarray
    """int64 mating events after which the best fitness rose (0 first, the last event last)."""
    history_best: np.ndarray
    """float64 best fitness after those events."""


def _check(members: int, tournament_size: int, mating_events: int) -> None:
    if tournament_size < 4:
        raise ValueError(f"tournament size must be >= 4 (two parents, two replaced), got {tournament_size}")
    if members < tournament_size:
        raise ValueError(f"population of {members} is smaller than the tournament size {tournament_size}")
    if mating_events < 0:
        raise ValueError(f"number of mating events must be >= 0, got {mating_events}")


def evolve(
    population: Sequence[Any],
    fitness: Callable[[Any], float],
    vary: Callable[[Any, Any, np.random.Generator], tuple[Any, Any]],
    rng: np.random.Generator,
    mating_events: int,
    *,
    tournament_size: int = 7,
) -> Evolution:
    """Run ``mating_events`` steady-state mating events in Python (module docstring)."""
    pop = list(population)
    _check(len(pop), tournament_size, mating_events)
    fit = np.array([fitness(g) for g in pop], dtype=np.float64)
    best = fit.max()
    events, bests = [0], [best]
    n = len(pop)
    for event in range(1, mating_events + 1):
        drawn: list[int] = []
        while len(drawn) < tournament_size:
            i = int(rng.integers(0, n))
            if i not in drawn:
                drawn.append(i)
        drawn.sort(key=lambda i: -fit[i])
        c, d = vary(pop[drawn[0]], pop[drawn[1]], rng)
        for i, child in ((drawn[-1], c), (drawn[-2], d)):
            pop[i] = child
            fit[i] = fitness(child)
            if fit[i] > best:
                best = fit[i]
                if events[-1] != event:
                    events.append(event)
                    bests.append(best)
                bests[-1] = best
    if events[-1] != mating_events:
        events.append(mating_events)
        bests.append(best)
    return Evolution(pop, fit, np.array(events, np.int64), np.array(bests, np.float64))


@njit(**UNCACHED)  # not cached: numba keys function-typed arguments by object address, see evolve_jit
def _evolve(pop, fit, fitness, vary, context, rng, mating_events, tournament_size):
    """The loop of :func:`evolve` in place on ``pop`` and ``fit``; returns the history arrays.

    Unchecked: ``len(pop) >= tournament_size >= 4``, ``fit`` holds the fitness of ``pop``.
    """
    n = pop.shape[0]
    drawn = np.empty(tournament_size, np.int64)
    hist_event = np.empty(mating_events + 2, np.int64)
    hist_best = np.empty(mating_events + 2, np.float64)
    best = fit.max()
    hist_event[0], hist_best[0] = 0, best
    h = 1
    for event in range(1, mating_events + 1):
        k = 0
        while k < tournament_size:
            i = rng.integers(0, n)
            fresh = True
            for j in range(k):
                if drawn[j] == i:
                    fresh = False
            if fresh:
                # insertion keeps the drawn members sorted best first, ties in drawing order
                j = k
                while j > 0 and fit[drawn[j - 1]] < fit[i]:
                    drawn[j] = drawn[j - 1]
                    j -= 1
                drawn[j] = i
                k += 1
        c, d = vary(pop[drawn[0]], pop[drawn[1]], rng, context)
        for slot in range(2):
            i = drawn[tournament_size - 1 - slot]
            pop[i] = c if slot == 0 else d
            fit[i] = fitness(pop[i], context)
            if fit[i] > best:
                best = fit[i]
                if hist_event[h - 1] != event:
                    h += 1
                hist_event[h - 1], hist_best[h - 1] = event, best
    if hist_event[h - 1] != mating_events:
        hist_event[h], hist_best[h] = mating_events, best
        h += 1
    return hist_event[:h].copy(), hist_best[:h].copy()


@njit(**UNCACHED)  # not cached, as _evolve
def _evaluate(pop, fitness, context):
    """Fitness of every member of ``pop``."""
    fit = np.empty(pop.shape[0], np.float64)
    for m in range(pop.shape[0]):
        fit[m] = fitness(pop[m], context)
    return fit


def evolve_jit(
    population: np.ndarray,
    fitness: Callable,
    vary: Callable,
    context: tuple,
    rng: np.random.Generator,
    mating_events: int,
    *,
    tournament_size: int = 7,
) -> Evolution:
    """Run ``mating_events`` mating events inside numba on a copy of ``population`` (module docstring).

    ``fitness`` and ``vary`` must be ``@njit`` functions; ``context`` is passed to
    both unchanged (arrays and scalars the domain needs). Children must have the
    shape and dtype of one member.

    The loop is compiled once per process and per pair of kernels (5-10 s for
    the DWP maps, whose kernels it compiles in) and is not cached on disk:
    numba names a function-typed argument after the function object's address
    and embeds it in the code, so a disk cache would only gain an entry per
    process. A Dask worker pays this once.
    """
    pop = np.array(population, copy=True)
    if pop.ndim < 1:
        raise ValueError("population must be an array whose first axis is the member")
    _check(pop.shape[0], tournament_size, mating_events)
    fit = _evaluate(pop, fitness, context)
    events, bests = _evolve(pop, fit, fitness, vary, context, rng, int(mating_events), int(tournament_size))
    return Evolution(pop, fit, events, bests)
