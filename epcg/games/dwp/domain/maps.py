"""The map builder: the generative possibility filter that turns a bit stream into a level map.

The map is a grid of cells ``grid[row, col]`` (row 0 at the top). Rooms,
corridors, start rooms and obstacles are rectangles ``(row, col, height,
width)``; cell values are ``EMPTY`` 0, ``ROOM`` 1, ``CORRIDOR`` 2, ``START`` 3
and ``OBSTACLE`` 4. The start rooms (by default one 4×4 room at
``((H-4)//2, (W-4)//2)``) are the first entries of the room list; obstacles are
cells where nothing may be built and are not rooms.

Each proposal reads a fixed number of bits, each integer most significant bit
first, in this order (the paper's Section III-B; the offset and the budget are
our choices, where the paper is silent):

1. the focal room: ``room_bits`` bits modulo the number of rooms, where
   ``room_bits`` is the bits needed to count ``max_rooms`` (8 for 256 rooms, 10
   for 800); with the recent-room hack, 4 bits ``v`` instead, and the focal room
   is the ``(v mod min(10, rooms))``-th most recently placed (0 = newest);
2. the side, 2 bits: 0 above (smaller rows), 1 below, 2 left, 3 right;
3. the kind, 3 bits: a corridor if all three are 0, else a room;
4. the size, 4 bits: for a room two 2-bit integers, height then width, each
   mapped 0, 1 → 2, 2 → 3, 3 → 4; for a corridor one 4-bit integer ``v``, length
   ``v + 1``, running away from the focal room (a corridor above or below is
   ``length × 1``, to the left or right ``1 × length``);
5. the offset along the side, ``offset_bits`` bits ``v``: the new rectangle
   touches the focal room's side and shares at least one cell of wall with it,
   which leaves ``p = side length + new extent along the side - 1`` positions,
   numbered from the one overhanging the low end; position ``v mod p`` is used.
   ``offset_bits`` is 5, enough for the largest ``p`` of placed rooms
   (16 + 4 - 1 = 19), or more if a start room has a side longer than 16
   (6 bits for the 40×2 start room of experiment 23), so every position is
   reachable.

So every proposal reads ``room_bits + 9 + offset_bits`` bits (22 in the paper's
setting, 18 with the hack), rooms and corridors alike. A proposal is placed only if it lies wholly on the grid and
covers only empty cells; otherwise it is rejected. The build stops after
``proposals`` proposals (our default budget: 4 × ``max_rooms``), when the room
list (start rooms included) holds ``max_rooms`` rooms, or, for a finite stream,
when fewer bits remain than a proposal needs.

Fitness is ``A² / B``: ``A`` the cells covered by start rooms, rooms and
corridors, ``B`` the area of their bounding box.

A 22-bit proposal: room 0, right side, a room, 4 high and 2 wide, offset 2 of
the 7 positions (so it starts one row above the start room):

>>> rules = MapRules(grid=(8, 8))
>>> m = build_map_from_bits([int(c) for c in "00000000" "11" "001" "1100" "00010"], rules)
>>> m.rooms.tolist(), m.fitness, m.proposals  # A = 16 + 8, B = 5 * 6
([[2, 2, 4, 4, 3], [1, 6, 4, 2, 1]], 19.2, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL
from epcg.games.dwp.domain.sda import _extend, _start, _tables, check_sda

__all__ = [
    "CORRIDOR",
    "EMPTY",
    "Map",
    "MapRules",
    "OBSTACLE",
    "ROOM",
    "START",
    "build_map",
    "build_map_from_bits",
    "fitness",
    "map_fitness",
]

EMPTY, ROOM, CORRIDOR, START, OBSTACLE = range(5)
UP, DOWN, LEFT, RIGHT = range(4)
RECENT = 10
RECENT_BITS = 4
FIXED_BITS = 2 + 3 + 4  # side, kind, size
MAX_ROOMS = 1 << 16

Rect = tuple[int, int, int, int]


@njit(**KERNEL)
def _read(buf, at, k):
    """The ``k``-bit integer ``buf[at:at+k]``, most significant bit first."""
    v = 0
    for i in range(at, at + k):
        v = 2 * v + int(buf[i])
    return v


@njit(**KERNEL)
def _free(grid, r0, c0, h, w):
    """True if the rectangle lies on the grid and all its cells are empty."""
    if r0 < 0 or c0 < 0 or r0 + h > grid.shape[0] or c0 + w > grid.shape[1]:
        return False
    for r in range(r0, r0 + h):
        for c in range(c0, c0 + w):
            if grid[r, c] != 0:
                return False
    return True


@njit(**KERNEL)
def _build(genome, stream, template, starts, max_rooms, room_bits, offset_bits, hack, proposals):
    """Build one map; return ``(grid, rooms, fitness, proposals_read)``.

    Bits come from the SDA ``genome``, or, if it has no states, from the finite
    ``stream``. ``template`` holds the start rooms and obstacles already drawn;
    ``starts`` lists the start rooms ``(row, col, height, width)``. ``rooms`` rows
    are ``(row, col, height, width, kind)``. Unchecked: a valid genome, start
    rooms inside the grid and drawn in ``template``, ``len(starts) <= max_rooms``.
    """
    grid = template.copy()
    rooms = np.empty((max_rooms, 5), np.int64)
    n = starts.shape[0]
    area = 0
    top, bottom, left, right = grid.shape[0], -1, grid.shape[1], -1
    for k in range(n):
        r0, c0, h, w = starts[k, 0], starts[k, 1], starts[k, 2], starts[k, 3]
        rooms[k, 0], rooms[k, 1], rooms[k, 2], rooms[k, 3], rooms[k, 4] = r0, c0, h, w, 3
        area += h * w
        top, bottom = min(top, r0), max(bottom, r0 + h)
        left, right = min(left, c0), max(right, c0 + w)

    per = (RECENT_BITS if hack else room_bits) + FIXED_BITS + offset_bits
    finite = genome.shape[0] == 0
    nxt, emit = _tables(genome)
    if finite:
        buf = stream
        filled = stream.shape[0]
    else:
        buf = np.empty(proposals * per + 2, np.int8)
        filled = _start(emit, buf)
    drive, state, at = 0, 0, 0
    read = 0
    while read < proposals and n < max_rooms:
        if at + per > filled:
            if finite:
                break
            filled, drive, state = _extend(nxt, emit, buf, filled, drive, state, at + per - 1)
        read += 1
        if hack:
            focal = n - 1 - _read(buf, at, RECENT_BITS) % min(RECENT, n)
            at += RECENT_BITS
        else:
            focal = _read(buf, at, room_bits) % n
            at += room_bits
        side = _read(buf, at, 2)
        corridor = _read(buf, at + 2, 3) == 0
        if corridor:
            length = _read(buf, at + 5, 4) + 1
            h, w = (length, 1) if side <= DOWN else (1, length)
        else:
            h = max(2, _read(buf, at + 5, 2) + 1)  # 0, 1 -> 2; 2 -> 3; 3 -> 4
            w = max(2, _read(buf, at + 7, 2) + 1)
        offset = _read(buf, at + FIXED_BITS, offset_bits)
        at += FIXED_BITS + offset_bits
        fr, fc, fh, fw = rooms[focal, 0], rooms[focal, 1], rooms[focal, 2], rooms[focal, 3]
        if side <= DOWN:
            c0 = fc - w + 1 + offset % (fw + w - 1)
            r0 = fr - h if side == UP else fr + fh
        else:
            r0 = fr - h + 1 + offset % (fh + h - 1)
            c0 = fc - w if side == LEFT else fc + fw
        if not _free(grid, r0, c0, h, w):
            continue
        kind = 2 if corridor else 1
        grid[r0:r0 + h, c0:c0 + w] = kind
        rooms[n, 0], rooms[n, 1], rooms[n, 2], rooms[n, 3], rooms[n, 4] = r0, c0, h, w, kind
        n += 1
        area += h * w
        top, bottom = min(top, r0), max(bottom, r0 + h)
        left, right = min(left, c0), max(right, c0 + w)
    box = (bottom - top) * (right - left)
    return grid, rooms[:n], area * area / box, read


class Map(NamedTuple):
    """A built map."""

    grid: np.ndarray
    """int8 cells: 0 empty, 1 room, 2 corridor, 3 start room, 4 obstacle."""
    rooms: np.ndarray
    """``(rooms, 5)`` rows ``(row, col, height, width, kind)`` in placement order, start rooms first."""
    fitness: float
    """``A² / B`` (module docstring)."""
    proposals: int
    """Proposals read, placed or not."""


def _rect(value: Sequence[int], what: str) -> Rect:
    try:
        r0, c0, h, w = (int(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be (row, col, height, width), got {value!r}") from None
    if h < 1 or w < 1:
        raise ValueError(f"{what} {value!r} must have height and width >= 1")
    return r0, c0, h, w


def _inside(rect: Rect, grid: tuple[int, int]) -> bool:
    r0, c0, h, w = rect
    return r0 >= 0 and c0 >= 0 and r0 + h <= grid[0] and c0 + w <= grid[1]


@dataclass(frozen=True)
class MapRules:
    """Everything the builder needs besides the bits; validated when built (ValueError).

    ``start=None`` means one 4×4 room near the centre; ``proposals=None`` means
    4 × ``max_rooms`` proposals per map.

    >>> MapRules().start_rooms, MapRules().room_bits, MapRules(max_rooms=800).room_bits
    (((38, 38, 4, 4),), 8, 10)
    """

    grid: tuple[int, int] = (80, 80)
    max_rooms: int = 256
    recent_room_hack: bool = False
    start: tuple[Rect, ...] | None = None
    obstacles: tuple[Rect, ...] = ()
    proposals: int | None = None

    def __post_init__(self) -> None:
        try:
            rows, cols = (int(v) for v in self.grid)
        except (TypeError, ValueError):
            raise ValueError(f"grid must be (rows, cols), got {self.grid!r}") from None
        if rows < 1 or cols < 1:
            raise ValueError(f"grid must have at least one row and column, got {self.grid!r}")
        object.__setattr__(self, "grid", (rows, cols))
        if self.start is not None:
            object.__setattr__(self, "start", tuple(_rect(r, "start room") for r in self.start))
        object.__setattr__(self, "obstacles", tuple(_rect(r, "obstacle") for r in self.obstacles))
        starts = self.start_rooms
        if not starts:
            raise ValueError("at least one start room is needed")
        for rect in starts:
            if not _inside(rect, self.grid):
                raise ValueError(f"start room {rect} does not fit on the {rows}x{cols} grid")
        for rect in self.obstacles:
            if not _inside(rect, self.grid):
                raise ValueError(f"obstacle {rect} does not fit on the {rows}x{cols} grid")
        for name in ("max_rooms", "proposals"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, (int, np.integer)):
                raise ValueError(f"{name} must be an integer, got {value!r}")
        if not len(starts) <= self.max_rooms <= MAX_ROOMS:
            raise ValueError(f"max_rooms must be in {len(starts)}..{MAX_ROOMS} (at least the start rooms), "
                             f"got {self.max_rooms}")
        if self.proposals is not None and self.proposals < 0:
            raise ValueError(f"proposals must be >= 0, got {self.proposals}")
        self.template()  # checks overlaps

    @property
    def start_rooms(self) -> tuple[Rect, ...]:
        """The start rooms, the default resolved."""
        if self.start is None:
            return (((self.grid[0] - 4) // 2, (self.grid[1] - 4) // 2, 4, 4),)
        return self.start

    @property
    def proposal_budget(self) -> int:
        """Proposals read per map, the default resolved."""
        return 4 * self.max_rooms if self.proposals is None else int(self.proposals)

    @property
    def offset_bits(self) -> int:
        """Bits of the offset along a side: enough for every position next to any room (module docstring)."""
        longest = max([16] + [max(h, w) for _, _, h, w in self.start_rooms])
        return max(5, (longest + 4 - 2).bit_length())

    @property
    def room_bits(self) -> int:
        """Bits of the focal-room integer without the hack: enough to count ``max_rooms``."""
        return max(1, (self.max_rooms - 1).bit_length())

    def template(self) -> np.ndarray:
        """The empty map: obstacles and start rooms drawn (ValueError if start rooms overlap anything)."""
        grid = np.zeros(self.grid, np.int8)
        for r0, c0, h, w in self.obstacles:
            grid[r0:r0 + h, c0:c0 + w] = OBSTACLE
        for rect in self.start_rooms:
            r0, c0, h, w = rect
            if grid[r0:r0 + h, c0:c0 + w].any():
                raise ValueError(f"start room {rect} overlaps another start room or an obstacle")
            grid[r0:r0 + h, c0:c0 + w] = START
        return grid

    def kernel_args(self) -> tuple:
        """``(template, starts, max_rooms, room_bits, offset_bits, hack, proposals)`` as :func:`_build` takes them."""
        return (self.template(), np.array(self.start_rooms, np.int64).reshape(-1, 4), int(self.max_rooms),
                self.room_bits, self.offset_bits, bool(self.recent_room_hack), self.proposal_budget)


_NO_GENOME = np.zeros((0, 5), np.int64)
_NO_STREAM = np.zeros(0, np.int8)


def build_map(genome: np.ndarray, rules: MapRules) -> Map:
    """The map an SDA builds under ``rules``."""
    return Map(*_build(check_sda(genome), _NO_STREAM, *rules.kernel_args()))


def build_map_from_bits(bits: Sequence[int] | np.ndarray, rules: MapRules) -> Map:
    """The map a finite bit stream builds under ``rules`` (stops when the bits run out)."""
    stream = np.asarray(bits, dtype=np.int8).ravel()
    if ((stream != 0) & (stream != 1)).any():
        raise ValueError("bits must be 0 or 1")
    return Map(*_build(_NO_GENOME, stream, *rules.kernel_args()))


def fitness(genome: np.ndarray, rules: MapRules) -> float:
    """Fitness ``A² / B`` of the map an SDA builds under ``rules``."""
    return build_map(genome, rules).fitness


def map_fitness(grid: np.ndarray) -> float:
    """``A² / B`` of a map grid: ``A`` cells holding rooms, corridors or start rooms, ``B`` their bounding box.

    >>> g = np.zeros((5, 5), np.int8); g[1:3, 1:3] = START; g[3, 2] = CORRIDOR
    >>> map_fitness(g)  # A = 5, B = 3 * 2
    4.166666666666667
    """
    built = np.isin(np.asarray(grid), (ROOM, CORRIDOR, START))
    rows, cols = np.nonzero(built)
    if rows.size == 0:
        return 0.0
    box = (rows.max() - rows.min() + 1) * (cols.max() - cols.min() + 1)
    return float(rows.size) ** 2 / float(box)
