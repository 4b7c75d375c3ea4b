"""The Witness's own rules: the compiled scan against the plain-Python reference on every placement of small rows,
and the facts a public editor's solver and a brute force agree on."""

from __future__ import annotations

import numpy as np
import pytest

from epcg.games.witness.domain.rule_scan import puzzle_space, solutions
from epcg.games.witness.domain.rule_tables import universe_for
from epcg.games.witness.domain.rules import RuleRow, decode
from epcg.games.witness.domain.scan import REDUCTIONS
from epcg.search.scan import ScanPartial, scan_range
from tests.reference import witness_rules as reference


def _reference(row: RuleRow) -> tuple[np.ndarray, np.ndarray]:
    """Solution count and longest solution (edges; 0 if none) of every placement, by the reference."""
    counts, longest = [], []
    for rank in range(row.max_rank):
        found = reference.solution_paths(decode(row, rank), row)
        counts.append(len(found))
        longest.append(max((len(p) - 1 for p in found), default=0))
    return np.array(counts), np.array(longest)


def _compare(row: RuleRow) -> np.ndarray:
    """Check the per-rank evaluator, the fused range kernel (whole and cut in three) and the listed solutions
    against the reference; return the reference's counts."""
    counts, longest = _reference(row)
    space = puzzle_space(row)
    per_rank = np.array([space.evaluate(r, *space.data) for r in range(row.max_rank)])
    assert per_rank.tolist() == counts.tolist()
    whole = scan_range(space, 0, row.max_rank, REDUCTIONS)
    want = ScanPartial.of_scores(counts, 0, REDUCTIONS)
    assert (whole.count, whole.ignored, whole.histogram) == (want.count, want.ignored, want.histogram)
    assert whole.argmin.value == want.argmin.value
    assert whole.argmin.ranks.tolist() == want.argmin.ranks.tolist()
    assert whole.argmin.payload.tolist() == longest[whole.argmin.ranks.astype(np.int64)].tolist()
    cuts = [0, row.max_rank // 3, 2 * row.max_rank // 3, row.max_rank]
    parts = ScanPartial.merge([scan_range(space, a, b, REDUCTIONS) for a, b in zip(cuts, cuts[1:])])
    assert parts == whole
    universe = universe_for(row.width, row.height, row.start_places, row.exit_places)
    for rank in range(0, row.max_rank, max(1, row.max_rank // 7)):
        listed = {universe.path(int(i)) for i in solutions(row, rank)}
        width = row.width + 1
        want_paths = {tuple(y * width + x for x, y in p) for p in reference.solution_paths(decode(row, rank), row)}
        assert listed == want_paths
    return counts


ROWS = {
    "hexagons 2x2": RuleRow(width=2, height=2, hexagons=2),
    "hexagons 3x2": RuleRow(width=3, height=2, hexagons=1),
    "triangles 2x2": RuleRow(width=2, height=2, triangles=2),
    "triangles 2x3": RuleRow(width=2, height=3, triangles=1),
    "squares 3 colours 2x2": RuleRow(width=2, height=2, squares=3, colours=3),
    "squares 3 colours 3x2": RuleRow(width=3, height=2, squares=2, colours=3),
    "stars 2x2": RuleRow(width=2, height=2, stars=2, colours=2),
    "stars 3x2": RuleRow(width=3, height=2, stars=4, colours=2),
    "eliminations with squares": RuleRow(width=2, height=2, squares=2, eliminations=1),
    "eliminations with triangles": RuleRow(width=2, height=2, triangles=1, eliminations=2),
    "eliminations with stars 3x2": RuleRow(width=3, height=2, stars=1, squares=1, eliminations=1),
    "tetris fixed 2x2": RuleRow(width=2, height=2, tetris=1, pieces=("#", "##", "#/#")),
    "tetris rotated 3x2": RuleRow(width=3, height=2, tetris=2, pieces=("#", "##", "##/#."), rotate=True),
    "negatives 2x2": RuleRow(width=2, height=2, tetris=1, negatives=1, pieces=("##/#.", "##"),
                             negative_pieces=("#",)),
    "negatives rotated 3x2": RuleRow(width=3, height=2, tetris=1, negatives=1, pieces=("##/#.", "###"),
                                     negative_pieces=("#", "##"), rotate=True),
    "gaps 2x2": RuleRow(width=2, height=2, gaps=2),
    "gaps 3x2": RuleRow(width=3, height=2, gaps=1),
    "exits on the border": RuleRow(width=2, height=2, exits="border"),
    "two starts, two exits": RuleRow(width=2, height=2, starts="corners", start_count=2, exits="border",
                                     exit_count=2),
    "hexagons with triangles": RuleRow(width=2, height=2, hexagons=1, triangles=1),
    "hexagons with triangles 3x2": RuleRow(width=3, height=2, hexagons=1, triangles=1, triangle_counts=(1, 3)),
    "squares with stars": RuleRow(width=2, height=2, squares=1, stars=2, colours=2),
    "squares with stars 3x2": RuleRow(width=3, height=2, squares=2, stars=2, colours=2),
    "stars with tetris": RuleRow(width=3, height=2, stars=2, tetris=1, colours=1, pieces=("#", "##")),
    "tetris with negatives and an elimination": RuleRow(width=2, height=2, tetris=1, negatives=1, eliminations=1,
                                                        pieces=("##",), negative_pieces=("#",)),
    "gaps with a free exit": RuleRow(width=2, height=2, gaps=1, exits="border"),
    "gaps with a free exit 3x2": RuleRow(width=3, height=2, gaps=1, hexagons=1, exits="corners"),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_kernel_matches_reference(name: str) -> None:
    counts = _compare(ROWS[name])
    assert counts.max() > 0  # the row is not vacuous: some placement is solvable


def test_triangle_pairs_on_3x3() -> None:
    row = RuleRow(width=3, height=3, triangles=2)
    part = scan_range(puzzle_space(row), 0, row.max_rank, REDUCTIONS)
    assert (row.max_rank, part.count - part.ignored, part.argmin.value, len(part.argmin.ranks)) == (324, 322, 4, 11)
    assert 1 not in part.histogram.counts
    for rank in part.argmin.ranks[:3].tolist():
        assert reference.count(decode(row, rank), row) == 4


def test_star_pair_on_3x3() -> None:
    row = RuleRow(width=3, height=3, stars=2, colours=1)
    part = scan_range(puzzle_space(row), 0, row.max_rank, REDUCTIONS)
    assert (row.max_rank, part.ignored, part.argmin.value) == (36, 0, 24)
    assert reference.count(decode(row, int(part.argmin.ranks[0])), row) == 24


def test_exits_at_both_top_corners() -> None:
    row = RuleRow(width=3, height=3, exits=("0,3", "3,3"), exit_count=2)
    assert row.max_rank == 1
    universe = universe_for(row.width, row.height, row.start_places, row.exit_places)
    assert [int((universe.end == v).sum()) for v in (15, 12)] == [184, 178]
    assert len(solutions(row, 0)) == 362 == reference.count(decode(row, 0), row)


def test_elimination_must_erase_a_broken_symbol() -> None:
    """One mark beside two squares of one colour has nothing broken to erase: never solved; with two
    colours it erases one of them on the paths that do not separate them, and only there."""
    same = RuleRow(width=2, height=2, squares=2, eliminations=1, colours=1)
    assert scan_range(puzzle_space(same), 0, same.max_rank, REDUCTIONS).histogram.counts == {0: same.max_rank}
    apart = RuleRow(width=2, height=2, squares=2, eliminations=1, colours=2)
    space = puzzle_space(apart)
    for rank in range(apart.max_rank):
        panel = decode(apart, rank)
        colours = [v for _, kind, v in panel.cell_symbols if kind == "square"]
        if colours[0] == colours[1]:
            assert space.evaluate(rank, *space.data) == 0


def test_fit_with_negatives() -> None:
    """Pieces less negatives tile a region (rotated, overlapping the negative), or cancel when areas match."""
    from epcg.games.witness.domain.pieces import parse_piece, placement_masks
    from epcg.games.witness.domain.rule_check import fit

    library = [parse_piece(t) for t in ("##", "#/#", "#")]
    place = placement_masks(library, 2, 2)
    voff, vsize = np.array([0, 2, 3]), np.array([2, 2, 1])
    pos, neg = np.array([0, 0]), np.array([1, 1])
    assert fit(pos, 1, neg, 1, np.uint64(0b0001), voff, place, vsize, 4)          # domino less a monomino: 1 cell
    assert fit(pos, 1, neg, 0, np.uint64(0b0101), voff, place, vsize, 4)          # upright domino (rotated)
    assert not fit(pos, 1, neg, 0, np.uint64(0b1001), voff, place, vsize, 4)      # two cells that do not touch
    assert fit(pos, 0, neg, 0, np.uint64(0b1111), voff, place, vsize, 4)          # no piece: nothing to fill
    assert not fit(pos, 0, neg, 1, np.uint64(0b1111), voff, place, vsize, 4)      # a negative alone


@pytest.mark.slow
def test_four_triangles_leave_one_solution_on_4x4() -> None:
    """The docs' table: on 4x4, three triangles never leave one solution, four do on 110 panels (two of them
    recounted by the reference)."""
    three = RuleRow(width=4, height=4, triangles=3)
    assert scan_range(puzzle_space(three), 0, three.max_rank, REDUCTIONS).argmin.value == 6
    row = RuleRow(width=4, height=4, triangles=4)
    part = scan_range(puzzle_space(row), 0, row.max_rank, REDUCTIONS)
    assert (part.argmin.value, len(part.argmin.ranks)) == (1, 110)
    for rank in part.argmin.ranks[[0, -1]].tolist():
        assert reference.count(decode(row, rank), row) == 1
