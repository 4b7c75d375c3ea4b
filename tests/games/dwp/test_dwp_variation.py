"""Crossover and mutation of self-driving automata."""

import numpy as np
import pytest

from epcg.games.dwp.domain.sda import check_sda, random_population
from epcg.games.dwp.domain.variation import crossover, mutate, vary


def test_crossover_swaps_one_block_of_states():
    rng = np.random.default_rng(0)
    blocks = set()
    for _ in range(200):
        a, b = random_population(2, 9, rng)
        a[:, 3] = np.arange(9)  # make rows distinguishable: a's NEXT0 = own index
        b[:, 3] = 8 - np.arange(9)
        b[4, 3] = 0  # row 4 of b must differ from row 4 of a
        c, d = crossover(a, b, rng)
        from_b = (c == b).all(axis=1) & ~(c == a).all(axis=1)
        assert ((c == a).all(axis=1) | from_b).all()
        assert ((d == b).all(axis=1) == (c == a).all(axis=1)).all()  # complementary children
        idx = np.flatnonzero(from_b)
        if idx.size:
            assert (np.diff(idx) == 1).all()  # one contiguous block
            blocks.add((idx[0], idx[-1]))
    assert len(blocks) > 20


def test_crossover_keeps_the_initial_string_with_state_zero():
    rng = np.random.default_rng(5)
    for _ in range(100):
        a, b = random_population(2, 4, rng)
        c, d = crossover(a, b, rng)
        assert (c[0] == a[0]).all() or (c[0] == b[0]).all()
        assert (c[0] == a[0]).all() == (d[0] == b[0]).all()


def test_mutations_change_at_most_count_states_and_stay_valid():
    rng = np.random.default_rng(1)
    kinds = set()
    for count in (0, 1, 3):
        for g in random_population(200, 6, rng):
            child = mutate(g, rng, count)
            check_sda(child)
            changed = np.flatnonzero((child != g).any(axis=1))
            assert len(changed) <= count
            if count == 0:
                assert (child == g).all()
            if count == 1 and len(changed):
                cols = np.flatnonzero(child[changed[0]] != g[changed[0]])
                kinds.add("string" if cols.max() <= 2 else "transition")
                assert cols.max() <= 2 or len(cols) == 1  # one transition, or the string
    assert kinds == {"string", "transition"}


def test_vary_mutation_count_is_one_to_mnm():
    rng = np.random.default_rng(2)
    most = 0
    for _ in range(300):
        a = random_population(1, 20, rng)[0]
        c, d = vary(a, a.copy(), rng, mnm=3)  # identical parents: crossover changes nothing
        for child in (c, d):
            check_sda(child)
            most = max(most, int((child != a).any(axis=1).sum()))
    assert most == 3


def test_vary_is_seeded():
    a, b = random_population(2, 12, np.random.default_rng(3))
    one = vary(a, b, np.random.default_rng(9), 5)
    two = vary(a, b, np.random.default_rng(9), 5)
    assert all((x == y).all() for x, y in zip(one, two))


def test_invalid_variation():
    a, b = random_population(2, 4, np.random.default_rng())
    with pytest.raises(ValueError, match="same number of states"):
        crossover(a, random_population(1, 3, np.random.default_rng())[0], np.random.default_rng())
    with pytest.raises(ValueError, match="mutations"):
        vary(a, b, np.random.default_rng(), 0)
    with pytest.raises(ValueError):
        mutate(a, np.random.default_rng(), -1)
