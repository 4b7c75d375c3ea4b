"""DWP level maps: map builds per second, evolve overhead, projected time of the paper's study.

Single-thread CPU time (``time.process_time``), best of a few repeats, so other
load on the machine inflates the figures less than wall time would. The
projection runs each experiment for ``--events`` mating events and scales the
measured CPU seconds per event (and per initial evaluation) to 30 runs of the
full length, divided over ``--cores``.

    python benchmarks/dwp.py [--events 2000] [--cores 2]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from numba import njit

from epcg.games.dwp.domain.sda import random_population
from epcg.games.dwp.domain.study import _context, _fitness, run_replicate, seed_for
from epcg.games.dwp.kind import table
from epcg.search.evolve import _evaluate, evolve, evolve_jit

RUNS = 30

EXPERIMENTS = table(Path(__file__).resolve().parents[1] / "jobs" / "dwp-study.toml")


def best_cpu(fn, repeats: int = 3) -> float:
    """Smallest CPU seconds of ``repeats`` calls of ``fn``."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def builds(label: str, params, pop: np.ndarray) -> None:
    ctx = _context(params)
    _evaluate(pop[:1], _fitness, ctx)
    seconds = best_cpu(lambda: _evaluate(pop, _fitness, ctx))
    print(f"  {label:<44} {pop.shape[0] / seconds:>9,.0f} builds/s  {seconds / pop.shape[0] * 1e6:6.1f} us/build")


@njit(cache=True, nogil=True)
def _zero(genome, context):
    return float(genome[0])


@njit(cache=True, nogil=True)
def _swap(a, b, rng, context):
    return b.copy(), a.copy()


def overhead() -> None:
    pop = np.zeros((32, 12), np.int64)
    events = 200_000
    evolve_jit(pop, _zero, _swap, (), np.random.default_rng(0), 10)
    jit = best_cpu(lambda: evolve_jit(pop, _zero, _swap, (), np.random.default_rng(0), events)) / events
    members = list(pop)
    python = best_cpu(lambda: evolve(members, lambda g: 0.0, lambda a, b, r: (b, a), np.random.default_rng(0),
                                     20_000), 1) / 20_000
    print(f"  loop overhead per mating event (trivial fitness): numba {jit * 1e6:.2f} us, python {python * 1e6:.1f} us")


def project(experiments: list[int], events: int, cores: int) -> float:
    total = 0.0
    for e in experiments:
        full = EXPERIMENTS[e]
        short = replace(full, mating_events=events)
        seed = seed_for(e, 0)
        init = best_cpu(lambda short=short, seed=seed: run_replicate(replace(short, mating_events=0), seed), 2)
        start = time.process_time()
        result = run_replicate(short, seed)
        per_event = (time.process_time() - start - init) / events
        run = init + per_event * full.mating_events
        total += RUNS * run
        print(f"  exp {e:>2}: pop {full.population:>4} states {full.states:>2} rrh {int(full.recent_room_hack)}  "
              f"{per_event * 1e6:6.1f} us/event  one run {run:6.1f} s  "
              f"(best {result.best_fitness:7.1f}, {result.rooms} rooms after {events} events)")
    return total / cores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2000, help="mating events measured per experiment")
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()

    print("map builds (random 12-state machines, 80x80, 256 rooms, 1024 proposals):")
    rng = np.random.default_rng(0)
    pop = random_population(400, 12, rng)
    builds("no hack", EXPERIMENTS[2], pop)
    builds("recent-room hack", EXPERIMENTS[16], pop)
    print("map builds (machines after 2000 mating events):")
    for e in (2, 16):
        evolved = run_replicate(replace(EXPERIMENTS[e], mating_events=2000), seed_for(e, 0))
        best = np.repeat(evolved.best_genome[None], 400, axis=0)
        label = f"exp {e} best ({evolved.rooms} rooms)"
        builds(label, EXPERIMENTS[e], best)
    builds("exp 22 rules: random 16-state machines", EXPERIMENTS[22], random_population(100, 16, rng))

    print("evolve loop:")
    overhead()

    print(f"projected study time ({RUNS} runs each, {args.cores} cores, from {args.events} events per experiment):")
    t1 = project(list(range(1, 22)), args.events, args.cores)
    print(f"  experiments 1-21: {t1:,.0f} s = {t1 / 60:.1f} min")
    t2 = project([22, 23], args.events, args.cores)
    print(f"  experiments 22-23: {t2:,.0f} s = {t2 / 60:.1f} min")


if __name__ == "__main__":
    main()
