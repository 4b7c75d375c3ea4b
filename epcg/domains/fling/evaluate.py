"""Expert evaluation of uniquely solvable Fling! boards (the paper's selection step).

A board's *solution* is its only sequence of moves down to one piece (the
choice of the last move, between two pieces, is free; the first legal one in
``legal_moves`` order is taken).

Its *ratio* is ``brute / expert``, two tree sizes counted in nodes (every
position visited counts once, the root included; a node is a leaf when one
piece is left or it has no move to search):

* **brute**: the depth-first tree over all legal moves, down to one piece.
* **expert**: the same tree, but after a move ``m1`` took board ``b0`` to
  ``b1``, a legal move ``m2`` of ``b1`` is *skipped* when it is independent of
  ``m1``: ``m2`` (the same cell and direction) was already legal on ``b0``,
  ``m1`` is legal after playing ``m2`` on ``b0``, and ``m1(m2(b0)) ==
  m2(m1(b0))``, i.e. ``m2`` could have been played before ``m1`` with the same
  result. Only moves that depend on the previous move are searched; at the
  root every legal move is. On a uniquely solvable board the solution never
  contains two independent consecutive moves (swapping them would give a
  second solution), so the expert still finds it.

A high ratio means the "depend on the last move" insight saves the most work.

>>> from epcg.domains.fling.rules import Board
>>> b = Board.parse("o..o...")
>>> tree_sizes(b.width, b.height, b.bits)
(3, 3)
>>> b = Board.from_rank(7, 8, 5, 61193)
>>> print(b)
o..o...
.......
...oo..
o......
.......
.......
.......
.......
>>> ev = evaluate(b)
>>> ev.brute, ev.expert, ev.ratio, [b.move_name(m) for m in ev.solution]
(39, 15, 2.6, ['a1D', 'd3L', 'b3R', 'd1D'])
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from epcg.combinatorics.bitboard import _unrank_lex_bb
from epcg.combinatorics.bits import ctz, popcount
from epcg.domains.fling.moves import _fling
from epcg.domains.fling.layers import _check_board, layer_words
from epcg.domains.fling.rules import Board, Move

__all__ = ["Evaluation", "evaluate", "top_puzzles", "tree_sizes"]

_ONE = np.uint64(1)


# The tree walks use explicit stacks: numba's cached recursive functions can
# crash when loaded from the cache. A stack never holds more than 4 moves per
# piece per level, so 4 * 64 * 64 entries always suffice.
_STACK = 4 * 64 * 64


@njit(cache=True, nogil=True)
def _brute(board, width, height, stack):
    """Nodes of the full tree below ``board`` (itself included); ``stack``: ``_STACK`` uint64 scratch."""
    stack[0] = board
    top = 1
    total = np.int64(0)
    while top:
        top -= 1
        b = stack[top]
        total += 1
        if popcount(b) == 1:
            continue
        x = b
        while x:
            cell = ctz(x)
            x &= x - _ONE
            for d in range(4):
                child = _fling(b, width, height, cell, d)
                if child != 0:
                    stack[top] = child
                    top += 1
    return total


@njit(cache=True, nogil=True)
def _expert(board, width, height, prev, cur, mcell, mdir):
    """Nodes of the expert tree below ``board`` (itself included).

    A stack entry is a position ``cur`` with the board ``prev`` and the move
    (``mcell``, ``mdir``) that led to it; ``mcell = -1`` at the root. The four
    stacks are ``_STACK`` long scratch arrays (uint64, uint64, int64, int64).
    """
    prev[0] = board
    cur[0] = board
    mcell[0] = -1
    mdir[0] = 0
    top = 1
    total = np.int64(0)
    while top:
        top -= 1
        b0 = prev[top]
        b1 = cur[top]
        cell1 = mcell[top]
        d1 = mdir[top]
        total += 1
        if popcount(b1) == 1:
            continue
        x = b1
        while x:
            cell = ctz(x)
            x &= x - _ONE
            for d in range(4):
                b2 = _fling(b1, width, height, cell, d)
                if b2 == 0:
                    continue
                if cell1 >= 0:
                    earlier = _fling(b0, width, height, cell, d)
                    if earlier != 0 and _fling(earlier, width, height, cell1, d1) == b2:
                        continue  # independent of the previous move
                prev[top] = b1
                cur[top] = b2
                mcell[top] = cell
                mdir[top] = d
                top += 1
    return total


@njit(cache=True, nogil=True)
def _solutions(board, width, height):
    """Solution count (choice of the last move excluded), capped at 2."""
    stack = np.empty(_STACK, dtype=np.uint64)
    stack[0] = board
    top = 1
    count = np.int64(0)
    while top:
        top -= 1
        b = stack[top]
        pieces = popcount(b)
        if pieces == 1:
            count += 1
        x = b
        while x and pieces > 1:
            cell = ctz(x)
            x &= x - _ONE
            for d in range(4):
                child = _fling(b, width, height, cell, d)
                if child != 0:
                    if pieces == 2:  # any last move solves it, and counts once
                        count += 1
                        x = np.uint64(0)
                        break
                    stack[top] = child
                    top += 1
        if count >= 2:
            return np.int64(2)
    return count


@njit(cache=True, nogil=True)
def _top(width, height, k, words, base, limit, out_rank, out_brute, out_expert):
    """Best ``limit`` boards by ratio (then rank) among the set bits of ``words``,
    which are words ``base, base+1, ..`` of layer ``k``.

    Keeps a small array sorted by (ratio desc, rank asc); returns how many it holds.
    Ratios are compared exactly as ``b1 * e2`` vs ``b2 * e1``.
    Unchecked: ``words`` is layer ``k`` of this board.
    """
    n = width * height
    held = 0
    stack = np.empty(_STACK, dtype=np.uint64)
    prev = np.empty(_STACK, dtype=np.uint64)
    mcell = np.empty(_STACK, dtype=np.int64)
    mdir = np.empty(_STACK, dtype=np.int64)
    for w in range(words.shape[0]):
        x = words[w]
        while x:
            r = (base + w) * 64 + ctz(x)
            x &= x - _ONE
            board = _unrank_lex_bb(r, n, k)
            b = _brute(board, width, height, stack)
            e = _expert(board, width, height, prev, stack, mcell, mdir)
            # insertion position: after every held entry that is at least as good
            pos = held
            while pos > 0 and b * out_expert[pos - 1] > out_brute[pos - 1] * e:
                pos -= 1
            if pos >= limit:
                continue
            last = held if held < limit else limit - 1
            for i in range(last, pos, -1):
                out_rank[i] = out_rank[i - 1]
                out_brute[i] = out_brute[i - 1]
                out_expert[i] = out_expert[i - 1]
            out_rank[pos] = r
            out_brute[pos] = b
            out_expert[pos] = e
            if held < limit:
                held += 1
    return held


class Evaluation(NamedTuple):
    """A uniquely solvable board's solution and tree sizes."""

    brute: int
    """Nodes of the full search tree."""
    expert: int
    """Nodes of the expert's pruned tree."""
    ratio: float
    """``brute / expert``."""
    solution: list[Move]
    """The moves of the unique solution, first to last."""


def tree_sizes(width: int, height: int, bits: int) -> tuple[int, int]:
    """(brute, expert) tree sizes of a board (see the module docstring)."""
    _check_board(width, height)
    b = np.uint64(bits)
    stacks = [np.empty(_STACK, dtype=t) for t in (np.uint64, np.uint64, np.uint64, np.int64, np.int64)]
    return int(_brute(b, width, height, stacks[0])), int(_expert(b, width, height, *stacks[1:]))


def solution(board: Board) -> list[Move]:
    """The unique solution of ``board`` (``ValueError`` unless it has exactly one)."""
    w, h = board.width, board.height
    if int(_solutions(np.uint64(board.bits), w, h)) != 1:
        raise ValueError(f"board has no unique solution:\n{board}")
    moves = []
    b = board.copy()
    while b.pieces > 1:
        for m in b.legal_moves():
            if _solutions(np.uint64(b.result_bits(m)), w, h) >= 1:
                break
        b.push(m)
        moves.append(m)
    return moves


def evaluate(board: Board) -> Evaluation:
    """Solution and tree-size ratio of a uniquely solvable board."""
    moves = solution(board)
    brute, expert = tree_sizes(board.width, board.height, board.bits)
    return Evaluation(brute, expert, brute / expert, moves)


def top_puzzles(width: int, height: int, k: int, unique_words: np.ndarray, limit: int = 20,
                word_start: int = 0) -> list[tuple[int, float, list[Move]]]:
    """``(rank, ratio, solution)`` of the ``limit`` best boards of layer ``k`` by ratio
    (ties by rank), among the boards set in ``unique_words``: words ``word_start,
    word_start+1, ..`` of layer ``k``'s unique bits (the whole layer by default).

    Ranks stay global, so a driver can split a layer into word ranges, one task
    each, and merge their lists by ``(-ratio, rank)``; the merged first ``limit``
    equal the unsplit answer.

    Tree sizes are counted by walking the trees without a memo (the trees of
    uniquely solvable boards are small: ~0.04 ms a board at 7 pieces, ~0.25 ms
    at 8 on 7x8), so the cost grows quickly with ``k``.
    """
    _check_board(width, height)
    words = np.ascontiguousarray(unique_words)
    total = layer_words(width, height, k)
    if words.dtype != np.uint64 or words.ndim != 1 or not 0 <= word_start <= word_start + len(words) <= total:
        raise ValueError(f"unique_words must be uint64 words {word_start}.. of the {total} words of layer {k}")
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    ranks = np.zeros(limit, dtype=np.int64)
    brute = np.zeros(limit, dtype=np.int64)
    expert = np.ones(limit, dtype=np.int64)
    held = _top(width, height, k, words, word_start, limit, ranks, brute, expert)
    out = []
    for i in range(held):
        board = Board.from_rank(width, height, k, int(ranks[i]))
        out.append((int(ranks[i]), int(brute[i]) / int(expert[i]), solution(board)))
    return out
