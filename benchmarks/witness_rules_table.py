"""The fewest symbols of one type that leave a 4x4 panel exactly one solution, and every such panel.

    python benchmarks/witness_rules_table.py                 # 4x4, up to 10^9 placements a row
    python benchmarks/witness_rules_table.py --board 3x3 --most 1000000
    python benchmarks/witness_rules_table.py --symbols "star pairs" --exits border

For triangles and for star pairs (``2p`` stars in ``p`` colours), with the exit
at the top right corner and free on the border, rows of 1, 2, ... symbols are
scanned whole (``epcg.search.scan_range`` with the fused rules kernel) until
one has a placement with exactly one solution, or the next row would exceed
``--most`` placements. Printed per row: placements, solvable ones, the fewest
solutions, how many placements have it, the longest solution among them, CPU
seconds of the row and of every row of that symbol and exit so far (what it
took to find the panels); for a row at one solution, each of its placements
decoded.
"""

from __future__ import annotations

import argparse
import time

from epcg.games.witness.domain.rule_scan import puzzle_space
from epcg.games.witness.domain.rules import RuleRow
from epcg.games.witness.rule_scans import decoded
from epcg.search import Reductions, scan_range

REDUCTIONS = Reductions(min=True, ignore=0)


def rows(w: int, h: int, symbol: str, exits: str, n: int) -> RuleRow:
    if symbol == "triangles":
        return RuleRow(width=w, height=h, triangles=n, exits=exits)
    return RuleRow(width=w, height=h, stars=2 * n, colours=n, exits=exits)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default="4x4", help="WxH (default 4x4)")
    parser.add_argument("--most", type=int, default=1_000_000_000, help="largest row scanned (placements)")
    parser.add_argument("--symbols", nargs="+", default=["triangles", "star pairs"],
                        choices=["triangles", "star pairs"])
    parser.add_argument("--exits", nargs="+", default=["corner", "border"], choices=["corner", "border"])
    parser.add_argument("--shown", type=int, default=12, help="panels at one solution printed per row at most")
    args = parser.parse_args()
    w, h = (int(t) for t in args.board.split("x"))
    for symbol in args.symbols:
        for exits in args.exits:
            n = 1
            total = 0.0
            while True:
                row = rows(w, h, symbol, exits, n)
                if row.max_rank > args.most:
                    print(f"{symbol:<10} exit {exits:<6} n={n}: {row.max_rank:,} placements, past --most; stop")
                    break
                began = time.thread_time()
                part = scan_range(puzzle_space(row), 0, row.max_rank, REDUCTIONS)
                seconds = time.thread_time() - began
                total += seconds
                longest = int(part.argmin.payload.max()) if len(part.argmin.payload) else None
                print(f"{symbol:<10} exit {exits:<6} n={n}: {row.max_rank:>11,} placements "
                      f"{part.count - part.ignored:>11,} solvable  fewest {part.argmin.value}  on "
                      f"{len(part.argmin.ranks):,}  longest {longest}  {seconds:.2f} CPU s ({total:.2f} so far)", flush=True)
                if part.argmin.value == 1:
                    for rank in part.argmin.ranks[: args.shown].tolist():
                        d = decoded(row, int(rank))
                        cells = ", ".join(f"{c['symbol']} {c.get('count', c.get('colour'))} at {tuple(c['cell'])}"
                                          for c in d["cells"])
                        print(f"    rank {rank}: {cells}; exit {d['exits'][0]}; solution {'-'.join(d['solution'])}")
                    break
                n += 1


if __name__ == "__main__":
    main()
