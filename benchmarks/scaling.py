"""Scaling on this machine: strong scaling (1 vs 2 workers) and scheduler overhead with many workers.

1. Strong scaling: Fling! 7x8 to ``--pieces`` (default 7) with 1 and with 2
   single-threaded workers; the deepest layer's wall time and the speed-up.
2. Many workers: a run of many small tasks on a LocalCluster of ``--many``
   single-threaded workers sharing this machine's cores, against the same run on
   one worker per core. Overhead per task is estimated as
   ``(wall × cores − kernel seconds) / tasks``, the kernel seconds measured on
   the one-worker-per-core run (with more workers than cores a task's own clock
   also counts the time it waits for a core).

    python benchmarks/scaling.py [--pieces 7] [--many 16]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from epcg.runtime.cluster import LocalSpec, connect
from epcg.runtime.dask_executor import DaskExecutor
from epcg.runtime.jobs import load_job
from epcg.runtime.engine import claimed, prepare_new, run_plan

JOBS = Path(__file__).resolve().parents[1] / "jobs"
CORES = len(os.sched_getaffinity(0))


def run(job_file: str, overrides: list[str], workers: int) -> tuple[dict, float]:
    job = load_job(JOBS / job_file, overrides)
    with connect(LocalSpec(workers=workers, dashboard_address=None)) as client:
        with tempfile.TemporaryDirectory() as tmp:
            planned = prepare_new(job, Path(tmp) / "run")
            with claimed(planned, new=True):
                began = time.perf_counter()
                results = run_plan(planned, DaskExecutor(client))
                wall = time.perf_counter() - began - results["warm_up_seconds"]
    return results, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pieces", type=int, default=7)
    parser.add_argument("--many", type=int, default=16)
    parser.add_argument("--overhead-only", action="store_true")
    args = parser.parse_args()
    if not args.overhead_only:
        strong_scaling(args.pieces)
    overhead(args.many)


def strong_scaling(pieces: int) -> None:
    print(f"strong scaling: Fling! 7x8 to {pieces} pieces, chunk 2^18 words")
    walls = {}
    for workers in (1, 2):
        results, _ = run("fling.toml", [f"max_pieces={pieces}", "top_puzzles=0"], workers)
        top = results["rows"][-1]
        walls[workers] = top["wall_seconds"]
        print(f"  {workers} worker(s): layer {top['pieces']} ({top['boards']:,} boards, {top['tasks']} tasks) "
              f"in {top['wall_seconds']:.2f} s = {top['boards_per_wall_second'] / 1e6:.1f} M boards/s")
    print(f"  speed-up 1 -> 2 workers: {walls[1] / walls[2]:.2f}x")


def overhead(many: int) -> None:
    overrides = ['rows=["4x4:5"]', "chunk_size=10000", "figures_per_row=0"]
    print(f"\nscheduler overhead: must-cross 4x4 k=5 in chunks of 10,000 puzzles, {CORES} cores")
    kernels = None
    for workers in (CORES, many):
        results, wall = run("witness-must-cross.toml", overrides, workers)
        row = results["rows"][0]
        tasks = -(-row["puzzles"] // 10_000)
        kernels = kernels or row["seconds"]
        per_task = (wall * CORES - kernels) / tasks
        print(f"  {workers:>3} workers: {tasks} tasks, wall {wall:.2f} s, kernels {kernels:.2f} s, "
              f"overhead {per_task * 1e3:.1f} ms per task (store + manifest + scheduling)")


if __name__ == "__main__":
    main()
