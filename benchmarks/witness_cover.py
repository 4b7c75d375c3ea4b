"""Seconds of the unique-cover branch and bound against the exhaustive must-cross scan, per board.

The question: the fewest must-cross hexagons leaving exactly one solution, and
every panel that does it. The baseline answers it by scanning all C(n, k)
puzzles for k = 1, 2, ... until the minimum number of solutions is 1
(``scan.scan_range``, the Table 2 kernel); the branch and bound answers it from
the solution side (``cover.unique_covers``). Both run single-threaded in this
process, path and bitset tables built beforehand; the script checks that they
find the same k and the same panels.

    python benchmarks/witness_cover.py                  # 3x3, 4x3, 4x4 with the scan baseline
    python benchmarks/witness_cover.py --boards 5x4 5x5 --no-scan
"""

from __future__ import annotations

import argparse
import itertools
import time

from epcg.games.witness.domain.bitsets import bitsets_for
from epcg.games.witness.domain.cover import cover_positions, unique_covers
from epcg.games.witness.domain.scan import decode, puzzle_space
from epcg.search import Reductions, scan_range


def timed(fn, *args, **kw):
    t, c = time.perf_counter(), time.process_time()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t, time.process_time() - c


def fewest_solutions(w: int, h: int, k: int):
    """The exhaustive must-cross scan of one row: its fewest non-zero solutions and every rank at it."""
    space = puzzle_space("must-cross", w, h, k)
    return scan_range(space, 0, space.max_rank, Reductions(ignore=0)).argmin


def scan_answer(w: int, h: int) -> tuple[int, set[tuple[int, ...]]]:
    for k in itertools.count(1):
        r = fewest_solutions(w, h, k)
        if r.value == 1:
            return k, {decode("must-cross", w, h, k, int(x)).cross for x in r.ranks}
    raise AssertionError("unreachable")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", nargs="+", default=["3x3", "4x3", "4x4"])
    parser.add_argument("--no-scan", action="store_true", help="skip the exhaustive scan baseline")
    args = parser.parse_args()
    unique_covers(2, 2)
    fewest_solutions(2, 2, 1)  # compile both kernels outside the timings
    print(f"{'board':>5} {'k':>3} {'panels':>7} {'paths cut':>9} {'nodes':>11} {'checked':>8} "
          f"{'wall s':>8} {'cpu s':>8} {'scan s':>8} {'scan cpu':>8} {'ratio':>7}")
    for text in args.boards:
        w, h = map(int, text.split("x"))
        bitsets_for(w, h)
        r, wall, cpu = timed(unique_covers, w, h)
        line = (f"{text:>5} {r.k:>3} {len(r.paths):>7,} {r.discarded:>9,} {r.nodes:>11,} {r.checked:>8,} "
                f"{wall:>8.2f} {cpu:>8.2f}")
        if not args.no_scan:
            (k, panels), swall, scpu = timed(scan_answer, w, h)
            assert (k, panels) == (r.k, {cover_positions(m) for m in r.masks}), text
            line += f" {swall:>8.2f} {scpu:>8.2f} {scpu / cpu:>6.1f}x"
        print(line, flush=True)
    print("ratio: scan CPU seconds / branch-and-bound CPU seconds, same process (the machine may be shared).")


if __name__ == "__main__":
    main()
