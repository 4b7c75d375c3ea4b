"""Piece constraints: parsing, the tiling rule, and solution sets against the slow reference."""

from __future__ import annotations

import numpy as np
import pytest

from epcg.games.witness.domain.paths import paths_for
from epcg.games.witness.domain.piece_panels import (
    PiecePanel, check_panel_space, decode, encode, max_rank, separates, solution_sets, solutions, unpack,
)
from epcg.games.witness.domain.pieces import LIBRARY, parse_library, parse_piece, placement_masks
from epcg.games.witness.domain.tiling import can_tile, region_tilings
from tests.reference import witness_pieces as ref


def _mask(*cells: int) -> int:
    return sum(1 << c for c in cells)


def _ref_paths(w: int, h: int) -> list[list[tuple[int, int]]]:
    ps = paths_for(w, h)
    return [[ps.geometry.vertex_xy(v) for v in ps.path(i)] for i in range(len(ps))]


# ---------------------------------------------------------------- parsing


def test_library_matches_the_paper() -> None:
    pieces = parse_library(LIBRARY)
    assert len(pieces) == 24
    assert sorted(p.size for p in pieces) == [1] + [2] * 2 + [3] * 6 + [4] * 15
    for text, piece in zip(LIBRARY, pieces):
        assert "/".join(piece.rows) == text
        assert piece.cells[0] == (0, 0)
        cells = ref.piece_cells(text)
        ax, ay = min(cells, key=lambda c: (c[1], c[0]))  # lowest row, then leftmost
        assert frozenset(piece.cells) == frozenset((x - ax, y - ay) for x, y in cells)


def test_rows_run_top_to_bottom() -> None:
    # '##/#.': the top row is '##', so the cell above the anchor has a right neighbour
    assert set(parse_piece("##/#.").cells) == {(0, 0), (0, 1), (1, 1)}
    assert set(parse_piece("#./##").cells) == {(0, 0), (1, 0), (0, 1)}
    # anchored at the leftmost cell of the bottom row, even when the piece reaches further left above
    assert set(parse_piece("###/.#.").cells) == {(0, 0), (-1, 1), (0, 1), (1, 1)}
    assert (parse_piece("..#/###").width, parse_piece("..#/###").height) == (3, 2)


def test_placement_masks_stay_on_the_board() -> None:
    place = placement_masks(parse_library(["###/.#."]), 3, 3)
    # the T's stem (anchor) must be in the middle column and not in the top row
    assert [c for c in range(9) if place[0, c]] == [1, 4]
    assert int(place[0, 1]) == _mask(1, 3, 4, 5)


@pytest.mark.parametrize(
    "text, message",
    [
        ("#x", "unknown character 'x'"),
        ("../..", "is empty"),
        ("", "is empty"),
        ("##/#", "rows of different lengths"),
        ("#./.#", "not connected"),
        (3, "must be a string"),
    ],
)
def test_bad_pieces(text, message) -> None:
    with pytest.raises(ValueError, match=message) as err:
        parse_piece(text)
    assert "\n" not in str(err.value)


def test_bad_libraries() -> None:
    with pytest.raises(ValueError, match="library is empty"):
        parse_library([])
    with pytest.raises(ValueError, match="list of piece strings"):
        parse_library("##")
    with pytest.raises(ValueError, match="same piece twice"):
        parse_library(["##", "..##"])  # equal once the empty columns are trimmed
    with pytest.raises(ValueError, match="unknown character 'Z'"):
        solution_sets(3, 3, 3, ["#", "Z"])


def test_bad_panel_spaces() -> None:
    with pytest.raises(ValueError, match="10 pieces do not fit a 3x3 panel"):
        check_panel_space(3, 3, 10, LIBRARY)
    with pytest.raises(ValueError, match="do not fit"):
        solution_sets(2, 2, 0, LIBRARY)
    with pytest.raises(ValueError, match="not supported"):
        solution_sets(7, 3, 2, LIBRARY)
    with pytest.raises(ValueError, match="cell-set range"):
        solution_sets(3, 3, 3, LIBRARY, 5, 100)


# ---------------------------------------------------------------- the tiling rule


def test_fixed_orientation() -> None:
    lib = parse_library(["##/#.", ".#/##", "#"])
    ell = _mask(0, 3, 4)  # cells (0,0), (0,1), (1,1): the shape '##/#.'
    assert can_tile(ell, 3, 3, [0], lib)
    assert not can_tile(ell, 3, 3, [1], lib)  # its rotation does not fit
    assert region_tilings(ell, 1, 3, 3, lib) == [(0,)]


def test_exact_cover() -> None:
    lib = parse_library(["#", "##", "#/#", "##/##"])
    square = _mask(0, 1, 3, 4)
    assert can_tile(square, 3, 3, [3], lib)
    assert can_tile(square, 3, 3, [1, 1], lib) and can_tile(square, 3, 3, [2, 2], lib)
    assert can_tile(square, 3, 3, [0, 0, 1], lib) and can_tile(square, 3, 3, [0, 2, 0], lib)
    assert not can_tile(square, 3, 3, [1, 0], lib)  # a cell left over
    assert not can_tile(square, 3, 3, [1, 1, 0], lib)  # one cell too many
    assert not can_tile(_mask(0, 1, 2, 4), 3, 3, [1, 1], lib)  # a T cannot take two dominoes
    assert region_tilings(square, 3, 3, 3, lib) == [(0, 0, 1), (0, 0, 2)]


def test_regions_with_and_without_symbols() -> None:
    ps = paths_for(3, 3)
    # path 'RRRUUU' leaves one region: all 9 cells
    straight = next(i for i in range(len(ps)) if ps.moves(i) == "RRRUUU")
    # three 3-cell pieces in one region: tiles the whole board
    panel = PiecePanel(3, 3, (0, 4, 8), (LIBRARY.index("###"),) * 3)
    assert straight in solutions(panel, LIBRARY)
    # 'UURRRU' cuts off the top row (3 cells) from the bottom two rows (6 cells)
    cut = next(i for i in range(len(ps)) if ps.moves(i) == "UURRRU")
    assert sorted(set(ps.regions[cut].tolist())) == [0, 1]
    assert cut in solutions(panel, LIBRARY)  # one '###' on top, two below
    # two symbols below, none on top: the top region stays empty, the bottom is 6 cells for 6 cells
    panel2 = PiecePanel(3, 3, (0, 4), (LIBRARY.index("###"), LIBRARY.index("###")))
    assert cut in solutions(panel2, LIBRARY)
    assert straight not in solutions(panel2, LIBRARY)  # 9 cells, 6 cells of pieces
    assert not separates(panel2)[cut]


# ---------------------------------------------------------------- solution sets


@pytest.mark.parametrize("w, h, k, library", [(2, 3, 2, ("#", "##/#.", "#./##", "###")), (2, 2, 2, LIBRARY)])
def test_solution_sets_match_reference(w, h, k, library) -> None:
    fast = solution_sets(w, h, k, library)
    slow = ref.solution_sets(w, h, k, library, _ref_paths(w, h))
    assert fast.ranks.tolist() == sorted(slow)
    P = len(paths_for(w, h))
    for r, bits, sep in zip(fast.ranks.tolist(), fast.bits, fast.separating()):
        assert set(np.flatnonzero(unpack(bits, P)).tolist()) == slow[r][0]
        assert set(np.flatnonzero(unpack(sep, P)).tolist()) == slow[r][1]


def test_sampled_panels_match_reference_and_checked_path() -> None:
    fast = solution_sets(3, 3, 3, LIBRARY)
    row_of = {r: i for i, r in enumerate(fast.ranks.tolist())}
    sep_all = fast.separating()
    paths = _ref_paths(3, 3)
    rng = np.random.default_rng(4)
    # half random panels (mostly unsolvable), half random solvable ones
    sample = rng.integers(0, max_rank(3, 3, 3, 24), 40).tolist() + rng.choice(fast.ranks, 40).tolist()
    for rank in sample:
        panel = decode(3, 3, 3, 24, rank)
        assert encode(panel, 24) == rank
        slow = {s for s, path in enumerate(paths) if ref.solves(3, 3, path, panel.cells, panel.types, LIBRARY)}
        checked = solutions(panel, LIBRARY)
        assert set(checked.tolist()) == slow
        got = set(np.flatnonzero(unpack(fast.bits[row_of[rank]], 184)).tolist()) if rank in row_of else set()
        assert got == slow
        if rank in row_of:
            sep = set(np.flatnonzero(unpack(sep_all[row_of[rank]], 184)).tolist())
            assert sep == set(solutions(panel, LIBRARY, separate=True).tolist())
            assert sep == {s for s in slow if ref.separates(3, 3, paths[s], panel.cells)}


def test_paper_count_and_split_ranges() -> None:
    whole = solution_sets(3, 3, 3, LIBRARY)
    assert max_rank(3, 3, 3, 24) == 1_161_216
    assert len(whole.ranks) == 113_296  # the paper's solvable sub-panels
    assert np.all(np.diff(whole.ranks) > 0) and np.all(whole.bits.any(axis=1))
    parts = [solution_sets(3, 3, 3, LIBRARY, a, b) for a, b in ((0, 7), (7, 7), (7, 50), (50, 84))]
    for field in ("ranks", "bits"):
        assert np.array_equal(np.concatenate([getattr(p, field) for p in parts]), getattr(whole, field))
    assert np.array_equal(np.concatenate([p.separating() for p in parts]), whole.separating())
    assert len(whole.sep_index) == 380


def test_panel_picture(tmp_path) -> None:
    from epcg.games.witness.domain.render import save_figure
    from epcg.games.witness.domain.render_pieces import panel_figure

    ps = paths_for(3, 3)
    cut = next(i for i in range(len(ps)) if ps.moves(i) == "UURRRU")
    panel = PiecePanel(3, 3, (0, 4, 8), (LIBRARY.index("###"),) * 3)
    svg, png = save_figure(panel_figure(panel, LIBRARY, ps.path(cut), caption="UURRRU"), tmp_path / "panel")
    text = svg.read_text()
    assert png.stat().st_size > 0 and 'id="panel-pieces"' in text and 'id="panel-virtual"' in text
    with pytest.raises(ValueError, match="path must run from vertex 0 to vertex 15"):
        panel_figure(panel, LIBRARY, [0, 1, 2, 3, 7, 11, 15, 14])
    with pytest.raises(ValueError, match="piece types must be"):
        panel_figure(PiecePanel(3, 3, (0,), (30,)), LIBRARY)
