"""Fling! patterns: when two boards are the same puzzle for a designer.

Two boards have the same *pattern* when one becomes the other by a symmetry of
the square (mirrors, turns, also the quarter turns a rectangle cannot make on
itself) after both are *closed up*: empty rows and columns deleted wherever that
provably changes no move. Boards of one pattern have isomorphic games (every
position, move, solution and search tree corresponds through the mapping), so
the same solution count, brute-force and expert node counts and solution.

**Closing up.** Let ``U`` be the columns any position reachable from the board
(by any legal moves) ever occupies. Deleting a set ``S`` of columns outside
``U`` maps every reachable position ``P`` to ``φ(P)``, and ``φ`` commutes with
every move when consecutive pieces of a row never turn adjacent: a move only
asks, along one line, which cell ahead is empty (adjacency), which piece comes
first (order, kept by ``φ``) and where a piece stops (next to the piece it
meets, a cell in ``U``, so ``φ(hit - 1) = φ(hit) - 1``); columns never matter to
a vertical move. Two consecutive pieces of a row with only unused columns
between them stand on the two sides of one run of unused columns, so the
closed-up board keeps one column of a run exactly when some reachable position
has pieces on both of its sides in one row (*bridged*), and none of any other
run, the margins included (a piece never stops outside the pieces' bounding
box). Rows alike. Closing up twice changes nothing.

**Copies.** The boards of a pattern on a ``width`` x ``height`` board are its
closed-up images ``I`` with empty columns and rows inserted. Inserting columns
between columns ``x`` and ``x + 1`` of ``I`` keeps the game (the argument above,
backwards) unless some reachable position of ``I`` has pieces on ``x`` and ``x +
1`` of one row, or a move stops a piece on one of them against a piece on the
other (the slot is *locked*). So a pattern stands for ``Σ_I C(e + f - 1, f - 1)``
column placements times the same for rows, where ``e`` is the spare columns
and ``f`` the free slots, margins included (:func:`copies`).

>>> from epcg.games.fling.domain.rules import Board
>>> a = Board.parse("o...o../......./..o....")
>>> b = Board.parse("......./......./...o.../......./.o...o.")
>>> print(closed_up(a))
o...o
..o..
>>> pattern(a) == pattern(b), pattern(a).key, copies(pattern(a), 7, 3)
(True, '2x5:121', 60)
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb
from typing import cast

import numpy as np
from numba import njit
from numba import types as nbtypes
from numba.typed import Dict

from epcg.combinatorics.jit import KERNEL
from epcg.games.fling.domain.rules import Board

__all__ = ["Pattern", "closed_up", "copies", "pattern", "pattern_map", "patterns_of"]

_ONE = np.uint64(1)
_DX = np.array([1, -1, 0, 0], dtype=np.int64)
_DY = np.array([0, 0, 1, -1], dtype=np.int64)


@dataclass(frozen=True, order=True)
class Pattern:
    """A closed-up board in its own ``width`` x ``height`` box, in its least orientation (see the module
    docstring); ``key`` names it in results.json and exports."""

    width: int
    height: int
    bits: int

    @property
    def key(self) -> str:
        """``"WxH:hex"``, e.g. ``"3x2:d"``."""
        return f"{self.width}x{self.height}:{self.bits:x}"

    @classmethod
    def from_key(cls, key: str) -> Pattern:
        size, bits = key.split(":")
        width, height = size.split("x")
        return cls(int(width), int(height), int(bits, 16))

    def board(self) -> Board:
        """The pattern as a board of its own size (its game is every copy's)."""
        return Board(self.width, self.height, self.bits)


@njit(**KERNEL)
def _has(board, width, x, y):
    return (board >> np.uint64(y * width + x)) & _ONE


@njit(**KERNEL)
def _move(board, width, height, cell, d, lock_x, lock_y):
    """The board after flinging ``cell`` in direction ``d`` (0 if illegal), as ``moves._fling``; every stop of
    a piece against another marks the slot between their two lines in ``lock_x`` / ``lock_y``."""
    dx, dy = _DX[d], _DY[d]
    x, y = cell % width, cell // width
    nx, ny = x + dx, y + dy
    if nx < 0 or nx >= width or ny < 0 or ny >= height or _has(board, width, nx, ny):
        return np.uint64(0)
    board ^= _ONE << np.uint64(cell)
    first = True
    while True:
        while True:
            nx, ny = x + dx, y + dy
            if nx < 0 or nx >= width or ny < 0 or ny >= height:
                return np.uint64(0) if first else board
            if _has(board, width, nx, ny):
                break
            x, y = nx, ny
        first = False
        board |= _ONE << np.uint64(y * width + x)
        if dx != 0:
            lock_x[min(x, nx)] = True
        else:
            lock_y[min(y, ny)] = True
        x, y = nx, ny
        while True:
            nx, ny = x + dx, y + dy
            if nx < 0 or nx >= width or ny < 0 or ny >= height or not _has(board, width, nx, ny):
                break
            x, y = nx, ny
        board ^= _ONE << np.uint64(y * width + x)


@njit(**KERNEL)
def _lines(board, width, height, used_x, used_y, bridge_x, bridge_y, lock_x, lock_y):
    """Record one position: its used columns and rows, each line's consecutive pieces (bridges) and touching
    pieces (locks)."""
    for y in range(height):
        last = -1
        for x in range(width):
            if _has(board, width, x, y):
                used_x[x] = True
                used_y[y] = True
                if last >= 0:
                    bridge_x[last, x] = True
                    if x == last + 1:
                        lock_x[last] = True
                last = x
    for x in range(width):
        last = -1
        for y in range(height):
            if _has(board, width, x, y):
                if last >= 0:
                    bridge_y[last, y] = True
                    if y == last + 1:
                        lock_y[last] = True
                last = y


@njit(**KERNEL)
def _game(board, width, height):
    """Walk every position reachable from ``board``: ``(used_x, used_y, bridge_x, bridge_y, lock_x, lock_y)``."""
    used_x = np.zeros(width, dtype=np.bool_)
    used_y = np.zeros(height, dtype=np.bool_)
    bridge_x = np.zeros((width, width), dtype=np.bool_)
    bridge_y = np.zeros((height, height), dtype=np.bool_)
    lock_x = np.zeros(max(width, 1), dtype=np.bool_)
    lock_y = np.zeros(max(height, 1), dtype=np.bool_)
    seen = Dict.empty(key_type=nbtypes.uint64, value_type=nbtypes.boolean)
    stack = [np.uint64(board)]
    seen[np.uint64(board)] = True
    while len(stack):
        b = stack.pop()
        _lines(b, width, height, used_x, used_y, bridge_x, bridge_y, lock_x, lock_y)
        rest = b
        while rest:
            cell = 0
            while not (rest >> np.uint64(cell)) & _ONE:
                cell += 1
            rest ^= _ONE << np.uint64(cell)
            for d in range(4):
                after = _move(b, width, height, cell, d, lock_x, lock_y)
                if after and after not in seen:
                    seen[after] = True
                    stack.append(after)
    return used_x, used_y, bridge_x, bridge_y, lock_x, lock_y


@njit(**KERNEL)
def _keep(used, bridge):
    """Which lines the closed-up board keeps: every used one, and one line of each bridged run between two."""
    n = len(used)
    keep = used.copy()
    last = -1
    for i in range(n):
        if used[i]:
            if last >= 0 and i > last + 1 and bridge[last, i]:
                keep[last + 1] = True
            last = i
    return keep


@njit(**KERNEL)
def _transform(bits, w, h, t):
    """``bits`` (a ``w`` x ``h`` box) under symmetry ``t`` (0..7: bit 0 mirrors x, bit 1 mirrors y, bit 2 swaps
    the axes, applied in that order): ``(width, height, bits)``."""
    nw, nh = (h, w) if t & 4 else (w, h)
    out = np.uint64(0)
    for cell in range(w * h):
        if (bits >> np.uint64(cell)) & _ONE:
            x, y = cell % w, cell // w
            if t & 1:
                x = w - 1 - x
            if t & 2:
                y = h - 1 - y
            if t & 4:
                x, y = y, x
            out |= _ONE << np.uint64(y * nw + x)
    return nw, nh, out


@njit(**KERNEL)
def _closed(board, width, height):
    """The closed-up board: ``(w, h, bits, new column of each column (-1: deleted), new row of each row)``."""
    used_x, used_y, bridge_x, bridge_y, _, _ = _game(board, width, height)
    keep_x, keep_y = _keep(used_x, bridge_x), _keep(used_y, bridge_y)
    col = np.full(width, -1, dtype=np.int64)
    row = np.full(height, -1, dtype=np.int64)
    w = 0
    for x in range(width):
        if keep_x[x]:
            col[x] = w
            w += 1
    h = 0
    for y in range(height):
        if keep_y[y]:
            row[y] = h
            h += 1
    bits = np.uint64(0)
    for cell in range(width * height):
        if (board >> np.uint64(cell)) & _ONE:
            bits |= _ONE << np.uint64(row[cell // width] * w + col[cell % width])
    return w, h, bits, col, row


@njit(**KERNEL)
def _least(w, h, bits):
    """The least ``(width, height, bits)`` over the eight symmetries, and the symmetry giving it."""
    best_w, best_h, best_b, best_t = w, h, bits, 0
    for t in range(1, 8):
        nw, nh, nb = _transform(bits, w, h, t)
        if (nw, nh, nb) < (best_w, best_h, best_b):
            best_w, best_h, best_b, best_t = nw, nh, nb, t
    return best_w, best_h, best_b, best_t


@njit(**KERNEL)
def _patterns(width, height, boards, out_w, out_h, out_bits):
    for i in range(len(boards)):
        w, h, bits, _, _ = _closed(boards[i], width, height)
        out_w[i], out_h[i], out_bits[i], _ = _least(w, h, bits)


def patterns_of(width: int, height: int, boards: np.ndarray) -> list[Pattern]:
    """The pattern of each board (bitmasks on a ``width`` x ``height`` board), compiled."""
    boards = np.ascontiguousarray(boards, dtype=np.uint64)
    w, h, bits = (np.zeros(len(boards), dtype=np.int64), np.zeros(len(boards), dtype=np.int64),
                  np.zeros(len(boards), dtype=np.uint64))
    _patterns(width, height, boards, w, h, bits)
    return [Pattern(int(a), int(b), int(c)) for a, b, c in zip(w.tolist(), h.tolist(), bits.tolist())]


def pattern(board: Board) -> Pattern:
    """The pattern of ``board``."""
    return patterns_of(board.width, board.height, np.array([board.bits], dtype=np.uint64))[0]


def closed_up(board: Board) -> Board:
    """``board`` closed up (in its own box, unturned)."""
    w, h, bits, _, _ = _closed(np.uint64(board.bits), board.width, board.height)
    return Board(int(w), int(h), int(bits))


_DIRECTION_IMAGE = {  # direction (R, L, D, U) under bit 0 (mirror x), bit 1 (mirror y), bit 2 (swap axes)
    1: (1, 0, 2, 3), 2: (0, 1, 3, 2), 4: (2, 3, 0, 1),
}


def pattern_map(board: Board) -> tuple[Pattern, dict[int, int], tuple[int, int, int, int]]:
    """``board``'s pattern, the cell of the pattern's board each cell a piece ever stands on maps to, and where
    each direction goes: a move ``Move(c, d)`` in ``board``'s game is ``Move(cells[c], directions[d])`` in the
    pattern board's."""
    w, h, bits, col, row = _closed(np.uint64(board.bits), board.width, board.height)
    pw, ph, pbits, t = _least(w, h, bits)
    cells = {}
    for cell in range(board.width * board.height):
        x, y = int(col[cell % board.width]), int(row[cell // board.width])
        if x < 0 or y < 0:
            continue
        if t & 1:
            x = int(w) - 1 - x
        if t & 2:
            y = int(h) - 1 - y
        if t & 4:
            x, y = y, x
        cells[cell] = y * int(pw) + x
    directions = [0, 1, 2, 3]
    for bit in (1, 2, 4):
        if t & bit:
            directions = [_DIRECTION_IMAGE[bit][d] for d in directions]
    return Pattern(int(pw), int(ph), int(pbits)), cells, cast(tuple[int, int, int, int], tuple(directions))


def _free_slots(w: int, h: int, bits: int) -> tuple[int, int]:
    """The free slots (inner slots not locked, and the two margins) between columns and between rows of a
    closed-up board."""
    _, _, _, _, lock_x, lock_y = _game(np.uint64(bits), w, h)
    return 2 + sum(not v for v in lock_x[:w - 1].tolist()), 2 + sum(not v for v in lock_y[:h - 1].tolist())


def copies(p: Pattern, width: int, height: int) -> int:
    """How many boards of a ``width`` x ``height`` board have pattern ``p`` (see the module docstring)."""
    images = {_transform(np.uint64(p.bits), p.width, p.height, t) for t in range(8)}
    total = 0
    for w, h, bits in images:
        if w > width or h > height:
            continue
        fx, fy = _free_slots(int(w), int(h), int(bits))
        total += comb(width - w + fx - 1, fx - 1) * comb(height - h + fy - 1, fy - 1)
    return total
