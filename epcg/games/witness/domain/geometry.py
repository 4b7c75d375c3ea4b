"""Index conventions of a Witness panel: vertices, edges, cells and must-cross positions.

A ``w×h`` panel has ``w×h`` cells and ``(w+1)×(h+1)`` vertices. The path starts
at vertex (0, 0), bottom left, and ends at vertex (w, h), top right. ``y`` grows
upwards. Every index below is a plain int so kernels can use them directly.

- vertex ``(x, y)``: ``y*(w+1) + x``
- horizontal edge from ``(x, y)`` to ``(x+1, y)``: ``y*w + x`` (``w*(h+1)`` of them)
- vertical edge from ``(x, y)`` to ``(x, y+1)``: ``w*(h+1) + y*(w+1) + x``
- cell ``(x, y)`` (corners ``(x, y)`` to ``(x+1, y+1)``): ``y*w + x``
- must-cross position: vertices first (``0 .. V-1``), then edges (``V + edge``),
  ``3wh + 2w + 2h + 1`` in all.

>>> g = Geometry(3, 3)
>>> g.num_vertices, g.num_edges, g.num_positions, g.num_cells
(16, 24, 40, 9)
>>> g.vertex(3, 3), g.start, g.goal
(15, 0, 15)
>>> g.edge_between(g.vertex(0, 0), g.vertex(0, 1))
12
>>> g.position_name(g.num_vertices + 12)
'edge (0,0)-(0,1)'
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

MAX_SIDE = 5
"""Largest supported width or height: 5×5 has 1,262,816 paths; 6×6 has 5.8e8."""


@dataclass(frozen=True)
class Geometry:
    """Sizes and index maps of one ``width × height`` panel."""

    width: int
    height: int

    def __post_init__(self) -> None:
        if not (1 <= self.width <= MAX_SIDE and 1 <= self.height <= MAX_SIDE):
            raise ValueError(
                f"board {self.width}x{self.height} is not supported: "
                f"width and height must be 1..{MAX_SIDE}"
            )

    @property
    def num_vertices(self) -> int:
        return (self.width + 1) * (self.height + 1)

    @property
    def num_horizontal_edges(self) -> int:
        return self.width * (self.height + 1)

    @property
    def num_edges(self) -> int:
        return self.num_horizontal_edges + (self.width + 1) * self.height

    @property
    def num_cells(self) -> int:
        return self.width * self.height

    @property
    def num_positions(self) -> int:
        """Places a must-cross constraint can sit: every vertex and every edge."""
        return self.num_vertices + self.num_edges

    @property
    def start(self) -> int:
        return self.vertex(0, 0)

    @property
    def goal(self) -> int:
        return self.vertex(self.width, self.height)

    def vertex(self, x: int, y: int) -> int:
        return y * (self.width + 1) + x

    def vertex_xy(self, v: int) -> tuple[int, int]:
        return v % (self.width + 1), v // (self.width + 1)

    def cell(self, x: int, y: int) -> int:
        return y * self.width + x

    def cell_xy(self, c: int) -> tuple[int, int]:
        return c % self.width, c // self.width

    def edge_between(self, a: int, b: int) -> int:
        """Edge index joining two neighbouring vertices (in either order)."""
        (ax, ay), (bx, by) = self.vertex_xy(a), self.vertex_xy(b)
        if ay == by and abs(ax - bx) == 1:
            return ay * self.width + min(ax, bx)
        if ax == bx and abs(ay - by) == 1:
            return self.num_horizontal_edges + min(ay, by) * (self.width + 1) + ax
        raise ValueError(f"vertices {a} and {b} are not neighbours")

    def edge_vertices(self, e: int) -> tuple[int, int]:
        """The two vertices of edge ``e``, lower index first."""
        if e < self.num_horizontal_edges:
            y, x = divmod(e, self.width)
            return self.vertex(x, y), self.vertex(x + 1, y)
        y, x = divmod(e - self.num_horizontal_edges, self.width + 1)
        return self.vertex(x, y), self.vertex(x, y + 1)

    def position_name(self, p: int) -> str:
        """Human-readable name of a must-cross position."""
        if p < self.num_vertices:
            x, y = self.vertex_xy(p)
            return f"vertex ({x},{y})"
        a, b = self.edge_vertices(p - self.num_vertices)
        (ax, ay), (bx, by) = self.vertex_xy(a), self.vertex_xy(b)
        return f"edge ({ax},{ay})-({bx},{by})"

    @cached_property
    def neighbours(self) -> np.ndarray:
        """``(V, 4)`` int64: neighbour vertex to the right, up, left, down, or -1."""
        out = np.full((self.num_vertices, 4), -1, dtype=np.int64)
        for v in range(self.num_vertices):
            x, y = self.vertex_xy(v)
            for d, (dx, dy) in enumerate(DIRECTIONS):
                nx, ny = x + dx, y + dy
                if 0 <= nx <= self.width and 0 <= ny <= self.height:
                    out[v, d] = self.vertex(nx, ny)
        return out


DIRECTIONS: tuple[tuple[int, int], ...] = ((1, 0), (0, 1), (-1, 0), (0, -1))
"""Move order of path enumeration: right, up, left, down."""

MOVE_LETTERS = "RULD"
"""Letter of each direction in ``DIRECTIONS``, as in the paper's 'URDRUURU'."""
