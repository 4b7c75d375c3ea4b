"""Fling! pictures: piece tracking and SVG/PNG output."""

from __future__ import annotations

from epcg.games.fling.domain.evaluate import evaluate
from epcg.games.fling.domain.render import flight_paths, puzzle_figure, save_figure
from epcg.games.fling.domain.rules import Board


def test_flight_paths_follow_pieces() -> None:
    b = Board.from_rank(7, 8, 6, 38012)
    solution = evaluate(b).solution
    first, paths = flight_paths(b, solution)
    names = [b.move_name(m) for m in solution]
    assert names == ["f5L", "b1D", "d1L", "b1D", "b3R"]
    # the piece from d1 is flung (move 3) to b1 and flung again in move 4: labelled 3 only
    assert first == {5 * 7 - 2: 1, 1: 2, 3: 3}
    assert paths == [(33, 29), (1, 22), (3, 1), (1, 15), (15, 18)]


def test_save_figure_writes_svg_and_png(tmp_path) -> None:
    b = Board.from_rank(7, 8, 5, 61193)
    fig = puzzle_figure(b, evaluate(b).solution, title="rank 61193")
    svg, png = save_figure(fig, tmp_path / "fling" / "p")
    assert svg.read_text().count("piece-") >= 5 and "move-4" in svg.read_text()
    assert png.read_bytes()[:4] == b"\x89PNG"
    # same figure, same SVG bytes
    svg2, _ = save_figure(puzzle_figure(b, evaluate(b).solution, title="rank 61193"), tmp_path / "q")
    assert svg2.read_bytes() == svg.read_bytes()
