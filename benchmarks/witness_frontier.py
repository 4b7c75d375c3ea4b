"""Seconds of the frontier path counter: n×n boards, must-cross puzzles, and listing as the baseline.

Prints, per square board, the number of start-to-goal paths, the CPU seconds and
the largest number of live frontier states (optionally the seconds of the
plain Python programme of ``tests/reference`` and the ratio); then, where the paths can still be
listed (up to 5×5), the seconds of listing them (``paths_for``) and the ratio;
then the solution counts of must-cross puzzles on 6×6 and 7×7 boards, counted
without listing a single path.

    python benchmarks/witness_frontier.py             # boards up to 10x10 (a few seconds)
    python benchmarks/witness_frontier.py --max 12    # adds 11x11 and 12x12 (about 10 s)
    python benchmarks/witness_frontier.py --python 9  # also the plain Python programme (tests/reference) to 9x9
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from epcg.games.witness.domain.frontier import GridGraph, frontier_run
from epcg.games.witness.domain.paths import _build, paths_for


def run(width: int, height: int, cross=()) -> tuple[int, float, int]:
    """``(count, CPU seconds, widest layer)`` of one frontier run."""
    t = time.process_time()
    r = frontier_run(width, height, cross)
    return r.count, time.process_time() - t, r.widest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=10, help="largest side (default 10)")
    parser.add_argument("--python", type=int, default=0, metavar="N",
                        help="time the plain Python programme of tests/reference too, up to NxN")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.reference.witness_frontier import count_paths as python_count
    paths_for(2, 2)  # load the listing and counting kernels outside the timings
    frontier_run(2, 2)
    print(f"{'board':>7} {'paths':>40} {'seconds':>9} {'states':>9} {'list s':>8} {'ratio':>7}")
    for n in range(1, args.max + 1):
        count, seconds, widest = run(n, n)
        line = f"{n}x{n:<5} {count:>40,} {seconds:>9.3f} {widest:>9,}"
        if n <= 5:
            _build.cache_clear()
            t = time.process_time()
            listed = len(paths_for(n, n))
            list_s = time.process_time() - t
            assert listed == count, (n, listed, count)
            line += f" {list_s:>8.3f} {list_s / seconds:>6.1f}x"
        else:
            line += " " * 17
        if n <= args.python:
            t = time.process_time()
            assert python_count(n, n) == count, n
            py_s = time.process_time() - t
            line += f"   Python programme {py_s:8.3f} s, {py_s / seconds:6.1f}x"
        print(line, flush=True)
    print("\nmust-cross puzzles (positions numbered as in geometry.py), counted without listing:")
    rng = random.Random(2026)
    for n, k in ((6, 4), (6, 8), (7, 4), (7, 8), (7, 12)):
        g = GridGraph(n, n)
        cross = sorted(rng.sample(range(g.num_positions), k))
        count, seconds, widest = run(n, n, cross)
        print(f"{n}x{n} k={k:<3} {count:>16,} solutions {seconds:>7.3f}s  states {widest:>7,}  cross={cross}")


if __name__ == "__main__":
    main()
