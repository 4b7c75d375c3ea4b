"""Count start-to-goal paths without listing them: a frontier dynamic programme (Knuth's SIMPATH).

The grid's edges are processed one at a time, each either used by the path or
not. Between two edges only the *frontier* matters: the vertices touched by a
processed edge and by an unprocessed one. A frontier state gives each of those
vertices one value:

- ``FREE``: no path edge yet;
- ``DONE``: takes no more edges (an inner vertex of degree 2, or the start or
  goal once it has its single edge);
- a *label* ``>= S``: one end of a path fragment that still needs an edge.
  ``S`` is the fragment hanging from the start, ``T`` the one from the goal;
  the two ends of any other fragment share a label ``>= 4``. The start and goal
  enter the frontier as ends of empty fragments (``S`` and ``T``).

Using an edge joins ends; joining the two ends of one fragment would close a
cycle and is refused; joining ``S`` to ``T`` completes the path, allowed only
when no other fragment is open, after which no further edge may be used. A
vertex leaving the frontier must not be an open end. Paths that differ only in
the order of processing land in the same state, so each state carries the
number of partial paths reaching it (a Python int: exact at any size).

Must-cross constraints are applied inside the programme: a required edge may
not be skipped, a required vertex must leave the frontier ``DONE``.

The edges are swept across the shorter side, so the frontier holds about
``min(width, height) + 2`` vertices. Index conventions (vertices, edges and
must-cross positions) are those of ``geometry.py``, for any board size.

>>> [count_paths(n, n) for n in range(1, 6)]
[2, 12, 184, 8512, 1262816]
>>> count_paths(3, 3, cross=[5]), count_paths(2, 3, cross=[12, 25])
(152, 7)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from epcg.domains.witness.geometry import Geometry

__all__ = ["FREE", "DONE", "S", "T", "GridGraph", "count_paths", "count_paths_by_step"]

FREE, DONE, S, T = 0, 1, 2, 3
_FIRST_LABEL = 4

State = tuple[int, ...]


@dataclass(frozen=True)
class GridGraph(Geometry):
    """The index conventions of :class:`Geometry` on a ``width × height`` panel of any size
    (counting never lists paths, so the path-listing size limit does not apply).

    >>> g = GridGraph(2, 1)
    >>> g.num_vertices, g.num_edges, g.num_positions, g.goal
    (6, 7, 13, 5)
    >>> g.edge_vertices(0), g.edge_vertices(4)
    ((0, 1), (0, 3))
    """

    def __post_init__(self) -> None:
        if self.width < 1 or self.height < 1:
            raise ValueError(f"board {self.width}x{self.height}: width and height must be at least 1")

    def sweep(self) -> list[int]:
        """Edge indices in processing order: vertex by vertex along the longer side.

        >>> GridGraph(2, 1).sweep()
        [4, 0, 2, 5, 1, 3, 6]
        """
        w, h = self.width, self.height
        if w <= h:  # row by row: the frontier spans a row
            cells = [(x, y) for y in range(h + 1) for x in range(w + 1)]
        else:  # column by column
            cells = [(x, y) for x in range(w + 1) for y in range(h + 1)]
        order = []
        for x, y in cells:
            steps = ((0, 1), (1, 0)) if w > h else ((1, 0), (0, 1))
            for dx, dy in steps:
                if x + dx <= w and y + dy <= h:
                    order.append(self._edge(x, y, x + dx, y + dy))
        return order

    def _edge(self, ax: int, ay: int, bx: int, by: int) -> int:
        if ay == by:
            return ay * self.width + min(ax, bx)
        return self.num_horizontal_edges + min(ay, by) * (self.width + 1) + ax


def _canonical(state: list[int]) -> State:
    """Renumber the labels ``>= 4`` in order of first appearance."""
    names: dict[int, int] = {}
    out = []
    for x in state:
        if x >= _FIRST_LABEL:
            x = names.setdefault(x, _FIRST_LABEL + len(names))
        out.append(x)
    return tuple(out)


def _use(state: State, i: int, j: int) -> list[int] | None:
    """The state after using the edge between frontier slots ``i`` and ``j``, or None if illegal."""
    a, b = state[i], state[j]
    if a == DONE or b == DONE or max(state) < S:  # a full vertex, or the path is complete
        return None
    out = list(state)
    if a == FREE and b == FREE:  # a new fragment
        out[i] = out[j] = max(max(state) + 1, _FIRST_LABEL)
    elif a == FREE:  # extend the fragment ending at j
        out[i], out[j] = b, DONE
    elif b == FREE:
        out[i], out[j] = DONE, a
    elif a == b:  # both ends of one fragment: a cycle
        return None
    else:
        out[i] = out[j] = DONE
        if {a, b} == {S, T}:  # the path is complete: no other fragment may be open
            return None if max(out) >= S else out
        keep, drop = (a, b) if a < b else (b, a)  # S and T outrank other labels
        out[out.index(drop)] = keep  # the far end of the dropped fragment
    return out


def count_paths_by_step(width: int, height: int, cross: Iterable[int] = ()) -> Iterator[tuple[int, int]]:
    """Run the programme, yielding ``(edges processed, live states)`` after each edge; returns the count.

    Use ``count_paths`` for the count; this generator exists so benchmarks can
    report the frontier's width.
    """
    g = GridGraph(width, height)
    required = set(int(p) for p in cross)
    if any(not 0 <= p < g.num_positions for p in required):
        raise ValueError(f"must-cross positions must be 0..{g.num_positions - 1}, got {sorted(required)}")
    order = g.sweep()
    last: dict[int, int] = {}
    for step, e in enumerate(order):
        for v in g.edge_vertices(e):
            last[v] = step
    frontier: list[int] = []
    states: dict[State, int] = {(): 1}
    for step, e in enumerate(order):
        for v in g.edge_vertices(e):
            if v not in frontier:
                frontier.append(v)
                start = S if v == g.start else T if v == g.goal else FREE
                states = {s + (start,): n for s, n in states.items()}
        a, b = g.edge_vertices(e)
        i, j = frontier.index(a), frontier.index(b)
        must_use = g.num_vertices + e in required
        nxt: dict[State, int] = defaultdict(int)
        for s, n in states.items():
            if not must_use:
                nxt[s] += n
            used = _use(s, i, j)
            if used is not None:
                nxt[_canonical(used)] += n
        for v in (a, b):
            if last[v] != step:
                continue
            k = frontier.index(v)
            allowed = (DONE,) if v in required else (FREE, DONE)
            left: dict[State, int] = defaultdict(int)
            for s, n in nxt.items():
                if s[k] in allowed:
                    left[_canonical(list(s[:k] + s[k + 1:]))] += n
            nxt = left
            frontier.pop(k)
        states = nxt
        yield step + 1, len(states)
    return states.get((), 0)


def count_paths(width: int, height: int, cross: Iterable[int] = ()) -> int:
    """Number of start-to-goal paths on a ``width × height`` panel crossing every position in ``cross``."""
    run = count_paths_by_step(width, height, cross)
    while True:
        try:
            next(run)
        except StopIteration as stop:
            return stop.value
