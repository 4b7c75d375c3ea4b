"""Every path of a panel, enumerated once per board size.

A path runs from vertex (0, 0) to vertex (w, h) along grid edges and never
visits a vertex twice. A numba DFS tries the moves in ``DIRECTIONS`` order
(right, up, left, down) and cuts a walk as soon as the goal is unreachable.
The ``PathSet`` stores the paths **longest first**, ties in DFS order, so the
lowest path index in any solution set is a longest solution.

>>> ps = paths_for(2, 2)
>>> len(ps), ps.moves(0), ps.moves(len(ps) - 1)
(12, 'RRULLURR', 'UURR')
>>> ps.path(len(ps) - 1), int(ps.length[0])
((0, 3, 6, 7, 8), 8)
>>> [len(paths_for(w, h)) for w, h in ((2, 3), (3, 3), (3, 4))]
[38, 184, 976]
>>> ps.regions[len(ps) - 1].tolist(), ps.regions[0].tolist()   # UURR: one region; RRULLURR: two
([0, 0, 0, 0], [0, 0, 1, 1])
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL
from epcg.games.witness.domain.geometry import DIRECTIONS, MOVE_LETTERS, Geometry

CROSS_WORDS = 2
"""uint64 words of a must-cross position mask: positions <= 96 on a 5×5 panel."""

_ONE = np.uint64(1)


@njit(**KERNEL)
def _goal_reachable(v, goal, neighbours, visited, queue, seen):
    """True when ``goal`` can be reached from ``v`` through unvisited vertices."""
    seen[:] = False
    seen[v] = True
    queue[0] = v
    head, tail = 0, 1
    while head < tail:
        u = queue[head]
        head += 1
        for d in range(4):
            x = neighbours[u, d]
            if x < 0 or visited[x] or seen[x]:
                continue
            if x == goal:
                return True
            seen[x] = True
            queue[tail] = x
            tail += 1
    return False


@njit(**KERNEL)
def _enumerate(neighbours, move_edges, goal, num_vertices, fill, vertices, length, vertex_mask, cross_mask,
               start=0):
    """DFS over all paths from vertex ``start`` to ``goal``; returns their number.

    With ``fill`` it writes path ``i`` (DFS order) to row ``i`` of the outputs:
    padded vertex sequence (-1 after the goal), edge count, vertex bitmask and
    must-cross mask (vertex ``v`` is bit ``v``, edge ``e`` is bit ``num_vertices + e``).
    Unchecked: outputs sized to the count from a ``fill=False`` run.
    """
    seq = np.zeros(num_vertices, dtype=np.int64)
    dirs = np.zeros(num_vertices, dtype=np.int64)
    visited = np.zeros(num_vertices, dtype=np.bool_)
    queue = np.zeros(num_vertices, dtype=np.int64)
    seen = np.zeros(num_vertices, dtype=np.bool_)
    count = 0
    depth = 0
    seq[0] = start
    visited[start] = True
    while depth >= 0:
        v = seq[depth]
        if v == goal:
            if fill:
                for i in range(depth + 1):
                    u = seq[i]
                    vertices[count, i] = u
                    vertex_mask[count] |= _ONE << np.uint64(u)
                    cross_mask[count, u >> 6] |= _ONE << np.uint64(u & 63)
                    if i > 0:
                        w = seq[i - 1]
                        for d in range(4):
                            if neighbours[w, d] == u:
                                p = num_vertices + move_edges[w, d]
                                cross_mask[count, p >> 6] |= _ONE << np.uint64(p & 63)
                length[count] = depth
            count += 1
            visited[v] = False
            depth -= 1
            continue
        d = dirs[depth]
        if d == 4:
            visited[v] = False
            depth -= 1
            continue
        dirs[depth] = d + 1
        u = neighbours[v, d]
        if u < 0 or visited[u]:
            continue
        visited[u] = True
        if u != goal and not _goal_reachable(u, goal, neighbours, visited, queue, seen):
            visited[u] = False
            continue
        depth += 1
        seq[depth] = u
        dirs[depth] = 0
    return count


@njit(**KERNEL)
def _label_regions(cross_mask, num_vertices, cell_adjacent, out):
    """``out[s, c]``: region of cell ``c`` under path ``s``, numbered by lowest cell.

    ``cell_adjacent[c, d] = (other cell, edge between them)`` or ``(-1, -1)``.
    Two neighbouring cells share a region unless their edge is on the path.
    """
    cells = cell_adjacent.shape[0]
    stack = np.zeros(cells, dtype=np.int64)
    for s in range(cross_mask.shape[0]):
        out[s, :] = 255
        label = 0
        for c0 in range(cells):
            if out[s, c0] != 255:
                continue
            out[s, c0] = label
            stack[0] = c0
            top = 1
            while top > 0:
                top -= 1
                c = stack[top]
                for d in range(4):
                    o = cell_adjacent[c, d, 0]
                    if o < 0 or out[s, o] != 255:
                        continue
                    p = num_vertices + cell_adjacent[c, d, 1]
                    if (cross_mask[s, p >> 6] >> np.uint64(p & 63)) & _ONE:
                        continue
                    out[s, o] = label
                    stack[top] = o
                    top += 1
            label += 1


def _move_edges(g: Geometry) -> np.ndarray:
    """``(V, 4)`` int64: edge index of the move in each direction, or -1."""
    out = np.full((g.num_vertices, 4), -1, dtype=np.int64)
    for v in range(g.num_vertices):
        for d in range(4):
            u = g.neighbours[v, d]
            if u >= 0:
                out[v, d] = g.edge_between(v, int(u))
    return out


def _cell_adjacent(g: Geometry) -> np.ndarray:
    """``(C, 4, 2)`` int64: neighbouring cell in each direction and the edge between, or -1."""
    out = np.full((g.num_cells, 4, 2), -1, dtype=np.int64)
    for c in range(g.num_cells):
        x, y = g.cell_xy(c)
        for d, (dx, dy) in enumerate(DIRECTIONS):
            nx, ny = x + dx, y + dy
            if not (0 <= nx < g.width and 0 <= ny < g.height):
                continue
            if dx:  # shared vertical edge at x' = max(x, nx)
                xe = max(x, nx)
                edge = g.edge_between(g.vertex(xe, y), g.vertex(xe, y + 1))
            else:  # shared horizontal edge at y' = max(y, ny)
                ye = max(y, ny)
                edge = g.edge_between(g.vertex(x, ye), g.vertex(x + 1, ye))
            out[c, d] = (g.cell(nx, ny), edge)
    return out


def moves(geometry: Geometry, vertices: Sequence[int]) -> str:
    """A vertex sequence as move letters ``R U L D``.

    >>> moves(Geometry(2, 2), [0, 3, 4, 5, 8])
    'URRU'
    """
    out = []
    for a, b in zip(vertices, vertices[1:]):
        (ax, ay), (bx, by) = geometry.vertex_xy(int(a)), geometry.vertex_xy(int(b))
        out.append(MOVE_LETTERS[DIRECTIONS.index((bx - ax, by - ay))])
    return "".join(out)


@dataclass(frozen=True, eq=False)
class PathSet:
    """All paths of one board, longest first (ties in DFS order). Arrays are read-only."""

    geometry: Geometry
    vertices: np.ndarray
    """``(P, V)`` int8: vertex sequence of each path from start to goal, padded with -1."""
    length: np.ndarray
    """``(P,)`` uint8: edges of each path (non-increasing)."""
    vertex_mask: np.ndarray
    """``(P,)`` uint64: bit ``v`` set when the path visits vertex ``v``."""
    cross_mask: np.ndarray
    """``(P, CROSS_WORDS)`` uint64: must-cross positions on the path, bit ``p % 64`` of word ``p // 64``."""
    regions: np.ndarray
    """``(P, C)`` uint8: region label of each cell, regions numbered in order of their lowest cell."""

    def __len__(self) -> int:
        return int(self.length.shape[0])

    def path(self, i: int) -> tuple[int, ...]:
        """Vertex sequence of path ``i``."""
        return tuple(int(v) for v in self.vertices[i, : int(self.length[i]) + 1])

    def moves(self, i: int) -> str:
        """Path ``i`` as move letters, e.g. ``'URRU'``."""
        return moves(self.geometry, self.path(i))

    def crosses(self, i: int) -> tuple[int, ...]:
        """Must-cross positions on path ``i``, ascending."""
        bits = [int(w) for w in self.cross_mask[i]]
        return tuple(p for p in range(self.geometry.num_positions) if (bits[p >> 6] >> (p & 63)) & 1)


_BUILD_LOCK = threading.Lock()
BUILD_SECONDS: dict[tuple[int, int], float] = {}
"""CPU seconds this process took to list each board's paths (set when a board is first listed)."""


def paths_for(width: int, height: int) -> PathSet:
    """All paths of a ``width × height`` panel, computed once per process (thread-safe)."""
    Geometry(width, height)  # validate before taking the lock
    with _BUILD_LOCK:  # Dask worker threads share the process: build each board once
        return _build(int(width), int(height))


@cache
def _build(width: int, height: int) -> PathSet:
    began = time.thread_time()
    g = Geometry(width, height)
    nb = np.ascontiguousarray(g.neighbours)
    me = _move_edges(g)
    V = g.num_vertices
    assert g.num_positions <= 64 * CROSS_WORDS
    empty2 = np.zeros((0, 0), dtype=np.int8)
    n = _enumerate(nb, me, g.goal, V, False, empty2, np.zeros(0, np.uint8),
                   np.zeros(0, np.uint64), np.zeros((0, CROSS_WORDS), np.uint64))
    vertices = np.full((n, V), -1, dtype=np.int8)
    length = np.zeros(n, dtype=np.uint8)
    vertex_mask = np.zeros(n, dtype=np.uint64)
    cross_mask = np.zeros((n, CROSS_WORDS), dtype=np.uint64)
    _enumerate(nb, me, g.goal, V, True, vertices, length, vertex_mask, cross_mask)
    order = np.argsort(-length.astype(np.int64), kind="stable")
    vertices, length = vertices[order], length[order]
    vertex_mask, cross_mask = vertex_mask[order], cross_mask[order]
    regions = np.zeros((n, g.num_cells), dtype=np.uint8)
    _label_regions(cross_mask, V, _cell_adjacent(g), regions)
    for a in (vertices, length, vertex_mask, cross_mask, regions):
        a.flags.writeable = False
    BUILD_SECONDS[width, height] = time.thread_time() - began
    return PathSet(g, vertices, length, vertex_mask, cross_mask, regions)
