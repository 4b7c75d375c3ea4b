"""`epcg plan`'s estimates against measured runs on this machine: wall time, bytes, peak memory per worker.

Each job runs on an embedded cluster of one single-threaded worker per core;
the estimate is the plan's wall time for that many workers, the measurement
the workers' warm-up (kernels loaded, tables built) plus the span from the
first task's start to the last task's end (reduction and figures excluded);
ratio = measured / estimated. On a shared machine the wall time also
measures the other processes, so "cpu ratio" compares the tasks' own CPU
seconds (their records' ``cpu_seconds``) with the job kind's estimated
compute (its stages' ``cpu_seconds``). Compute comes
from each job kind's calibration (a slice of its kernel timed in this process
at plan time); "plan s" is how long the estimate took, calibration included
(numba's cache load the first time a kernel is used).

    python benchmarks/plan_estimate.py
    python benchmarks/plan_estimate.py --only fling
    python benchmarks/plan_estimate.py --only witness-regions --set 'rows=["4x4:6","5x5:5"]'
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from epcg.runtime.cluster import LocalSpec, connect, default_workers
from epcg.runtime.dask_executor import DaskExecutor
from epcg.runtime.estimate import figures, size
from epcg.runtime.jobs import load_job
from epcg.runtime.registry import job_kind
from epcg.runtime.engine import claimed, prepare_new, run_plan

JOBS = Path(__file__).resolve().parents[1] / "jobs"
PAPER_ROWS = 'rows=["3x3:3", "3x3:5", "3x4:3", "3x4:5", "4x4:3", "4x4:4", "4x4:5", "4x4:6"]'
CASES = [
    ("witness-must-cross.toml", [PAPER_ROWS]),
    ("witness-must-cross.toml", ['rows=["5x5:5"]']),
    ("witness-regions.toml", []),
    ("fling.toml", ["max_pieces=7", "top_puzzles=0", "distributions=false"]),
    ("fling.toml", ["max_pieces=8", "top_puzzles=0", "distributions=false"]),
    ("fling.toml", []),
    ("witness-triple.toml", []),
    ("witness-triple-4x4.toml", []),
    ("dwp-study.toml", ["only=[1, 2]", "runs=4", "mating_events_cap=2000"]),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run only the cases whose job file and overrides contain this")
    parser.add_argument("--set", action="append", default=[], help="further overrides KEY=VALUE for every case run")
    args = parser.parse_args()
    workers = default_workers()
    print(f"{'job':<34} {'est. wall':>9} {'wall':>7} {'ratio':>6} {'est. cpu':>8} {'cpu':>7} {'cpu ratio':>9} "
          f"{'est. peak':>10} {'peak':>10} {'est. bytes':>10} {'bytes':>10} {'plan s':>6}")
    with connect(LocalSpec(workers=workers, dashboard_address=None)) as client:
        for job_file, overrides in CASES:
            if args.only not in f"{job_file} {' '.join(overrides)}":
                continue
            overrides = [*overrides, *args.set]
            job = load_job(JOBS / job_file, overrides)
            with tempfile.TemporaryDirectory() as tmp:
                job_plan = prepare_new(job, Path(tmp) / "run")
                began = time.perf_counter()
                kind = job_kind(job.domain)
                figs = figures(kind, job_plan.job.config, job_plan.plan, workers)
                planned = time.perf_counter() - began
                costs = kind.estimate(job_plan.job.config) if hasattr(kind, "estimate") else {}
                est_cpu = sum(c.cpu_seconds or 0 for c in costs.values())
                with claimed(job_plan, new=True):
                    results = run_plan(job_plan, DaskExecutor(client))
                records = [json.loads(p.read_text())["record"]
                           for p in (job_plan.run.path / "manifest").rglob("*.json") if p.name != "verified.json"]
            span = max(r["ended_at"] for r in records) - min(r["ended_at"] - r["seconds"] for r in records)
            wall = span + results["warm_up_seconds"]
            estimate = sum(f.wall_seconds or 0 for f in figs)
            peak = max(f.peak_memory or 0 for f in figs)
            written = sum(f.bytes_written or 0 for f in figs)
            cpu = sum(r.get("cpu_seconds", 0.0) for r in records)
            label = f"{job_file} {' '.join(overrides)}"[:34]
            print(f"{label:<34} {estimate:>8.1f}s {wall:>6.1f}s {wall / estimate:>6.2f} {est_cpu:>7.1f}s {cpu:>6.1f}s "
                  f"{cpu / est_cpu if est_cpu else float('nan'):>9.2f} {size(peak):>10} "
                  f"{size(max(r['max_rss'] for r in records)):>10} {size(written):>10} "
                  f"{size(sum(r['bytes'] for r in records)):>10} {planned:>6.2f}")


if __name__ == "__main__":
    main()
