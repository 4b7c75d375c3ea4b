"""Slow, obviously-right Fling! solver for checking the kernels.

Boards are frozensets of ``(x, y)`` cells; moves walk cell by cell; a board's
solution count is found by plain depth-first search. Lexicographic order of
boards is ``itertools.combinations`` order of cell indices ``y * width + x``.
"""

from __future__ import annotations

import itertools
from functools import cache

STEPS = ((1, 0), (-1, 0), (0, 1), (0, -1))  # R, L, D, U


def fling(cells: frozenset, width: int, height: int, start: tuple[int, int], d: int) -> frozenset | None:
    """Cells after flinging the piece on ``start`` in direction ``d``, or None if illegal."""
    dx, dy = STEPS[d]

    def inside(p):
        return 0 <= p[0] < width and 0 <= p[1] < height

    def ahead(p):
        return (p[0] + dx, p[1] + dy)

    if start not in cells or not inside(ahead(start)) or ahead(start) in cells:
        return None
    rest = set(cells) - {start}
    pos = start
    p = ahead(pos)
    while inside(p) and p not in rest:
        p = ahead(p)
    if not inside(p):
        return None  # nothing to hit
    moving = start
    while True:
        # `moving` slides until the next cell is occupied or off the board
        pos = moving
        while inside(ahead(pos)) and ahead(pos) not in rest:
            pos = ahead(pos)
        if not inside(ahead(pos)):
            return frozenset(rest)  # leaves the board
        rest.add(pos)
        last = ahead(pos)
        while inside(ahead(last)) and ahead(last) in rest:
            last = ahead(last)
        rest.discard(last)
        moving = last


def moves(cells: frozenset, width: int, height: int) -> list[tuple[tuple[int, int], int, frozenset]]:
    """All legal ``(cell, direction, result)``."""
    out = []
    for c in sorted(cells, key=lambda p: (p[1], p[0])):
        for d in range(4):
            res = fling(cells, width, height, c, d)
            if res is not None:
                out.append((c, d, res))
    return out


def solutions(cells: frozenset, width: int, height: int) -> int:
    """Number of move sequences that leave one piece, not counting the choice of the last move."""

    @cache
    def count(b: frozenset) -> int:
        if len(b) == 1:
            return 1
        ms = moves(b, width, height)
        if len(b) == 2:
            return 1 if ms else 0
        return sum(count(res) for _, _, res in ms)

    return count(frozenset(cells))


def cells_of(combo, width: int) -> frozenset:
    return frozenset((c % width, c // width) for c in combo)


def layer(width: int, height: int, k: int) -> tuple[list[bool], list[bool]]:
    """(solvable, unique) for every board of ``k`` pieces, in lexicographic rank order."""
    solvable, unique = [], []
    for combo in itertools.combinations(range(width * height), k):
        c = solutions(cells_of(combo, width), width, height)
        solvable.append(c >= 1)
        unique.append(c == 1)
    return solvable, unique


def pack(bits: list[bool]) -> list[int]:
    """Bit ``r % 64`` of word ``r // 64`` = ``bits[r]``."""
    words = [0] * (-(-len(bits) // 64))
    for r, b in enumerate(bits):
        if b:
            words[r // 64] |= 1 << (r % 64)
    return words


def tree_sizes(cells: frozenset, width: int, height: int) -> tuple[int, int]:
    """(brute-force tree nodes, expert tree nodes), by unmemoised recursion.

    Expert: after move ``m1`` from board ``b0``, a move ``m2`` is skipped when
    it was legal on ``b0`` and playing it first, then ``m1``, reaches the same board.
    """

    def brute(b):
        if len(b) == 1:
            return 1
        return 1 + sum(brute(res) for _, _, res in moves(b, width, height))

    def expert(b0, m1, b1):
        if len(b1) == 1:
            return 1
        total = 1
        for c, d, res in moves(b1, width, height):
            if m1 is not None:
                first = fling(b0, width, height, c, d)
                if first is not None and fling(first, width, height, *m1) == res:
                    continue
            total += expert(b1, (c, d), res)
        return total

    b = frozenset(cells)
    return brute(b), expert(None, None, b)


def symmetries(width: int, height: int) -> list:
    """Every symmetry of the board as a map of ``(x, y)`` cells, identity first."""
    w1, h1 = width - 1, height - 1
    maps = [lambda x, y: (x, y), lambda x, y: (w1 - x, y), lambda x, y: (x, h1 - y), lambda x, y: (w1 - x, h1 - y)]
    if width == height:
        maps += [lambda x, y: (y, x), lambda x, y: (w1 - y, h1 - x), lambda x, y: (w1 - y, x), lambda x, y: (y, h1 - x)]
    return maps


def orbit(combo, width: int, height: int) -> set[tuple[int, ...]]:
    """The sorted cell tuples of every image of a board (a tuple of cell indices)."""
    out = set()
    for g in symmetries(width, height):
        out.add(tuple(sorted(y * width + x for x, y in (g(c % width, c // width) for c in combo))))
    return out


def canonical_layer(width: int, height: int, k: int) -> list[bool]:
    """For every board of ``k`` pieces in rank order: is it the first of its orbit in rank order?"""
    return [tuple(combo) == min(orbit(combo, width, height))
            for combo in itertools.combinations(range(width * height), k)]
