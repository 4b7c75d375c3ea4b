"""The prefix-shared walk (epcg.search.prefix) against scores computed rank by rank, any chunking.

The reference scores each rank in plain Python from its combination
(``Combinations.unrank``) and reduces them with ``ScanPartial.of_scores``;
the walk, and the space's own per-rank ``evaluate``, must give equal partials
for every reduction, whole and merged from random chunks in random order.
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import njit

from epcg.combinatorics import Combinations
from epcg.search import PrefixWalk, Reductions, ScanPartial, scan_range, walk_range
from epcg.search.prefix import HIST_LIMIT


@njit(cache=True)
def start(state, weights, params):
    state[0] = 0
    state[1] = 1


@njit(cache=True)
def add(parent, element, child, weights, params):
    child[0] = parent[0] + weights[element]
    child[1] = (parent[1] * 31 + element) % 1009


@njit(cache=True)
def score(state, weights, params):
    s = (state[0] * params[1] + state[1]) % params[2] - params[3]
    return s * params[4] if s % 5 == 0 else s


@njit(cache=True)
def score_last(parent, element, weights, params):
    child = np.empty(2, dtype=np.int64)
    add(parent, element, child, weights, params)
    return score(child, weights, params)


@njit(cache=True)
def score_upto(parent, element, limit, weights, params):
    """The score when it is at most ``limit``, else some value above it (as a count that stops early)."""
    s = score_last(parent, element, weights, params)
    return s if s <= limit else limit + 1 + element % 3


@njit(cache=True)
def over(state, weights, params):
    return state[0] > params[0]


def reference_score(items: tuple[int, ...], weights: np.ndarray, params: np.ndarray, dead_score: int) -> int:
    """One rank's score, written out: prefixes (the empty one too) over the limit score ``dead_score``."""
    total, mix = 0, 1
    for element in items:
        if total > params[0]:
            return dead_score
        total, mix = total + int(weights[element]), (mix * 31 + element) % 1009
    s = (total * int(params[1]) + mix) % int(params[2]) - int(params[3])
    return s * int(params[4]) if s % 5 == 0 else s


spaces = st.fixed_dictionaries({
    "n": st.integers(0, 11),
    "k_share": st.floats(0, 1),
    "weights": st.lists(st.integers(-2, 9), min_size=11, max_size=11),
    "limit": st.integers(-3, 40),
    "mult": st.integers(1, 12),
    "mod": st.sampled_from([1, 3, 7, 40, 5000]),
    "offset": st.integers(-10, 3),
    "big": st.sampled_from([1, -1, 7, HIST_LIMIT]),
    "dead_score": st.integers(-3, 4),
    "leaf": st.sampled_from(["score", "score_last", "score_upto"]),
})
reductions = st.builds(Reductions, min=st.booleans(), ignore=st.sampled_from([None, 0, 1, -3]),
                       top=st.integers(0, 6), histogram=st.booleans(), cap=st.sampled_from([None, 0, 2, 30]))


def build(case: dict) -> tuple[PrefixWalk, list[int]]:
    n = case["n"]
    k = round(case["k_share"] * n)
    weights = np.array(case["weights"], dtype=np.int64)
    params = np.array([case["limit"], case["mult"], case["mod"], case["offset"], case["big"]], dtype=np.int64)
    walk = PrefixWalk(n=n, k=k, state=np.zeros(2, np.int64), empty=start, extend=add, score=score, dead=over,
                      dead_score=case["dead_score"], data=(weights, params),
                      score_last=score_last if case["leaf"] == "score_last" else None,
                      score_upto=score_upto if case["leaf"] == "score_upto" else None)
    combinations = Combinations(n, k)
    scores = [reference_score(combinations.unrank(r), weights, params, case["dead_score"])
              for r in range(combinations.max_rank)]
    return walk, scores


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=spaces, reductions=reductions, seed=st.integers(0, 2**32))
def test_every_reduction_equals_rank_by_rank_under_any_chunking(case: dict, reductions: Reductions, seed: int) -> None:
    walk, scores = build(case)
    total = len(scores)
    expected = ScanPartial.of_scores(np.array(scores, dtype=np.int64), 0, reductions)
    assert walk_range(walk, 0, total, reductions) == expected
    assert scan_range(replace(walk.space(), evaluate_range=None), 0, total, reductions) == expected
    rng = random.Random(seed)
    cuts = sorted({0, total, *(rng.randrange(total + 1) for _ in range(rng.randrange(0, 10)))})
    parts = [walk_range(walk, a, b, reductions) for a, b in zip(cuts, cuts[1:])] or [walk_range(walk, 0, 0, reductions)]
    rng.shuffle(parts)
    assert ScanPartial.merge(parts) == expected


def test_buffers_grow_with_many_ties_wide_histograms_and_odd_scores() -> None:
    """A minimum reached by 462 ranks, scores up to ~5000 and beyond ``HIST_LIMIT``, many negative scores."""
    for params in ([100, 0, 1, 0, 1], [100, 1, 5000, 0, 1], [100, 13, 997, 500, HIST_LIMIT]):
        case = {"n": 11, "k_share": 6 / 11, "weights": list(range(11)), "limit": params[0], "mult": params[1],
                "mod": params[2], "offset": params[3], "big": params[4], "dead_score": 0, "leaf": "score_last"}
        walk, scores = build(case)
        r = Reductions(top=4, histogram=True)
        assert walk_range(walk, 0, len(scores), r) == ScanPartial.of_scores(np.array(scores), 0, r)


def test_a_dead_subtree_is_skipped_and_counted() -> None:
    """Every prefix over the limit prunes its block: the ranks are counted, never scored."""
    case = {"n": 10, "k_share": 0.4, "weights": [5] * 11, "limit": 4, "mult": 1, "mod": 7, "offset": 0, "big": 1,
            "dead_score": -1, "leaf": "score"}
    walk, scores = build(case)
    whole = walk_range(walk, 0, len(scores), Reductions(ignore=-1, histogram=True))
    assert (whole.count, whole.ignored, whole.histogram.counts) == (210, 210, {-1: 210})
    assert whole.argmin.value is None


def test_bad_walks_are_refused() -> None:
    weights, params = np.zeros(3, np.int64), np.zeros(5, np.int64)
    with pytest.raises(ValueError, match="score, score_last or score_upto"):
        PrefixWalk(n=3, k=1, state=np.zeros(2, np.int64), empty=start, extend=add, data=(weights, params))
    with pytest.raises(ValueError, match="k = 0"):
        PrefixWalk(n=3, k=0, state=np.zeros(2, np.int64), empty=start, extend=add, score_last=score_last)
    with pytest.raises(ValueError, match="numba @njit"):
        PrefixWalk(n=3, k=1, state=np.zeros(2, np.int64), empty=lambda s: None, extend=add, score=score)
    with pytest.raises(ValueError, match="one state"):
        PrefixWalk(n=3, k=1, state=np.int64(0), empty=start, extend=add, score=score)
    walk = PrefixWalk(n=3, k=1, state=np.zeros(2, np.int64), empty=start, extend=add, score=score,
                      data=(weights, params))
    with pytest.raises(ValueError, match="not within"):
        walk_range(walk, 0, 4)
