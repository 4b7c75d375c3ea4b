"""Fling! pictures: piece tracking and SVG/PNG output."""

from __future__ import annotations

from epcg.games.fling.domain.evaluate import evaluate
from epcg.games.fling.domain.render import flight_paths, leaving, puzzle_figure, save_figure
from epcg.games.fling.domain.rules import Board, Move


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


def _last_along(board: Board, move: Move) -> int:
    """The piece furthest along the flung piece's line: the one the rules say leaves the board."""
    dx, dy = [(1, 0), (-1, 0), (0, 1), (0, -1)][move.direction]
    x, y, last = move.cell % board.width, move.cell // board.width, None
    while 0 <= x + dx < board.width and 0 <= y + dy < board.height:
        x, y = x + dx, y + dy
        if board.bits >> (y * board.width + x) & 1:
            last = y * board.width + x
    return last


def test_the_piece_leaving_the_board_is_the_last_along_the_line() -> None:
    import math
    import random

    rng = random.Random(57)
    checked = 0
    for _ in range(300):
        b = Board.from_rank(7, 8, 6, rng.randrange(math.comb(56, 6)))
        for move in b.legal_moves():
            after = b.apply(move)
            cell = leaving(b, [move])[0]
            assert cell == _last_along(b, move) and b.bits >> cell & 1
            assert bin(after.bits).count("1") == bin(b.bits).count("1") - 1
            checked += 1
    assert checked > 1000


def test_the_picture_draws_each_piece_knocked_off() -> None:
    from epcg.report.pictures import svg_text

    b = Board.from_rank(7, 8, 6, 38012)
    solution = evaluate(b).solution
    assert leaving(b, solution) == [28, 29, 0, 22, 19]  # a5, b5, a1, b4, f3
    svg = svg_text(puzzle_figure(b, solution))
    assert all(f"off-{n}" in svg for n in range(1, len(solution) + 1)) and "off-6" not in svg
