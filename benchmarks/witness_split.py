"""How even the Witness scan's tasks are: max / median and max / mean task seconds per row of a real run.

Runs `jobs/witness-must-cross.toml` (or another Witness job) restricted to a
few rows on an embedded cluster, then reads each task's seconds from the run's
manifest records (the kernel and the Zarr write, not the worker's warm-up) and
prints, per row: tasks, the median, mean and slowest task seconds, the two
ratios and the slowest task's index, once for wall seconds and once for the
CPU seconds of the task's thread (on a shared machine the wall seconds also
measure who else was running; the CPU seconds measure the task's work). The warm-up's seconds (slowest worker)
and a digest of each row's results (minimum, puzzles there, their ranks) are
printed too, so runs of two commits can be checked for identical results.

    python benchmarks/witness_split.py                                   # 4x4 k=6 and 5x5 k=5, 2 workers
    python benchmarks/witness_split.py --rows 4x4:6 --set split=cost
    python benchmarks/witness_split.py --job witness-regions.toml --rows 4x4:6,5x5:5
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import tempfile
import time
from pathlib import Path

from epcg.runtime.cluster import LocalSpec, connect
from epcg.runtime.dask_executor import DaskExecutor
from epcg.runtime.jobs import load_job
from epcg.runtime.engine import claimed, prepare_new, run_plan

JOBS = Path(__file__).resolve().parents[1] / "jobs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--job", default="witness-must-cross.toml", help="a job file under jobs/")
    parser.add_argument("--rows", default="4x4:6,5x5:5", help="rows to run, comma-separated")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--set", action="append", default=[], help="further job overrides KEY=VALUE")
    args = parser.parse_args()
    rows = json.dumps(args.rows.split(","))
    job = load_job(JOBS / args.job, [f"rows={rows}", "figures_per_row=0", *args.set])
    with connect(LocalSpec(workers=args.workers, dashboard_address=None)) as client, \
            tempfile.TemporaryDirectory() as tmp:
        planned = prepare_new(job, Path(tmp) / "run")
        began = time.perf_counter()
        with claimed(planned, new=True):
            results = run_plan(planned, DaskExecutor(client))
        wall = time.perf_counter() - began
        records = planned.run.records.done(planned.plan.tasks())
        ats = {stage.name: planned.run.arrays.read_array(f"{stage.name}/at_min/ranks") for stage in planned.plan.stages}
    print(f"{args.job} rows {args.rows} {' '.join(args.set)}: {args.workers} workers, "
          f"warm-up {results['warm_up_seconds']:.2f} s, wall {wall:.1f} s")
    print(f"{'row':<8} {'time':<4} {'tasks':>5} {'median s':>9} {'mean s':>8} {'max s':>7} {'max/median':>10} "
          f"{'max/mean':>8} {'slowest':>7}  results digest")
    for stage, row in zip(planned.plan.stages, results["rows"]):
        digest = hashlib.sha256(ats[stage.name].tobytes()).hexdigest()[:12]
        for key, label in (("seconds", "wall"), ("cpu_seconds", "cpu")):
            seconds = [records[t.id][key] for t in stage.tasks]
            median, mean, top = statistics.median(seconds), statistics.fmean(seconds), max(seconds)
            print(f"{stage.name:<8} {label:<4} {len(seconds):>5} {median:>9.3f} {mean:>8.3f} {top:>7.3f} "
                  f"{top / median:>10.2f} {top / mean:>8.2f} {seconds.index(top):>7}  min {row['min_solutions']} "
                  f"at_min {row['puzzles_at_min']} ranks {digest}")


if __name__ == "__main__":
    main()
