"""Symmetries of a Witness panel that keep the pair {start, goal}, acting on must-cross positions.

A path from (0, 0) to (w, h) maps to a path between the same two corners under
the half turn ``(x, y) -> (w-x, h-y)`` (read backwards it runs start to goal
again) and, on a square board, under both diagonal reflections. So these maps
keep every puzzle's number of solutions; panels related by one of them are one
design drawn twice.

>>> g = Geometry(2, 2)
>>> len(position_maps(g)), len(position_maps(Geometry(3, 2)))
(4, 2)
>>> [int(m[g.vertex(1, 0)]) for m in position_maps(g)]   # identity, half turn, transpose, anti-transpose
[1, 7, 3, 5]
>>> orbit_key(g, (1, 9))
(1, 9)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from epcg.games.witness.domain.geometry import Geometry

__all__ = ["orbit_key", "point_maps", "position_maps", "vertex_maps"]


def point_maps(g: Geometry) -> list[Callable[[int, int], tuple[int, int]]]:
    """Maps of grid points: identity, half turn, and on a square board the two diagonal reflections."""
    w, h = g.width, g.height
    maps: list[Callable[[int, int], tuple[int, int]]] = [lambda x, y: (x, y), lambda x, y: (w - x, h - y)]
    if w == h:
        maps += [lambda x, y: (y, x), lambda x, y: (w - y, w - x)]
    return maps


def vertex_maps(g: Geometry) -> list[np.ndarray]:
    """Each symmetry as an int64 array: image of every vertex."""
    out = []
    for f in point_maps(g):
        out.append(np.array([g.vertex(*f(*g.vertex_xy(v))) for v in range(g.num_vertices)], dtype=np.int64))
    return out


def position_maps(g: Geometry) -> list[np.ndarray]:
    """Each symmetry as an int64 array: image of every must-cross position."""
    out = []
    for vm in vertex_maps(g):
        m = np.empty(g.num_positions, dtype=np.int64)
        m[: g.num_vertices] = vm
        for e in range(g.num_edges):
            a, b = g.edge_vertices(e)
            m[g.num_vertices + e] = g.num_vertices + g.edge_between(int(vm[a]), int(vm[b]))
        out.append(m)
    return out


def orbit_key(g: Geometry, positions: Sequence[int], maps: list[np.ndarray] | None = None) -> tuple[int, ...]:
    """The smallest sorted image of a set of positions: equal for symmetric panels."""
    maps = position_maps(g) if maps is None else maps
    return min(tuple(sorted(int(m[p]) for p in positions)) for m in maps)
