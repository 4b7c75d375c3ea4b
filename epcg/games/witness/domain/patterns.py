"""Witness patterns: when two panels are the same puzzle for a designer.

A panel's symmetries are the maps of the grid that keep the start and the
goal, or swap them (a path walked backwards is a path): the half turn, and on
a square panel the mirror in the diagonal through the start and goal and its
product with the half turn. Two panels have the same *pattern* when some
symmetry maps the set of paths solving one onto the set solving the other: a
player sees the same solution (for a single-solution panel, the same path
shape), however the hexagons and squares that force it are placed. Written as
moves, the half turn reverses a path's moves (each step, turned and walked
backwards, is itself) and the diagonal swaps ``R`` with ``U`` and ``L`` with
``D``. A panel's *orbit* is its images under the same maps (hexagons and
squares moved, square colours swapped when the lowest square turns white: the
same regions separate).

>>> pattern_key(3, 3, ["RRRUUU"]) == pattern_key(3, 3, ["UUURRR"])
True
>>> pattern_key(3, 3, ["RRUURU"]), pattern_key(3, 3, [])
('RRUURU', 'unsolvable')
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from epcg.games.witness.domain.geometry import Geometry
from epcg.games.witness.domain.puzzles import Puzzle

__all__ = ["orbit", "pattern_key", "symmetries"]

_DIAGONAL = str.maketrans("RULD", "URDL")


def symmetries(width: int, height: int) -> tuple[int, ...]:
    """The panel's symmetries as numbers: bit 0 the half turn, bit 1 the diagonal mirror (square panels)."""
    return (0, 1, 2, 3) if width == height else (0, 1)


def _moves(moves: str, t: int) -> str:
    if t & 1:
        moves = moves[::-1]
    if t & 2:
        moves = moves.translate(_DIAGONAL)
    return moves


def pattern_key(width: int, height: int, solutions: Sequence[str]) -> str:
    """The pattern of a panel whose solving paths are ``solutions`` (as moves): its one path in its least
    orientation, ``"unsolvable"``, or for several the count and a digest of the least sorted set."""
    if not solutions:
        return "unsolvable"
    least = min(tuple(sorted(_moves(s, t) for s in solutions)) for t in symmetries(width, height))
    if len(least) == 1:
        return least[0]
    return f"{len(least)} paths {hashlib.sha256(','.join(least).encode()).hexdigest()[:16]}"


def _vertex(g: Geometry, v: int, t: int) -> int:
    x, y = g.vertex_xy(v)
    if t & 1:
        x, y = g.width - x, g.height - y
    if t & 2:
        x, y = y, x
    return g.vertex(x, y)


def _image(p: Puzzle, t: int) -> Puzzle:
    """``p`` under symmetry ``t``, its squares recoloured so that the lowest is black."""
    g = p.geometry
    cross = []
    for pos in p.cross:
        if pos < g.num_vertices:
            cross.append(_vertex(g, pos, t))
        else:
            a, b = g.edge_vertices(pos - g.num_vertices)
            cross.append(g.num_vertices + g.edge_between(_vertex(g, a, t), _vertex(g, b, t)))
    squares = []
    for cell, colour in zip(p.cells, p.colours):
        x, y = g.cell_xy(cell)
        if t & 1:
            x, y = g.width - 1 - x, g.height - 1 - y
        if t & 2:
            x, y = y, x
        squares.append((g.cell(x, y), colour))
    squares.sort()
    flip = squares[0][1] if squares else 0
    return Puzzle(p.width, p.height, tuple(sorted(cross)), tuple(c for c, _ in squares),
                  tuple(colour ^ flip for _, colour in squares))


def orbit(p: Puzzle) -> list[Puzzle]:
    """The distinct images of ``p`` under the panel's symmetries, ``p`` (recoloured) first."""
    out: list[Puzzle] = []
    for t in symmetries(p.width, p.height):
        image = _image(p, t)
        if image not in out:
            out.append(image)
    return out
