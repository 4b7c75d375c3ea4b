"""Check random boards of a finished Fling! run against the slow reference solver of the tests.

    python benchmarks/fling_check_boards.py RUN_DIR [--pieces K] [--boards 1000] [--seed 0] [--processes 2]

Draws ``--boards`` ranks of layer K (default: the run's deepest) uniformly, reads each board's ``solvable`` and
``unique`` bits from the run as its records vouch for them (the deepest layer of a symmetric run at the board's
canonical image), solves the board with ``tests/reference/fling.py`` (plain depth-first search over frozensets of
cells, ``--processes`` boards at a time), and prints how many agree, the boards that do not, and the seconds both
took. Exit status 1 on any disagreement.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import epcg
from epcg.combinatorics.bitboard import _rank_lex_bb, _unrank_lex_bb
from epcg.games.fling.domain.layers import layer_size
from epcg.games.fling.domain.symmetry import canonical, symmetry_maps
from epcg.games.fling.found import orbits_only
from tests.reference import fling as reference


def stored_bits(run: epcg.Run, k: int, rank: int) -> tuple[bool, bool]:
    """``(solvable, unique)`` of board ``rank`` of layer ``k`` as the run stored them."""
    width, height = run.config.width, run.config.height
    prefix = ""
    if orbits_only(run.stored, k):
        n = width * height
        rank = int(_rank_lex_bb(canonical(_unrank_lex_bb(rank, n, k), symmetry_maps(width, height)), n, k))
        prefix = "orbits/"
    word, bit = rank // 64, np.uint64(rank % 64)
    solvable, unique = (int(run.stored.read(f"{prefix}{name}/{k}", word, word + 1)[0] >> bit) & 1
                        for name in ("solvable", "unique"))
    return bool(solvable), bool(unique)


def board_cells(width: int, height: int, k: int, rank: int) -> frozenset:
    """The reference's cells of board ``rank`` (bit ``y * width + x`` is cell ``(x, y)``)."""
    bits = int(_unrank_lex_bb(rank, width * height, k))
    return frozenset((c % width, c // width) for c in range(width * height) if bits >> c & 1)


def reference_count(width: int, height: int, k: int, rank: int) -> int:
    """Solutions of board ``rank`` by the reference solver (a fresh memo per board, as the tests use it)."""
    return reference.solutions(board_cells(width, height, k, rank), width, height)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run")
    parser.add_argument("--pieces", type=int, help="layer to check (default: the run's deepest)")
    parser.add_argument("--boards", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--processes", type=int, default=1, help="reference solvers running at once")
    args = parser.parse_args()
    run = epcg.open(args.run)
    width, height = run.config.width, run.config.height
    k = args.pieces or run.config.max_pieces
    ranks = np.random.default_rng([args.seed, k]).integers(0, layer_size(width, height, k), args.boards)
    began = time.perf_counter()
    stored = [stored_bits(run, k, rank) for rank in ranks.tolist()]
    read = time.perf_counter() - began
    began = time.perf_counter()
    with ProcessPoolExecutor(args.processes) as pool:
        counts = list(pool.map(partial(reference_count, width, height, k), ranks.tolist(), chunksize=8))
    solve = time.perf_counter() - began
    wrong, tally = [], {"unsolvable": 0, "unique": 0, "several": 0}
    for rank, (solvable, unique), count in zip(ranks.tolist(), stored, counts):
        tally["unsolvable" if count == 0 else "unique" if count == 1 else "several"] += 1
        if (solvable, unique) != (count >= 1, count == 1):
            wrong.append((rank, solvable, unique, count))
    print(f"{run.path}: layer {k} of {width}x{height}, {args.boards:,} random boards (seed {args.seed}): "
          f"{args.boards - len(wrong):,} agree with the reference solver, {len(wrong)} do not")
    print(f"reference: {tally['unsolvable']:,} unsolvable, {tally['unique']:,} uniquely solvable, "
          f"{tally['several']:,} with several solutions; {read:.1f} s reading the run, "
          f"{solve:.1f} s solving ({args.processes} at a time)")
    for rank, solvable, unique, count in wrong[:20]:
        print(f"  rank {rank}: run says solvable={solvable} unique={unique}, the reference counts {count} solutions")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
