"""Fling! retrograde layers: bit layout, published 7x8 counts, kernels vs the slow solver,
chunk independence."""

from __future__ import annotations

import random

import numpy as np
import pytest

from epcg.combinatorics.bitboard import BitboardCombinations
from epcg.games.fling.domain.layers import first_layer, layer_size, layer_words, solve_words

from tests.reference import fling as ref


def popcount(words: np.ndarray) -> int:
    return int(sum(int(w).bit_count() for w in words))


def get_bit(words: np.ndarray, r: int) -> bool:
    return bool(int(words[r // 64]) >> (r % 64) & 1)


def layers(width: int, height: int, kmax: int, kernel: str = "auto") -> dict[int, tuple[np.ndarray, np.ndarray]]:
    out = {1: first_layer(width, height)}
    for k in range(2, kmax + 1):
        out[k] = solve_words(width, height, k, *out[k - 1], 0, layer_words(width, height, k), kernel=kernel)
    return out


@pytest.fixture(scope="module")
def board_7x8() -> dict[int, tuple[np.ndarray, np.ndarray]]:
    return layers(7, 8, 4)


def test_sizes() -> None:
    assert layer_size(7, 8, 10) == 35_607_051_480
    assert layer_words(7, 8, 3) == -(-27_720 // 64)
    s, u = first_layer(7, 8)
    assert s.dtype == np.uint64 and popcount(s) == 56 and (s == u).all()
    with pytest.raises(ValueError):
        layer_size(9, 8, 3)
    with pytest.raises(ValueError):
        solve_words(7, 8, 3, s, u, 0, 1)  # previous layer has the wrong length


def test_published_counts_to_4(board_7x8) -> None:
    counts = {k: (popcount(s), popcount(u)) for k, (s, u) in board_7x8.items()}
    assert counts[2] == (267, 267)
    assert counts[3] == (2_720, 2_110)
    assert counts[4] == (35_518, 15_724)


@pytest.mark.slow
def test_published_counts_5() -> None:
    s, u = layers(7, 8, 5)[5]
    assert (popcount(s), popcount(u)) == (481_048, 103_324)


def test_bit_layout_and_rank_order(board_7x8) -> None:
    s, u = board_7x8[2]
    g = BitboardCombinations(56, 2)
    # rank 0 is cells {0, 1} (adjacent: no move), rank 1 is cells {0, 2} (a1R solves it)
    assert g.unrank(0) == 0b11 and not get_bit(s, 0)
    assert g.unrank(1) == 0b101 and get_bit(s, 1) and get_bit(u, 1)
    last = layer_words(7, 8, 2) * 64
    assert all(not get_bit(s, r) for r in range(layer_size(7, 8, 2), last))


@pytest.mark.parametrize(("width", "height"), [(3, 3), (4, 3), (2, 5), (5, 1)])
@pytest.mark.parametrize("kernel", ["block", "fast", "plain"])
def test_every_board_matches_slow_solver(width: int, height: int, kernel: str) -> None:
    got = layers(width, height, width * height, kernel)
    for k in range(1, width * height + 1):
        solvable, unique = ref.layer(width, height, k)
        s, u = got[k]
        assert s.tolist() == ref.pack(solvable), (k, "solvable")
        assert u.tolist() == ref.pack(unique), (k, "unique")


def test_long_lines_use_plain_kernel() -> None:
    got = layers(17, 1, 4)  # lines longer than LINE_TABLE_MAX
    for k in range(2, 5):
        solvable, unique = ref.layer(17, 1, k)
        assert got[k][0].tolist() == ref.pack(solvable) and got[k][1].tolist() == ref.pack(unique)


def test_sampled_7x8_boards_match_slow_solver(board_7x8) -> None:
    s4, u4 = board_7x8[4]
    s5, u5 = solve_words(7, 8, 5, s4, u4, 0, layer_words(7, 8, 5))
    rng = random.Random(5)
    g6 = BitboardCombinations(56, 6)
    for k, g, words in ((5, BitboardCombinations(56, 5), (s5, u5)), (6, g6, None)):
        for _ in range(60 if k == 5 else 40):
            r = rng.randrange(g.max_rank)
            if words is None:
                w0 = r // 64
                words_k = solve_words(7, 8, 6, s5, u5, w0, w0 + 1)
                bit = r - 64 * w0
                got = tuple(bool(int(x[0]) >> bit & 1) for x in words_k)
            else:
                got = (get_bit(words[0], r), get_bit(words[1], r))
            c = ref.solutions(ref.cells_of(BitboardCombinations.to_items(g.unrank(r)), 7), 7, 8)
            assert got == (c >= 1, c == 1), (k, r, c)


def test_any_word_split_gives_same_words(board_7x8) -> None:
    s3, u3 = board_7x8[3]
    s4, u4 = board_7x8[4]
    total = layer_words(7, 8, 4)
    rng = random.Random(7)
    cuts = sorted({0, total, *(rng.randrange(total) for _ in range(6)), 1, total - 1})
    parts = [solve_words(7, 8, 4, s3, u3, a, b) for a, b in zip(cuts, cuts[1:])]
    assert (np.concatenate([p[0] for p in parts]) == s4).all()
    assert (np.concatenate([p[1] for p in parts]) == u4).all()
    empty = solve_words(7, 8, 4, s3, u3, 5, 5)
    assert empty[0].shape == (0,) and empty[1].shape == (0,)


def test_evaluator_matches_reference_tree_sizes() -> None:
    from epcg.games.fling.domain.evaluate import evaluate, top_puzzles, tree_sizes
    from epcg.games.fling.domain.rules import Board

    w, h = 4, 4
    got = layers(w, h, 5)
    rng = random.Random(11)
    for k in (3, 4, 5):
        g = BitboardCombinations(w * h, k)
        for r in rng.sample(range(g.max_rank), 40):
            bits = g.unrank(r)
            cells = ref.cells_of(BitboardCombinations.to_items(bits), w)
            assert tree_sizes(w, h, bits) == ref.tree_sizes(cells, w, h)
            if get_bit(got[k][1], r):
                moves = evaluate(Board(w, h, bits)).solution
                b = Board(w, h, bits)
                for m in moves:
                    b.push(m)
                assert b.is_solved() and len(moves) == k - 1
    u5 = got[5][1]
    top = top_puzzles(w, h, 5, u5, limit=5)
    everything = top_puzzles(w, h, 5, u5, limit=10_000)
    assert top == everything[:5]
    keys = [(-ratio, rank) for rank, ratio, _ in everything]
    assert keys == sorted(keys) and len(everything) == popcount(u5)
    cuts = [0, 7, 8, 30, len(u5)]
    merged = sorted((item for a, b in zip(cuts, cuts[1:])
                     for item in top_puzzles(w, h, 5, u5[a:b], limit=5, word_start=a)),
                    key=lambda item: (-item[1], item[0]))
    assert merged[:5] == top


@pytest.mark.parametrize(("width", "height"), [(7, 8), (8, 8), (5, 3), (1, 9), (9, 1)])
def test_move_masks_agree_with_the_walking_move(width: int, height: int) -> None:
    from epcg.games.fling.domain import evaluate
    from epcg.games.fling.domain.moves import fling

    _memo, _boards, _ints, masks, inner = evaluate.scratch(width, height)
    n, rng = width * height, random.Random(5)
    for _ in range(300):
        board = sum(1 << c for c in rng.sample(range(n), rng.randrange(1, min(n, 12) + 1)))
        for d in range(4):
            legal = {c for c in range(n) if board >> c & 1 and fling(board, width, height, c, d)}
            movers = int(evaluate._movers(np.uint64(board), d, width, height, inner))
            assert movers == sum(1 << c for c in legal)
            for c in range(n):
                assert evaluate._may_move(np.uint64(board), 4 * c + d, masks) == (c in legal)
                if c in legal:
                    assert int(evaluate._play(np.uint64(board), 4 * c + d, masks, width)) == fling(board, width, height,
                                                                                                   c, d)


def test_tree_sizes_with_a_memo_too_small_to_hold_them() -> None:
    """One memo shared by many boards, so small that entries are overwritten all the time, gives the sizes of a
    fresh memo per board; both equal the unmemoised reference."""
    from epcg.games.fling.domain import evaluate

    w, h = 5, 4
    rng = random.Random(3)
    memo, boards, ints, masks, inner = evaluate.scratch(w, h)
    tiny = np.zeros((8, 3), dtype=np.uint64)
    for _ in range(25):
        bits = sum(1 << c for c in rng.sample(range(w * h), rng.randrange(2, 8)))
        sizes = [int(evaluate._tree_size(np.uint64(bits), w, h, expert, m, boards, ints, masks, inner))
                 for m in (tiny, memo) for expert in (False, True)]
        expected = ref.tree_sizes(ref.cells_of(BitboardCombinations.to_items(bits), w), w, h)
        assert sizes == [*expected, *expected]


@pytest.mark.parametrize(("width", "height"), [(8, 8), (16, 4), (4, 16), (1, 9)])
def test_fast_equals_plain_on_other_shapes(width: int, height: int) -> None:
    fast, plain = layers(width, height, 4, "fast"), layers(width, height, 4, "plain")
    for k in range(2, 5):
        assert (fast[k][0] == plain[k][0]).all() and (fast[k][1] == plain[k][1]).all()
