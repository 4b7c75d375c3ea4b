"""The fewest star pairs that leave a panel exactly one solution, with each pair its own colour.

    python benchmarks/witness_star_pairs.py                    # 4x4, exit at the corner, 1..8 pairs
    python benchmarks/witness_star_pairs.py --exits border --least 3 --most 3

A rules row of ``2p`` stars in ``p`` colours places every colouring, most of
them not ``p`` pairs (six white stars and two black ones are four stars too).
Here only pairs are placed: ``2p`` cells, split into ``p`` unordered pairs,
pair ``i`` in colour ``i`` (colours are interchangeable, so one colouring per
split), each such panel counted by the rules row's per-rank evaluator
(``rule_scan.puzzle_space(row).evaluate``) at the rank that places it. Printed
per ``p``: panels, solvable ones, the fewest solutions, the panels there, CPU
seconds (of this thread, for the whole count and so far); for one solution,
the panels decoded.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Iterator

from epcg.games.witness.domain.rule_scan import puzzle_space
from epcg.games.witness.domain.rules import RuleRow
from epcg.games.witness.rule_scans import decoded


def pairings(items: tuple[int, ...]) -> Iterator[list[tuple[int, int]]]:
    """Every split of ``items`` (an even number) into unordered pairs.

    >>> [p for p in pairings((0, 1, 2, 3))]
    [[(0, 1), (2, 3)], [(0, 2), (1, 3)], [(0, 3), (1, 2)]]
    """
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for i, other in enumerate(rest):
        for tail in pairings(rest[:i] + rest[i + 1:]):
            yield [(first, other), *tail]


def pair_ranks(row: RuleRow, p: int) -> Iterator[int]:
    """The ranks of ``row`` (``2p`` stars in ``p`` colours) whose stars are ``p`` pairs, pair ``i`` in colour
    ``i`` by the order of its first cell."""
    starts, exits, gaps, hexagons, cells, arrangements, values = row.radices
    assert (starts, gaps, hexagons, arrangements) == (1, 1, 1, 1)
    colourings = []
    for split in pairings(tuple(range(2 * p))):
        colour = [0] * (2 * p)
        for i, (a, b) in enumerate(split):
            colour[a] = colour[b] = i
        colourings.append(sum(k * p ** (2 * p - 1 - j) for j, k in enumerate(colour)))
    for x in range(exits):
        for c in range(cells):  # the rank of each set of 2p cells
            for value in colourings:
                yield (x * cells + c) * values + value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default="4x4", help="WxH (default 4x4)")
    parser.add_argument("--exits", default="corner", choices=["corner", "border"])
    parser.add_argument("--least", type=int, default=1, help="fewest pairs")
    parser.add_argument("--most", type=int, default=8, help="most pairs (at most the 8 colours)")
    parser.add_argument("--shown", type=int, default=12, help="panels at one solution printed at most")
    args = parser.parse_args()
    w, h = (int(t) for t in args.board.split("x"))
    total = 0.0
    for p in range(args.least, args.most + 1):
        row = RuleRow(width=w, height=h, stars=2 * p, colours=p, exits=args.exits)
        space = puzzle_space(row)
        space.evaluate(0, *space.data)  # compile
        began = time.thread_time()
        fewest, at, solvable, panels = math.inf, [], 0, 0
        for rank in pair_ranks(row, p):
            panels += 1
            n = space.evaluate(rank, *space.data)
            if n == 0:
                continue
            solvable += 1
            if n < fewest:
                fewest, at = n, []
            if n == fewest:
                at.append(rank)
        seconds = time.thread_time() - began
        total += seconds
        print(f"{p} pair(s), exit {args.exits}: {panels:,} panels  {solvable:,} solvable  fewest {fewest}  on "
              f"{len(at):,}  {seconds:.2f} CPU s ({total:.2f} so far)", flush=True)
        if fewest == 1:
            for rank in at[: args.shown]:
                d = decoded(row, rank)
                cells = ", ".join(f"{c['colour']} {tuple(c['cell'])}" for c in d["cells"])
                print(f"    rank {rank}: {cells}; exit {d['exits'][0]}; solution {'-'.join(d['solution'])}")
            break


if __name__ == "__main__":
    main()
