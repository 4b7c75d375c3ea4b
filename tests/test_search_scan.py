"""Algorithm 1 (epcg.search.scan): every reduction against a plain Python reference, any chunking."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from numba import njit

from epcg.search import (
    CompileError,
    EvaluationError,
    Reductions,
    ScanPartial,
    ScanSpace,
    scan,
    scan_range,
)
from epcg.search.scan import check


@njit(cache=True)
def table_score(rank, table):
    return table[rank % table.shape[0]]


@njit(cache=True)
def fails_at(rank, bad):
    if rank == bad:
        raise ValueError("no score for this rank")
    return rank


@njit
def not_numba(rank):
    return "score" + rank


def reference(scores: list[int], reductions: Reductions) -> dict:
    """The reductions of a list of scores (rank = index), written out directly."""
    kept = [(s, r) for r, s in enumerate(scores) if s != reductions.ignore]
    low = min((s for s, _ in kept), default=None)
    cap = reductions.cap if reductions.cap is not None else max(scores, default=0)
    return {
        "count": len(scores),
        "ignored": len(scores) - len(kept) if reductions.ignore is not None else 0,
        "min": low,
        "at_min": [r for s, r in kept if s == low],
        "top": sorted(enumerate(scores), key=lambda rs: (-rs[1], rs[0]))[: reductions.top],
        "histogram": dict(sorted(Counter(s for s in scores if s <= cap).items())),
        "above": sum(s > cap for s in scores),
    }


def observed(p: ScanPartial) -> dict:
    return {
        "count": p.count,
        "ignored": p.ignored,
        "min": p.argmin.value,
        "at_min": p.argmin.ranks.tolist(),
        "top": list(zip(p.top.ranks.tolist(), p.top.scores.tolist())),
        "histogram": p.histogram.counts,
        "above": p.histogram.above,
    }


@pytest.mark.parametrize("seed", range(6))
def test_reductions_match_reference_under_any_chunking(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randrange(1, 400)
    table = np.array([rng.randrange(-3, 6) for _ in range(rng.randrange(1, 50))], dtype=np.int64)
    space = ScanSpace(max_rank=n, evaluate=table_score, data=(table,))
    scores = [int(table[r % len(table)]) for r in range(n)]
    reductions = Reductions(ignore=rng.choice([None, 0, 2]), top=rng.randrange(1, 8), histogram=True,
                            cap=rng.choice([None, 1, 4]))
    expected = reference(scores, reductions)
    assert observed(scan_range(space, 0, n, reductions)) == expected
    cuts = sorted({0, n, *(rng.randrange(n) for _ in range(rng.randrange(1, 12)))})
    parts = [scan_range(space, a, b, reductions) for a, b in zip(cuts, cuts[1:])]
    rng.shuffle(parts)
    assert observed(ScanPartial.merge(parts)) == expected
    assert observed(scan(space, reductions, chunk=rng.randrange(1, n + 1))) == expected


def test_all_ignored_and_empty_ranges() -> None:
    space = ScanSpace(max_rank=10, evaluate=table_score, data=(np.zeros(3, dtype=np.int64),))
    whole = scan_range(space, 0, 10, Reductions(ignore=0, histogram=True))
    expected = (None, 0, 10, {0: 10})
    assert (whole.argmin.value, len(whole.argmin.ranks), whole.ignored, whole.histogram.counts) == expected
    empty = scan_range(space, 4, 4, Reductions(ignore=0, histogram=True))
    assert (empty.count, empty.argmin.value, empty.histogram.total) == (0, None, 0)
    assert ScanPartial.merge([empty, whole]) == whole
    assert len(scan_range(space, 4, 4, Reductions(top=3)).top.ranks) == 0
    assert scan(ScanSpace(max_rank=0, evaluate=table_score, data=(np.zeros(1, np.int64),))).count == 0


def test_fused_range_kernel_is_used_when_it_answers() -> None:
    calls = []

    def fused(start: int, stop: int, reductions: Reductions) -> ScanPartial | None:
        calls.append((start, stop))
        return None if reductions.top else ScanPartial(count=stop - start)

    space = ScanSpace(max_rank=5, evaluate=table_score, data=(np.arange(5),), evaluate_range=fused)
    assert scan_range(space, 1, 4, Reductions(min=False)) == ScanPartial(count=3)
    assert scan_range(space, 0, 5, Reductions(top=1)).top.ranks.tolist() == [4]
    assert calls == [(1, 4), (0, 5)]


def test_an_evaluator_that_raises_names_the_rank() -> None:
    space = ScanSpace(max_rank=100, evaluate=fails_at, data=(37,), name="cursed")
    assert scan_range(space, 0, 37).argmin.value == 0
    with pytest.raises(EvaluationError, match="evaluator of cursed failed at rank 37: ValueError: no score") as info:
        scan_range(space, 30, 60)
    assert info.value.rank == 37


def test_an_evaluator_numba_cannot_compile_is_named() -> None:
    with pytest.raises(CompileError, match=r"evaluator tests\.test_search_scan\.not_numba of bad does not compile "
                                           r"with numba: No implementation of function"):
        check(ScanSpace(max_rank=3, evaluate=not_numba, name="bad"))


def test_bad_spaces_and_ranges() -> None:
    with pytest.raises(ValueError, match="numba @njit function"):
        ScanSpace(max_rank=3, evaluate=lambda rank: rank)
    with pytest.raises(ValueError, match="max_rank"):
        ScanSpace(max_rank=-1, evaluate=table_score)
    space = ScanSpace(max_rank=3, evaluate=table_score, data=(np.arange(3),))
    for start, stop in ((0, 4), (2, 1), (-1, 2)):
        with pytest.raises(ValueError, match="not within"):
            scan_range(space, start, stop)
    with pytest.raises(ValueError, match="non-negative"):
        Reductions(top=-1)
