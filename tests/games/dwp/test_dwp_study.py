"""Table I, parameter validation, seeds and short replicates."""

import json
from dataclasses import replace

import numpy as np
import pytest

from epcg.games.dwp.domain.maps import build_map, map_fitness
from epcg.games.dwp.domain.study import ExperimentParams, run_replicate, seed_for
from epcg.games.dwp.kind import table

from tests.conftest import JOBS

EXPERIMENTS = table(JOBS / "dwp-study.toml")
"""Table I, from the study's job file."""


def test_table_one():
    assert sorted(EXPERIMENTS) == list(range(1, 24))
    rows = [(p.population, p.mnm, p.states, p.recent_room_hack) for p in EXPERIMENTS.values()]
    assert rows[:15] == [(pop, mnm, 12, False) for mnm in (1, 3, 5) for pop in (10, 32, 100, 320, 1000)]
    assert rows[15:21] == [(32, 1, s, True) for s in (12, 4, 8, 12, 16, 20)]
    e22, e23 = EXPERIMENTS[22], EXPERIMENTS[23]
    assert (e22.grid, e22.max_rooms, e22.mating_events, e22.states, e22.rules.room_bits) == ((120, 120), 800, 100_000, 16, 10)
    assert e23.rules.start_rooms == ((39, 20, 2, 40),) and e23.recent_room_hack
    assert all(p.mating_events == 10_000 and p.grid == (80, 80) for n, p in EXPERIMENTS.items() if n != 22)
    assert EXPERIMENTS[1].rules.start_rooms == ((38, 38, 4, 4),)


def test_replace_recentres_the_default_start():
    assert replace(EXPERIMENTS[1], grid=(120, 120)).rules.start_rooms == ((58, 58, 4, 4),)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"population": 6}, "population must be >= 7"),
        ({"states": 0}, "states must be in 1..256"),
        ({"states": 257}, "states must be in 1..256"),
        ({"mnm": 0}, "mnm"),
        ({"mating_events": -1}, "mating_events"),
        ({"grid": (3, 3)}, "does not fit"),
        ({"max_rooms": -5}, "max_rooms"),
        ({"proposals": -1}, "proposals"),
        ({"population": "many"}, "population must be an integer"),
        ({"max_rooms": 2.5}, "max_rooms must be an integer"),
        ({"recent_room_hack": "yes"}, "recent_room_hack"),
    ],
)
def test_invalid_parameters(changes, message):
    with pytest.raises(ValueError, match=message) as info:
        replace(EXPERIMENTS[1], **changes)
    assert "\n" not in str(info.value)


def test_seeds():
    seeds = {seed_for(e, r) for e in range(1, 24) for r in range(30)}
    assert len(seeds) == 23 * 30 and all(0 <= s < 2**63 for s in seeds)
    assert seed_for(3, 4) == seed_for(3, 4) != seed_for(3, 4, base_seed=1)
    with pytest.raises(ValueError):
        seed_for(-1, 0)


@pytest.mark.parametrize("experiment", [1, 16, 23])
def test_short_replicate(experiment):
    params = replace(EXPERIMENTS[experiment], mating_events=40, max_rooms=64)
    a = run_replicate(params, seed_for(experiment, 0))
    b = run_replicate(params, seed_for(experiment, 0))
    assert a.best_fitness == b.best_fitness and np.array_equal(a.best_genome, b.best_genome)
    assert np.array_equal(a.history_event, b.history_event)
    assert np.array_equal(a.best_map, b.best_map) and a.best_map.dtype == np.int8
    assert a.best_fitness == pytest.approx(map_fitness(a.best_map)) == build_map(a.best_genome, params.rules).fitness
    assert a.best_fitness == a.history_best[-1] and (np.diff(a.history_best[:-1]) > 0).all()
    assert a.history_event[-1] == 40 and 2 <= a.rooms <= 64
    assert a.best_genome.shape == (params.states, 5)
    json.dumps(a.to_dict())
    json.dumps(params.to_dict())
    c = run_replicate(params, seed_for(experiment, 1))
    assert not np.array_equal(a.best_genome, c.best_genome)


def test_obstacles_experiment():
    params = ExperimentParams(population=8, mnm=1, states=6, recent_room_hack=True, mating_events=10,
                              max_rooms=40, obstacles=((20, 20, 10, 40), (50, 20, 10, 40)))
    r = run_replicate(params, 3)
    assert (r.best_map[20:30, 20:60] == 4).all() and (r.best_map == 3).sum() == 16
