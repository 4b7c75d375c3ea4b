"""Scaling on this machine: strong scaling (1 vs 2 workers) and scheduler overhead with many workers.

1. Strong scaling: Fling! 7x8 to ``--pieces`` (default 7) with 1 and with 2
   single-threaded workers; the deepest layer's wall time and the speed-up.
2. Many workers: a run of many small tasks on a LocalCluster of ``--many``
   single-threaded workers sharing this machine's cores, against the same run on
   one worker per core. Scheduler overhead per task is estimated as
   ``(wall × cores − Σ task seconds) / tasks``: the time the cores were not
   running kernels, spread over the tasks.

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
from epcg.runtime.session import claimed, prepare_new, run_plan

JOBS = Path(__file__).resolve().parents[1] / "jobs"
CORES = len(os.sched_getaffinity(0))


def run(job_file: str, overrides: list[str], workers: int) -> tuple[dict, float]:
    job = load_job(JOBS / job_file, overrides)
    with connect(LocalSpec(workers=workers, dashboard_address=None)) as client:
        with tempfile.TemporaryDirectory() as tmp:
            prepared = prepare_new(job, Path(tmp) / "run")
            with claimed(prepared, new=True):
                began = time.perf_counter()
                results = run_plan(prepared, DaskExecutor(client))
                wall = time.perf_counter() - began - results["warm_up_seconds"]
    return results, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pieces", type=int, default=7)
    parser.add_argument("--many", type=int, default=16)
    args = parser.parse_args()

    print(f"strong scaling: Fling! 7x8 to {args.pieces} pieces, chunk 2^18 words")
    walls = {}
    for workers in (1, 2):
        results, _ = run("fling.toml", [f"max_pieces={args.pieces}", "top_puzzles=0"], workers)
        top = results["rows"][-1]
        walls[workers] = top["wall_seconds"]
        print(f"  {workers} worker(s): layer {top['pieces']} ({top['boards']:,} boards, {top['tasks']} tasks) "
              f"in {top['wall_seconds']:.2f} s = {top['boards_per_wall_second'] / 1e6:.1f} M boards/s")
    print(f"  speed-up 1 -> 2 workers: {walls[1] / walls[2]:.2f}x")

    overrides = ['rows=["4x4:5"]', "chunk_size=10000", "figures_per_row=0"]
    print(f"\nscheduler overhead: must-cross 4x4 k=5 in chunks of 10,000 puzzles, {CORES} cores")
    for workers in (CORES, args.many):
        results, wall = run("witness-must-cross.toml", overrides, workers)
        row = results["rows"][0]
        tasks = -(-row["puzzles"] // 10_000)
        overhead = (wall * CORES - row["seconds"]) / tasks
        print(f"  {workers:>3} workers: {tasks} tasks, wall {wall:.2f} s, kernels {row['seconds']:.2f} s, "
              f"overhead {overhead * 1e3:.1f} ms per task (store + manifest + scheduling)")


if __name__ == "__main__":
    main()
