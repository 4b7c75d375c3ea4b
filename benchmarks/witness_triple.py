"""Single-process seconds to the proven optimum of the Witness triple panels (paper Algorithm 6).

For each panel space and variant: generate every sub-panel's solution set,
group them into distinct sets, then branch and bound over all first classes
(one range, no shared incumbent). Prints panels, solvable panels, distinct
sets, the optimum and its triples, node counts, and seconds per phase; the
total is the time to the proven optimum (after numba compilation, timed
separately on a tiny space).

    python benchmarks/witness_triple.py            # 3x3 sub-panels, 3 of 24 pieces, both variants
    python benchmarks/witness_triple.py --4x4      # also 4x4 sub-panels (about a minute, 1.5 GB)
"""

from __future__ import annotations

import argparse
import resource
import time

from epcg.games.witness.domain.piece_panels import max_rank
from epcg.games.witness.domain.pieces import LIBRARY
from epcg.games.witness.domain.triple import count_arrangements, search_range, triple_info
from epcg.games.witness.domain.triple_problem import problem_for


def run(width: int, height: int, separate: bool) -> None:
    t0 = time.perf_counter()
    prob = problem_for(width, height, 3, LIBRARY, separate)
    prob.inverted  # noqa: B018 - the search's index, built once per process
    gen = time.perf_counter() - t0
    for mode in ("all", "first"):
        t1 = time.perf_counter()
        result = search_range(prob, 0, prob.num_sets, mode=mode)
        bb = time.perf_counter() - t1
        arrangements = sum(count_arrangements(prob, t) for t in result.sets)
        variant = "separate" if separate else "plain"
        print(f"{width}x{height} {variant:<8} {mode:<5} {max_rank(width, height, 3, 24):>10,} {prob.solvable:>10,} "
              f"{prob.num_sets:>9,} {result.score:>5} {len(result.sets):>7} {arrangements:>9,} "
              f"{result.nodes:>12,} {result.pruned:>14,} {gen:>7.2f} {bb:>7.2f} {gen + bb:>7.2f}")
    info = triple_info(prob, result.sets[0])
    print(f"    first optimal: classes {info.classes}, panels {info.panels}, path {info.moves}, "
          f"solutions {info.set_counts}, pairs {info.pair_counts}; "
          f"peak RSS so far {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.1f} GB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--4x4", dest="big", action="store_true", help="also the 4x4 sub-panels")
    args = parser.parse_args()
    t = time.perf_counter()
    small = problem_for(2, 3, 2, ("#", "##/#."))
    search_range(small, 0, small.num_sets)
    print(f"compile (or load from cache): {time.perf_counter() - t:.2f}s")
    print(f"{'board':<5} {'variant':<8} {'mode':<5} {'panels':>10} {'solvable':>10} {'distinct':>9} "
          f"{'score':>5} {'triples':>7} {'ordered':>9} {'nodes':>12} {'pruned':>14} {'gen s':>7} "
          f"{'B&B s':>7} {'total s':>7}")
    sizes = [(3, 3)] + ([(4, 4)] if args.big else [])
    for width, height in sizes:
        for separate in (False, True):
            run(width, height, separate)


if __name__ == "__main__":
    main()
