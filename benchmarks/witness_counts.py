"""What the whole distribution of solution counts costs: the scan kernel with and without it, same process.

Per row (or a rank range of it): CPU seconds with the minimum search only
(``solution_counts = 0``), with counts exact up to a cap, and with every count
exact (``"all"``), and the ratio to the minimum search. Each variant runs twice
in alternation; the faster of the two is printed.

    python benchmarks/witness_counts.py                       # 4x4 k=6 and a 2M-puzzle slice of 5x5 k=6
    python benchmarks/witness_counts.py --caps 0,1000,all
"""

from __future__ import annotations

import argparse
import time

from epcg.games.witness.domain.bitsets import bitsets_for
from epcg.games.witness.domain.scan import puzzle_space
from epcg.search import Reductions, scan_range

# (kind, width, height, k, first rank, last rank or None for the whole row)
ROWS = [("must-cross", 4, 4, 6, 0, None), ("must-cross", 5, 5, 6, 400_000_000, 402_000_000),
        ("regions", 4, 4, 6, 0, None)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--caps", default="0,1000,all", help="solution_counts values, comma-separated")
    args = parser.parse_args()
    caps = [None if c == "all" else int(c) for c in args.caps.split(",")]
    for cap in caps:  # compile both kernel variants (histogram or not) outside the timing
        for kind in ("must-cross", "regions"):
            scan_range(puzzle_space(kind, 2, 2, 2), 0, 1, Reductions(min=True, ignore=0, histogram=True, cap=cap))
    print(f"{'kind':<10} {'board':>5} {'k':>2} {'ranks':>22} " + " ".join(f"{str(c if c is not None else 'all'):>14}" for c in caps))
    for kind, w, h, k, start, stop in ROWS:
        bitsets_for(w, h)
        space = puzzle_space(kind, w, h, k)
        stop = space.max_rank if stop is None else stop
        best = {}
        for _ in range(2):
            for cap in caps:
                t = time.process_time()
                scan_range(space, start, stop, Reductions(min=True, ignore=0, histogram=True, cap=cap))
                best[cap] = min(best.get(cap, float("inf")), time.process_time() - t)
        base = best[caps[0]]
        cells = " ".join(f"{best[c]:>7.2f}s {best[c] / base:>5.1f}x" for c in caps)
        print(f"{kind:<10} {w}x{h:<3} {k:>2} {f'[{start:,}, {stop:,})':>22} {cells}", flush=True)


if __name__ == "__main__":
    main()
