"""Fling! sliced against whole-layer, on the same cores in one invocation: wall, task-seconds, bytes read, peak memory.

For each piece count in ``--pieces`` (default 9) it runs ``jobs/fling.toml``
(layers only: no evaluation, no distributions) twice with ``epcg run`` on an
embedded cluster of ``--workers`` single-threaded worker processes (default
2): the whole-layer job (each worker holds the layer before), then the same
job with ``slice_rows = --slice-rows`` (default 3), whose workers may be
limited to ``--memory-limit`` (default: Dask's share of the machine). Both
leave ``partitions`` to the plan, which splits the fills to fit the limit.
Each run prints its wall time (the ``epcg run`` process, start to end) and,
from its task records, per worker: the task-seconds (CPU seconds of the tasks'
threads), the bytes its tasks read from the store (uncompressed) and its peak
resident memory (the largest a task ended with); then the layer stages' bytes
read as a multiple of the layer before, beside the plan's figure. The last
lines give sliced over whole for wall and task-seconds.

The two runs of a piece count run one after the other on the same cores, so
compare their ratio; on a machine others use, the absolute times are not rates.
Run directories go under ``--dir`` (default /var/tmp) and are removed.

    python benchmarks/fling_sliced.py [--pieces 9,10] [--workers 2] [--slice-rows 3] [--memory-limit 900MiB]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from epcg.runtime.estimate import size
from epcg.runtime.reads import host_of

JOBS = Path(__file__).resolve().parents[1] / "jobs"


def run_job(directory: Path, pieces: int, workers: int, slice_rows: int, memory_limit: str) -> float:
    """``epcg run`` of the job into ``directory``; its wall seconds."""
    cluster = directory.with_suffix(".cluster.toml")
    cluster.write_text(f'kind = "local"\nworkers = {workers}\nthreads_per_worker = 1\nhost = "127.0.0.1"\n'
                       f'dashboard_address = "127.0.0.1:0"\nmemory_limit = "{memory_limit}"\n')
    command = [sys.executable, "-m", "epcg", "run", str(JOBS / "fling.toml"), "--out", str(directory),
               "--cluster", str(cluster), "--set", f"max_pieces={pieces}", "--set", "top_puzzles=0",
               "--set", "distributions=false", "--set", f"slice_rows={slice_rows}"]
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - began
    if done.returncode:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return wall


def per_worker(directory: Path) -> dict[str, dict[str, float]]:
    """Task-seconds, bytes read and the largest resident memory a task ended with, per worker (its address)."""
    out: dict[str, dict[str, float]] = {}
    for path in (directory / "manifest").rglob("*.json"):
        record = json.loads(path.read_text()).get("record")
        if not isinstance(record, dict) or "task" not in record:
            continue
        entry = out.setdefault(record.get("worker") or "local", {"cpu": 0.0, "read": 0, "rss": 0})
        entry["cpu"] += record.get("cpu_seconds", record["seconds"])
        entry["read"] += record.get("read_bytes", 0)
        entry["rss"] = max(entry["rss"], record.get("max_rss", 0))
    return dict(sorted(out.items()))


def report(label: str, directory: Path, wall: float) -> tuple[float, float]:
    """Print one run's figures; return its wall and task-seconds."""
    workers = per_worker(directory)
    cpu = sum(w["cpu"] for w in workers.values())
    print(f"\n== {label}: wall {wall:.1f} s, task-seconds {cpu:.1f}, read {size(sum(w['read'] for w in workers.values()))}")
    print(f"{'worker':>24} {'task-s':>9} {'read':>11} {'peak RSS':>10}")
    for address, w in workers.items():
        print(f"{host_of(address) + ':' + address.rsplit(':', 1)[-1]:>24} {w['cpu']:>9.1f} {size(w['read']):>11} "
              f"{size(w['rss']):>10}")
    rows = json.loads((directory / "results.json").read_text())["rows"]
    for row in rows[-2:]:
        reads = row["reads"]
        planned = reads.get("planned")
        plan = f" (plan {planned / reads['source']:.2f}×)" if planned is not None else ""
        by_worker = layer_by_worker(directory, row["pieces"])
        print(f"  layer {row['pieces']} read {size(reads['bytes'])} of layer {row['pieces'] - 1}, "
              f"{reads['bytes'] / reads['source']:.2f}× that layer{plan}; per worker: "
              + ", ".join(f"{size(n)} ({share:.0%} of the layer)" for n, share in by_worker)
              + (f", plan {size(planned / len(by_worker))} each" if planned is not None else ""))
    return wall, cpu


def layer_by_worker(directory: Path, k: int) -> list[tuple[int, float]]:
    """Per worker, the bytes layer ``k``'s tasks read and the share of the layer's words they solved."""
    read: dict[str, list[int]] = {}
    for path in (directory / "manifest" / f"k{k:02d}").glob("*.json"):
        record = json.loads(path.read_text())["record"]
        entry = read.setdefault(record.get("worker") or "local", [0, 0])
        entry[0] += record.get("read_bytes", 0)
        entry[1] += record["stop"] - record["start"]
    words = sum(w for _, w in read.values()) or 1
    return [(n, w / words) for _, (n, w) in sorted(read.items())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pieces", default="9", help="comma-separated piece counts")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--slice-rows", type=int, default=3)
    parser.add_argument("--memory-limit", default="auto", help="each worker of the sliced run (e.g. 900MiB)")
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp"))
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="fling-sliced-", dir=args.dir))
    try:
        for pieces in (int(p) for p in args.pieces.split(",")):
            whole = report(f"{pieces} pieces, whole layers, {args.workers} workers",
                           root / f"whole-{pieces}", run_job(root / f"whole-{pieces}", pieces, args.workers, 0, "auto"))
            sliced = report(f"{pieces} pieces, slice_rows = {args.slice_rows}, {args.workers} workers of "
                            f"{args.memory_limit}", root / f"sliced-{pieces}",
                            run_job(root / f"sliced-{pieces}", pieces, args.workers, args.slice_rows,
                                    args.memory_limit))
            print(f"\n{pieces} pieces, sliced / whole: wall ×{sliced[0] / whole[0]:.2f}, "
                  f"task-seconds ×{sliced[1] / whole[1]:.2f}", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
