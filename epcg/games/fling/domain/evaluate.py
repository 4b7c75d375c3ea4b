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

>>> from epcg.games.fling.domain.rules import Board
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

from collections.abc import Callable
from functools import cache
from typing import NamedTuple

import numpy as np
from numba import njit

from epcg.combinatorics.jit import INLINE, KERNEL
from epcg.combinatorics.bitboard import _unrank_lex_bb
from epcg.combinatorics.bits import ctz, popcount
from epcg.games.fling.domain.layers import _check_board, layer_words
from epcg.games.fling.domain.moves import DX, DY
from epcg.games.fling.domain.rules import Board, Move

__all__ = ["Evaluation", "evaluate", "top_puzzles", "tree_sizes"]

_ONE = np.uint64(1)


MEMO_BITS = 16
"""The tree-size memo has ``2**MEMO_BITS`` entries (24 bytes each)."""
_PROBES = 4
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX = np.uint64(0xC2B2AE3D27D4EB4F)
_DEPTH = 65
"""Frames of a tree walk: at most one per piece."""
COUNT_CAP = 1 << 62
"""Solution counts saturate here (no board of up to ~14 pieces on 7×8 comes near it)."""


@cache
def _move_masks(width: int, height: int) -> np.ndarray:
    """Per move ``4 * cell + d``: the neighbour it needs empty (0 if off the board), and the cells beyond it,
    one of which it needs occupied. A move passing both tests is legal."""
    masks = np.zeros((2, 4 * 64), dtype=np.uint64)
    for cell in range(width * height):
        for d in range(4):
            x, y = cell % width + DX[d], cell // width + DY[d]
            first = True
            while 0 <= x < width and 0 <= y < height:
                masks[0 if first else 1, 4 * cell + d] |= np.uint64(1) << np.uint64(y * width + x)
                first = False
                x, y = x + DX[d], y + DY[d]
    return masks


@cache
def _inner(width: int, height: int) -> np.ndarray:
    """Per direction: the cells that have a neighbour that way."""
    inner = np.zeros(4, dtype=np.uint64)
    for cell in range(width * height):
        for d in range(4):
            if 0 <= cell % width + DX[d] < width and 0 <= cell // width + DY[d] < height:
                inner[d] |= np.uint64(1) << np.uint64(cell)
    return inner


def scratch(width: int, height: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What :func:`_tree_size` works in: a memo (empty), the frame arrays of a walk and the board's move masks
    (:func:`_may_move`, :func:`_movers`).

    The memo maps a subtree to its size, a pure function of the subtree's
    root state, so one memo serves every board a task evaluates: boards of
    nearby ranks share many of their lower positions.
    """
    return (np.zeros((1 << MEMO_BITS, 3), dtype=np.uint64), np.empty((3, _DEPTH), dtype=np.uint64),
            np.empty((3, _DEPTH), dtype=np.int64), _move_masks(width, height), _inner(width, height))


@njit(**INLINE)
def _may_move(board, move, masks):
    """Whether move ``4 * cell + d`` is legal: a piece on ``cell``, its neighbour that way empty, a piece beyond."""
    near, far = masks[0, move], masks[1, move]
    return ((board >> np.uint64(move >> 2)) & _ONE != 0) & (near != 0) & (board & near == 0) & (board & far != 0)


@njit(**INLINE)
def _play(board, move, masks, width):
    """The board after legal move ``4 * cell + d``, in a few word operations instead of a walk.

    Along the line ahead, the flung piece stops before the first group of
    pieces and the last piece of each group flies on to stop before the
    next, the last one leaving the board: the flung piece and each group's
    last piece go, and the cell before each group's first piece fills.
    """
    d = move & 3
    ahead = board & (masks[0, move] | masks[1, move])
    step = np.uint64(1 if d < 2 else width)
    if d == 0 or d == 2:  # ahead is towards higher bits
        first = ahead & ~(ahead << step)
        last = ahead & ~(ahead >> step)
        stops = first >> step
    else:
        first = ahead & ~(ahead >> step)
        last = ahead & ~(ahead << step)
        stops = first << step
    return board ^ (_ONE << np.uint64(move >> 2)) ^ last ^ stops


@njit(**INLINE)
def _movers(board, d, width, height, inner):
    """The pieces of ``board`` with a legal move in direction ``d``, all at once: the neighbour that way is
    empty, and a piece lies further on (found by stepping the pieces back one cell at a time)."""
    step = np.uint64(1 if d < 2 else width)
    toward_low = d == 1 or d == 3  # the neighbour's bit is below the cell's
    beyond = np.uint64(0)
    t = board
    for _ in range((width if d < 2 else height) - 1):
        t = ((t << step) if toward_low else (t >> step)) & inner[d]
        beyond |= t
    near = ((board << step) if toward_low else (board >> step)) & inner[d]
    return board & inner[d] & ~near & beyond


@njit(**INLINE)
def _skipped(parent, last, move, child, masks, width):
    """Whether the expert skips ``move`` (to ``child``) after ``last`` took ``parent`` here: it was legal on
    ``parent`` and playing it first, then ``last``, gives the same board.

    Straight-line, like :func:`_may_move` and :func:`_pair_size`: where an inlined helper branches while it
    holds ``masks``, Numba keeps an atomic reference-count update of the array at each call inside the walk."""
    before = max(last, 0)
    earlier = _play(parent, move, masks, width)
    return ((last >= 0) & _may_move(parent, move, masks) & _may_move(earlier, before, masks)
            & (_play(earlier, before, masks, width) == child))


@njit(**INLINE)
def _pair_moves(board, width):
    """The legal moves of a two-piece ``board`` as ``4 * cell + d``: two pieces in one line with a gap between
    can each be flung at the other (each move leaves one piece); else neither moves, (-1, -1)."""
    low = ctz(board)
    high = ctz(board & (board - _ONE))
    if low // width == high // width and high - low >= 2:
        return 4 * low, 4 * high + 1
    if low % width == high % width and high - low >= 2 * width:
        return 4 * low + 2, 4 * high + 3
    return -1, -1


@njit(**INLINE)
def _pair_size(board, parent, last, expert, masks, width):
    """Nodes of the tree below a two-piece ``board`` that move ``last`` led to from ``parent``."""
    a, b = _pair_moves(board, width)
    a0, b0 = max(a, 0), max(b, 0)
    skipped = np.int64(_skipped(parent, last, a0, _play(board, a0, masks, width), masks, width)) + np.int64(
        _skipped(parent, last, b0, _play(board, b0, masks, width), masks, width))
    return np.int64(1) if a < 0 else np.int64(3) - (skipped if expert else 0)


@njit(**INLINE)
def _slot(key, tag, memo):
    """The memo row holding (``key``, ``tag``), else a free row of its probe run, else the run's first row.

    A row is (key, tag + 2, size); tag + 2 = 0 marks it free. Returned rows
    that do not hold the pair are free or to be overwritten.
    """
    mask = memo.shape[0] - 1
    h = np.int64(((key ^ (np.uint64(tag + 2) * _MIX)) * _GOLDEN) >> np.uint64(64 - MEMO_BITS))
    for i in range(_PROBES):
        s = (h + i) & mask
        t = memo[s, 1]
        if t == 0 or (memo[s, 0] == key and t == np.uint64(tag + 2)):
            return s
    return h & mask


@njit(**INLINE)
def _remember(memo, key, tag, value):
    """Store ``value`` under (``key``, ``tag``), overwriting its slot's run if full."""
    s = _slot(key, tag, memo)
    memo[s, 0] = key
    memo[s, 1] = np.uint64(tag + 2)
    memo[s, 2] = np.uint64(value)


@njit(**INLINE)
def _recall(memo, key, tag):
    """The value stored under (``key``, ``tag``), or -1."""
    s = _slot(key, tag, memo)
    if memo[s, 1] == np.uint64(tag + 2) and memo[s, 0] == key:
        return np.int64(memo[s, 2])
    return np.int64(-1)


@njit(**KERNEL)
def _tree_size(board, width, height, expert, memo, boards, ints, masks, inner):
    """Nodes of the brute (``expert`` false) or expert tree below ``board``, itself included.

    Depth-first with a stack of frames (``boards``: parent, position, pieces
    still to move in the current direction; ``ints``: the move that led here
    as ``4 * cell + d`` or -1 at the root, the current direction, nodes so
    far). A subtree's size depends only on its position (brute), or on its
    parent and the move from it (expert, whose pruning looks one move back),
    so each below the root is memoised under that key; two-piece positions
    are sized on the spot (:func:`_pair_size`).
    """
    if popcount(board) == 1:
        return np.int64(1)
    parent, position, left = boards[0], boards[1], boards[2]
    move, direction, nodes = ints[0], ints[1], ints[2]
    parent[0] = board
    position[0] = board
    left[0] = _movers(board, 0, width, height, inner)
    move[0] = -1
    direction[0] = 0
    nodes[0] = 1
    top = 1
    while True:
        f = top - 1
        b = position[f]
        if left[f] == 0 and direction[f] < 3:
            direction[f] += 1
            left[f] = _movers(b, direction[f], width, height, inner)
            continue
        if left[f] == 0:  # every move of b tried: its subtree is complete
            size = nodes[f]
            top -= 1
            if top == 0:
                return size
            _remember(memo, parent[f] if expert else b, move[f] if expert else -1, size)
            nodes[top - 1] += size
            continue
        cell = ctz(left[f])
        left[f] &= left[f] - _ONE
        d = direction[f]
        child = _play(b, 4 * cell + d, masks, width)
        if expert and _skipped(parent[f], move[f], 4 * cell + d, child, masks, width):
            continue  # independent of the previous move
        pieces = popcount(child)
        if pieces == 1:
            nodes[f] += 1
            continue
        if pieces == 2:
            nodes[f] += _pair_size(child, b, 4 * cell + d, expert, masks, width)
            continue
        known = _recall(memo, b if expert else child, 4 * cell + d if expert else -1)
        if known >= 0:
            nodes[f] += known
            continue
        parent[top] = b
        position[top] = child
        left[top] = _movers(child, 0, width, height, inner)
        move[top] = 4 * cell + d
        direction[top] = 0
        nodes[top] = 1
        top += 1


_COUNTS = 256
"""The memo tag of a solution count (tree sizes use -1 and the moves 0..255)."""


@njit(**KERNEL)
def _count(board, width, height, memo, boards, ints, masks, inner):
    """Solution count of ``board`` (see the module docstring), with the memo, frames and masks of
    :func:`~epcg.games.fling.domain.evaluate.scratch`; a count depends only on the position, so the memo serves
    every board of a task.

    Depth-first with a stack of frames (``boards``: position, pieces still to
    move in the current direction; ``ints``: the direction, the count so far).
    """
    pieces = popcount(board)
    if pieces == 1:
        return np.int64(1)
    if pieces == 2:
        return np.int64(_pair_moves(board, width)[0] >= 0)
    position, left = boards[0], boards[1]
    direction, total = ints[0], ints[1]
    position[0] = board
    left[0] = _movers(board, 0, width, height, inner)
    direction[0] = 0
    total[0] = 0
    top = 1
    while True:
        f = top - 1
        b = position[f]
        if left[f] == 0 and direction[f] < 3:
            direction[f] += 1
            left[f] = _movers(b, direction[f], width, height, inner)
            continue
        if left[f] == 0:  # every move of b tried: its count is final
            r = total[f]
            top -= 1
            if top == 0:
                return r
            _remember(memo, b, _COUNTS, r)
            total[top - 1] = min(total[top - 1] + r, COUNT_CAP)
            continue
        cell = ctz(left[f])
        left[f] &= left[f] - _ONE
        child = _play(b, 4 * cell + direction[f], masks, width)
        if popcount(child) == 2:
            r = np.int64(_pair_moves(child, width)[0] >= 0)
        else:
            r = _recall(memo, child, _COUNTS)
            if r < 0:
                position[top] = child
                left[top] = _movers(child, 0, width, height, inner)
                direction[top] = 0
                total[top] = 0
                top += 1
                continue
        total[f] = min(total[f] + r, COUNT_CAP)


@njit(**KERNEL)
def _top(width, height, k, words, base, limit, out_rank, out_brute, out_expert, memo, boards, ints, masks, inner):
    """Best ``limit`` boards by ratio (then rank) among the set bits of ``words``,
    which are words ``base, base+1, ..`` of layer ``k``.

    Keeps a small array sorted by (ratio desc, rank asc); returns how many it holds.
    Ratios are compared exactly as ``b1 * e2`` vs ``b2 * e1``.
    ``memo``, ``boards``, ``ints``, ``masks``, ``inner``: :func:`scratch`.
    Unchecked: ``words`` is layer ``k`` of this board.
    """
    n = width * height
    held = 0
    for w in range(words.shape[0]):
        x = words[w]
        while x:
            r = (base + w) * 64 + ctz(x)
            x &= x - _ONE
            board = _unrank_lex_bb(r, n, k)
            b = _tree_size(board, width, height, False, memo, boards, ints, masks, inner)
            e = _tree_size(board, width, height, True, memo, boards, ints, masks, inner)
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
    work = scratch(width, height)
    return int(_tree_size(b, width, height, False, *work)), int(_tree_size(b, width, height, True, *work))


def solution_counter(width: int, height: int) -> Callable[[int], int]:
    """A function giving the solution count of boards of this size (:func:`_count`), with one memo for all.

    >>> count = solution_counter(7, 1)
    >>> count(0b0010101), count(0b0000011)    # o.o.o.. has four; oo..... none
    (4, 0)
    """
    work = scratch(width, height)
    return lambda bits: int(_count(np.uint64(bits), width, height, *work))


def solution(board: Board) -> list[Move]:
    """The unique solution of ``board`` (``ValueError`` unless it has exactly one)."""
    count = solution_counter(board.width, board.height)
    if count(board.bits) != 1:
        raise ValueError(f"board has no unique solution:\n{board}")
    moves = []
    b = board.copy()
    while b.pieces > 1:
        for m in b.legal_moves():
            if count(b.result_bits(m)) >= 1:
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

    Tree sizes are counted with one memo for all the boards (:func:`scratch`).
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
    held = _top(width, height, k, words, word_start, limit, ranks, brute, expert, *scratch(width, height))
    out = []
    for i in range(held):
        board = Board.from_rank(width, height, k, int(ranks[i]))
        out.append((int(ranks[i]), int(brute[i]) / int(expert[i]), solution(board)))
    return out
