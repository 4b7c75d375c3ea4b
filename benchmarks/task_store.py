"""What a layer task's storing costs beside busy kernels: the path every task's output takes into the run directory.

A Fling! layer task ends by writing two bit-array slices (``solvable``, ``unique``) through a fresh
:class:`~epcg.runtime.store.RunDir`, measuring the bytes it wrote and writing its record (which first makes the
chunks durable). On a worker those steps run while the other threads' numba kernels hold every core, and each
trip through Zarr's event loop waits for a core. This benchmark repeats those steps ``--tasks`` times on a
local run directory, beside ``--busy`` threads spinning a ``nogil`` numba loop, and prints the milliseconds per
task (median and mean over the tasks), each step's median (opening the store; writing the slices, which
compresses them; the record, which first fsyncs the chunks) and the Zarr store reads the steps made.

    python benchmarks/task_store.py                        # 200 tasks of 2^18 words beside 2 busy threads
    python benchmarks/task_store.py --empty                # the same, every word 0
    python benchmarks/compare_commits.py BASE benchmarks/task_store.py --metric "([\\d.]+) ms per task \\(median" \\
        -- --tasks 200
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time

import numpy as np
import zarr
from numba import njit
from zarr.storage import LocalStore

from epcg.runtime.plan import Task
from epcg.runtime.arrays import ZARR
from epcg.runtime.store import RunDir

ARRAYS = ("solvable/11", "unique/11")


@njit(nogil=True, cache=True)
def _spin(n: int) -> int:
    x = 0
    for i in range(n):
        x = (x * 6364136223846793005 + i) & 0xFFFFFFFF
    return x


def busy(stop: threading.Event) -> None:
    """Keep a core busy in numba (the GIL released) until ``stop``, as a layer kernel does."""
    while not stop.is_set():
        _spin(20_000_000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--words", type=int, default=1 << 18, help="words per slice (a task's chunk)")
    parser.add_argument("--busy", type=int, default=2, help="threads spinning a nogil kernel meanwhile")
    parser.add_argument("--empty", action="store_true", help="write all-zero slices (a task with no canonical board)")
    opts = parser.parse_args()

    rng = np.random.default_rng(1)
    solvable = rng.integers(0, 2**63, opts.words, dtype=np.uint64) & rng.integers(0, 2**63, opts.words, dtype=np.uint64)
    unique = np.where(rng.random(opts.words) < 0.01, solvable, 0).astype(np.uint64)
    if opts.empty:
        solvable, unique = np.zeros_like(solvable), np.zeros_like(unique)
    reads = 0
    get = LocalStore.get

    async def counted_get(self, *args, **kwargs):  # noqa: ANN001, ANN202 - the store's own signature
        nonlocal reads
        reads += 1
        return await get(self, *args, **kwargs)

    with tempfile.TemporaryDirectory(prefix="epcg-task-store-", dir="/var/tmp") as tmp:
        group = zarr.open_group(LocalStore(f"{tmp}/{ZARR}"), mode="w-")
        for name in ARRAYS:
            group.create_array(name, shape=(opts.words * opts.tasks,), dtype="uint64", chunks=(opts.words,),
                               fill_value=0)
        _spin(10)
        stop = threading.Event()
        spinners = [threading.Thread(target=busy, args=(stop,), daemon=True) for _ in range(opts.busy)]
        for thread in spinners:
            thread.start()
        LocalStore.get = counted_get
        steps: list[list[float]] = []
        try:
            for i in range(opts.tasks):
                times = [time.perf_counter()]
                run = RunDir(tmp)
                run.arrays.group  # noqa: B018 - opening the store is the first step timed
                times.append(time.perf_counter())
                for name, words in zip(ARRAYS, (solvable, unique)):
                    run.arrays.write_slice(name, i * opts.words, words)
                times.append(time.perf_counter())
                record = {"task": f"k11/{i:05d}", "bytes": run.arrays.bytes_written(), "data": run.arrays.written}
                run.records.write(Task("k11", i, i * opts.words, (i + 1) * opts.words), record)
                times.append(time.perf_counter())
                steps.append([b - a for a, b in zip(times, times[1:])])
        finally:
            LocalStore.get = get
            stop.set()
            for thread in spinners:
                thread.join()
    seconds = [sum(step) for step in steps]
    print(f"{opts.tasks} tasks of 2 x {opts.words:,} {'zero ' if opts.empty else ''}words beside {opts.busy} busy threads: "
          f"{1e3 * statistics.median(seconds):.2f} ms per task (median), {1e3 * statistics.fmean(seconds):.2f} "
          f"(mean); {reads / opts.tasks:.1f} store reads per task")
    medians = [1e3 * statistics.median(column) for column in zip(*steps)]
    print("median ms per step: " + ", ".join(f"{name} {ms:.2f}" for name, ms in
                                            zip(("opening the store", "writing both slices", "the record"), medians)))


if __name__ == "__main__":
    main()
