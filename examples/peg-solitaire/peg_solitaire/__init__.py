"""Peg solitaire as an epcg retrograde space: which positions can be played down to one peg?

A board is a set of holes; a move jumps a peg over a neighbouring peg into the
empty hole beyond, removing the jumped peg. Layer ``k`` is every position with
``k`` pegs (a bitboard, ranked in colex order); a position is solvable when
some move leads to a solvable position of ``k - 1`` pegs, and every one-peg
position is solved. That is all epcg needs: sizes, the first layer, and a
kernel that solves a word range of layer ``k`` from layer ``k - 1``.

    epcg run jobs/triangle5.toml      # space = "peg_solitaire:TRIANGLE5"

>>> TRIANGLE5.layer_size(14), len(triangle_jumps(5))
(15, 36)
>>> from epcg.search.retrograde import solve_layers
>>> [row["solvable"] for row in solve_layers(TRIANGLE5).rows][-1]   # starting holes that can be solved
15
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from epcg.combinatorics import next_colex, rank_colex, unrank_colex
from epcg.search.retrograde import RetrogradeSpace, retrograde_family

__all__ = ["TRIANGLE4", "TRIANGLE5", "TRIANGLE6", "RECT3X4", "LINE11", "peg_space", "rectangle_jumps", "triangle_jumps",
           "triangle_holes", "rectangle_holes", "triangle"]

_ONE = np.uint64(1)


def triangle_jumps(side: int) -> np.ndarray:
    """Jumps ``(from, over, to)`` on a triangle of ``side`` rows (row ``i`` has ``i + 1`` holes)."""
    cell = {}
    for i in range(side):
        for j in range(i + 1):
            cell[i, j] = len(cell)
    jumps = [(cell[i, j], cell[i + di, j + dj], cell[i + 2 * di, j + 2 * dj])
             for (i, j) in cell for di, dj in ((0, 1), (1, 0), (1, 1), (0, -1), (-1, 0), (-1, -1))
             if (i + 2 * di, j + 2 * dj) in cell]
    return np.array(jumps, dtype=np.int64)


def triangle_holes(side: int) -> np.ndarray:
    """Where each hole of a triangle of ``side`` rows is drawn, ``(x, y)``, in the order of :func:`triangle_jumps`."""
    return np.array([(j - i / 2, -i * 0.87) for i in range(side) for j in range(i + 1)])


def rectangle_holes(width: int, height: int) -> np.ndarray:
    """Where each hole of a ``width × height`` grid is drawn, ``(x, y)``, in the order of :func:`rectangle_jumps`."""
    return np.array([(x, -y) for y in range(height) for x in range(width)], dtype=float)


def draw(holes: np.ndarray, board: int, title: str):
    """A board as a picture: a filled disc per peg, a ring per empty hole."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2.4, 2.4))
    ax = fig.add_subplot()
    pegs = np.array([board >> c & 1 for c in range(len(holes))], dtype=bool)
    ax.scatter(holes[~pegs, 0], holes[~pegs, 1], s=160, facecolors="white", edgecolors="#4c566a")
    ax.scatter(holes[pegs, 0], holes[pegs, 1], s=160, color="#bf616a")
    ax.set_title(title, fontsize=8)
    ax.set_aspect("equal")
    ax.margins(0.15)
    if np.ptp(holes[:, 1]) == 0:  # one row of holes: give the discs room above and below
        ax.set_ylim(holes[0, 1] - 1, holes[0, 1] + 1)
    ax.axis("off")
    return fig


def rectangle_jumps(width: int, height: int) -> np.ndarray:
    """Jumps ``(from, over, to)`` along rows and columns of a ``width × height`` grid."""
    jumps = [(y * width + x, (y + dy) * width + x + dx, (y + 2 * dy) * width + x + 2 * dx)
             for y in range(height) for x in range(width) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))
             if 0 <= x + 2 * dx < width and 0 <= y + 2 * dy < height]
    return np.array(jumps, dtype=np.int64)


@njit(cache=True, nogil=True)
def _solve(n, k, jumps, prev, r0, r1, out, w0):
    """Set bit ``r - 64*w0`` of ``out`` for each solvable position of (colex) rank ``r`` in ``[r0, r1)``."""
    board = unrank_colex(r0, n, k)
    for r in range(r0, r1):
        for m in range(jumps.shape[0]):
            a = _ONE << np.uint64(jumps[m, 0])
            b = _ONE << np.uint64(jumps[m, 1])
            c = _ONE << np.uint64(jumps[m, 2])
            if board & a and board & b and not board & c:
                child = rank_colex(board ^ a ^ b ^ c)
                if (prev[child >> 6] >> np.uint64(child & 63)) & _ONE:
                    out[(r >> 6) - w0] |= _ONE << np.uint64(r & 63)
                    break
        board = next_colex(board, n, k)


def peg_space(name: str, holes: int, jumps: np.ndarray, where: np.ndarray | None = None) -> RetrogradeSpace:
    """The retrograde space of a board of ``holes`` holes (at most 62) and its jumps; ``where`` (one ``(x, y)`` per
    hole) lets reports draw its positions."""
    if not 2 <= holes <= 62:
        raise ValueError(f"a board needs 2..62 holes, got {holes}")
    def size(k: int) -> int:
        return math.comb(holes, k)

    def first_layer() -> tuple[np.ndarray]:
        words = np.zeros(-(-holes // 64), dtype=np.uint64)
        words[0] = np.uint64((1 << holes) - 1)  # every one-peg position is solved
        return (words,)

    def solve(k: int, previous: tuple[np.ndarray, ...], start: int, stop: int) -> tuple[np.ndarray]:
        out = np.zeros(stop - start, dtype=np.uint64)
        r0, r1 = 64 * start, min(64 * stop, size(k))
        if r0 < r1:
            _solve(holes, k, jumps, previous[0], r0, r1, out, start)
        return (out,)

    def describe(k: int, rank: int) -> str:
        board = int(unrank_colex(rank, holes, k))
        return "".join("o" if board >> c & 1 else "." for c in range(holes))

    def encode(text: str) -> tuple[int, int]:
        text = text.strip()
        if len(text) != holes or set(text) - {"o", "."}:
            raise ValueError(f"a position is {holes} holes written o (a peg) or . (empty), as describe writes "
                             f"them, got {text!r}")
        board = sum(1 << c for c, ch in enumerate(text) if ch == "o")
        if not board:
            raise ValueError("a position has at least one peg")
        return text.count("o"), int(rank_colex(np.uint64(board)))

    def render(k: int, rank: int):
        return draw(where, int(unrank_colex(rank, holes, k)), f"{k} pegs, rank {rank}")

    return RetrogradeSpace(name, size, first_layer, solve, last=holes - 1, describe=describe, encode=encode,
                           render=render if where is not None else None)


TRIANGLE4 = peg_space("peg solitaire, triangle of side 4", 10, triangle_jumps(4), triangle_holes(4))
TRIANGLE5 = peg_space("peg solitaire, triangle of side 5", 15, triangle_jumps(5), triangle_holes(5))
TRIANGLE6 = peg_space("peg solitaire, triangle of side 6", 21, triangle_jumps(6), triangle_holes(6))
RECT3X4 = peg_space("peg solitaire, 3x4 rectangle", 12, rectangle_jumps(3, 4), rectangle_holes(3, 4))
LINE11 = peg_space("peg solitaire, a line of 11 holes", 11, rectangle_jumps(11, 1), rectangle_holes(11, 1))


@retrograde_family
def triangle(side: int) -> RetrogradeSpace:
    """The triangle of ``side`` rows, for a job of several rows: ``rows = [{side = 4}, {side = 5}]``."""
    return peg_space(f"peg solitaire, triangle of side {side}", side * (side + 1) // 2, triangle_jumps(side),
                     triangle_holes(side))
