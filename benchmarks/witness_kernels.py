"""Single-process seconds of the Witness scan kernels for every row of the paper's Tables 2 and 3.

Prints compile time (first call on a tiny board; near zero when numba's cache is
warm), then per row: puzzles, min non-zero solutions (ours and the paper's),
puzzles at the min, the longest solution among them and how many reach it, our
wall and CPU seconds (path and bitset tables built beforehand) and the paper's.

    python benchmarks/witness_kernels.py            # Tables 2 and 3
    python benchmarks/witness_kernels.py --joint    # also the two joint rows
    python benchmarks/witness_kernels.py --solution-counts all   # with the whole solution-count histogram

Each row is one ``epcg.search.scan_range`` over the row's ``puzzle_space`` with
the Witness job's reductions (``--solution-counts``: the job key of that name).
"""

from __future__ import annotations

import argparse
import time

from epcg.games.witness.domain.bitsets import bitsets_for
from epcg.games.witness.domain.scan import puzzle_space
from epcg.search import Reductions, scan_range

# (kind, width, height, k, paper min, paper seconds); the paper's boards are height x width.
ROWS = [
    ("must-cross", 3, 3, 3, 4, 0.01),
    ("must-cross", 3, 3, 5, 1, 1.51),
    ("must-cross", 4, 3, 3, 16, 0.20),
    ("must-cross", 4, 3, 5, 1, 5.42),
    ("must-cross", 4, 4, 3, 190, 0.59),
    ("must-cross", 4, 4, 4, 27, 6.01),
    ("must-cross", 4, 4, 5, 2, 73.41),
    ("must-cross", 4, 4, 6, 1, 969.74),
    ("regions", 3, 3, 3, 14, 0.01),
    ("regions", 3, 3, 5, 1, 0.08),
    ("regions", 4, 3, 3, 87, 0.24),
    ("regions", 4, 3, 4, 20, 0.59),
    ("regions", 4, 3, 5, 2, 1.38),
    ("regions", 4, 4, 3, 820, 6.25),
    ("regions", 4, 4, 4, 218, 24.56),
    ("regions", 4, 4, 5, 74, 74.36),
    ("regions", 4, 4, 6, 2, 219.36),
]
JOINT = [
    ("joint", 4, 3, (2, 4), 1, 173.04),
    ("joint", 4, 4, (3, 3), 2, 5721.52),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--joint", action="store_true", help="also run the joint rows")
    parser.add_argument("--solution-counts", default="0",
                        help="tally solution counts exactly up to this many, or 'all' (default 0, as the jobs)")
    args = parser.parse_args()
    cap = None if args.solution_counts == "all" else int(args.solution_counts)
    reductions = Reductions(min=True, ignore=0, histogram=True, cap=cap)
    t = time.perf_counter()
    for kind, k in (("must-cross", 2), ("regions", 2), ("joint", (1, 2))):
        space = puzzle_space(kind, 2, 2, k)
        scan_range(space, 0, space.max_rank, reductions)
    print(f"compile (or load from cache): {time.perf_counter() - t:.2f}s")
    rows = ROWS + (JOINT if args.joint else [])
    total = 0.0
    header = f"{'kind':<10} {'board':>5} {'k':>6} {'puzzles':>12} {'min':>5} {'paper':>5} {'at min':>7} " \
             f"{'longest':>7} {'#longest':>8} {'seconds':>8} {'cpu s':>8} {'paper s':>8}"
    print(header)
    for kind, w, h, k, paper_min, paper_s in rows:
        bitsets_for(w, h)  # tables are built once per process, outside the timing
        space = puzzle_space(kind, w, h, k)
        n = space.max_rank
        t, c = time.perf_counter(), time.process_time()
        r = scan_range(space, 0, n, reductions).argmin
        dt, cpu = time.perf_counter() - t, time.process_time() - c
        total += cpu if kind != "joint" else 0.0
        longest = int(r.payload.max()) if len(r.payload) else 0
        at_longest = int((r.payload == longest).sum()) if len(r.payload) else 0
        ks = "+".join(map(str, k)) if isinstance(k, tuple) else str(k)
        print(f"{kind:<10} {h}x{w:<3} {ks:>6} {n:>12,} {r.value:>5} {paper_min:>5} {len(r.ranks):>7,} "
              f"{longest:>7} {at_longest:>8,} {dt:>8.3f} {cpu:>8.3f} {paper_s:>8.2f}")
    print(f"Tables 2 and 3 together: {total:.2f}s CPU, single process")


if __name__ == "__main__":
    main()
