"""The generic steady-state loop: Python and numba drivers agree, history is monotone."""

import numpy as np
import pytest
from numba import njit

from epcg.games.dwp.domain.study import _context, _fitness, _vary_in_context
from epcg.games.dwp.domain.sda import random_population
from epcg.games.dwp.kind import table
from epcg.search.evolve import evolve, evolve_jit

from tests.conftest import JOBS

EXPERIMENTS = table(JOBS / "dwp-study.toml")
"""Table I, from the study's job file."""


@njit(cache=True, nogil=True)
def _onemax(genome, context):
    return float(genome.sum()) * context[0]


@njit(cache=True, nogil=True)
def _flip(a, b, rng, context):
    c, d = a.copy(), b.copy()
    cut = rng.integers(0, a.shape[0] + 1)
    c[cut:], d[cut:] = b[cut:], a[cut:]
    for child in (c, d):
        i = rng.integers(0, a.shape[0])
        child[i] = 1 - child[i]
    return c, d


def same(x, y):
    assert len(x.population) == len(y.population)
    for g, h in zip(x.population, y.population):
        assert np.array_equal(g, h)
    for name in ("fitness", "history_event", "history_best"):
        assert np.array_equal(getattr(x, name), getattr(y, name)), name

def test_onemax_python_and_jit_agree():
    pop = np.random.default_rng(0).integers(0, 2, (12, 30))
    ctx = (1.0,)
    slow = evolve(list(pop), lambda g: _onemax(g, ctx), lambda a, b, r: _flip(a, b, r, ctx),
                  np.random.default_rng(1), 400)
    fast = evolve_jit(pop, _onemax, _flip, ctx, np.random.default_rng(1), 400)
    same(slow, fast)
    assert fast.history_event[0] == 0 and fast.history_event[-1] == 400
    assert (np.diff(fast.history_event) > 0).all() and (np.diff(fast.history_best[:-1]) > 0).all()
    assert fast.history_best[-1] == fast.fitness.max() > pop.sum(axis=1).max()
    assert (pop == np.random.default_rng(0).integers(0, 2, (12, 30))).all()  # input untouched


def test_dwp_kernels_python_and_jit_agree():
    from dataclasses import replace

    params = replace(EXPERIMENTS[6], population=10, max_rooms=24, proposals=60)
    ctx = _context(params)
    pop = random_population(10, 5, np.random.default_rng(4))
    slow = evolve(list(pop), lambda g: _fitness(g, ctx), lambda a, b, r: _vary_in_context(a, b, r, ctx),
                  np.random.default_rng(5), 60)
    fast = evolve_jit(pop, _fitness, _vary_in_context, ctx, np.random.default_rng(5), 60)
    same(slow, fast)


def test_ties_and_zero_events():
    rng = np.random.default_rng(2)
    result = evolve([1.0] * 7, lambda x: 0.0, lambda a, b, r: (a, b), rng, 0)
    assert result.history_event.tolist() == [0] and result.history_best.tolist() == [0.0]
    result = evolve([1.0] * 7, lambda x: 0.0, lambda a, b, r: (a, b), rng, 5)
    assert result.history_event.tolist() == [0, 5]


def test_invalid_evolution():
    with pytest.raises(ValueError, match="smaller than the tournament"):
        evolve([0.0] * 6, float, lambda a, b, r: (a, b), np.random.default_rng(), 1)
    with pytest.raises(ValueError, match="mating events"):
        evolve([0.0] * 7, float, lambda a, b, r: (a, b), np.random.default_rng(), -1)
    with pytest.raises(ValueError, match="tournament size"):
        evolve_jit(np.zeros((9, 2)), _onemax, _flip, (1.0,), np.random.default_rng(), 1, tournament_size=3)
