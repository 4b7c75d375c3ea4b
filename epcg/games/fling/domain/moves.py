"""Fling! move mechanics on 64-bit boards, and per-line move tables built from them.

A board of ``width`` x ``height`` cells (``width * height <= 64``) is a uint64
with bit ``y * width + x`` set for each piece. Directions are numbered
``0: +x`` (right), ``1: -x`` (left), ``2: +y`` (down the printed board, rows
are printed from ``y = 0``), ``3: -y`` (up).

A move flings the piece on ``cell`` in direction ``d``. It is legal when the
neighbour in that direction is on the board and empty and some piece lies
further along the line. The flung piece stops just before the first piece it
meets; momentum passes through that piece's touching group to the group's last
piece, which slides on the same way; the last piece in the line leaves the
board. So every legal move removes exactly one piece.

>>> bin(fling(0b0010101, 7, 1, 0, 0))   # o.o.o.. -> .o.o...
'0b1010'
>>> bin(fling(0b0101101, 7, 1, 0, 0))   # o.oo.o. -> .oo.o..
'0b10110'
>>> fling(0b0000011, 7, 1, 0, 0)        # neighbour occupied: illegal
0
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL

__all__ = ["DX", "DY", "LINE_TABLE_MAX", "LineTable", "fling", "line_table"]

DX = np.array([1, -1, 0, 0], dtype=np.int64)
"""x step of each direction."""
DY = np.array([0, 0, 1, -1], dtype=np.int64)
"""y step of each direction."""

LINE_TABLE_MAX = 16
"""Longest line (row or column) for which a move table of ``2**length`` entries is built."""

_ONE = np.uint64(1)


@njit(**KERNEL)
def _fling(board, width, height, cell, d):
    """The board after flinging the piece on ``cell`` in direction ``d``; 0 if illegal.

    Walks cells one at a time (O(line length)). 0 is never a legal result
    because a legal move leaves at least the flung piece on the board.
    Unchecked: ``board`` fits ``width * height <= 64`` cells, ``0 <= d < 4``.
    """
    board = np.uint64(board)
    if not (board >> np.uint64(cell)) & _ONE:
        return np.uint64(0)
    dx = DX[d]
    dy = DY[d]
    x = cell % width
    y = cell // width
    nx = x + dx
    ny = y + dy
    if nx < 0 or nx >= width or ny < 0 or ny >= height:
        return np.uint64(0)
    if (board >> np.uint64(ny * width + nx)) & _ONE:
        return np.uint64(0)
    board ^= _ONE << np.uint64(cell)  # the moving piece is lifted off
    first = True
    while True:
        # slide from (x, y) until the next cell is off the board or occupied
        while True:
            nx = x + dx
            ny = y + dy
            if nx < 0 or nx >= width or ny < 0 or ny >= height:
                if first:
                    return np.uint64(0)  # nothing to hit: never flung off alone
                return board  # the last piece in the line leaves the board
            if (board >> np.uint64(ny * width + nx)) & _ONE:
                break
            x = nx
            y = ny
        first = False
        board |= _ONE << np.uint64(y * width + x)  # stops just before the piece it meets
        # momentum runs through the touching group to its last piece
        x = nx
        y = ny
        while True:
            nx = x + dx
            ny = y + dy
            if nx < 0 or nx >= width or ny < 0 or ny >= height:
                break
            if not (board >> np.uint64(ny * width + nx)) & _ONE:
                break
            x = nx
            y = ny
        board ^= _ONE << np.uint64(y * width + x)  # that piece now slides on


def fling(board: int, width: int, height: int, cell: int, d: int) -> int:
    """Python wrapper of the move kernel: the resulting board, or 0 if the move is illegal."""
    return int(_fling(np.uint64(board), width, height, cell, d))


@njit(**KERNEL)
def _build_line_table(length):
    """All legal moves of every line value of ``length`` cells (a 1-row board).

    Returns ``(start, result, frm, step)``: the moves of line value ``v`` are
    entries ``start[v] .. start[v+1]-1``, each the new line value, the cell
    flung and its direction (0: towards higher cells, 1: towards lower).
    """
    nvals = 1 << length
    start = np.zeros(nvals + 1, dtype=np.int64)
    for v in range(nvals):
        count = 0
        for i in range(length):
            for d in range(2):
                if _fling(np.uint64(v), length, 1, i, d) != 0:
                    count += 1
        start[v + 1] = start[v] + count
    total = start[nvals]
    result = np.empty(total, dtype=np.int64)
    frm = np.empty(total, dtype=np.int8)
    step = np.empty(total, dtype=np.int8)
    j = 0
    for v in range(nvals):
        for i in range(length):
            for d in range(2):
                r = _fling(np.uint64(v), length, 1, i, d)
                if r != 0:
                    result[j] = np.int64(r)
                    frm[j] = i
                    step[j] = d
                    j += 1
    return start, result, frm, step


class LineTable:
    """Legal moves of every line value of one length, as flat arrays (see ``_build_line_table``).

    >>> t = line_table(7)
    >>> v = 0b0010101                      # o.o.o..
    >>> [(int(t.frm[j]), int(t.step[j]), bin(int(t.result[j]))) for j in range(t.start[v], t.start[v + 1])]
    [(0, 0, '0b1010'), (2, 0, '0b1001'), (2, 1, '0b10010'), (4, 1, '0b1010')]
    """

    def __init__(self, length: int) -> None:
        if not 1 <= length <= LINE_TABLE_MAX:
            raise ValueError(f"line length must be in [1, {LINE_TABLE_MAX}], got {length}")
        self.length = length
        self.start, self.result, self.frm, self.step = _build_line_table(length)


@cache
def line_table(length: int) -> LineTable:
    """The (cached) move table for lines of ``length`` cells."""
    return LineTable(length)
