"""A Fling! fill's or layer stage's rate at a real layer's size: 7×8 tasks reading a layer of random bits.

A fill task (stage ``fNN``) reads one scattered bit of the orbit layer per board, and a layer task (stage
``kNN+1``) a few windows of the full layer ``NN`` per block of boards, so their speed depends on how large that
layer is (the caches, the TLB's reach) far more than on which bits are set. This builds a layer ``K`` of random
bits at its real size (``solvable``: a quarter of the words' bits set; ``unique``: the sparse index of 0.01 % of
the ranks) and times ``--tasks`` tasks of ``--task-words`` words spread evenly over the layer written (K for
``--stage fill``, K+1 for ``--stage layer``, symmetric) on ``--threads`` threads, as a worker's threads share one
layer. Prints the layer's size, the wall and CPU seconds of the tasks and boards per task-second (wall, per
thread): for fills, the figure ``kind.FILL_RATES`` holds.

    python benchmarks/fling_fill_scale.py --pieces 10            # 4.4 GB of solvable bits
    python benchmarks/fling_fill_scale.py --pieces 11 --tasks 8  # 18.6 GB: the 12-piece run's fill 11
    python benchmarks/fling_fill_scale.py --pieces 11 --tasks 8 --stage layer  # the 12-piece run's layer 12

Needs the layer's bytes free in memory, and twice that for a moment while the random bits are drawn.
``--run RUN`` reads layer K from a symmetric Fling! run's store instead of drawing it, the orbit layer for a fill
and the filled layer for a layer stage (the real layer: its unique boards cluster, and its tasks cost what that
run's did at the same places):

    python benchmarks/fling_fill_scale.py --pieces 10 --tasks 10 --run /var/tmp/epcg-fling12b/run
    python benchmarks/fling_fill_scale.py --pieces 9 --tasks 10 --stage layer --run /var/tmp/epcg-fling12b/run

A fill goes through the space's ``expand``, as a worker's tasks do: what a worker derives from the layer once (the
unique orbits' members) is made by a first task of 64 words, timed apart, as it is spread over a stage's thousands.
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from epcg.games.fling.domain import sparse
from epcg.games.fling.domain.layers import layer_size, layer_words
from epcg.games.fling.domain.symmetry import first_layer_symmetric, solve_words_symmetric
from epcg.games.fling.kind import fling_space, read_unique
from epcg.runtime.verification import open_run

WIDTH, HEIGHT = 7, 8


def random_layer(k: int, seed: int = 0) -> tuple[np.ndarray, sparse.BitIndex]:
    """Orbit layer ``k``'s two arrays, random: ``solvable`` a quarter set, ``unique`` 0.01 % of the ranks."""
    rng = np.random.default_rng(seed)
    words = layer_words(WIDTH, HEIGHT, k)
    solvable = np.empty(words, dtype=np.uint64)
    step = 1 << 24
    for a in range(0, words, step):
        b = min(a + step, words)
        solvable[a:b] = rng.integers(0, 1 << 64, b - a, dtype=np.uint64, endpoint=False)
        solvable[a:b] &= rng.integers(0, 1 << 64, b - a, dtype=np.uint64, endpoint=False)
    boards = layer_size(WIDTH, HEIGHT, k)
    ranks = np.unique(rng.integers(0, boards, max(boards // 10_000, 1)))
    unique = sparse.IndexBuilder(words)
    for a in range(0, words, step):
        b = min(a + step, words)
        piece = np.zeros(b - a, dtype=np.uint64)
        inside = ranks[(ranks >= 64 * a) & (ranks < 64 * b)] - 64 * a
        np.bitwise_or.at(piece, inside >> 6, np.left_shift(np.uint64(1), (inside & 63).astype(np.uint64)))
        unique.add(piece)
    return solvable, unique.finish()


def stored_layer(run: str, k: int, prefix: str) -> tuple[np.ndarray, sparse.BitIndex]:
    """Layer ``k`` of a symmetric Fling! run, the orbit layer (``prefix`` ``"orbits/"``) or the filled one
    (``""``): its ``solvable`` words and the index of its ``unique`` bits."""
    stored = open_run(run)
    return stored.arrays.read_array(f"{prefix}solvable/{k}"), read_unique(stored, f"{prefix}unique/{k}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pieces", type=int, default=10, help="the layer read, K")
    parser.add_argument("--stage", choices=("fill", "layer"), default="fill",
                        help="fill layer K from it, or solve layer K+1 from it")
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--task-words", type=int, default=1 << 19, help="words a task writes (the 12-piece run: 2^19)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--run", help="read layer K from this symmetric Fling! run instead of drawing it")
    args = parser.parse_args()
    k = args.pieces
    began = time.perf_counter()
    prefix = "orbits/" if args.stage == "fill" else ""  # a fill reads the orbit layer, a layer task the filled one
    solvable, unique = stored_layer(args.run, k, prefix) if args.run else random_layer(k)
    print(f"layer {k}: {solvable.nbytes / 1e9:.2f} GB of solvable bits, {unique.count():,} unique, "
          f"{'read' if args.run else 'made'} in {time.perf_counter() - began:.0f} s", flush=True)
    if args.stage == "fill":
        written = k
        space = fling_space(WIDTH, HEIGHT, k, True)
        space.expand(1, first_layer_symmetric(WIDTH, HEIGHT)[:2], 0, 1)  # compile

        def solve(start: int, stop: int) -> None:
            space.expand(k, (solvable, unique), start, stop)
    else:
        written = k + 1

        def solve(start: int, stop: int) -> None:
            solve_words_symmetric(WIDTH, HEIGHT, k + 1, solvable, unique, start, stop)
    words = layer_words(WIDTH, HEIGHT, written)
    began = time.perf_counter()
    solve(0, 64)  # compiles; a fill also derives from the layer what a worker derives once per layer
    print(f"first task of 64 words (once per worker and layer): {time.perf_counter() - began:.1f} s", flush=True)
    # A task's cost depends on where in the layer it lies (ten times over a layer stage), so the tasks sit at the
    # middles of equal shares of the layer: their mean is the stage's.
    starts = [min(words * (2 * i + 1) // (2 * args.tasks), words - args.task_words) for i in range(args.tasks)]

    def task(start: int) -> float:
        cpu = time.thread_time()
        solve(start, start + args.task_words)
        return time.thread_time() - cpu

    began = time.perf_counter()
    with ThreadPoolExecutor(args.threads) as pool:
        cpu = sum(pool.map(task, starts))
    wall = time.perf_counter() - began
    boards = 64 * args.task_words * args.tasks
    per_thread = boards / (wall * min(args.threads, args.tasks))
    stage = f"{'f' if args.stage == 'fill' else 'k'}{written:02d}"
    print(f"stage {stage}: {args.tasks} tasks of {args.task_words:,} words on {args.threads} threads: "
          f"wall {wall:.1f} s, CPU {cpu:.1f} s; {per_thread / 1e6:.2f} M boards per task-second (wall), "
          f"{boards / cpu / 1e6:.2f} M per CPU second")


if __name__ == "__main__":
    main()
