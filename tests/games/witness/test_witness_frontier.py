"""Frontier path counter (numba) against the plain Python programme, path enumeration, the path lists
and the constraint bitsets."""

from __future__ import annotations

import random

import numpy as np
import pytest

from epcg.combinatorics.bits import popcount
from epcg.games.witness.domain.bitsets import bitsets_for
from epcg.games.witness.domain.frontier import GridGraph, _run, _schedule, count_paths, frontier_run
from epcg.games.witness.domain.geometry import Geometry
from epcg.games.witness.domain.paths import paths_for

from tests.reference import witness as ref
from tests.reference import witness_frontier as slow

SMALL = [(1, 1), (1, 2), (2, 1), (1, 4), (2, 2), (3, 2), (2, 3), (3, 3), (4, 2), (2, 5)]


def brute_count(w: int, h: int, cross=()) -> int:
    """Paths found by the reference DFS that cross every position of ``cross``."""
    need = set(cross)
    return sum(1 for p in ref.all_paths(w, h) if need <= ref.positions(w, h, p))


def bitset_count(w: int, h: int, cross) -> int:
    """Set bits of the AND of the constraints' solution sets (the scan's tables)."""
    b = bitsets_for(w, h)
    acc = np.full(b.words, np.uint64(0xFFFFFFFFFFFFFFFF))
    for p in cross:
        acc &= b.cross[p]
    return sum(int(popcount(x)) for x in acc) if b.num_paths % 64 == 0 else sum(
        int(popcount(x)) for x in acc[:-1]) + int(popcount(acc[-1] & np.uint64((1 << (b.num_paths % 64)) - 1)))


@pytest.mark.parametrize(("w", "h"), SMALL)
def test_counts_match_reference(w: int, h: int) -> None:
    assert count_paths(w, h) == brute_count(w, h)


@pytest.mark.parametrize(("w", "h"), [(w, h) for w in range(1, 6) for h in range(1, 6) if w * h <= 20])
def test_counts_match_path_lists(w: int, h: int) -> None:
    assert count_paths(w, h) == len(paths_for(w, h))


@pytest.mark.parametrize(("w", "h"), [(2, 2), (3, 2), (2, 3), (3, 3), (1, 3)])
def test_every_single_and_pair_constraint_matches_reference(w: int, h: int) -> None:
    n = GridGraph(w, h).num_positions
    for p in range(n):
        assert count_paths(w, h, [p]) == brute_count(w, h, [p])
    rng = random.Random(w * 10 + h)
    for _ in range(25):
        cross = rng.sample(range(n), rng.randint(2, 4))
        assert count_paths(w, h, cross) == brute_count(w, h, cross)


@pytest.mark.parametrize(("w", "h", "ks"), [(4, 3, (1, 2, 3, 5)), (4, 4, (1, 3, 6)), (3, 4, (2, 4, 8))])
def test_constraints_match_bitsets(w: int, h: int, ks: tuple[int, ...]) -> None:
    rng = random.Random(f"{w}{h}")
    n = Geometry(w, h).num_positions
    for k in ks:
        for _ in range(6):
            cross = rng.sample(range(n), k)
            assert count_paths(w, h, cross) == bitset_count(w, h, cross)


def test_a_unique_puzzle_has_one_solution() -> None:
    ps = paths_for(3, 3)
    cross = ps.crosses(0)  # every position of one path pins that path
    assert count_paths(3, 3, cross) == 1
    assert count_paths(3, 3, [0, 15]) == len(ps)  # start and goal are on every path


@pytest.mark.parametrize(("w", "h"), [(1, 7), (7, 1), (3, 5), (5, 3), (4, 6), (6, 6), (2, 9)])
def test_kernel_matches_the_python_programme(w: int, h: int) -> None:
    assert count_paths(w, h) == slow.count_paths(w, h)
    rng = random.Random(w * 100 + h)
    n = GridGraph(w, h).num_positions
    for k in (1, 2, 3, 5, 8):
        cross = rng.sample(range(n), k)
        assert count_paths(w, h, cross) == slow.count_paths(w, h, cross), cross


def test_a_count_that_outgrows_its_words_is_counted_again_with_more() -> None:
    sched = _schedule(GridGraph(9, 9), set())
    assert _run(sched, 1) is None  # 4.1e19 paths do not fit one 64-bit word
    assert _run(sched, 2).count == 41_044_208_702_632_496_804
    assert frontier_run(9, 9).limbs == 2


def test_boards_too_wide_for_a_state_word_are_refused() -> None:
    assert count_paths(14, 2) == slow.count_paths(14, 2)  # the shorter side is what counts
    with pytest.raises(ValueError, match="frontier of 17 vertices"):
        count_paths(15, 15)


def test_counts_beyond_64_bits_are_exact() -> None:
    assert count_paths(7, 7) == 789_360_053_252  # OEIS A007764, n = 8
    big = count_paths(3, 40)
    assert big > 1 << 64 and big == slow.count_paths(3, 40)  # several words, not wrapped
    assert count_paths(40, 3) == big  # the transposed board, swept the other way


def test_published_counts_beyond_64_bits() -> None:
    # OEIS A007764 (self-avoiding corner-to-corner rook paths), n = 10 .. 12 vertices a side.
    assert count_paths(9, 9) == 41_044_208_702_632_496_804
    assert count_paths(10, 10) == 1_568_758_030_464_750_013_214_100
    assert count_paths(11, 11) == 182_413_291_514_248_049_241_470_885_236


def test_sweep_covers_every_edge_once() -> None:
    for w, h in ((1, 1), (3, 5), (6, 2)):
        g = GridGraph(w, h)
        assert sorted(g.sweep()) == list(range(g.num_edges))


def test_bad_positions_are_refused() -> None:
    with pytest.raises(ValueError):
        count_paths(2, 2, [21])
    with pytest.raises(ValueError):
        count_paths(0, 2)


@pytest.mark.slow
def test_published_counts_past_two_words() -> None:
    # OEIS A007764, 13 and 14 vertices a side: 12x12 fits two 64-bit words, 13x13 needs three.
    assert count_paths(12, 12) == 64_528_039_343_270_018_963_357_185_158_482_118
    run = frontier_run(13, 13)
    assert run.count == 69_450_664_761_521_361_664_274_701_548_907_358_996_488 and run.limbs == 3
