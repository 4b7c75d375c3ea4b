"""Does a deterministic count predict where a Witness must-cross row's scan spends its time?

One process cuts a row into many equal windows and, per window, times the
scan (CPU seconds, solution counts exact up to 1,000 as the shipped job) and
counts the nodes of the walk (``scan.walk``: prefixes and puzzles whose
solution sets it computes). It prints their correlation, then how even the
tasks would be (max / median and max / mean of their seconds, interpolated
from the windows) if the row were cut into ``--tasks`` ranges of equal ranks,
of equal estimated cost (``scan.cost_cuts``), of equal node count, and of
equal measured seconds (the best any cut can do at this resolution).

    python benchmarks/witness_cost_profile.py --row 4x4:6 --windows 420 --tasks 42
    python benchmarks/witness_cost_profile.py --row 5x5:5 --windows 310 --tasks 31
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from epcg.games.witness.domain import scan
from epcg.games.witness.domain.bitsets import bitsets_for
from epcg.search import Reductions, scan_range


def evenness(cuts: np.ndarray, window_cuts: np.ndarray, seconds: np.ndarray) -> tuple[float, float]:
    """max / median and max / mean of the seconds of the tasks ``cuts``, interpolated from the windows."""
    cumulative = np.concatenate([[0.0], np.cumsum(seconds)])
    tasks = np.diff(np.interp(cuts, window_cuts, cumulative))
    return tasks.max() / np.median(tasks), tasks.max() / tasks.mean()


def equal_shares(window_cuts: np.ndarray, cost: np.ndarray, tasks: int) -> np.ndarray:
    """Rank cuts at equal shares of ``cost`` (spread evenly inside each window)."""
    cumulative = np.concatenate([[0.0], np.cumsum(cost)])
    return np.interp(cumulative[-1] * np.arange(tasks + 1) / tasks, cumulative, window_cuts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--row", default="4x4:6", help="WxH:K of a must-cross row")
    parser.add_argument("--windows", type=int, default=420)
    parser.add_argument("--tasks", type=int, default=42)
    args = parser.parse_args()
    board, k = args.row.split(":")
    w, h, k = *map(int, board.split("x")), int(k)
    reductions = Reductions(min=True, ignore=0, histogram=True, cap=1000)
    bitsets_for(w, h)
    scan_range(scan.puzzle_space("must-cross", 2, 2, 1), 0, 1, reductions)  # compile outside the timing
    space = scan.puzzle_space("must-cross", w, h, k)
    total = space.max_rank
    window_cuts = np.array([total * j // args.windows for j in range(args.windows + 1)], dtype=np.float64)
    seconds, nodes = [], []
    for a, b in zip(window_cuts[:-1].astype(int), window_cuts[1:].astype(int)):
        began = time.process_time()
        scan_range(space, int(a), int(b), reductions)
        seconds.append(time.process_time() - began)
        nodes.append(scan.walk("must-cross", w, h, k, int(a), int(b))[1])
    seconds_, nodes_ = np.array(seconds), np.array(nodes, dtype=np.float64)
    print(f"must-cross {args.row}: {total:,} puzzles, {args.windows} windows, {seconds_.sum():.1f} CPU s, "
          f"{int(nodes_.sum()):,} nodes; correlation of window seconds and nodes "
          f"{np.corrcoef(seconds_, nodes_)[0, 1]:.2f}")
    cuts = {
        "equal ranks": np.array([total * j // args.tasks for j in range(args.tasks + 1)], dtype=np.float64),
        "cost_cuts": np.array(scan.cost_cuts(w, h, k, args.tasks), dtype=np.float64),
        "equal nodes": equal_shares(window_cuts, nodes_, args.tasks),
        "equal seconds": equal_shares(window_cuts, seconds_, args.tasks),
    }
    print(f"{'cut at':<14} {'max/median':>10} {'max/mean':>9}   ({args.tasks} tasks)")
    for name, c in cuts.items():
        median, mean = evenness(c, window_cuts, seconds_)
        print(f"{name:<14} {median:>10.2f} {mean:>9.2f}")


if __name__ == "__main__":
    main()
