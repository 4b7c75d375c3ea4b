"""The expert evaluation's rate on a finished 7×8 run's uniquely solvable boards: what ``top`` and ``rNN`` do.

Evaluates (brute and expert tree sizes, ``distribution.trees_of_words``) the boards of ``--tasks`` word ranges of
``--words`` words each, spread evenly over layer ``--pieces``'s stored ``unique`` bits (the orbit array when the run
used symmetry), one range after another in one thread as a worker's task thread does. Prints the boards evaluated,
the sums of their tree sizes (the same on every commit: they check the evaluator, not its speed) and the boards per
CPU second.

    python benchmarks/fling_evaluate.py --run runs/fling-11 --pieces 11
    python benchmarks/compare_commits.py BASE benchmarks/fling_evaluate.py --metric "([\\d.]+) boards per CPU second" \\
        -- --run /var/tmp/e11a/run --pieces 11
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from epcg.games.fling.domain.distribution import trees_of_words
from epcg.runtime.verification import open_run

WIDTH, HEIGHT = 7, 8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="a finished Fling! run directory")
    parser.add_argument("--pieces", type=int, default=10, help="the layer whose uniquely solvable boards to evaluate")
    parser.add_argument("--tasks", type=int, default=8, help="word ranges, spread evenly over the layer")
    parser.add_argument("--words", type=int, default=1 << 21, help="words per range")
    args = parser.parse_args()

    run = open_run(args.run)
    name = f"orbits/unique/{args.pieces}" if run.arrays.has_array(f"orbits/unique/{args.pieces}") else f"unique/{args.pieces}"
    array = run.arrays.array(name)
    symmetric = name.startswith("orbits/")
    total = array.shape[0]
    starts = np.linspace(0, max(total - args.words, 0), args.tasks).astype(np.int64).tolist()
    ranges = [(s, np.asarray(array[s:min(s + args.words, total)])) for s in starts]
    trees_of_words(WIDTH, HEIGHT, args.pieces, ranges[0][1][:64], ranges[0][0], symmetric=symmetric)  # compile

    boards = brute = expert = 0
    began = time.process_time()
    for start, words in ranges:
        ranks, b, e, _ = trees_of_words(WIDTH, HEIGHT, args.pieces, words, start, symmetric=symmetric)
        boards += len(ranks)
        brute += int(b.sum())
        expert += int(e.sum())
    seconds = time.process_time() - began
    print(f"{name}: {args.tasks} ranges of {args.words} words, {boards} boards evaluated in {seconds:.2f} CPU s")
    print(f"tree sizes summed: brute {brute}, expert {expert}")
    print(f"{boards / seconds:.1f} boards per CPU second")


if __name__ == "__main__":
    main()
