"""Fling!'s ``unique`` bits held as a sparse index against one bit per board: bytes, layer kernel and fill rates.

Builds the symmetric 7×8 layers 1 .. K-1 (orbit layers, each filled for the
next) on two threads, then times one thread (``time.thread_time``) on the
same random word ranges of layer K: the symmetric block kernel (the default
job's) reading the previous layer's ``unique`` bits as dense words (one bit a
board, the layout before the index; the index's dense form) and as the sparse
index (:mod:`epcg.games.fling.domain.sparse`, for each ``--bucket-ranks``), and the fill of layer K-1 with
its orbit layer's ``unique`` bits either way. Both forms give the same words
(checked on every range). Prints the bytes of each form, the rates and the
sparse form's ratio to the dense one.

    python benchmarks/fling_unique.py [--pieces 9] [--ranges 200] [--range-words 256] [--bucket-ranks 0.25,4]
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np
from fling_symmetry import HEIGHT, WIDTH, on_threads, sample  # this directory is the script's first import path

from epcg.games.fling.domain import sparse
from epcg.games.fling.domain.layers import layer_size
from epcg.games.fling.domain.symmetry import expand_words, first_layer_symmetric, solve_words_symmetric


def build(kmax: int) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Symmetric layer ``kmax``: its orbit layer and the filled one."""
    filled = orbits = first_layer_symmetric(WIDTH, HEIGHT)[:2]
    for k in range(2, kmax + 1):
        index = sparse.bit_index(filled[1])
        parts = on_threads(k, lambda a, b, k=k, s=filled[0], u=index:
                           solve_words_symmetric(WIDTH, HEIGHT, k, s, u, a, b))
        orbits = tuple(np.concatenate([p[i] for p in parts]) for i in range(2))
        index = sparse.bit_index(orbits[1])
        parts = on_threads(k, lambda a, b, k=k, s=orbits[0], u=index: expand_words(WIDTH, HEIGHT, k, s, u, a, b))
        filled = tuple(np.concatenate([p[i] for p in parts]) for i in range(2))
        print(f"  layer {k} built", flush=True)
    return orbits, filled


def cpu_rate(k: int, ranges: list[tuple[int, int]], solve) -> tuple[float, list]:
    """Boards of layer ``k`` in ``ranges`` per CPU second of this thread running ``solve(a, b)``, and the outputs."""
    solve(*ranges[0])  # compiled and warm
    t = time.thread_time()
    outs = [solve(a, b) for a, b in ranges]
    seconds = time.thread_time() - t
    size = layer_size(WIDTH, HEIGHT, k)
    return sum(min(64 * b, size) - 64 * a for a, b in ranges) / seconds, outs


def forms(words: np.ndarray, buckets: list[float]) -> dict[str, sparse.BitIndex]:
    """The dense index of ``words`` and the sparse one for each of ``buckets`` (``sparse.BUCKET_RANKS``)."""
    ranks = np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little")).astype(np.uint64)
    out = {"dense": sparse._dense(words)}
    default = sparse.BUCKET_RANKS
    try:
        for b in buckets:
            sparse.BUCKET_RANKS = b
            out[f"sparse {b:g}"] = sparse._sparse(ranks, words.shape[0])
    finally:
        sparse.BUCKET_RANKS = default
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pieces", type=int, default=9)
    parser.add_argument("--ranges", type=int, default=200, help="random word ranges timed")
    parser.add_argument("--range-words", type=int, default=256)
    parser.add_argument("--bucket-ranks", default=f"{sparse.BUCKET_RANKS:g}",
                        help="comma-separated sparse.BUCKET_RANKS values to compare")
    args = parser.parse_args()
    k = args.pieces
    rng = random.Random(1)
    began = time.perf_counter()
    orbits, filled = build(k - 1)
    print(f"layers 1..{k - 1} built in {time.perf_counter() - began:.1f} s wall")
    buckets = [float(b) for b in args.bucket_ranks.split(",")]
    prev, orbit = forms(filled[1], buckets), forms(orbits[1], buckets)
    count = prev["dense"].count()
    print(f"layer {k - 1}: {layer_size(WIDTH, HEIGHT, k - 1):,} boards, {count:,} unique "
          f"({count / layer_size(WIDTH, HEIGHT, k - 1):.4%}); unique held as: "
          + ", ".join(f"{name} {f.nbytes / 2**20:,.1f} MiB" for name, f in prev.items())
          + f" (solvable: {filled[0].nbytes / 2**20:,.1f} MiB)")
    ranges = sample(k, args.ranges, args.range_words, rng)
    fill_ranges = sample(k - 1, args.ranges, args.range_words, rng)
    rates, outs = {}, {}
    for name in ["dense", *(f for f in prev if f != "dense"), "dense again"]:
        form = name.removesuffix(" again")
        rates[f"layer {k}, {name}"], outs[f"layer {name}"] = cpu_rate(
            k, ranges, lambda a, b, u=prev[form]: solve_words_symmetric(WIDTH, HEIGHT, k, filled[0], u, a, b))
        rates[f"fill {k - 1}, {name}"], outs[f"fill {name}"] = cpu_rate(
            k - 1, fill_ranges, lambda a, b, u=orbit[form]: expand_words(WIDTH, HEIGHT, k - 1, orbits[0], u, a, b))
    for key in outs:
        what = key.split()[0]
        assert all(all(np.array_equal(x, y) for x, y in zip(p[:2], q[:2]))
                   for p, q in zip(outs[f"{what} dense"], outs[key])), key
    print(f"one thread, boards per CPU second on {len(ranges)} random ranges of {args.range_words} words "
          f"(the same words either way), ratio to the dense form timed first:")
    for name, rate in rates.items():
        base = rates[name.rsplit(",", 1)[0] + ", dense"]
        print(f"  {name:<26}{rate / 1e6:8.2f} M/s   x{rate / base:.3f}")


if __name__ == "__main__":
    main()
