"""End-to-end timing of the paper's Tables 2 and 3 on the embedded Dask cluster.

Runs ``jobs/witness-must-cross.toml`` and ``jobs/witness-regions.toml`` through
the same code path as ``epcg run`` (LocalCluster, Zarr run directory, manifest)
and prints, per row, our compute seconds beside the paper's time column, then
cluster start-up, kernel compilation (warm-up) and wall time separately.

Target: both tables' compute in under 5 s of wall time on 2 cores.

    python benchmarks/witness_tables.py [--workers 2] [--figures] [--paper] [--set KEY=VALUE ...]

Without ``--paper`` the 5x5 rows run as well (about a quarter of an hour here).
"""

from __future__ import annotations

import argparse
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
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--figures", action="store_true", help="also draw the galleries (off: timing only)")
    parser.add_argument("--paper", action="store_true", help="only the paper's rows (up to 4x4), not 5x5")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a key of both jobs, as `epcg run --set` does (repeatable)")
    args = parser.parse_args()
    overrides = ([] if args.figures else ["figures_per_row=0"]) + args.set

    began = time.perf_counter()
    with connect(LocalSpec(workers=args.workers, dashboard_address=None)) as client:
        startup = time.perf_counter() - began
        workers = len(client.scheduler_info()["workers"])
        print(f"cluster: {workers} workers, started in {startup:.2f} s")
        totals = {"compute": 0.0, "wall": 0.0, "paper": 0.0}
        for name in ("witness-must-cross", "witness-regions"):
            job = load_job(JOBS / f"{name}.toml", overrides)
            if args.paper:
                rows = [r for r in job.config.rows if not r.startswith("5x5")]
                job = load_job(JOBS / f"{name}.toml", [*overrides, f"rows={rows!r}".replace("'", '"')])
            with tempfile.TemporaryDirectory() as tmp:
                planned = prepare_new(job, Path(tmp) / name)
                with claimed(planned, new=True):
                    results = run_plan(planned, DaskExecutor(client))
            print(f"\n{name}: warm-up (numba compile or cache load) {results['warm_up_seconds']:.2f} s, "
                  f"wall {results['wall_seconds'] - results['warm_up_seconds']:.2f} s after warm-up")
            print(f"{'board':>6} {'k':>3} {'puzzles':>12} {'min':>5} {'paper':>5} {'seconds':>9} {'paper s':>9} {'speed-up':>9}")
            for row in results["rows"]:
                paper = row.get("paper_seconds")
                print(f"{row['width']}x{row['height']:<4} {row['k']:>3} {row['puzzles']:>12,} "
                      f"{row['min_solutions']:>5} {row.get('paper_min_solutions', '–'):>5} "
                      f"{row['seconds']:>9.3f} {paper or 0:>9.2f} "
                      f"{(paper / row['seconds']) if paper and row['seconds'] else 0:>8.0f}x")
                totals["compute"] += row["seconds"]
                totals["paper"] += paper or 0
            totals["wall"] += results["wall_seconds"] - results["warm_up_seconds"]
    print(f"\nTables 2+3: {totals['compute']:.2f} s compute summed over workers, "
          f"{totals['wall']:.2f} s wall after warm-up (target < 5 s); paper {totals['paper']:.1f} s "
          f"({totals['paper'] / totals['wall']:.0f}x)")


if __name__ == "__main__":
    main()
