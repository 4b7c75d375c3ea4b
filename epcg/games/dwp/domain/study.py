"""One experiment's parameters (a row of the paper's Table I) and one evolutionary run of it.

Table I itself is data: the ``experiments`` of ``jobs/dwp-study.toml``
(:func:`epcg.games.dwp.kind.table` reads it). Every run is size-7 single
tournament selection.

:func:`run_replicate` is a pure function of ``(params, seed)``: the same seed
gives the same result on any worker.

>>> params = ExperimentParams(population=10, mnm=1, states=12, mating_events=5, max_rooms=16)
>>> r = run_replicate(params, seed_for(1, 0))
>>> r.best_fitness == float(r.history_best[-1]), r.best_map.shape
(True, (80, 80))
"""

from __future__ import annotations

import operator
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL
from epcg.games.dwp.domain.maps import MapRules, Rect, _build, build_map
from epcg.games.dwp.domain.sda import MAX_STATES, random_population
from epcg.games.dwp.domain.variation import _vary
from epcg.search.evolve import evolve_jit

__all__ = ["ExperimentParams", "ReplicateResult", "run_replicate", "seed_for"]

TOURNAMENT = 7


def _integer(name: str, value: Any) -> int:
    """``value`` as an int, or a one-line ValueError."""
    try:
        return operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None


@dataclass(frozen=True)
class ExperimentParams:
    """One row of Table I plus the map rules; validated when built (one-line ValueError).

    ``start=None`` is one 4×4 room near the centre; ``proposals=None`` is
    4 × ``max_rooms`` proposals per map (see :mod:`epcg.games.dwp.domain.maps`).
    """

    population: int
    mnm: int
    states: int
    recent_room_hack: bool = False
    grid: tuple[int, int] = (80, 80)
    max_rooms: int = 256
    mating_events: int = 10_000
    start: tuple[Rect, ...] | None = None
    obstacles: tuple[Rect, ...] = ()
    proposals: int | None = None
    rules: MapRules = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("population", "mnm", "states", "mating_events"):
            object.__setattr__(self, name, _integer(name, getattr(self, name)))
        if self.population < TOURNAMENT:
            raise ValueError(f"population must be >= {TOURNAMENT} (the tournament size), got {self.population}")
        if self.mnm < 1:
            raise ValueError(f"mnm (maximum number of mutations) must be >= 1, got {self.mnm}")
        if not 1 <= self.states <= MAX_STATES:
            raise ValueError(f"states must be in 1..{MAX_STATES}, got {self.states}")
        if self.mating_events < 0:
            raise ValueError(f"mating_events must be >= 0, got {self.mating_events}")
        if not isinstance(self.recent_room_hack, (bool, np.bool_)):
            raise ValueError(f"recent_room_hack must be true or false, got {self.recent_room_hack!r}")
        rules = MapRules(grid=self.grid, max_rooms=self.max_rooms, recent_room_hack=self.recent_room_hack,
                         start=self.start, obstacles=self.obstacles, proposals=self.proposals)
        object.__setattr__(self, "rules", rules)
        object.__setattr__(self, "grid", rules.grid)
        object.__setattr__(self, "start", rules.start)
        object.__setattr__(self, "obstacles", rules.obstacles)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able fields (tuples become lists)."""
        d = asdict(self)
        d.pop("rules")
        return d


@dataclass
class ReplicateResult:
    """The outcome of one evolutionary run."""

    seed: int
    best_fitness: float
    best_genome: np.ndarray
    """``(states, 5)`` int64 SDA (layout in :mod:`epcg.games.dwp.domain.sda`)."""
    best_map: np.ndarray
    """int8 grid: 0 empty, 1 room, 2 corridor, 3 start room, 4 obstacle."""
    best_rooms: np.ndarray
    """``(rooms, 5)`` rows ``(row, col, height, width, kind)``, start rooms first."""
    history_event: np.ndarray
    """Mating events after which the best fitness rose (0 first, the last event last)."""
    history_best: np.ndarray
    """Best fitness after those events."""
    seconds: float

    @property
    def rooms(self) -> int:
        """Rooms in the best map, start rooms and corridors included."""
        return int(self.best_rooms.shape[0])

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form; the map as one string of digits per row."""
        return {
            "seed": self.seed,
            "best_fitness": self.best_fitness,
            "rooms": self.rooms,
            "best_genome": self.best_genome.tolist(),
            "best_rooms": self.best_rooms.tolist(),
            "best_map": ["".join(map(str, row)) for row in self.best_map.tolist()],
            "history": [[int(e), float(b)] for e, b in zip(self.history_event, self.history_best)],
            "seconds": self.seconds,
        }


@njit(**KERNEL)
def _fitness(genome, context):
    """Map fitness of one SDA; ``context`` as made by :func:`_context`."""
    template, starts, max_rooms, room_bits, offset_bits, hack, proposals, no_stream, _ = context
    _, _, value, _ = _build(genome, no_stream, template, starts, max_rooms, room_bits, offset_bits, hack, proposals)
    return value


@njit(**KERNEL)
def _vary_in_context(a, b, rng, context):
    """Crossover and ``1..mnm`` mutations, ``mnm`` the last item of ``context``."""
    return _vary(a, b, rng, context[8])


def _context(params: ExperimentParams) -> tuple:
    """``(template, starts, max_rooms, room_bits, offset_bits, hack, proposals, empty stream, mnm)``."""
    return params.rules.kernel_args() + (np.zeros(0, np.int8), int(params.mnm))


def seed_for(experiment: int, run: int, base_seed: int = 0) -> int:
    """A 63-bit seed for run ``run`` of ``experiment``, from ``SeedSequence([base_seed, experiment, run])``.

    >>> seed_for(1, 0) == seed_for(1, 0) != seed_for(1, 1)
    True
    """
    for name, v in (("experiment", experiment), ("run", run), ("base_seed", base_seed)):
        if v < 0:
            raise ValueError(f"{name} must be >= 0, got {v}")
    state = np.random.SeedSequence([base_seed, experiment, run]).generate_state(1, np.uint64)[0]
    return int(state >> np.uint64(1))


def run_replicate(params: ExperimentParams, seed: int) -> ReplicateResult:
    """One evolutionary run: a random population, ``params.mating_events`` mating events, the best map.

    The best member is the fittest of the final population (the lowest index
    among equals); its map is rebuilt for the result.
    """
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    pop = random_population(params.population, params.states, rng)
    result = evolve_jit(pop, _fitness, _vary_in_context, _context(params), rng, params.mating_events,
                        tournament_size=TOURNAMENT)
    best = int(np.argmax(result.fitness))
    genome = result.population[best].copy()
    built = build_map(genome, params.rules)
    return ReplicateResult(
        seed=int(seed),
        best_fitness=float(result.fitness[best]),
        best_genome=genome,
        best_map=built.grid,
        best_rooms=built.rooms,
        history_event=result.history_event,
        history_best=result.history_best,
        seconds=time.perf_counter() - start,
    )
