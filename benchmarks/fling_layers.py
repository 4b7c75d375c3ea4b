"""Fling! retrograde layers end to end (Dask, Zarr, manifest included): boards/s per layer.

Runs ``jobs/fling.toml`` on the embedded cluster up to ``--max-pieces`` (default
8), prints boards per second per layer (per worker and wall), the workers' peak
memory beside the formula, and projects 10 and 11 pieces on this machine and on
clusters of N workers from the deepest layer's per-worker rate.

References on this machine class (issue 3): the paper's C++ ~1.4 M boards/s on
one core at 7 pieces; our one-hour prototype ~19 M boards/s with both cores at 8
pieces. Target: >= 25 M boards/s with both cores at 8 pieces.

    python benchmarks/fling_layers.py [--max-pieces 9] [--workers 2] [--chunk-words 262144] [--keep DIR]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path

from epcg.combinatorics.binomial import binomial
from epcg.runtime.cluster import LocalSpec, connect
from epcg.runtime.dask_executor import DaskExecutor
from epcg.runtime.jobs import load_job
from epcg.runtime.session import claimed, prepare_new, run_plan

JOBS = Path(__file__).resolve().parents[1] / "jobs"
PROTOTYPE = 19e6  # boards/s, both cores, 8 pieces
TARGET = 25e6


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-pieces", type=int, default=8)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--chunk-words", type=int, default=1 << 18)
    parser.add_argument("--keep", type=Path, help="keep the run directory here")
    args = parser.parse_args()

    job = load_job(JOBS / "fling.toml", [f"max_pieces={args.max_pieces}",
                                         f"chunk_words={args.chunk_words}", "top_puzzles=0"])
    tmp = Path(tempfile.mkdtemp(prefix="fling-bench-"))
    out = args.keep or tmp / "fling"
    began = time.perf_counter()
    with connect(LocalSpec(workers=args.workers, dashboard_address=None)) as client:
        workers = len(client.scheduler_info()["workers"])
        print(f"cluster: {workers} workers, started in {time.perf_counter() - began:.2f} s")
        prepared = prepare_new(job, out)
        with claimed(prepared, new=True):
            results = run_plan(prepared, DaskExecutor(client))
        peaks = client.run(peak_rss_mb)
    print(f"warm-up {results['warm_up_seconds']:.2f} s; wall {results['wall_seconds']:.2f} s\n")
    print(f"{'pieces':>6} {'boards':>16} {'solvable':>14} {'unique':>12} {'tasks':>6} "
          f"{'wall s':>8} {'M boards/s wall':>16} {'M/s per worker':>15}")
    for row in results["rows"]:
        print(f"{row['pieces']:>6} {row['boards']:>16,} {row['solvable']:>14,} {row['unique']:>12,} "
              f"{row['tasks']:>6} {row['wall_seconds']:>8.2f} "
              f"{(row['boards_per_wall_second'] or 0) / 1e6:>16.2f} {(row['boards_per_second'] or 0) / 1e6:>15.2f}")
    top = results["rows"][-1]
    k = top["pieces"]
    formula = 2 * binomial(56, k - 1) / 8 / 2**20
    print(f"\npeak RSS per worker: {', '.join(f'{v:.0f} MB' for v in peaks.values())} "
          f"(previous layer held in memory: 2·C(56,{k - 1})/8 = {formula:.0f} MB, plus the Python/numba/Dask baseline)")
    wall_rate = top["boards_per_wall_second"] or 0
    print(f"layer {k}: {wall_rate / 1e6:.1f} M boards/s with {workers} workers "
          f"(prototype {PROTOTYPE / 1e6:.0f} M/s at 8 pieces: x{wall_rate / PROTOTYPE:.2f}; target {TARGET / 1e6:.0f} M/s)")
    per_worker = top["boards_per_second"] or 1
    print("\nprojection from this layer's per-worker rate (deeper layers miss the cache more: "
          "treat as a lower bound on time):")
    for pieces in (9, 10, 11, 12):
        boards = binomial(56, pieces)
        line = ", ".join(f"{n} workers {boards / (per_worker * n) / 3600:.2f} h" for n in (workers, 16, 64, 256))
        print(f"  {pieces} pieces ({boards:,} boards): {line}")
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
