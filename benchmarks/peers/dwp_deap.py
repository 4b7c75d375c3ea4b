"""epcg's evolved level maps beside the same evolutionary algorithm written with DEAP.

The algorithm (``epcg.games.dwp.domain`` + ``epcg.search.evolve``, Ashlock & Salge's
"do what's possible" maps): a genome is a self-driving automaton of ``--states``
states (``(states, 5)`` int64: string length, two bits, two transitions); a
random initial population of ``--population``; steady state: each mating event
draws 7 distinct members, the best two make two children by two-point
crossover of the state list (cuts uniform in ``0..states``) and ``1..mnm``
mutations each (a fresh random string or one redirected transition, equal
chance), and the children replace the two worst drawn; ``--events`` mating
events; the result is the best fitness (``A²/B`` of the map the machine builds)
in the final population.

- epcg: ``epcg.games.dwp.domain.run_replicate`` (the whole loop in numba, numpy's PCG64 random numbers).
- DEAP: ``creator``/``base.Toolbox`` individuals (numpy arrays) with the same
  operators registered as ``mate``, ``mutate``, ``select`` and ``evaluate``,
  Python's ``random`` for every draw, the loop in Python as DEAP's own
  algorithms are. Its ``evaluate`` calls epcg's compiled map builder
  (``epcg.games.dwp.domain.study._fitness``) because that is the paper's fitness and
  the only one whose answers can be compared; so the ratio measures the
  evolutionary machinery around identical evaluations (a map builder rewritten
  in Python would be far slower still, and is not measured).

``--runs`` runs of each, alternating, in this process, one thread; the two use
different random streams, so the check is on distributions: the best-fitness
samples must not differ significantly by a two-sided Mann-Whitney U test
(scipy.stats.mannwhitneyu) at ``--alpha``. Seconds are CPU seconds per run
(epcg's one-off compilation is printed apart).

    python benchmarks/peers/dwp_deap.py                   # 30 runs x 2,000 events each, population 32 (~2 min)
    python benchmarks/peers/dwp_deap.py --events 10000    # the paper's run length
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import numpy as np

TOURNAMENT = 7
LEN, BIT0, BIT1, NEXT0, NEXT1 = range(5)


def deap_toolbox(states: int, mnm: int, population: int, context: tuple, rng: random.Random):
    """The DEAP toolbox of the algorithm: individuals, population, mate, mutate, select, evaluate."""
    from deap import base, creator

    from epcg.games.dwp.domain.study import _fitness

    if not hasattr(creator, "MapIndividual"):
        creator.create("MapFitness", base.Fitness, weights=(1.0,))
        creator.create("MapIndividual", np.ndarray, fitness=creator.MapFitness)

    def random_string(genome: np.ndarray, s: int) -> None:
        length = rng.randint(1, 2)
        genome[s, LEN] = length
        genome[s, BIT0] = rng.randint(0, 1)
        genome[s, BIT1] = rng.randint(0, 1) if length == 2 else 0

    def individual() -> np.ndarray:
        genome = creator.MapIndividual(np.zeros((states, 5), np.int64))
        for s in range(states):
            random_string(genome, s)
            genome[s, NEXT0] = rng.randrange(states)
            genome[s, NEXT1] = rng.randrange(states)
        return genome

    def mate(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        i, j = sorted((rng.randint(0, states), rng.randint(0, states)))
        c, d = toolbox.clone(a), toolbox.clone(b)
        c[i:j], d[i:j] = b[i:j], a[i:j]
        del c.fitness.values, d.fitness.values
        return c, d

    def mutate(genome: np.ndarray) -> tuple[np.ndarray]:
        for _ in range(rng.randint(1, mnm)):
            s = rng.randrange(states)
            if rng.randint(0, 1) == 0:
                random_string(genome, s)
            else:
                genome[s, NEXT0 + rng.randint(0, 1)] = rng.randrange(states)
        return (genome,)

    def select(pop: list) -> list[int]:
        """Single tournament: 7 distinct members, best first (ties in drawing order)."""
        drawn = rng.sample(range(len(pop)), TOURNAMENT)
        return sorted(drawn, key=lambda i: -pop[i].fitness.values[0])

    def evaluate(genome: np.ndarray) -> tuple[float]:
        return (_fitness(genome.view(np.ndarray), context),)

    toolbox = base.Toolbox()  # its default clone is copy.deepcopy, which DEAP's numpy individuals support
    toolbox.register("individual", individual)
    toolbox.register("population", lambda: [toolbox.individual() for _ in range(population)])
    toolbox.register("mate", mate)
    toolbox.register("mutate", mutate)
    toolbox.register("select", select)
    toolbox.register("evaluate", evaluate)
    return toolbox


def deap_run(params, seed: int) -> tuple[float, float]:
    """One DEAP run: the best fitness of its final population, and the CPU seconds spent in ``evaluate``."""
    from epcg.games.dwp.domain.study import _context

    rng = random.Random(seed)
    toolbox = deap_toolbox(params.states, params.mnm, params.population, _context(params), rng)
    pop = toolbox.population()
    in_evaluate = 0.0
    for ind in pop:
        c = time.process_time()
        ind.fitness.values = toolbox.evaluate(ind)
        in_evaluate += time.process_time() - c
    for _ in range(params.mating_events):
        drawn = toolbox.select(pop)
        c, d = toolbox.mate(pop[drawn[0]], pop[drawn[1]])
        for slot, child in ((drawn[-1], c), (drawn[-2], d)):
            toolbox.mutate(child)
            c = time.process_time()
            child.fitness.values = toolbox.evaluate(child)
            in_evaluate += time.process_time() - c
            pop[slot] = child
    return max(ind.fitness.values[0] for ind in pop), in_evaluate


def compare(runs: int, events: int, population: int, mnm: int, states: int, alpha: float, out=print) -> dict:
    """Both systems' best fitness over ``runs`` runs, their CPU seconds, the ratio and the test."""
    from scipy.stats import mannwhitneyu

    from epcg.games.dwp.domain.study import ExperimentParams, run_replicate, seed_for

    params = ExperimentParams(population=population, mnm=mnm, states=states, mating_events=events)
    c = time.process_time()
    run_replicate(ExperimentParams(population=population, mnm=mnm, states=states, mating_events=1), 1)
    compile_s = time.process_time() - c
    ours, theirs, our_s, their_s, their_eval = [], [], 0.0, 0.0, 0.0
    for run in range(runs):
        c = time.process_time()
        ours.append(run_replicate(params, seed_for(0, run)).best_fitness)
        our_s += time.process_time() - c
        c = time.process_time()
        best, in_evaluate = deap_run(params, seed_for(1, run))
        their_s += time.process_time() - c
        theirs.append(best)
        their_eval += in_evaluate
    test = mannwhitneyu(ours, theirs, alternative="two-sided")
    same = bool(test.pvalue >= alpha)
    out(f"{runs} runs x {events:,} mating events, population {population}, mnm {mnm}, {states} states")
    out(f"{'system':>6} {'median best':>12} {'mean best':>10} {'min':>8} {'max':>8} {'cpu s/run':>10} {'ratio':>7}")
    for name, xs, s in (("epcg", ours, our_s), ("DEAP", theirs, their_s)):
        out(f"{name:>6} {statistics.median(xs):>12.1f} {statistics.fmean(xs):>10.1f} {min(xs):>8.1f} "
            f"{max(xs):>8.1f} {s / runs:>10.4f} {s / our_s:>6.1f}x")
    out(f"DEAP's CPU seconds in evaluate (epcg's compiled map builder): {their_eval / runs:.4f} a run, "
        f"{their_eval / their_s:.0%} of its time; the rest is the evolutionary machinery")
    out(f"Mann-Whitney U (two-sided): U = {test.statistic:.0f}, p = {test.pvalue:.3f} -> best-fitness "
        f"distributions {'not ' if same else ''}significantly different at alpha = {alpha:g}")
    out(f"ratio: CPU seconds per run against epcg's, same process; epcg's one-off compilation "
        f"({compile_s:.1f} s) is not in its seconds.")
    return {"epcg": ours, "deap": theirs, "epcg_seconds": our_s, "deap_seconds": their_s,
            "deap_evaluate_seconds": their_eval,
            "pvalue": float(test.pvalue), "same": same, "compile_seconds": compile_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--events", type=int, default=2000, help="mating events a run (the paper: 10,000)")
    parser.add_argument("--population", type=int, default=32)
    parser.add_argument("--mnm", type=int, default=1, help="most mutations a child")
    parser.add_argument("--states", type=int, default=12)
    parser.add_argument("--alpha", type=float, default=0.05)
    args = parser.parse_args()
    result = compare(args.runs, args.events, args.population, args.mnm, args.states, args.alpha)
    raise SystemExit(0 if result["same"] else 1)


if __name__ == "__main__":
    main()
