"""A run directory on an S3-compatible store against the same job on a local path, in one benchmark run.

Starts moto's S3 server (``moto[server]``, in the ``test`` extra) on a free port
of 127.0.0.1, then runs each job twice on the same embedded cluster: with
``--out`` a local directory and with ``--out s3://…``. Prints per stage the wall
time of each (first task start to last record), their ratio, and for the s3 run
the bytes written and read and the requests its tasks made (each record's
``io``; exact with one thread per worker), beside what ``epcg plan`` estimated.

    python benchmarks/objstore.py                   # Fling! 7x8 layers 1-8, Witness Tables 2 and 3 (paper rows)
    python benchmarks/objstore.py --workers 2 --only fling

moto keeps objects in its own process's memory and serves them over HTTP on
this machine: the figures show the cost of the object-store protocol (a
request per chunk and record, no fsync), not of a distant data centre.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.s3server import S3Server  # noqa: E402

PAPER_ROWS = '["3x3:3", "3x3:5", "3x4:3", "3x4:5", "4x4:3", "4x4:4", "4x4:5", "4x4:6"]'
JOBS = {
    "fling": (ROOT / "jobs/fling.toml", ["max_pieces=8"]),
    "witness-table-2": (ROOT / "jobs/witness-must-cross.toml", [f"rows={PAPER_ROWS}", "figures_per_row=4"]),
    "witness-table-3": (ROOT / "jobs/witness-regions.toml",
                        ['rows=["3x3:3", "3x3:5", "3x4:3", "3x4:4", "3x4:5", "4x4:3", "4x4:4", "4x4:5", "4x4:6"]',
                         "figures_per_row=4"]),
}


def run(job: Path, sets: list[str], out: str, workers: int) -> float:
    args = [sys.executable, "-m", "epcg", "run", str(job), "--out", out, "--workers", str(workers)]
    for item in sets:
        args += ["--set", item]
    began = time.perf_counter()
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode:
        sys.exit(f"{' '.join(args)} failed:\n{result.stderr}")
    return time.perf_counter() - began


def stage_walls(records: list[dict]) -> dict[str, float]:
    spans: dict[str, list[float]] = {}
    for r in records:
        stage = r["task"].split("/")[0]
        lo, hi = spans.get(stage, [float("inf"), 0.0])
        spans[stage] = [min(lo, r["ended_at"] - r["seconds"]), max(hi, r["ended_at"])]
    return {s: hi - lo for s, (lo, hi) in spans.items()}


def records_of(where: str) -> list[dict]:
    from epcg.runtime.records import unseal
    from epcg.runtime.store import RunDir

    run = RunDir(where)
    out = []
    for key in run.location.list("manifest/"):
        if key.count("/") == 2:
            record = unseal(run.location.read(key).decode())
            if record is not None:
                out.append(record)
    return out


def results_of(where: str) -> list:
    from epcg.runtime.store import RunDir

    data = json.loads(RunDir(where).read_text("results.json"))
    strip = lambda v: ({k: strip(x) for k, x in v.items() if "second" not in k and "chunk" not in k}  # noqa: E731
                       if isinstance(v, dict) else [strip(x) for x in v] if isinstance(v, list) else v)
    return strip(data["rows"])


def planned(job: Path, sets: list[str], out: str, workers: int) -> dict[str, tuple[int, int, int | None]]:
    """The plan's (PUTs + GETs, bytes written, bytes read) per stage."""
    from epcg.runtime.estimate import figures
    from epcg.runtime.jobs import load_job
    from epcg.runtime.registry import job_kind
    from epcg.runtime.engine import Engine

    tuned = Engine().plan(load_job(job, sets), out)
    loaded, plan = tuned.job, tuned.plan
    return {f.name: (f.io.puts + f.io.gets, f.io.bytes_written, f.io.bytes_read)
            for f in figures(job_kind(loaded.domain), loaded.config, plan, workers) if f.io is not None}


def size(n: float | None) -> str:
    if n is None:
        return "?"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def print_stages(local: str, remote: str, plan: dict[str, tuple[int, int, int | None]]) -> None:
    """Per stage: both walls and their ratio; the s3 run's measured io beside the plan's estimate."""
    walls_l, walls_s = stage_walls(records_of(local)), stage_walls(records_of(remote))
    recs = records_of(remote)
    head = (f"{'stage':<14} {'local s':>8} {'s3 s':>8} {'ratio':>6} {'written':>10} {'read':>10} "
            f"{'requests':>9} | {'plan req':>9} {'plan wr':>10} {'plan rd':>10}")
    print(head)
    print("-" * len(head))
    for stage in list(plan) + sorted(set(walls_s) - set(plan)):
        if stage not in walls_s:
            continue
        io = [r.get("io", {}) for r in recs if r["task"].split("/")[0] == stage]
        written = sum(i.get("bytes_written", 0) for i in io)
        read = sum(i.get("bytes_read", 0) for i in io)
        requests = sum(i.get("requests", 0) for i in io)
        p_req, p_wr, p_rd = plan.get(stage, (None, None, None))
        ratio = walls_s[stage] / walls_l[stage] if walls_l.get(stage) else float("nan")
        print(f"{stage:<14} {walls_l.get(stage, 0):>8.2f} {walls_s[stage]:>8.2f} {ratio:>6.2f} "
              f"{size(written):>10} {size(read):>10} {requests:>9,} | "
              f"{p_req if p_req is not None else '?':>9} {size(p_wr):>10} {size(p_rd):>10}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", choices=sorted(JOBS), action="append")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="epcg-objstore-bench-"))
    server = S3Server(tmp / "moto.log")
    os.environ.update(server.env)
    bucket = server.create_bucket("bench")
    print(f"moto S3 server at {server.endpoint}; {args.workers} local workers; local runs under {tmp}")
    try:
        for name in args.only or JOBS:
            job, sets = JOBS[name]
            local, remote = str(tmp / name), f"s3://{bucket}/{name}"
            wall_local = run(job, sets, local, args.workers)
            wall_s3 = run(job, sets, remote, args.workers)
            same = results_of(local) == results_of(remote)
            print(f"\n{name} ({job.name} {' '.join(sets)}): whole run {wall_local:.1f} s local, {wall_s3:.1f} s s3, "
                  f"ratio {wall_s3 / wall_local:.2f}; results identical: {same}")
            print_stages(local, remote, planned(job, sets, remote, args.workers))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
