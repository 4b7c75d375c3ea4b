"""Fling! patterns: every board of a pattern has the same game (node counts, solution under the mapping)."""

from __future__ import annotations

import math
import random
from collections import defaultdict
from functools import cache

import numpy as np
import pytest

from epcg.combinatorics.bitboard import BitboardCombinations
from epcg.games.fling.domain import distribution, evaluate
from epcg.games.fling.domain.layers import first_layer, layer_words, solve_words
from epcg.games.fling.domain.patterns import Pattern, closed_up, copies, pattern, pattern_map, patterns_of
from epcg.games.fling.domain.rules import Board
from tests.reference import fling as ref

W, H = 7, 8


@cache
def unique_layer(k: int) -> np.ndarray:
    """The unique words of layer ``k`` of the 7x8 board (solved from layer 1 on)."""
    solvable, unique = first_layer(W, H)
    for j in range(2, k + 1):
        solvable, unique = solve_words(W, H, j, solvable, unique, 0, layer_words(W, H, j))
    return unique


def unique_boards(k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bits, brute, expert) of every uniquely solvable board of layer ``k``."""
    ranks, brute, expert, _ = distribution.trees_of_words(W, H, k, unique_layer(k))
    comb = BitboardCombinations(W * H, k)
    bits = np.array([comb.unrank(int(r)) for r in ranks], dtype=np.uint64)
    return bits, brute, expert


def mapped_solution(board: Board) -> list[tuple[int, int]]:
    """The unique solution of ``board`` as moves of its pattern's board, the free last move left out."""
    _, cells, directions = pattern_map(board)
    return [(cells[m.cell], directions[m.direction]) for m in evaluate.solution(board)[:-1]]


@pytest.mark.parametrize("k", [4, 5, pytest.param(6, marks=pytest.mark.slow)])
def test_every_board_of_a_pattern_has_its_node_counts_and_solution(k):
    """Every uniquely solvable 7x8 board of layers 4-6: boards of one pattern share brute-force and expert
    node counts and, moved onto the pattern's board, the same solution; each pattern's boards are as many as
    ``copies`` says, and the pattern's own board (its game in a box of its size) is uniquely solvable with
    those counts."""
    bits, brute, expert = unique_boards(k)
    keys = patterns_of(W, H, bits)
    groups: dict[Pattern, list[int]] = defaultdict(list)
    for i, p in enumerate(keys):
        groups[p].append(i)
    assert len(groups) < len(bits)
    merged = 0
    for p, members in groups.items():
        assert {(int(brute[i]), int(expert[i])) for i in members} == {(int(brute[members[0]]), int(expert[members[0]]))}
        assert len(members) == copies(p, W, H)
        merged += len(members) > 1
    # the pattern's own board and every member's solution, for a seeded choice of patterns (Python is slow)
    rng = random.Random(k)
    for p in rng.sample(sorted(groups), min(len(groups), 150)):
        members = groups[p]
        own = p.board()
        assert evaluate.tree_sizes(own.width, own.height, own.bits) == (int(brute[members[0]]), int(expert[members[0]]))
        want = mapped_solution(own)
        for i in members:
            assert mapped_solution(Board(W, H, int(bits[i]))) == want
    assert merged > len(groups) // 4


def test_the_reference_solver_agrees_on_copies():
    """The slow reference's tree sizes and solution count are the same on up to six boards of each of a dozen
    patterns of 5 pieces."""
    bits, _, _ = unique_boards(5)
    keys = patterns_of(W, H, bits)
    rng = random.Random(5)
    for i in rng.sample(range(len(bits)), 12):
        same = [Board(W, H, int(b)) for b, p in zip(bits, keys) if p == keys[i]][:6]
        sizes = {ref.tree_sizes(ref.cells_of(b.cells(), W), W, H) for b in same}
        assert len(sizes) == 1
        assert {ref.solutions(ref.cells_of(b.cells(), W), W, H) for b in same} == {1}


def test_closing_up_keeps_a_column_between_two_pieces_of_a_row_only():
    """A run of empty lines is closed up unless some reachable position has pieces on both its sides in one line:
    ``o...o`` plays as ``o..o`` (a piece stops on the second column and on the fourth, never on the third); a row
    no piece reaches and no column spans goes, as do the margins."""
    assert str(closed_up(Board.parse("o...o.."))) == "o..o"
    assert str(closed_up(Board.parse("o...o../......./..o...."))) == "o...o\n..o.."
    assert str(closed_up(Board.parse("......./.o.o.o./......."))) == "o.o.o"
    assert pattern(Board.parse("o..o...")) == pattern(Board.parse("...o..o/......."))
    assert pattern(Board.parse("o..o...")) != pattern(Board.parse("o.o...."))


def test_patterns_of_small_boards_agree_with_the_reference_game():
    """On every 3- and 4-piece board of a 5x4 board, two boards of one pattern have the same reference game:
    the set of every legal move sequence, written as moves of the pattern's board."""
    import itertools

    for k in (3, 4):
        seen: dict[Pattern, frozenset] = {}
        for combo in itertools.combinations(range(20), k):
            board = Board(5, 4, sum(1 << c for c in combo))
            p, cells, directions = pattern_map(board)
            game = _sequences(ref.cells_of(combo, 5), cells, directions)
            assert seen.setdefault(p, game) == game, (p, str(board))
        assert len(seen) < math.comb(20, k) // 4


def _sequences(start: frozenset, cells: dict[int, int], directions: tuple[int, ...]) -> frozenset:
    """Every legal move sequence from ``start`` (reference cells of a 5x4 board), as moves of its pattern's
    board."""
    out = set()

    def walk(b: frozenset, path: tuple) -> None:
        out.add(path)
        for (x, y), d, res in ref.moves(b, 5, 4):
            walk(res, path + ((cells[y * 5 + x], directions[d]),))

    walk(start, ())
    return frozenset(out)


TOP_7 = ["a1 f2 c3 f4 c5 f7 a8", "a1 g2 c3 g4 c5 g7 a8", "c1 f2 a3 f4 a5 f7 c8", "c1 g2 a3 g4 a5 g7 c8"]
"""The 7-piece best list's first four boards (the four patterns at the top ratio, 1,897 / 65)."""


def test_what_the_rule_does_not_merge():
    """docs/notation.md's account of the top four 7-piece patterns, by the reference game: the same move tree
    (so the same node counts), yet positions the rule cannot map onto each other by deleting lines: the first
    reaches 170 positions, the others 171, because its last two pieces on the solution stand one cell apart
    (either last move leaves the piece on the cell between) where theirs stand two apart."""
    from epcg.games.fling.probe import parse_board

    boards = [parse_board(text, W, H) for text in TOP_7]
    games = [_tree_and_positions(ref.cells_of(b.cells(), W)) for b in boards]
    assert len({pattern(b) for b in boards}) == 4
    assert {ref.tree_sizes(ref.cells_of(b.cells(), W), W, H) for b in boards} == {(1897, 65)}
    assert len({tree for tree, _ in games}) == 1
    assert [len(positions) for _, positions in games] == [170, 171, 171, 171]
    last_two = [_after(b, 5) for b in boards[:2]]
    assert last_two == [frozenset({(2, 2), (4, 2)}), frozenset({(2, 2), (5, 2)})]
    ends = [{res for _, _, res in ref.moves(pair, W, H)} for pair in last_two]
    assert ends == [{frozenset({(3, 2)})}, {frozenset({(3, 2)}), frozenset({(4, 2)})}]


def _after(board: Board, n: int) -> frozenset:
    """The reference cells of ``board`` after the first ``n`` moves of its solution."""
    b = board.copy()
    for move in evaluate.solution(board)[:n]:
        b.push(move)
    return ref.cells_of(b.cells(), W)


def _tree_and_positions(start: frozenset) -> tuple[str, set[frozenset]]:
    """The shape of the move tree below ``start`` (children as a sorted multiset, positions forgotten) and every
    position it reaches."""
    positions: set[frozenset] = set()

    @cache
    def shape(b: frozenset) -> str:
        positions.add(b)
        return "(" + ",".join(sorted(shape(res) for _, _, res in ref.moves(b, W, H))) + ")"

    return shape(start), positions
