"""When two panels of a rules row are the same puzzle for a designer: the same set of solving paths up to the
row's symmetries.

A symmetry of a row is a map of the board (a half turn, a mirror, on a square
board a quarter turn or a diagonal mirror) that keeps its start places and its
exit places, or swaps the two sets; in the second case each path is walked
backwards, since it must still begin at a start. Two panels have the same
*pattern* when one such map takes the set of paths solving one onto the set
solving the other, whatever symbols force it.

>>> from epcg.games.witness.domain.geometry import Geometry
>>> g = Geometry(2, 2)
>>> right_then_up = (0, 1, 2, 5, 8)
>>> up_then_right = (0, 3, 6, 7, 8)
>>> pattern(g, (0,), (8,), [right_then_up]) == pattern(g, (0,), (8,), [up_then_right])
True
>>> pattern(g, (0,), (8,), [right_then_up])
'(0,0)(0,1)(0,2)(1,2)(2,2)'
>>> pattern(g, (0,), (8,), [])
'unsolvable'
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from epcg.games.witness.domain.geometry import Geometry

__all__ = ["pattern", "symmetries"]

Map = Callable[[int, int], tuple[int, int]]


def _maps(w: int, h: int) -> list[Map]:
    """The maps of a ``w`` x ``h`` board onto itself, identity first."""
    out: list[Map] = [lambda x, y: (x, y), lambda x, y: (w - x, h - y), lambda x, y: (w - x, y),
                      lambda x, y: (x, h - y)]
    if w == h:
        out += [lambda x, y: (y, x), lambda x, y: (w - y, w - x), lambda x, y: (w - y, x),
                lambda x, y: (y, w - x)]
    return out


def symmetries(g: Geometry, starts: Sequence[int], exits: Sequence[int]) -> list[tuple[Map, bool]]:
    """The row's symmetries: each map of the board that keeps the start and exit places (``False``: paths keep
    their direction) or swaps them (``True``: paths are walked backwards)."""
    S, X = frozenset(starts), frozenset(exits)
    out = []
    for f in _maps(g.width, g.height):
        image = {v: g.vertex(*f(*g.vertex_xy(v))) for v in S | X}
        S2, X2 = frozenset(image[v] for v in S), frozenset(image[v] for v in X)
        if (S2, X2) == (S, X):
            out.append((f, False))
        elif (S2, X2) == (X, S):
            out.append((f, True))
    return out


def pattern(g: Geometry, starts: Sequence[int], exits: Sequence[int], solutions: Sequence[Sequence[int]]) -> str:
    """The pattern of a panel of a row with these start and exit places whose solving paths (vertex sequences)
    are ``solutions``: ``"unsolvable"``, its one path in its least image (vertices ``(x,y)``), or for several the
    count and a digest of the least sorted set of images."""
    if not solutions:
        return "unsolvable"
    least = None
    for f, backwards in symmetries(g, starts, exits):
        paths = []
        for path in solutions:
            points = [f(*g.vertex_xy(v)) for v in path]
            paths.append(tuple(points[::-1] if backwards else points))
        image = tuple(sorted(paths))
        if least is None or image < least:
            least = image
    assert least is not None  # the identity is always a symmetry
    if len(least) == 1:
        return "".join(f"({x},{y})" for x, y in least[0])
    text = ";".join("".join(f"({x},{y})" for x, y in p) for p in least)
    return f"{len(least)} paths {hashlib.sha256(text.encode()).hexdigest()[:16]}"
