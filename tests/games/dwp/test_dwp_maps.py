"""Map builder: placement rules on hand-made bit streams, fitness, the kernel against the reference."""

import numpy as np
import pytest

from epcg.games.dwp.domain.maps import (
    CORRIDOR,
    OBSTACLE,
    ROOM,
    START,
    MapRules,
    build_map,
    build_map_from_bits,
    fitness,
    map_fitness,
)
from epcg.games.dwp.domain.sda import random_population, sda_bits

from tests.reference import dwp as ref

UP, DOWN, LEFT, RIGHT = range(4)
SIZE = {2: 0, 3: 2, 4: 3}


def bits(value, k):
    return [int(c) for c in format(value, f"0{k}b")]


def room(focal, side, h, w, offset, room_bits=8):
    """The 22 bits (18 with 4 room bits) of a room proposal."""
    return bits(focal, room_bits) + bits(side, 2) + bits(1, 3) + bits(SIZE[h], 2) + bits(SIZE[w], 2) + bits(offset, 5)


def corridor(focal, side, length, offset, room_bits=8):
    return bits(focal, room_bits) + bits(side, 2) + bits(0, 3) + bits(length - 1, 4) + bits(offset, 5)


RULES = MapRules(grid=(20, 20))  # start room (8, 8, 4, 4)


def test_rooms_on_each_side():
    stream = room(0, UP, 2, 3, 0) + room(0, DOWN, 3, 2, 4) + room(0, LEFT, 4, 2, 3) + room(0, RIGHT, 2, 2, 1)
    m = build_map_from_bits(stream, RULES)
    assert m.rooms.tolist() == [
        [8, 8, 4, 4, 3],
        [6, 6, 2, 3, 1],  # above, overhanging the left end by 2 columns
        [12, 11, 3, 2, 1],  # below, offset 4 of 5: c0 = 8 - 2 + 1 + 4
        [8, 6, 4, 2, 1],  # left, aligned: r0 = 8 - 4 + 1 + 3
        [8, 12, 2, 2, 1],  # right, offset 1: r0 = 8 - 2 + 1 + 1
    ]
    assert m.proposals == 4
    assert (m.grid == ROOM).sum() == 6 + 6 + 8 + 4 and (m.grid == START).sum() == 16


def test_corridors_run_away_from_the_room():
    stream = corridor(0, UP, 5, 2) + corridor(0, RIGHT, 7, 0)
    m = build_map_from_bits(stream, RULES)
    assert m.rooms[1:].tolist() == [[3, 10, 5, 1, 2], [8, 12, 1, 7, 2]]
    assert (m.grid == CORRIDOR).sum() == 12


def test_offset_wraps_modulo_positions():
    # 4-wide side, 2-wide room: 5 positions, so offset 7 is offset 2
    a = build_map_from_bits(room(0, UP, 2, 2, 7), RULES).rooms
    b = build_map_from_bits(room(0, UP, 2, 2, 2), RULES).rooms
    assert a.tolist() == b.tolist() == [[8, 8, 4, 4, 3], [6, 9, 2, 2, 1]]


@pytest.mark.parametrize("side", range(4))
@pytest.mark.parametrize(("h", "w"), [(2, 2), (3, 4), (4, 3)])
def test_every_offset_shares_wall(side, h, w):
    rules = MapRules(grid=(30, 30))  # start (13, 13, 4, 4)
    seen = set()
    for offset in range(32):
        r0, c0, hh, ww, _ = build_map_from_bits(room(0, side, h, w, offset), rules).rooms[1]
        rows = set(range(r0, r0 + hh)) & set(range(13, 17))
        cols = set(range(c0, c0 + ww)) & set(range(13, 17))
        if side in (UP, DOWN):
            assert r0 + hh == 13 if side == UP else r0 == 17
            assert cols
        else:
            assert c0 + ww == 13 if side == LEFT else c0 == 17
            assert rows
        seen.add((r0, c0))
    extent = w if side in (UP, DOWN) else h
    assert len(seen) == 4 + extent - 1


def test_off_grid_is_rejected():
    rules = MapRules(grid=(6, 6))  # start (1, 1, 4, 4)
    m = build_map_from_bits(room(0, UP, 2, 2, 1) + room(0, RIGHT, 2, 2, 1) + room(0, LEFT, 2, 2, 1), rules)
    assert m.rooms.shape[0] == 1 and m.proposals == 3
    m = build_map_from_bits(corridor(0, UP, 1, 0), rules)  # 1x1 at (0, 1): on the grid
    assert m.rooms[1:].tolist() == [[0, 1, 1, 1, 2]]


def test_overlap_is_rejected():
    stream = room(0, RIGHT, 2, 2, 1) + room(0, RIGHT, 3, 3, 2) + room(1, DOWN, 2, 2, 0) + room(1, DOWN, 2, 2, 1)
    m = build_map_from_bits(stream, RULES)
    # the second would cover (8..10, 12..14), overlapping the first; the third (10..11, 11..12) the start
    assert m.rooms[1:].tolist() == [[8, 12, 2, 2, 1], [10, 12, 2, 2, 1]]


def test_obstacles_block_and_are_drawn():
    rules = MapRules(grid=(20, 20), obstacles=((8, 13, 1, 1),))
    m = build_map_from_bits(room(0, RIGHT, 2, 2, 1) + room(0, RIGHT, 2, 2, 3), rules)
    assert m.rooms[1:].tolist() == [[10, 12, 2, 2, 1]]
    assert m.grid[8, 13] == OBSTACLE
    assert m.fitness == 20**2 / (4 * 6)  # obstacles are not part of A or B


def test_recent_room_hack_picks_newest():
    rules = MapRules(grid=(40, 40), recent_room_hack=True)  # start (18, 18, 4, 4)
    stream = room(0, RIGHT, 2, 2, 1, 4) + room(0, RIGHT, 2, 2, 1, 4)  # right of start, then right of that
    stream += room(1, DOWN, 2, 2, 1, 4)  # recency 1: the first placed room
    stream += room(13, UP, 2, 2, 1, 4)  # 13 mod 4 rooms = 1: the second placed room
    m = build_map_from_bits(stream, rules)
    assert m.rooms[1:].tolist() == [[18, 22, 2, 2, 1], [18, 24, 2, 2, 1], [20, 22, 2, 2, 1], [16, 24, 2, 2, 1]]


def test_room_index_modulo_rooms():
    stream = room(0, RIGHT, 2, 2, 1) + room(5, UP, 2, 2, 1)  # 5 mod 2 rooms = room 1
    assert build_map_from_bits(stream, RULES).rooms[2].tolist() == [6, 12, 2, 2, 1]


def test_stops_at_max_rooms_budget_and_end_of_stream():
    stream = room(0, UP, 2, 2, 1) + room(0, DOWN, 2, 2, 1) + room(0, LEFT, 2, 2, 1)
    assert build_map_from_bits(stream, MapRules(grid=(20, 20), max_rooms=2)).proposals == 1
    assert build_map_from_bits(stream, MapRules(grid=(20, 20), proposals=2)).rooms.shape[0] == 3
    m = build_map_from_bits(stream[:-1], RULES)
    assert m.proposals == 2 and m.rooms.shape[0] == 3
    m = build_map_from_bits(room(0, UP, 2, 2, 1, room_bits=10), MapRules(grid=(20, 20), max_rooms=800))
    assert m.rooms.shape[0] == 2


def test_long_start_rooms_get_wider_offsets():
    rules = MapRules(grid=(20, 60), start=((9, 10, 2, 40),))
    assert rules.offset_bits == 6 and MapRules().offset_bits == 5
    m = build_map_from_bits(room(0, UP, 2, 2, 0)[:-5] + bits(40, 6), rules)
    assert m.rooms[1].tolist() == [7, 49, 2, 2, 1]  # the last of 41 positions: c0 = 10 - 2 + 1 + 40


def test_several_start_rooms():
    rules = MapRules(grid=(20, 40), start=((9, 0, 2, 40), (0, 0, 1, 1)))
    m = build_map_from_bits(room(1, DOWN, 2, 2, 0)[:-5] + bits(1, 6), rules)  # 6 offset bits
    assert m.rooms.tolist() == [[9, 0, 2, 40, 3], [0, 0, 1, 1, 3], [1, 0, 2, 2, 1]]


def test_map_fitness_by_hand():
    g = np.zeros((10, 10), np.int8)
    g[2:4, 2:6] = START  # 8 cells
    g[4, 5] = CORRIDOR
    g[5:7, 5:8] = ROOM  # 6 cells, box rows 2..6, cols 2..7
    g[0, 0] = OBSTACLE
    assert map_fitness(g) == 15**2 / (5 * 6)
    assert map_fitness(np.zeros((3, 3))) == 0.0


def reference_rules():
    yield MapRules(grid=(30, 30), max_rooms=64, proposals=120)
    yield MapRules(grid=(30, 30), max_rooms=64, proposals=120, recent_room_hack=True)
    yield MapRules(grid=(24, 40), max_rooms=40, start=((11, 0, 2, 40),), obstacles=((0, 0, 5, 5), (20, 30, 4, 10)))
    yield MapRules(grid=(80, 80))
    yield MapRules(grid=(30, 60), max_rooms=50, start=((14, 10, 2, 40),), recent_room_hack=True)


@pytest.mark.parametrize("rules", list(reference_rules()))
def test_kernel_matches_reference(rules):
    per = (4 if rules.recent_room_hack else rules.room_bits) + 9 + rules.offset_bits
    for states in (3, 12):
        for g in random_population(6, states, np.random.default_rng(states)):
            stream = sda_bits(g, rules.proposal_budget * per).tolist()
            rooms, cells, value, read = ref.build_map(stream, rules.grid, rules.start_rooms, rules.obstacles,
                                                      rules.max_rooms, rules.recent_room_hack, rules.proposal_budget)
            m = build_map(g, rules)
            assert m.rooms.tolist() == [list(r) for r in rooms]
            assert m.fitness == pytest.approx(value) and m.proposals == read
            assert {(r, c): int(m.grid[r, c]) for r, c in zip(*np.nonzero(m.grid))} == cells
            assert map_fitness(m.grid) == pytest.approx(m.fitness)
            assert fitness(g, rules) == m.fitness


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"grid": (3, 3)}, "does not fit on the 3x3 grid"),
        ({"grid": (0, 5)}, "at least one row"),
        ({"start": ((0, 0, 2, 2), (1, 1, 2, 2))}, "overlaps"),
        ({"start": ()}, "at least one start room"),
        ({"obstacles": ((38, 38, 1, 1),)}, "overlaps"),
        ({"obstacles": ((79, 79, 2, 2),)}, "obstacle"),
        ({"max_rooms": 0}, "max_rooms"),
        ({"proposals": -1}, "proposals"),
        ({"start": ((0, 0, 0, 2),)}, "height and width"),
    ],
)
def test_invalid_rules(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MapRules(**kwargs)


def test_invalid_stream():
    with pytest.raises(ValueError):
        build_map_from_bits([0, 2], RULES)
