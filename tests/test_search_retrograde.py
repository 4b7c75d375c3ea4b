"""Algorithm 5 driver: layers from word ranges equal the whole-layer answer; Fling! through it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from epcg.domains.fling import layers as fling
from epcg.experiments.fling import fling_space
from epcg.search.retrograde import (
    LayerCache, RetrogradeSpace, Subsets, layer_checksum, solve_layers, solve_range, word_ranges,
)


def test_subsets_against_itertools() -> None:
    n = 7
    rows = solve_layers(Subsets(n), chunk_words=1).rows
    expected = [sum(1 for c in itertools.combinations(range(n), k) if c[0] % 2 == 0) for k in range(1, n + 1)]
    assert [r["even"] for r in rows] == expected
    assert [r["states"] for r in rows] == [len(list(itertools.combinations(range(n), k))) for k in range(1, n + 1)]


def test_fling_through_the_driver_equals_the_kernel() -> None:
    space = fling_space(4, 3, 6)
    layers = solve_layers(space, chunk_words=3, keep=True)
    s, u = fling.first_layer(4, 3)
    for k in range(2, 7):
        s, u = fling.solve_words(4, 3, k, s, u, 0, fling.layer_words(4, 3, k))
        assert np.array_equal(layers.words[k][0], s) and np.array_equal(layers.words[k][1], u)
        row = layers.rows[k - 1]
        assert row["solvable"] == int(np.bitwise_count(s).sum()) and row["unique"] == int(np.bitwise_count(u).sum())
        assert row["checksum"] == f"{layer_checksum(s, 0):016x}-{layer_checksum(u, 0):016x}"
    assert layers.rows == solve_layers(space, chunk_words=1 << 10).rows


def test_word_ranges_and_cache() -> None:
    assert word_ranges(5, 2) == ((0, 2), (2, 4), (4, 5))
    cache, calls = LayerCache(), []
    for key in ("a", "a", "b", "a"):
        cache.get(key, lambda: calls.append(key))
    assert calls == ["a", "b", "a"] and cache.loads == 3


def test_a_solve_of_the_wrong_shape_is_named() -> None:
    space = RetrogradeSpace("broken", lambda k: 100, lambda: (np.zeros(2, dtype=np.uint64),),
                            lambda k, prev, a, b: (np.zeros(b - a + 1, dtype=np.uint64),), last=2)
    with pytest.raises(ValueError, match="broken: layer 2 words"):
        solve_range(space, 2, 0, 1, lambda: (np.zeros(2, dtype=np.uint64),), key="t")
    with pytest.raises(ValueError, match="bits must be distinct"):
        RetrogradeSpace("x", len, tuple, tuple, last=1, bits=("a", "a"))
