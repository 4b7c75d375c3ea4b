"""Smallest unique must-cross covers against brute force and the exhaustive scan; symmetries."""

from __future__ import annotations

import itertools

import pytest

from epcg.games.witness.domain.cover import NO_BOUND, cover_positions, unique_covers
from epcg.games.witness.domain.geometry import Geometry
from epcg.games.witness.domain.paths import paths_for
from epcg.games.witness.domain.puzzles import Puzzle, decode, solutions
from epcg.games.witness.domain.scan import puzzle_space
from epcg.search import Reductions, scan_range
from epcg.games.witness.domain.symmetry import orbit_key, position_maps, vertex_maps
from epcg.search.branch_bound import LocalIncumbent

from tests.reference import witness as ref


def brute_min_covers(w: int, h: int) -> tuple[int, set[tuple[int, ...]]]:
    """Fewest positions any single-solution must-cross panel needs, and every such panel, by trying all subsets."""
    positions = [frozenset(ref.positions(w, h, p)) for p in ref.all_paths(w, h)]
    for k in itertools.count():
        found = set()
        for own in positions:
            for subset in itertools.combinations(sorted(own), k):
                if sum(1 for other in positions if other.issuperset(subset)) == 1:
                    found.add(subset)
        if found:
            return k, found
    raise AssertionError("unreachable")


def fewest_solutions(w: int, h: int, k: int):
    """The exhaustive must-cross scan of one row: its fewest non-zero solutions and every rank at it."""
    space = puzzle_space("must-cross", w, h, k)
    return scan_range(space, 0, space.max_rank, Reductions(ignore=0)).argmin


def scan_min_covers(w: int, h: int) -> tuple[int, set[tuple[int, ...]]]:
    """The same from the exhaustive must-cross scan: the first k whose minimum is one solution."""
    for k in itertools.count(1):
        r = fewest_solutions(w, h, k)
        if r.value == 1:
            return k, {decode("must-cross", w, h, k, int(rank)).cross for rank in r.ranks}
    raise AssertionError("unreachable")


def panels(w: int, h: int, **kw) -> tuple[int, set[tuple[int, ...]]]:
    r = unique_covers(w, h, **kw)
    return r.k, {cover_positions(m) for m in r.masks}


@pytest.mark.parametrize(("w", "h"), [(1, 1), (1, 2), (2, 1), (1, 3), (2, 2), (3, 2), (2, 3)])
def test_matches_brute_force(w: int, h: int) -> None:
    assert panels(w, h) == brute_min_covers(w, h)


@pytest.mark.parametrize(("w", "h"), [(3, 3), (4, 3), (3, 4)])
def test_matches_exhaustive_scan(w: int, h: int) -> None:
    k, found = panels(w, h)
    assert (k, found) == scan_min_covers(w, h)
    assert k == {(3, 3): 4, (4, 3): 5, (3, 4): 5}[(w, h)]  # fewer hexagons never leave one solution


@pytest.mark.slow
def test_4x4_matches_exhaustive_scan() -> None:
    k, found = panels(4, 4)
    assert k == 6 and len(found) == 738
    assert fewest_solutions(4, 4, 5).value > 1
    r = fewest_solutions(4, 4, 6)
    assert r.value == 1
    assert found == {decode("must-cross", 4, 4, 6, int(rank)).cross for rank in r.ranks}


def test_each_cover_has_exactly_its_path() -> None:
    r = unique_covers(4, 3)
    ps = paths_for(4, 3)
    assert len(r.paths) == len(r.masks) > 0
    for s, m in zip(r.paths, r.masks):
        cross = cover_positions(m)
        assert len(cross) == r.k and set(cross) <= set(ps.crosses(int(s)))
        assert solutions(ps, Puzzle(4, 3, cross)).tolist() == [int(s)]


def test_slices_with_a_shared_incumbent_give_the_whole() -> None:
    whole = unique_covers(4, 3)
    best = LocalIncumbent("test-cover-4x3")
    n = len(paths_for(4, 3))
    cuts = [0, 7, 100, 333, n]
    parts = [unique_covers(4, 3, a, b, incumbent=best, batch=50) for a, b in zip(cuts, cuts[1:])]
    k = min(p.k for p in parts)
    assert k == whole.k
    merged = sorted((int(s), cover_positions(m)) for p in parts if p.k == k for s, m in zip(p.paths, p.masks))
    assert merged == sorted((int(s), cover_positions(m)) for s, m in zip(whole.paths, whole.masks))


def test_sets_kept_per_check_do_not_change_the_answer() -> None:
    expected = panels(4, 3)
    for seen in (1, 3, 40):
        assert panels(4, 3, seen=seen) == expected


def test_a_bound_below_the_answer_finds_nothing() -> None:
    r = unique_covers(3, 3, kmax=3)
    assert r.k == NO_BOUND and len(r.paths) == 0
    assert unique_covers(3, 3, kmax=4).k == 4


def test_symmetries_map_paths_to_paths_and_keep_counts() -> None:
    for w, h in ((3, 3), (4, 3)):
        g = Geometry(w, h)
        ps = paths_for(w, h)
        every = {ps.path(i) for i in range(len(ps))}
        for vm in vertex_maps(g):
            for i in range(0, len(ps), 7):
                image = tuple(int(vm[v]) for v in ps.path(i))
                assert image in every or image[::-1] in every
        found = panels(w, h)[1]
        for m in position_maps(g):
            assert {tuple(sorted(int(m[p]) for p in s)) for s in found} == found
        assert len({orbit_key(g, s) for s in found}) >= len(found) // len(position_maps(g))


@pytest.mark.slow
def test_5x5_covers_of_the_shortest_paths_have_one_solution_by_the_frontier_counter() -> None:
    from epcg.games.witness.domain.frontier import count_paths

    n = len(paths_for(5, 5))
    r = unique_covers(5, 5, n - 3000, n, kmax=8)
    assert r.k <= 8 and len(r.paths) > 0
    for m in r.masks[:: max(1, len(r.masks) // 200)]:
        assert count_paths(5, 5, cover_positions(m)) == 1
