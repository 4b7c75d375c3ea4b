"""ArgMax, "every design at the maximum", against a slow path: any cut, any order, any grouping of the
merges gives every rank at the highest score (ignored score excluded), the same as one pass over a list."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from epcg.search.scan import ArgMax, Reductions, ScanPartial


def slow(scores: list[int], ignore: int | None) -> tuple[int | None, list[int]]:
    """The highest score not equal to ``ignore`` and every rank at it, by a plain loop."""
    best = None
    for s in scores:
        if s != ignore and (best is None or s > best):
            best = s
    return best, [r for r, s in enumerate(scores) if best is not None and s == best]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(-3, 3), max_size=60), st.sampled_from([None, 0, 3]), st.integers(0, 2**32))
def test_argmax_any_cut_order_and_grouping(scores: list[int], ignore: int | None, seed: int) -> None:
    rng = random.Random(seed)
    reductions = Reductions(min=False, max=True, ignore=ignore)
    cuts = sorted({0, len(scores), *(rng.randrange(len(scores) + 1) for _ in range(rng.randrange(5)))})
    parts = [ScanPartial.of_scores(np.array(scores[a:b], dtype=np.int64), a, reductions)
             for a, b in zip(cuts, cuts[1:])] or [ScanPartial.of_scores(np.zeros(0, np.int64), 0, reductions)]
    rng.shuffle(parts)
    split = rng.randrange(len(parts) + 1)
    grouped = [ScanPartial.merge(g) for g in (parts[:split], parts[split:]) if g]
    for merged in (ScanPartial.merge(parts), ScanPartial.merge(grouped)):
        value, ranks = slow(scores, ignore)
        assert merged.argmax.value == value
        assert merged.argmax.ranks.tolist() == ranks
        assert merged.argmin is None


def test_argmax_keeps_every_tie_where_top_breaks_them() -> None:
    scores = np.array([5, 1, 5, 5, 2], dtype=np.int64)
    part = ScanPartial.of_scores(scores, 10, Reductions(max=True, top=2))
    assert part.argmax == ArgMax(5, np.array([10, 12, 13], dtype=np.uint64))
    assert part.top.ranks.tolist() == [10, 12]
