"""Placements per CPU second of mixed rules rows against must-cross on the same board, and their ratio.

    python benchmarks/witness_rules.py              # 4x4 (the default)
    python benchmarks/witness_rules.py --board 3x4

Each row is one ``epcg.search.scan_range`` over its whole space with a rules
job's reductions (fewest solutions, histogram of every count), after one call
that compiles the kernels and builds the row's tables. CPU seconds of this
thread (``time.thread_time``), the least of as many scans as fill a second, so
other processes on the machine inflate them less than wall time; the ratio of
two rows measured in one run is the figure to read. The goal: a mixed row of bitset rules (hexagons with triangles) within
2x the per-placement time of must-cross. Rows whose paths are checked one by
one (tetris, eliminations) are far slower and are printed for scale.
"""

from __future__ import annotations

import argparse
import time

from epcg.games.witness.domain.rule_scan import puzzle_space as rules_space
from epcg.games.witness.domain.rules import RuleRow
from epcg.games.witness.domain.scan import puzzle_space as witness_space
from epcg.search import Reductions, scan_range

REDUCTIONS = Reductions(min=True, ignore=0, histogram=True)


MIN_SECONDS = 1.0
"""A small row is scanned again until its scans add up to this much CPU time, so its figure is not a timer tick."""


def timed(space) -> tuple[float, object]:
    """CPU seconds of one scan of the whole space (the least of the scans made in ``MIN_SECONDS``), and its
    partial."""
    scan_range(space, 0, min(space.max_rank, 16), REDUCTIONS)  # compile, build the tables
    best, total = float("inf"), 0.0
    while total < MIN_SECONDS:
        began = time.thread_time()
        part = scan_range(space, 0, space.max_rank, REDUCTIONS)
        seconds = time.thread_time() - began
        best, total = min(best, seconds), total + seconds
    return best, part


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default="4x4", help="WxH (default 4x4)")
    args = parser.parse_args()
    w, h = (int(t) for t in args.board.split("x"))
    seconds, part = timed(witness_space("must-cross", w, h, 4))
    base = seconds / part.count
    print(f"{'row':<48} {'placements':>11} {'min':>4} {'CPU s':>8} {'us/placement':>13} {'x must-cross':>13}")
    print(f"{f'must-cross {w}x{h} k=4':<48} {part.count:>11,} {part.argmin.value:>4} {seconds:>8.2f} "
          f"{1e6 * base:>13.3f} {1.0:>13.2f}")
    rows = [
        ("hexagons 4 (must-cross's space, rules kernel)", RuleRow(width=w, height=h, hexagons=4)),
        ("hexagons 2 + triangles 2", RuleRow(width=w, height=h, hexagons=2, triangles=2)),
        ("hexagons 3 + triangles 1", RuleRow(width=w, height=h, hexagons=3, triangles=1)),
        ("squares 2 + stars 2", RuleRow(width=w, height=h, squares=2, stars=2)),
        ("hexagons 1 + tetris 2 (paths checked one by one)",
         RuleRow(width=w, height=h, hexagons=1, tetris=2, pieces=("##", "##/#."), rotate=True)),
    ]
    for name, row in rows:
        seconds, part = timed(rules_space(row))
        per = seconds / part.count
        print(f"{name:<48} {part.count:>11,} {part.argmin.value:>4} {seconds:>8.2f} {1e6 * per:>13.3f} "
              f"{per / base:>13.2f}")


if __name__ == "__main__":
    main()
