"""The retrograde layers against a plain recursive solver, on every board small enough to recurse."""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import pytest

from epcg.search.retrograde import solve_layers
from peg_solitaire import RECT3X4, TRIANGLE4, TRIANGLE5, rectangle_jumps, triangle_jumps

BOARDS = [(TRIANGLE4, 10, triangle_jumps(4)), (RECT3X4, 12, rectangle_jumps(3, 4)),
          (TRIANGLE5, 15, triangle_jumps(5))]


def reference_counts(holes: int, jumps: np.ndarray) -> dict[int, set[frozenset[int]]]:
    """Solvable positions per peg count, by trying every move recursively (memoised)."""
    moves = [tuple(int(c) for c in m) for m in jumps]

    @cache
    def solvable(pegs: frozenset[int]) -> bool:
        if len(pegs) == 1:
            return True
        return any(solvable(pegs - {a, b} | {c}) for a, b, c in moves if a in pegs and b in pegs and c not in pegs)

    return {k: {frozenset(p) for p in itertools.combinations(range(holes), k) if solvable(frozenset(p))}
            for k in range(1, holes)}


def unpack(words: np.ndarray, size: int) -> list[int]:
    return [r for r in range(size) if int(words[r >> 6]) >> (r & 63) & 1]


@pytest.mark.parametrize("space, holes, jumps", BOARDS, ids=lambda x: getattr(x, "name", ""))
def test_layers_match_the_recursive_solver(space, holes, jumps) -> None:
    expected = reference_counts(holes, jumps)
    layers = solve_layers(space, chunk_words=3, keep=True)  # several ranges per layer
    for row in layers.rows:
        k = row["layer"]
        assert row["states"] == len(list(itertools.combinations(range(holes), k)))
        solved = {frozenset(c for c, peg in enumerate(space.describe(k, r)) if peg == "o")
                  for r in unpack(layers.words[k][0], row["states"])}
        assert solved == expected[k], k
        assert row["solvable"] == len(expected[k])


def test_ranking_visits_every_position_once() -> None:
    k = 4
    seen = {TRIANGLE4.describe(k, r) for r in range(TRIANGLE4.layer_size(k))}
    assert len(seen) == TRIANGLE4.layer_size(k) and all(s.count("o") == k for s in seen)


def test_split_does_not_change_the_layers() -> None:
    a = solve_layers(TRIANGLE5, chunk_words=1).rows
    b = solve_layers(TRIANGLE5, chunk_words=1 << 10).rows
    assert a == b
