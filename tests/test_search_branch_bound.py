"""Algorithm 6 driver: any split, batch and incumbent timing gives the brute-force answer."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from epcg.search.branch_bound import LocalIncumbent, Pairs, merge, search


def brute(values: list[int]) -> tuple[int, tuple[tuple[int, int], ...]]:
    scores = {(i, j): min(values[i], values[j]) for i, j in itertools.combinations(range(len(values)), 2)}
    best = max(scores.values(), default=0)
    return best, tuple(sorted(p for p, s in scores.items() if s == best))


@pytest.mark.parametrize("mode", ["all", "first"])
def test_any_split_gives_the_brute_force_answer(mode: str) -> None:
    rng = np.random.default_rng(3)
    for trial in range(30):
        values = sorted(rng.integers(1, 6, rng.integers(2, 12)).tolist(), reverse=True)
        space = Pairs(values)
        best, sets = brute(values)
        cuts = sorted(set(rng.integers(0, space.size, 3).tolist()) | {0, space.size})
        shared = LocalIncumbent(f"test-{mode}-{trial}")
        parts = [search(space, a, b, shared, batch=int(rng.integers(1, 4)), mode=mode)
                 for a, b in reversed(list(zip(cuts, cuts[1:])))]
        merged = merge(parts, mode)
        assert merged.score == best
        assert merged.sets == (sets if mode == "all" else sets[:1])
        assert shared.get() == best


def test_a_known_score_only_prunes() -> None:
    space = Pairs([5, 5, 4, 3])
    assert search(space, 0, 4, known=5).sets == search(space, 0, 4).sets == ((0, 1),)
    assert search(space, 0, 4, known=6).score == 0  # nothing beats a score no set reaches


def test_output_grows_when_many_sets_tie() -> None:
    space = Pairs([1] * 40)  # 780 pairs at score 1: more than the first output buffer
    result = search(space, 0, 40)
    assert result.score == 1 and len(result.sets) == 780


def test_bad_input() -> None:
    space = Pairs([3, 2])
    with pytest.raises(ValueError, match="mode must be one of"):
        search(space, 0, 2, mode="best")
    with pytest.raises(ValueError, match="first-item range"):
        search(space, 0, 3)
    with pytest.raises(ValueError, match="batch must be at least 1"):
        search(space, 0, 2, batch=0)
    with pytest.raises(ValueError, match="must not increase"):
        Pairs([1, 2])
