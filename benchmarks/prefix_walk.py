"""Must-cross rows three ways in one process: the built-in kernel, the example on PrefixWalk, the example per rank.

- ``built-in``: ``epcg.games.witness.domain.scan.puzzle_space`` (the fused DFS kernel the Witness job runs);
- ``prefix walk``: ``examples/must-cross`` as shipped, a :class:`epcg.search.PrefixWalk`;
- ``per rank``: the example as it was before the walk existed, an ``evaluate(rank)``
  that unranks each placement and ANDs its ``k`` path bitsets from scratch.

All three compute the same reductions (fewest non-zero solutions with every
placement reaching it, ignored = unsolvable, histogram of every solution count
unless ``--cap``/``--no-histogram``) over the same rank windows: ``windows``
equal windows spread evenly over the row, together ``fraction`` of it. The
results must agree; CPU seconds are thread time of the scan calls alone
(compilation is timed once beforehand and printed apart). Each repeat runs the
variants in a rotated order; medians and ratios to the built-in are printed.

    python benchmarks/prefix_walk.py                       # 4x4:6 (10 %) and 5x5:5 (0.2 %)
    python benchmarks/prefix_walk.py --rows 4x4:6:1 --skip-per-rank --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "must-cross"))

from must_cross import must_cross  # noqa: E402

from epcg.combinatorics import Combinations  # noqa: E402
from epcg.combinatorics.binomial import BINOMIAL  # noqa: E402
from epcg.combinatorics.bits import popcount  # noqa: E402
from epcg.games.witness.domain.bitsets import bitsets_for  # noqa: E402
from epcg.games.witness.domain.scan import puzzle_space  # noqa: E402
from epcg.search import Reductions, ScanPartial, ScanSpace, scan_range  # noqa: E402


@njit(cache=True)
def count_solutions(rank, crossing, k, binomial):
    """The example's evaluator before PrefixWalk: paths crossing all ``k`` positions of placement ``rank``."""
    n = crossing.shape[0]
    solutions = crossing[0] | ~crossing[0]
    position = 0
    for i in range(k):
        while rank >= binomial[n - position - 1, k - i - 1]:
            rank -= binomial[n - position - 1, k - i - 1]
            position += 1
        solutions &= crossing[position]
        position += 1
    return sum([popcount(word) for word in solutions])


def per_rank_space(width: int, height: int, k: int) -> ScanSpace:
    crossing = np.ascontiguousarray(bitsets_for(width, height).cross)
    return ScanSpace(max_rank=Combinations(len(crossing), k).max_rank, evaluate=count_solutions,
                     data=(crossing, k, BINOMIAL), name=f"per-rank must-cross {width}x{height} k={k}")


def windows(total: int, fraction: float, count: int) -> list[tuple[int, int]]:
    """``count`` windows of equal size spread evenly over ``[0, total)``, together ``fraction`` of it."""
    if fraction >= 1:
        return [(0, total)]
    size = max(1, int(total * fraction / count))
    return [(a, min(a + size, total)) for a in (total * j // count for j in range(count))]


def timed(space: ScanSpace, cuts: list[tuple[int, int]], reductions: Reductions) -> tuple[float, ScanPartial]:
    began = time.thread_time()
    part = ScanPartial.merge([scan_range(space, a, b, reductions) for a, b in cuts])
    return time.thread_time() - began, part


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="+", default=["4x4:6:0.1", "5x5:5:0.002"],
                        help="WxH:K:FRACTION, the share of the row's ranks scanned (1 = all)")
    parser.add_argument("--windows", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cap", type=int, default=None, help="histogram cap (the shipped 5x5 jobs use 1000)")
    parser.add_argument("--no-histogram", action="store_true", help="only the minimum (solution_counts = 0)")
    parser.add_argument("--skip-per-rank", action="store_true", help="leave out the per-rank evaluator")
    args = parser.parse_args()
    reductions = Reductions(min=True, ignore=0, histogram=not args.no_histogram, cap=args.cap)
    print(f"reductions: {reductions}")
    for row in args.rows:
        board, k, fraction = row.split(":")
        width, height = map(int, board.split("x"))
        k, fraction = int(k), float(fraction)
        began = time.perf_counter()
        bitsets_for(width, height)
        print(f"\n{width}x{height} k={k}: path tables {time.perf_counter() - began:.1f} s")
        spaces = {"built-in": puzzle_space("must-cross", width, height, k),
                  "prefix walk": must_cross(width, height, k)}
        if not args.skip_per_rank:
            spaces["per rank"] = per_rank_space(width, height, k)
        total = spaces["built-in"].max_rank
        cuts = windows(total, fraction, args.windows)
        ranks = sum(b - a for a, b in cuts)
        for name, space in spaces.items():
            began = time.perf_counter()
            scan_range(space, 0, 1, reductions)
            print(f"  {name:<12} compile/load {time.perf_counter() - began:5.1f} s")
        seconds: dict[str, list[float]] = {name: [] for name in spaces}
        results: dict[str, ScanPartial] = {}
        names = list(spaces)
        for repeat in range(args.repeats):
            for name in names[repeat % len(names):] + names[: repeat % len(names)]:
                cpu, results[name] = timed(spaces[name], cuts, reductions)
                seconds[name].append(cpu)
        base = results["built-in"]
        for name, part in results.items():
            same = (part.count, part.ignored, part.argmin.value, part.argmin.ranks.tolist(), part.histogram) == \
                   (base.count, base.ignored, base.argmin.value, base.argmin.ranks.tolist(), base.histogram)
            if not same:
                raise SystemExit(f"{name} disagrees with the built-in kernel on {row}")
        print(f"  {ranks:,} of {total:,} placements ({ranks / total:.2%}) in {len(cuts)} windows; "
              f"min {base.argmin.value} at {len(base.argmin.ranks)}, {base.count - base.ignored:,} solvable; "
              f"all {len(results)} agree")
        reference = statistics.median(seconds["built-in"])
        for name in spaces:
            median = statistics.median(seconds[name])
            runs = " ".join(f"{s:.2f}" for s in seconds[name])
            print(f"  {name:<12} {median:8.2f} s CPU (median of {runs})  {median / reference:6.2f}x built-in")


if __name__ == "__main__":
    main()
