"""Fling! retrograde layers end to end (Dask, Zarr, manifest included): boards/s, unreduced vs symmetric.

Runs ``jobs/fling.toml`` (layers only: no evaluation, no distributions) on
the embedded cluster up to ``--max-pieces`` (default 8) once per path and per
worker count in ``--workers`` (default 1,2). A path is ``unreduced`` (every
board) or ``symmetric`` (one board per orbit, then the fill of the unreduced
layer for the next one), then optionally ``:fast`` or ``:block`` (the job's
``kernel``; default ``auto``, the block kernel) and ``+shared`` (one mapped
copy of the previous layer per machine, ``shared_previous = true``) or
``+threads`` (one worker process with a thread per worker asked for: one
private copy per machine, the kernels release the GIL) or ``+slicesN``
(``slice_rows = N``: each layer task reads only the slices of the layer
before that its moves reach, read group by read group). The
default compares ``unreduced:fast``, the code before the block kernel and the
baseline, with ``symmetric``, the default job.

It prints per layer boards represented per wall second (a symmetric layer's
wall time runs from the fill of the layer before it to its last task), each
worker's peak RSS, proportional set size at the end (a page of a shared map
counts once per machine, not once per process) and CPU seconds, their ratios
to the first path, the deepest layer's ratio of each path to the first one
for each worker count, the scaling from the first worker count to the last,
and projections for 10 and 11 pieces from the deepest layer's rate per worker.

The paths run in the same invocation one after another, so on a shared
machine compare their ratio rather than the absolute rates.

    python benchmarks/fling_layers.py [--max-pieces 8] [--workers 1,2] [--paths unreduced:fast,symmetric]
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
from epcg.runtime.engine import claimed, prepare_new, run_plan

JOBS = Path(__file__).resolve().parents[1] / "jobs"


def worker_figures() -> tuple[float, float, float]:
    """This process's peak RSS (MB; mapped pages of a shared layer count in full in every process that read them),
    its proportional set size now (MB; a page shared by n processes counts 1/n; the worker still holds the last
    layer it read) and its CPU seconds."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    pss = 0.0
    try:
        for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss = int(line.split()[1]) / 1024
    except OSError:
        pass
    return usage.ru_maxrss / 1024, pss, usage.ru_utime + usage.ru_stime


def run_once(max_pieces: int, chunk_words: int, workers: int, path: str) -> tuple[dict, list[tuple[float, ...]]]:
    """Results of one whole job and each worker's :func:`worker_figures`; the run directory is removed.

    ``path``: ``unreduced`` or ``symmetric``, then ``:kernel`` and ``+shared``, ``+threads`` or ``+slicesN`` (the
    module docstring)."""
    mode, _, machine = path.partition("+")
    mode, _, kernel = mode.partition(":")
    shared = machine == "shared"
    slices = int(machine.removeprefix("slices")) if machine.startswith("slices") else 0
    spec = LocalSpec(workers=1, threads_per_worker=workers, dashboard_address=None) if machine == "threads" else \
        LocalSpec(workers=workers, dashboard_address=None)
    job = load_job(JOBS / "fling.toml", [f"max_pieces={max_pieces}", f"chunk_words={chunk_words}", "top_puzzles=0",
                                         "distributions=false", f"kernel={kernel or 'auto'!r}",
                                         f"symmetry={'true' if mode == 'symmetric' else 'false'}",
                                         f"shared_previous={'true' if shared else 'false'}",
                                         f"slice_rows={slices}"])
    tmp = Path(tempfile.mkdtemp(prefix="fling-bench-"))
    try:
        with connect(spec) as client:
            planned = prepare_new(job, tmp / "fling")
            with claimed(planned, new=True):
                results = run_plan(planned, DaskExecutor(client))
            peaks = list(client.run(worker_figures).values())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return results, peaks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-pieces", type=int, default=8)
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts (threads of one worker "
                        "process for a +threads path)")
    parser.add_argument("--paths", default="unreduced:fast,symmetric",
                        help="comma-separated: unreduced or symmetric, each optionally :fast or :block, then +shared, "
                             "+threads or +slicesN; "
                             "ratios are against the first")
    parser.add_argument("--chunk-words", type=int, default=1 << 18)
    args = parser.parse_args()
    counts = [int(w) for w in args.workers.split(",")]
    paths = args.paths.split(",")

    rates: dict[tuple[str, int], float] = {}
    per_worker: dict[tuple[str, int], float] = {}
    wall: dict[tuple[str, int], float] = {}
    figures: dict[tuple[str, int], list[tuple[float, ...]]] = {}
    for workers in counts:
        for path in paths:
            began = time.perf_counter()
            results, peaks = run_once(args.max_pieces, args.chunk_words, workers, path)
            wall[path, workers] = time.perf_counter() - began
            figures[path, workers] = peaks
            print(f"\n== {path}, {workers} worker(s): wall {wall[path, workers]:.1f} s "
                  f"(warm-up {results['warm_up_seconds']:.1f} s); per worker: peak RSS "
                  f"{', '.join(f'{v[0]:.0f} MB' for v in peaks)}; PSS at the end "
                  f"{', '.join(f'{v[1]:.0f} MB' for v in peaks)}; CPU {', '.join(f'{v[2]:.1f} s' for v in peaks)}")
            print(f"{'pieces':>6} {'boards':>16} {'solvable':>14} {'unique':>12} {'tasks':>6} {'fill s':>7} "
                  f"{'wall s':>8} {'M boards/s wall':>16} {'M/s per worker':>15}")
            for row in results["rows"]:
                print(f"{row['pieces']:>6} {row['boards']:>16,} {row['solvable']:>14,} {row['unique']:>12,} "
                      f"{row['tasks']:>6} {row['fill_seconds']:>7.2f} {row['wall_seconds']:>8.2f} "
                      f"{(row['boards_per_wall_second'] or 0) / 1e6:>16.2f} "
                      f"{(row['boards_per_second'] or 0) / 1e6:>15.2f}", flush=True)
            top = results["rows"][-1]
            rates[path, workers] = top["boards_per_wall_second"] or 0
            per_worker[path, workers] = top["boards_per_second"] or 1
    k = args.max_pieces
    print(f"\nlayer {k}, boards represented per wall second:")
    for workers in counts:
        line = ", ".join(f"{path} {rates[path, workers] / 1e6:.1f} M/s" for path in paths)
        ratio = "".join(f"; {path} / {paths[0]} x{rates[path, workers] / rates[paths[0], workers]:.2f}"
                        for path in paths[1:])
        print(f"  {workers} worker(s): {line}{ratio}")
    print("\nwhole job, ratio to the first path: wall, CPU of the workers, their peak RSS and PSS at the end (summed):")
    for workers in counts:
        base = paths[0], workers
        for path in paths:
            key = path, workers
            sums = [sum(v[i] for v in figures[key]) / sum(v[i] for v in figures[base]) if sum(
                v[i] for v in figures[base]) else float("nan") for i in range(3)]
            print(f"  {workers} worker(s), {path}: wall x{wall[key] / wall[base]:.2f}, CPU x{sums[2]:.2f}, "
                  f"peak RSS x{sums[0]:.2f}, PSS x{sums[1]:.2f}")
    if len(counts) > 1:
        lo, hi = counts[0], counts[-1]
        print("  scaling " + ", ".join(f"{path} x{rates[path, hi] / rates[path, lo]:.2f} from {lo} to {hi} workers"
                                        for path in paths))
    print("\nprojection from the deepest layer's rate per worker (deeper layers miss the cache more: "
          "treat as a lower bound on time):")
    for path in paths:
        rate = per_worker[path, counts[-1]]
        for pieces in (10, 11):
            boards = binomial(56, pieces)
            line = ", ".join(f"{n} workers {boards / (rate * n) / 3600:.2f} h" for n in (2, 16, 64))
            print(f"  {path}, {pieces} pieces ({boards:,} boards): {line}")


if __name__ == "__main__":
    main()
