"""CPU cost of a Fling! layer on 7x8, per kernel, unreduced vs symmetric, per board represented.

Builds layers 1 .. K-1 both ways on two threads (unreduced with the one-board
``fast`` kernel; symmetric with the ``block`` kernel: orbit layers, each filled
for the next, and checked equal to the unreduced ones), then times one thread
(``time.thread_time``, so other processes on a shared machine distort it less
than wall time) on the same random word ranges of layer K: both kernels
unreduced and symmetric, and the fill of layer K-1 that a symmetric layer K
needs (timed on random ranges of layer K-1, scaled to the whole layer).
Prints boards represented per CPU second of each and its ratio to the
unreduced ``fast`` kernel, the baseline. ``--full`` also builds the whole
symmetric layer K on two threads and prints its counts.

    python benchmarks/fling_symmetry.py [--pieces 8] [--ranges 200] [--range-words 256] [--full]
"""

from __future__ import annotations

import argparse
import random
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from epcg.games.fling.domain.layers import first_layer, layer_size, layer_words, solve_words
from epcg.games.fling.domain.sparse import bit_index
from epcg.games.fling.domain.symmetry import expand_words, first_layer_symmetric, solve_words_symmetric

WIDTH, HEIGHT = 7, 8
CHUNK = 1 << 15


def on_threads(k: int, solve) -> list:
    """``solve(a, b)`` over the word ranges of layer ``k`` on two threads, in order."""
    total = layer_words(WIDTH, HEIGHT, k)
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(lambda a: solve(a, min(a + CHUNK, total)), range(0, total, CHUNK)))


def build(kmax: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """Layer ``kmax``: unreduced, symmetric (orbits) and filled (checked equal to the unreduced)."""
    full = first_layer(WIDTH, HEIGHT)
    filled = orbits = first_layer_symmetric(WIDTH, HEIGHT)[:2]
    for k in range(2, kmax + 1):
        held = (full[0], bit_index(full[1]))
        parts = on_threads(k, lambda a, b, k=k, prev=held: solve_words(WIDTH, HEIGHT, k, *prev, a, b, kernel="fast"))
        full = tuple(np.concatenate([p[i] for p in parts]) for i in range(2))
        held = (filled[0], bit_index(filled[1]))
        parts = on_threads(k, lambda a, b, k=k, prev=held: solve_words_symmetric(WIDTH, HEIGHT, k, *prev, a, b))
        orbits = tuple(np.concatenate([p[i] for p in parts]) for i in range(2))
        held = (orbits[0], bit_index(orbits[1]))
        parts = on_threads(k, lambda a, b, k=k, o=held: expand_words(WIDTH, HEIGHT, k, *o, a, b))
        filled = tuple(np.concatenate([p[i] for p in parts]) for i in range(2))
        assert all((x == y).all() for x, y in zip(full, filled)), k
        print(f"  layer {k} built both ways, filled layer identical", flush=True)
    return full, orbits, filled


def cpu_rate(k: int, ranges: list[tuple[int, int]], solve) -> float:
    """Boards of layer ``k`` in ``ranges`` per CPU second of this thread running ``solve(a, b)``."""
    solve(*ranges[0])  # compiled and warm
    t = time.thread_time()
    for a, b in ranges:
        solve(a, b)
    seconds = time.thread_time() - t
    size = layer_size(WIDTH, HEIGHT, k)
    return sum(min(64 * b, size) - 64 * a for a, b in ranges) / seconds


def sample(k: int, count: int, words: int, rng: random.Random) -> list[tuple[int, int]]:
    total = layer_words(WIDTH, HEIGHT, k)
    return [(a, min(a + words, total)) for a in (rng.randrange(total) for _ in range(count))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pieces", type=int, default=8)
    parser.add_argument("--ranges", type=int, default=200, help="random word ranges timed")
    parser.add_argument("--range-words", type=int, default=256)
    parser.add_argument("--full", action="store_true", help="also build the whole symmetric layer and count it")
    args = parser.parse_args()
    k = args.pieces
    rng = random.Random(1)
    began = time.perf_counter()
    full, orbits, filled = (layer[:1] + (bit_index(layer[1]),) for layer in build(k - 1))  # unique indexed once
    print(f"layers 1..{k - 1} built both ways in {time.perf_counter() - began:.1f} s wall")
    ranges = sample(k, args.ranges, args.range_words, rng)
    rates = {}
    for kernel in ("fast", "block"):
        rates[f"unreduced {kernel}"] = cpu_rate(
            k, ranges, lambda a, b, kernel=kernel: solve_words(WIDTH, HEIGHT, k, *full, a, b, kernel=kernel))
        rates[f"symmetric {kernel}"] = cpu_rate(
            k, ranges, lambda a, b, kernel=kernel: solve_words_symmetric(WIDTH, HEIGHT, k, *filled, a, b, kernel=kernel))
    fill = cpu_rate(k - 1, sample(k - 1, args.ranges, args.range_words, rng),
                    lambda a, b: expand_words(WIDTH, HEIGHT, k - 1, *orbits, a, b))
    boards, prev_boards = layer_size(WIDTH, HEIGHT, k), layer_size(WIDTH, HEIGHT, k - 1)
    baseline = rates["unreduced fast"]
    print(f"layer {k}, one thread, boards represented per CPU second ({len(ranges)} random ranges of "
          f"{args.range_words} words), and the ratio to the unreduced fast kernel:")
    for name, rate in rates.items():
        print(f"  {name:<24}{rate / 1e6:8.2f} M/s   x{rate / baseline:.2f}")
    print(f"  fill of layer {k - 1}         {fill / 1e6:8.2f} M boards of layer {k - 1}/s "
          f"({prev_boards / fill:.1f} CPU s for the layer)")
    for kernel in ("fast", "block"):
        seconds_sym = boards / rates[f"symmetric {kernel}"] + prev_boards / fill
        print(f"  symmetric {kernel} + fill  {boards / seconds_sym / 1e6:8.2f} M/s   "
              f"x{boards / seconds_sym / baseline:.2f}  (whole layer {k}: {seconds_sym:.0f} CPU s, "
              f"unreduced fast {boards / baseline:.0f} CPU s)")
    if args.full:
        t = time.perf_counter()
        parts = on_threads(k, lambda a, b: solve_words_symmetric(WIDTH, HEIGHT, k, *filled, a, b))
        print(f"symmetric layer {k} on two threads: solvable {sum(p[2] for p in parts):,}, "
              f"unique {sum(p[3] for p in parts):,} ({time.perf_counter() - t:.1f} s wall)")


if __name__ == "__main__":
    main()
