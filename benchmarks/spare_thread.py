"""A whole Fling! job on the embedded cluster with a thread per core against one thread more: wall, CPU and ratio.

Each side is ``epcg run`` of the same job with a cluster file of one worker process: ``--threads`` threads (one
per core, the shape before ``cluster.SPARE_THREADS``) and ``--threads`` + 1 (today's default). The sides alternate
in pairs whose order flips each time (AB BA AB ...), each run into a fresh directory, so a drift of the machine's
load falls on both. Prints every run's wall and CPU seconds (user + system of the run and its workers), the
medians and the ratio spare/cores (below 1: the spare thread is faster).

    python benchmarks/spare_thread.py                       # 9 pieces, 2 pairs: about 11 minutes here
    python benchmarks/spare_thread.py --pieces 10 --pairs 1
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_job(threads: int, pieces: int, where: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one ``epcg run`` on a one-process embedded cluster of ``threads`` threads."""
    cluster = where / f"local-{threads}.toml"
    cluster.write_text(f'kind = "local"\nworkers = 1\nthreads_per_worker = {threads}\n')
    out = where / f"run-{threads}-{time.monotonic_ns()}"
    before, began = child_cpu(), time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "epcg", "run", str(ROOT / "jobs/fling.toml"), "--set",
                           f"max_pieces={pieces}", "--cluster", str(cluster), "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - began, child_cpu() - before
    if done.returncode != 0:
        raise SystemExit(f"epcg run failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pieces", type=int, default=9, help="max_pieces of the Fling! job")
    parser.add_argument("--pairs", type=int, default=2, help="runs per side")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                        help="cores (default: this machine's)")
    opts = parser.parse_args()
    sides = {"cores": opts.threads, "spare": opts.threads + 1}
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
    print(f"Fling! {opts.pieces} pieces, one worker process: {opts.threads} threads (cores) against "
          f"{opts.threads + 1} (spare), {opts.pairs} runs each", flush=True)
    with tempfile.TemporaryDirectory(prefix="epcg-spare-") as tmp:
        for i in range(opts.pairs):
            for name in (("cores", "spare") if i % 2 == 0 else ("spare", "cores")):
                wall, cpu = run_job(sides[name], opts.pieces, Path(tmp))
                runs[name].append((wall, cpu))
                print(f"  run {i + 1} {name:<5} wall {wall:8.1f} s  cpu {cpu:8.1f} s", flush=True)
    for j, key in enumerate(("wall", "cpu")):
        base, spare = (statistics.median(r[j] for r in runs[name]) for name in ("cores", "spare"))
        print(f"median {key:<4} cores {base:8.1f} s  spare {spare:8.1f} s  ratio spare/cores {spare / base:.3f}")


if __name__ == "__main__":
    main()
