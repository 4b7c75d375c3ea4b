"""Fling! rules: the brief's row examples, edges, chains, vertical and blocked moves,
checked against the slow reference in ``tests/reference/fling.py``."""

from __future__ import annotations

import random

import pytest

from epcg.games.fling.domain.moves import fling, line_table
from epcg.games.fling.domain.rules import D, L, R, U, Board, Move

from tests.reference import fling as ref


def after(text: str, move: str) -> str:
    board = Board.parse(text)
    return str(board.apply(board.parse_move(move))).replace("\n", "/")


@pytest.mark.parametrize(
    ("text", "move", "expected"),
    [
        ("o.o.o..", "a1R", ".o.o..."),  # the brief's examples
        ("o.oo.o.", "a1R", ".oo.o.."),
        ("..o.o.o", "g1L", "...o.o."),  # mirror image
        ("o.....o", "a1R", ".....o."),  # long slide, the hit piece leaves
        ("o.ooo..", "a1R", ".ooo..."),  # the group's last piece slides off the edge
        ("o.oo.oo", "a1R", ".oo.oo."),  # two groups: momentum passes through both
        ("o/./o/./.", "a1D", "./o/././."),  # vertical, towards higher y
        (".o/../.o/..", "b3U", "../.o/../.."),  # vertical, towards y = 0
    ],
)
def test_moves(text: str, move: str, expected: str) -> None:
    assert after(text, move) == expected


@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("oo.o...", "a1R"),  # neighbour occupied
        ("o......", "a1R"),  # nothing to hit: never flung off alone
        ("o.....o", "a1L"),  # off the edge
        ("o../.../..o", "a1R"),  # the other piece is on another row
        ("o/o", "a1D"),  # adjacent vertically
    ],
)
def test_illegal(text: str, move: str) -> None:
    board = Board.parse(text)
    m = board.parse_move(move)
    assert not board.is_legal(m)
    with pytest.raises(ValueError):
        board.push(m)


def test_every_move_removes_one_piece_and_matches_reference() -> None:
    rng = random.Random(3)
    for _ in range(400):
        w, h = rng.randint(1, 9), rng.randint(1, 7)
        bits = rng.getrandbits(w * h) & rng.getrandbits(w * h)
        cells = frozenset((c % w, c // w) for c in range(w * h) if bits >> c & 1)
        for c in range(w * h):
            for d in range(4):
                got = fling(bits, w, h, c, d)
                want = ref.fling(cells, w, h, (c % w, c // w), d)
                if want is None:
                    assert got == 0
                else:
                    assert got == sum(1 << (y * w + x) for x, y in want)
                    assert got.bit_count() == bits.bit_count() - 1


def test_line_tables_match_moves() -> None:
    for length in (1, 2, 5, 8):
        t = line_table(length)
        for v in range(1 << length):
            got = [(int(t.frm[j]), int(t.step[j]), int(t.result[j])) for j in range(t.start[v], t.start[v + 1])]
            want = [(i, d, fling(v, length, 1, i, d)) for i in range(length) for d in (0, 1) if fling(v, length, 1, i, d)]
            assert got == want


def test_board_value_type() -> None:
    board = Board.parse("o.o\n...\n..o")
    assert str(Board.parse(str(board))) == str(board) and board == Board.parse("o.o/.../..o")
    assert [board.move_name(m) for m in board.legal_moves()] == ["a1R", "c1L", "c1D", "c3U"]
    assert board.legal_moves() == [Move(0, R), Move(2, L), Move(2, D), Move(8, U)]
    assert board.parse_move("c3U") == Move(8, U)
    b = board.copy()
    b.push(Move(0, R))
    assert b.pieces == 2 and b.pop() == Move(0, R) and b == board
    assert Board.from_rank(3, 3, 3, board.rank()) == board
    with pytest.raises(ValueError):
        Board(9, 8)
    with pytest.raises(ValueError):
        Board.parse("o.x")
