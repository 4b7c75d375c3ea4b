"""Level maps with the "do what's possible" representation (Ashlock & Salge).

An evolved self-driving automaton (:mod:`.sda`) emits an endless, deterministic
bit stream; the map builder (:mod:`.maps`) reads it as room proposals and keeps
the possible ones; :mod:`.study` runs the paper's experiments with the generic
steady-state loop of :mod:`epcg.search.evolve`; :mod:`.render` draws maps and
box plots. Nothing here imports Dask, Zarr or the CLI.
"""

from epcg.games.dwp.domain.maps import Map, MapRules, build_map, build_map_from_bits, fitness, map_fitness
from epcg.games.dwp.domain.sda import random_population, random_sda, sda_bits, sda_from_table
from epcg.games.dwp.domain.study import ExperimentParams, ReplicateResult, run_replicate, seed_for
from epcg.games.dwp.domain.variation import crossover, mutate, vary

__all__ = [
    "ExperimentParams",
    "Map",
    "MapRules",
    "ReplicateResult",
    "build_map",
    "build_map_from_bits",
    "crossover",
    "fitness",
    "map_fitness",
    "mutate",
    "random_population",
    "random_sda",
    "run_replicate",
    "sda_bits",
    "sda_from_table",
    "seed_for",
    "vary",
]
