"""Throughput of the Fling! retrograde kernel on 7x8 boards, layer by layer.

For each layer k = 2 .. --max-pieces this builds the whole layer with two
threads (a ThreadPoolExecutor over word ranges; the kernel is ``nogil``) and
times a single-thread sample of evenly spaced word ranges, then prints
boards/s, the published (solvable, unique) counts where known, peak RSS, and
a projection for 10 and 11 pieces from the largest layer measured.

    python benchmarks/fling_kernel.py                 # layers up to 8 pieces
    python benchmarks/fling_kernel.py --max-pieces 9 --sample-last --cache /tmp/fling
        # 9 pieces timed on samples only; layers kept in /tmp/fling for the next run

References on this machine class (2 cores): the paper's C++ ~1.4 M boards/s
per core at 7 pieces; a one-hour prototype ~19 M boards/s with both cores at
8 pieces; target >= 25 M boards/s with both cores at 8 pieces.
"""

from __future__ import annotations

import argparse
import resource
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from epcg.games.fling.domain.layers import first_layer, layer_size, layer_words, solve_words
from epcg.games.fling.domain.sparse import bit_index

WIDTH, HEIGHT = 7, 8
PUBLISHED = {2: (267, 267), 3: (2_720, 2_110), 4: (35_518, 15_724), 5: (481_048, 103_324)}


def popcount(words: np.ndarray) -> int:
    return int(np.bitwise_count(words).sum(dtype=np.int64))


def build_layer(k: int, prev: tuple[np.ndarray, np.ndarray], threads: int, chunk_words: int):
    """Layer ``k`` from word ranges run on ``threads`` threads; returns (s, u, wall s, CPU s)."""
    total = layer_words(WIDTH, HEIGHT, k)
    s = np.zeros(total, dtype=np.uint64)
    u = np.zeros(total, dtype=np.uint64)

    prev = prev[0], bit_index(prev[1])  # unique indexed once, as a job's loader does

    def task(a: int) -> None:
        b = min(a + chunk_words, total)
        s[a:b], u[a:b] = solve_words(WIDTH, HEIGHT, k, *prev, a, b)

    t, c = time.perf_counter(), time.process_time()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(task, range(0, total, chunk_words)))
    return s, u, time.perf_counter() - t, time.process_time() - c


def sample_ranges(k: int, sample_boards: int, parts: int = 16) -> list[tuple[int, int, int]]:
    """``parts`` evenly spread word ranges of about ``sample_boards`` boards in all: (start, stop, boards)."""
    total = layer_words(WIDTH, HEIGHT, k)
    per = max(1, min(total // parts, sample_boards // (parts * 64)))
    size = layer_size(WIDTH, HEIGHT, k)
    return [(int(a), int(a) + per, min(64 * (int(a) + per), size) - 64 * int(a))
            for a in np.linspace(0, total - per, parts).astype(np.int64)]


def single_thread_rate(k: int, prev, sample_boards: int) -> float:
    """Boards per CPU second of one thread on a spread sample of the layer."""
    ranges = sample_ranges(k, sample_boards)
    prev = prev[0], bit_index(prev[1])
    t = time.thread_time()
    for a, b, _ in ranges:
        solve_words(WIDTH, HEIGHT, k, *prev, a, b)
    return sum(n for _, _, n in ranges) / (time.thread_time() - t)


def two_thread_sample(k: int, prev, sample_boards: int) -> tuple[float, float]:
    """(boards per wall second, per CPU second) of two threads on a spread sample."""
    ranges = sample_ranges(k, sample_boards, parts=32)
    prev = prev[0], bit_index(prev[1])
    t, c = time.perf_counter(), time.process_time()
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda r: solve_words(WIDTH, HEIGHT, k, *prev, r[0], r[1]), ranges))
    boards = sum(n for _, _, n in ranges)
    return boards / (time.perf_counter() - t), boards / (time.process_time() - c)


def cached_layer(cache: Path | None, k: int, make):
    """Layer ``k`` from ``cache``/k.npz if there, else ``make()`` (saved when ``cache`` is set)."""
    path = cache / f"fling-7x8-{k}.npz" if cache else None
    if path is not None and path.exists():
        z = np.load(path)
        return z["s"], z["u"], float("nan"), float("nan")
    s, u, seconds, cpu = make()
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, s=s, u=u)
    return s, u, seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-pieces", type=int, default=8)
    parser.add_argument("--sample-boards", type=int, default=20_000_000, help="single-thread sample per layer")
    parser.add_argument("--chunk-words", type=int, default=1 << 16, help="words per two-thread task")
    parser.add_argument("--sample-last", action="store_true", help="time the last layer on samples only")
    parser.add_argument("--cache", type=Path, help="directory to keep layers in between runs")
    args = parser.parse_args()

    solve_words(WIDTH, HEIGHT, 2, *first_layer(WIDTH, HEIGHT), 0, 1)  # compile outside the timings
    prev = first_layer(WIDTH, HEIGHT)
    rows = []
    print("boards/s: '1 thread' per CPU second of one thread on a sample; '2 threads' boards over wall time of\n"
          "the whole layer on two threads; 'per CPU s' the same layer over the CPU seconds both threads used\n"
          "(on a shared machine, 2 x 'per CPU s' is what two free cores would give)")
    print(f"{'k':>2} {'boards':>14} {'solvable':>13} {'unique':>12} {'1 thread':>12} {'2 threads':>12}"
          f" {'per CPU s':>12} {'wall s':>7}")
    for k in range(2, args.max_pieces + 1):
        one = single_thread_rate(k, prev, args.sample_boards) if k >= 5 else float("nan")
        boards = layer_size(WIDTH, HEIGHT, k)
        if args.sample_last and k == args.max_pieces:
            two, per_cpu = two_thread_sample(k, prev, 2 * args.sample_boards)
            rows.append((k, one, two, per_cpu))
            print(f"{k:>2} {boards:>14,} {'(sampled)':>13} {'':>12} {one / 1e6:>10.2f} M {two / 1e6:>10.2f} M"
                  f" {per_cpu / 1e6:>10.2f} M", flush=True)
            break
        s, u, seconds, cpu = cached_layer(args.cache, k,
                                             lambda k=k, prev=prev: build_layer(k, prev, 2, args.chunk_words))
        counts = (popcount(s), popcount(u))
        check = "" if k not in PUBLISHED else ("  ok" if counts == PUBLISHED[k] else f"  MISMATCH {PUBLISHED[k]}")
        two, per_cpu = boards / seconds, boards / cpu
        rows.append((k, one, two, per_cpu))
        print(f"{k:>2} {boards:>14,} {counts[0]:>13,} {counts[1]:>12,} {one / 1e6:>10.2f} M {two / 1e6:>10.2f} M"
              f" {per_cpu / 1e6:>10.2f} M {seconds:>7.1f}{check}", flush=True)
        prev = (s, u)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {rss:,.0f} MiB")
    k, one, two, per_cpu = rows[-1]
    for target in (10, 11):
        boards = layer_size(WIDTH, HEIGHT, target)
        upto = sum(layer_size(WIDTH, HEIGHT, j) for j in range(2, target + 1))
        prev_bytes = 8 * layer_words(WIDTH, HEIGHT, target - 1)  # solvable; unique is a small index
        print(f"projection k={target}: {boards:,} boards ({upto:,} for layers 2..{target}); at the k={k} rates: "
              f"{boards / two / 3600:.2f} h ({upto / two / 3600:.2f} h) two threads as measured ({two / 1e6:.1f} M/s), "
              f"{boards / (2 * per_cpu) / 3600:.2f} h ({upto / (2 * per_cpu) / 3600:.2f} h) on two free cores "
              f"({2 * per_cpu / 1e6:.1f} M/s); previous layer's solvable bits {prev_bytes / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
