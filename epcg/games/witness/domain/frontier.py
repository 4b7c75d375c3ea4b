"""Count start-to-goal paths without listing them: a frontier dynamic programme (Knuth's SIMPATH) in numba.

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
number of partial paths reaching it.

A state is one ``uint64``: four bits per frontier slot (slot ``k`` in bits
``4k .. 4k+3``), labels ``>= 4`` renumbered in order of first appearance, so
equal states are equal integers. The frontier holds ``min(width, height) + 2``
vertices at most, so sixteen slots count any board up to 14 cells on its
shorter side. The live states of one step sit in one array, a row per state
(its key, then its count). A step writes every state's successors in order,
partitions them by hash into buckets of a few thousand (passes that read and
write memory in sequence), and merges each bucket's equal states in an
open-addressing hash table small enough to stay in the processor's cache: no
Python object per state, and no random access to memory larger than a cache.

Counts are exact: each is ``limbs`` unsigned 64-bit words (little-endian
base 2^64) added with carries. The programme starts with the fewest words
that hold the board's estimated count (one word up to 8×8, which has
3.3e15 paths) and, if any addition carries out of the top word, runs again
with one more, so a count is never wrapped and 64-bit words are used
wherever they suffice.

Must-cross constraints are applied inside the programme: a required edge may
not be skipped, a required vertex must leave the frontier ``DONE``.

Index conventions (vertices, edges and must-cross positions) are those of
``geometry.py``, for any board size.

>>> [count_paths(n, n) for n in range(1, 6)]
[2, 12, 184, 8512, 1262816]
>>> count_paths(3, 3, cross=[5]), count_paths(2, 3, cross=[12, 25])
(152, 7)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numba import njit

from epcg.combinatorics.jit import INLINE, KERNEL
from epcg.games.witness.domain.geometry import Geometry

__all__ = ["FREE", "DONE", "S", "T", "MAX_SLOTS", "GridGraph", "FrontierRun", "count_paths", "frontier_run"]

FREE, DONE, S, T = 0, 1, 2, 3
_FIRST_LABEL = 4
MAX_SLOTS = 16
"""Frontier vertices one ``uint64`` state holds (four bits each)."""

_EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)  # no valid state: a label appears at most twice
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_NIBBLE = np.uint64(15)
_ENDS = np.uint64(0xEEEEEEEEEEEEEEEE)  # a nibble meets this mask only if its value is >= S
_BUCKET = 2048  # successors merged at a time, at most about


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


@dataclass(frozen=True)
class _Schedule:
    """Per edge step, what the kernel does to every state, as int64 arrays of one entry per step.

    ``enter``: bits ORed into every state (new vertices appended at the top slots);
    ``i, j``: the edge's slots; ``must_use``: 1 if the edge is required;
    ``leave1, leave2``: slots leaving after the edge (-1: none; ``leave2``
    indexed after ``leave1`` is removed); ``allow1, allow2``: bit ``v`` set if
    a leaving vertex may hold value ``v``; ``slots``: frontier size before leaving.
    """

    enter: np.ndarray
    i: np.ndarray
    j: np.ndarray
    must_use: np.ndarray
    leave1: np.ndarray
    allow1: np.ndarray
    leave2: np.ndarray
    allow2: np.ndarray
    slots: np.ndarray


def _schedule(g: GridGraph, required: set[int]) -> _Schedule:
    """The frontier's slot bookkeeping, done once in Python so the kernel only sees slot numbers."""
    order = g.sweep()
    last: dict[int, int] = {}
    for step, e in enumerate(order):
        for v in g.edge_vertices(e):
            last[v] = step
    cols: dict[str, list[int]] = {k: [] for k in _Schedule.__dataclass_fields__}
    frontier: list[int] = []
    for step, e in enumerate(order):
        enter = 0
        for v in g.edge_vertices(e):
            if v not in frontier:
                value = S if v == g.start else T if v == g.goal else FREE
                enter |= value << (4 * len(frontier))
                frontier.append(v)
        if len(frontier) > MAX_SLOTS:
            raise ValueError(
                f"board {g.width}x{g.height}: counting needs a frontier of {len(frontier)} vertices, "
                f"at most {MAX_SLOTS} fit (the shorter side may be at most {MAX_SLOTS - 2})")
        a, b = g.edge_vertices(e)
        cols["enter"].append(enter)
        cols["i"].append(frontier.index(a))
        cols["j"].append(frontier.index(b))
        cols["must_use"].append(int(g.num_vertices + e in required))
        cols["slots"].append(len(frontier))
        leaving = [v for v in (a, b) if last[v] == step]
        for n in (1, 2):
            if len(leaving) >= n:
                v = leaving[n - 1]
                cols[f"leave{n}"].append(frontier.index(v))
                cols[f"allow{n}"].append((1 << DONE) if v in required else (1 << FREE) | (1 << DONE))
                frontier.remove(v)
            else:
                cols[f"leave{n}"].append(-1)
                cols[f"allow{n}"].append(0)
    return _Schedule(**{k: np.array(v, dtype=np.int64) for k, v in cols.items()})


@njit(**INLINE)
def _get(key: np.uint64, k: int) -> int:
    return np.int64((key >> np.uint64(4 * k)) & _NIBBLE)


@njit(**INLINE)
def _put(key: np.uint64, k: int, value: int) -> np.uint64:
    shift = np.uint64(4 * k)
    return (key & ~(_NIBBLE << shift)) | (np.uint64(value) << shift)


@njit(**KERNEL)
def _leave(key: np.uint64, k: int, allow: int) -> tuple[bool, np.uint64]:
    """Remove slot ``k``, shifting the slots above it down; False if its value is not in ``allow``."""
    if (allow >> _get(key, k)) & 1 == 0:
        return False, key
    shift = np.uint64(4 * k)
    low = key & ((np.uint64(1) << shift) - np.uint64(1))
    return True, low | (((key >> shift) >> np.uint64(4)) << shift)


@njit(**KERNEL)
def _canonical(key: np.uint64, n: int) -> np.uint64:
    """Renumber the labels ``>= 4`` of the ``n`` slots in order of first appearance."""
    names = np.uint64(0)  # nibble x: the new name of label x (0: none yet)
    next_label = _FIRST_LABEL
    out = np.uint64(0)
    for k in range(n):
        x = _get(key, k)
        if x >= _FIRST_LABEL:
            y = _get(names, x)
            if y == 0:
                y = next_label
                next_label += 1
                names = _put(names, x, y)
            x = y
        out |= np.uint64(x) << np.uint64(4 * k)
    return out


@njit(**KERNEL)
def _use(key: np.uint64, n: int, i: int, j: int) -> tuple[bool, np.uint64]:
    """The state after using the edge between slots ``i`` and ``j`` (labels not yet renumbered); False if illegal."""
    a, b = _get(key, i), _get(key, j)
    if a == DONE or b == DONE or key & _ENDS == 0:  # a full vertex, or the path is complete
        return False, key
    if a == FREE and b == FREE:  # a new fragment
        top = 0
        for k in range(n):
            top = max(top, _get(key, k))
        label = max(top + 1, _FIRST_LABEL)
        return True, _put(_put(key, i, label), j, label)
    if a == FREE:  # extend the fragment ending at j
        return True, _put(_put(key, i, b), j, DONE)
    if b == FREE:
        return True, _put(_put(key, i, DONE), j, a)
    if a == b:  # both ends of one fragment: a cycle
        return False, key
    key = _put(_put(key, i, DONE), j, DONE)
    if min(a, b) == S and max(a, b) == T:  # complete: no other fragment may be open
        return key & _ENDS == 0, key
    keep, drop = min(a, b), max(a, b)  # S and T outrank other labels
    for k in range(n):
        if _get(key, k) == drop:  # the far end of the dropped fragment
            key = _put(key, k, keep)
    return True, key


@njit(**KERNEL)
def _add(table: np.ndarray, slot: int, states: np.ndarray, row: int) -> bool:
    """``table[slot]``'s count ``+= states[row]``'s, limb by limb with carries; True if the top limb carried out."""
    carry = np.uint64(0)
    for m in range(1, table.shape[1]):
        a = table[slot, m]
        s = a + states[row, m]
        c1 = s < a
        s2 = s + carry
        c2 = s2 < s
        table[slot, m] = s2
        carry = np.uint64(1) if (c1 or c2) else np.uint64(0)
    return carry != 0


@njit(**KERNEL)
def _bucket(key: np.uint64, bucket_bits: int) -> int:
    """Which of ``2^bucket_bits`` buckets a key's hash falls in (its top bits)."""
    if bucket_bits == 0:
        return 0
    return np.int64((key * _GOLDEN) >> np.uint64(64 - bucket_bits))


@njit(**KERNEL)
def _successors(states, enter, i, j, must_use, leave1, allow1, leave2, allow2, slots):
    """Every state's successors after the edge: ``(keys, source rows, how many)``."""
    keys = np.empty(2 * len(states), dtype=np.uint64)
    src = np.empty(2 * len(states), dtype=np.int64)
    after = slots - (leave1 >= 0) - (leave2 >= 0)
    m = 0
    for r in range(len(states)):
        key = states[r, 0] | np.uint64(enter)
        if not must_use:  # skip the edge: leaving FREE or DONE slots keeps the labels' order
            ok, nxt = True, key
            if leave1 >= 0:
                ok, nxt = _leave(nxt, leave1, allow1)
            if ok and leave2 >= 0:
                ok, nxt = _leave(nxt, leave2, allow2)
            if ok:
                keys[m], src[m] = nxt, r
                m += 1
        ok, nxt = _use(key, slots, i, j)
        if ok and leave1 >= 0:
            ok, nxt = _leave(nxt, leave1, allow1)
        if ok and leave2 >= 0:
            ok, nxt = _leave(nxt, leave2, allow2)
        if ok:
            keys[m], src[m] = _canonical(nxt, after), r
            m += 1
    return keys, src, m


@njit(**KERNEL)
def _step(states, enter, i, j, must_use, leave1, allow1, leave2, allow2, slots):
    """One edge: every state skips and uses it, vertices leave, equal states merge.

    ``states``: one row a state, its key then its count's limbs. The successors
    are partitioned by hash into buckets of a few thousand (sequential passes),
    then each bucket is merged in a hash table small enough to stay in cache.
    Returns ``(next states, overflowed, bytes of the step's arrays)``. Trusts the schedule.
    """
    width = states.shape[1]
    keys, src, m = _successors(states, enter, i, j, must_use, leave1, allow1, leave2, allow2, slots)
    bucket_bits = 0
    while (m >> bucket_bits) > _BUCKET:
        bucket_bits += 1
    start = np.zeros((1 << bucket_bits) + 1, dtype=np.int64)
    for t in range(m):
        start[_bucket(keys[t], bucket_bits) + 1] += 1
    largest = 0
    for b in range(1 << bucket_bits):
        largest = max(largest, start[b + 1])
        start[b + 1] += start[b]
    rows = np.empty((m, width), dtype=np.uint64)
    fill = start[:-1].copy()
    for t in range(m):
        b = _bucket(keys[t], bucket_bits)
        p = fill[b]
        fill[b] += 1
        rows[p, 0] = keys[t]
        for limb in range(1, width):
            rows[p, limb] = states[src[t], limb]
    table_bits = 4
    while (1 << table_bits) < 2 * largest:  # load factor <= 1/2
        table_bits += 1
    table = np.zeros((1 << table_bits, width), dtype=np.uint64)
    table[:, 0] = _EMPTY
    mask = (1 << table_bits) - 1
    shift = np.uint64(64 - table_bits)
    out = np.empty((m, width), dtype=np.uint64)
    used = 0
    overflow = False
    for b in range(1 << bucket_bits):
        for p in range(start[b], start[b + 1]):
            key = rows[p, 0]
            slot = np.int64(((key * _GOLDEN) << np.uint64(bucket_bits)) >> shift)
            while table[slot, 0] != key and table[slot, 0] != _EMPTY:
                slot = (slot + 1) & mask
            table[slot, 0] = key
            overflow |= _add(table, slot, rows, p)
        for s in range(len(table)):
            if table[s, 0] != _EMPTY:
                for limb in range(width):
                    out[used, limb] = table[s, limb]
                    table[s, limb] = 0
                table[s, 0] = _EMPTY
                used += 1
    nbytes = keys.nbytes + src.nbytes + rows.nbytes + out.nbytes + table.nbytes
    return out[:used].copy(), overflow, nbytes


@dataclass(frozen=True)
class FrontierRun:
    """One run of the programme: the count and what it took."""

    count: int
    widest: int
    """Largest number of live states after any edge."""
    limbs: int
    """64-bit words per count in the run that did not overflow."""
    peak_bytes: int
    """Largest size of one step's arrays together: its input, successors, buckets, merge table and output."""


def _run(sched: _Schedule, limbs: int) -> FrontierRun | None:
    """Run with ``limbs`` words a count; None if a count outgrew them."""
    states = np.zeros((1, 1 + limbs), dtype=np.uint64)
    states[0, 1] = 1
    widest, peak = 1, 0
    for s in range(len(sched.i)):
        n_in = len(states)
        states, overflow, nbytes = _step(
            states, sched.enter[s], sched.i[s], sched.j[s], sched.must_use[s] != 0,
            sched.leave1[s], sched.allow1[s], sched.leave2[s], sched.allow2[s], sched.slots[s])
        if overflow:
            return None
        peak = max(peak, states.nbytes + nbytes + 8 * (1 + limbs) * n_in)
        widest = max(widest, len(states))
    total = sum(int(x) << (64 * m) for m, x in enumerate(states[0, 1:])) if len(states) else 0
    return FrontierRun(total, widest, limbs, peak)


def _limbs_for(width: int, height: int) -> int:
    """Words a count likely needs: corner-to-corner paths grow like 2^(0.81 cells) (8×8: 2^51.5)."""
    return max(1, math.ceil((0.81 * width * height + 8) / 64))


def frontier_run(width: int, height: int, cross: Iterable[int] = ()) -> FrontierRun:
    """Count the paths crossing every position in ``cross``, with the run's statistics."""
    g = GridGraph(width, height)
    required = set(int(p) for p in cross)
    if any(not 0 <= p < g.num_positions for p in required):
        raise ValueError(f"must-cross positions must be 0..{g.num_positions - 1}, got {sorted(required)}")
    sched = _schedule(g, required)
    limbs = _limbs_for(width, height)
    while (run := _run(sched, limbs)) is None:
        limbs += 1
    return run


def count_paths(width: int, height: int, cross: Iterable[int] = ()) -> int:
    """Number of start-to-goal paths on a ``width × height`` panel crossing every position in ``cross``."""
    return frontier_run(width, height, cross).count
