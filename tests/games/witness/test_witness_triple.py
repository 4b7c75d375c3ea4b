"""Triple panels: branch and bound against exhaustive checks, split independence, expansion."""

from __future__ import annotations

import json

import numpy as np
import pytest

from epcg.games.witness.domain.paths import paths_for
from epcg.games.witness.domain.piece_panels import solution_sets, unpack
from epcg.games.witness.domain.pieces import LIBRARY
from epcg.games.witness.domain.triple import (
    count_arrangements, expand, problem_for, score, search_range, triple_info,
)
from epcg.games.witness.domain.triple_problem import TripleProblem, build_problem
from epcg.search.branch_bound import Result, merge
from tests.reference import witness_pieces as ref

SMALL = [
    (2, 3, 2, ("#", "##/#.", "#./##")),
    (3, 3, 2, ("#", "##", "#/#")),
]


def _ref_paths(w: int, h: int) -> list[list[tuple[int, int]]]:
    ps = paths_for(w, h)
    return [[ps.geometry.vertex_xy(v) for v in ps.path(i)] for i in range(len(ps))]


def _panel_triples(prob, result: Result) -> set[tuple[int, int, int]]:
    return {t for triple in result.sets for t in expand(prob, triple)}


@pytest.fixture(scope="module")
def ref_sets():
    return {space: ref.solution_sets(*space, _ref_paths(*space[:2])) for space in SMALL}


@pytest.mark.parametrize("space", SMALL)
@pytest.mark.parametrize("separate", [False, True])
def test_branch_and_bound_matches_exhaustive(space, separate, ref_sets) -> None:
    best, found = ref.best_triples(ref_sets[space], separate)
    prob = problem_for(*space, separate)
    result = search_range(prob, 0, prob.num_sets)
    assert result.score == best
    assert _panel_triples(prob, result) == found
    assert sum(count_arrangements(prob, t) for t in result.sets) == len(found)
    first = search_range(prob, 0, prob.num_sets, mode="first")
    assert first.score == best and first.sets == result.sets[:1]


@pytest.mark.parametrize("separate", [False, True])
def test_branch_and_bound_matches_exhaustive_larger(separate) -> None:
    space = (3, 3, 2, LIBRARY[:4])
    best, found = ref.best_triples(ref.solution_sets(*space, _ref_paths(3, 3)), separate)
    prob = problem_for(*space, separate)
    result = search_range(prob, 0, prob.num_sets)
    assert (result.score, _panel_triples(prob, result)) == (best, found)


def test_separate_variant_3x3_matches_exhaustive() -> None:
    # Only panels with a separating solution can take part (the joint path solves them).
    sets = solution_sets(3, 3, 3, LIBRARY)
    keep = {
        int(r): (frozenset(np.flatnonzero(unpack(b, 184)).tolist()), frozenset(np.flatnonzero(unpack(s, 184)).tolist()))
        for r, b, s in zip(sets.ranks, sets.bits, sets.separating()) if s.any()
    }
    best, found = ref.best_triples(keep, separate=True)
    prob = problem_for(3, 3, 3, LIBRARY, True)
    result = search_range(prob, 0, prob.num_sets)
    assert (result.score, _panel_triples(prob, result)) == (best, found)


def test_3x3_optimum() -> None:
    prob = problem_for(3, 3, 3, LIBRARY)
    assert (prob.solvable, prob.num_sets, len(prob.member_ranks)) == (113_296, 7_316, 113_296)
    result = search_range(prob, 0, prob.num_sets)
    assert (result.score, len(result.sets)) == (7, 26)
    info = triple_info(prob, result.sets[0])
    assert info.score == 7 and min(info.set_counts + info.pair_counts) == 7
    bits = [prob.bits[d] for d in info.classes]
    assert score(*bits) == 7
    for rank, d in zip(info.panels, info.classes):
        assert rank in prob.members(d)
    json.dumps(info.to_dict(prob))

    sep = problem_for(3, 3, 3, LIBRARY, True)
    assert (sep.solvable, sep.num_sets, len(sep.member_ranks)) == (113_296, 56, 380)
    result = search_range(sep, 0, sep.num_sets)
    assert (result.score, len(result.sets)) == (2, 36)
    for triple in result.sets:
        info = triple_info(sep, triple)
        for rank in info.panels:  # the joint path separates every representative panel
            panel = sep.panel(rank)
            labels = paths_for(3, 3).regions[info.path, list(panel.cells)]
            assert len(set(labels.tolist())) == 3


class Recording:
    """An in-process incumbent that records every offer."""

    def __init__(self) -> None:
        self.score, self.offers = 0, []

    def get(self) -> int:
        return self.score

    def offer(self, score: int) -> int:
        self.offers.append(score)
        self.score = max(self.score, score)
        return self.score


@pytest.mark.parametrize("mode", ["all", "first"])
@pytest.mark.parametrize("separate", [False, True])
def test_split_and_incumbent_timing_do_not_change_the_answer(mode, separate) -> None:
    prob = problem_for(3, 3, 3, LIBRARY, separate)
    D = prob.num_sets
    whole = search_range(prob, 0, D, mode=mode)
    rng = np.random.default_rng(7)
    for trial in range(4):
        cuts = sorted(set(rng.integers(0, D, rng.integers(1, 12)).tolist()) | {0, D})
        shared = Recording()

        results = []
        ranges = list(zip(cuts, cuts[1:]))
        if trial % 2:
            ranges.reverse()  # later ranges first: the incumbent arrives early
        for a, b in ranges:
            known = whole.score if trial == 3 else 0  # a score already at the optimum
            results.append(search_range(prob, a, b, shared, batch=int(rng.integers(1, 50)), mode=mode,
                                        known=known))
        results.append(search_range(prob, *ranges[0], mode=mode))  # a range run twice
        merged = merge(results, mode)
        assert (merged.score, merged.sets) == (whole.score, whole.sets)
        assert shared.offers == sorted(set(shared.offers)) and all(s <= whole.score for s in shared.offers)


def test_expand_lists_every_order() -> None:
    prob = problem_for(2, 3, 2, ("#", "##/#.", "#./##"))
    result = search_range(prob, 0, prob.num_sets)
    for triple in result.sets:
        panels = expand(prob, triple)
        assert len(panels) == count_arrangements(prob, triple) == len(set(panels))
        assert expand(prob, triple, limit=3) == panels[:3]
        cls = {int(r): d for d in range(prob.num_sets) for r in prob.members(d)}
        for a, b, c in panels:
            assert sorted((cls[a], cls[b], cls[c])) == list(triple)
    with pytest.raises(ValueError, match="joint solutions, not one"):
        expand(prob, (0, 0, 0))


def test_chunking_does_not_change_the_problem() -> None:
    space = (3, 3, 2, ("#", "##", "#/#"))
    whole = build_problem(*space, False, [solution_sets(*space)])
    parts = [solution_sets(*space, a, b) for a, b in ((20, 36), (0, 3), (3, 20))]  # any order
    chunked = build_problem(*space, False, parts)
    for field in ("bits", "counts", "sep", "member_start", "member_ranks"):
        assert np.array_equal(getattr(whole, field), getattr(chunked, field))
    assert np.all(np.diff(whole.counts) <= 0)


def test_problem_round_trips_through_arrays() -> None:
    prob = problem_for(2, 3, 2, ("#", "##/#.", "#./##"), True)
    meta, arrays = prob.to_arrays()
    json.dumps(meta)
    again = TripleProblem.from_arrays(json.loads(json.dumps(meta)), {k: v.copy() for k, v in arrays.items()})
    assert search_range(again, 0, again.num_sets) == search_range(prob, 0, prob.num_sets)


def test_bad_search_input() -> None:
    prob = problem_for(2, 3, 2, ("#", "##/#.", "#./##"))
    with pytest.raises(ValueError, match="mode must be one of"):
        search_range(prob, 0, 1, mode="best")
    with pytest.raises(ValueError, match="first-item range"):
        search_range(prob, 0, prob.num_sets + 1)
    with pytest.raises(ValueError, match="batch must be at least 1"):
        search_range(prob, 0, 1, batch=0)
    with pytest.raises(ValueError, match="words per row"):
        build_problem(2, 3, 2, ("#",), False, [solution_sets(3, 3, 2, ("#",))])


def test_triple_pictures(tmp_path) -> None:
    from epcg.games.witness.domain.render import save_figure
    from epcg.games.witness.domain.render_pieces import subpanels_figure, triple_figure

    prob = problem_for(2, 3, 2, ("#", "##/#.", "#./##"))
    triple = search_range(prob, 0, prob.num_sets).sets[0]
    fig = triple_figure(prob, triple)
    assert len(fig.axes) == 6
    svg, png = save_figure(fig, tmp_path / "triple")
    assert 'id="B-solved-virtual"' in svg.read_text() and png.stat().st_size > 0
    assert len(subpanels_figure(prob, triple).axes) == 3
