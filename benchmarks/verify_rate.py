"""Chunks verified per second on a Dask cluster: in batches (what ``epcg verify`` and a resume do) against one
Dask task per chunk, on the same records of a real run, alternated so both meet the same page cache.

A resume first reads back every chunk recorded since the last check, so its rate is what a restart of a large
run waits for before any chunk is computed. The cluster has the default shape (one worker process, a thread
per core); nothing is forgotten or rewritten (the checks only read).

    python benchmarks/verify_rate.py /var/tmp/epcg-fling12b/run --stage k12 --chunks 2000
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
from pathlib import Path

from distributed import Client, LocalCluster

from epcg.runtime.dask_executor import DaskExecutor
from epcg.runtime.arrays import check_chunks
from epcg.runtime.records import unseal


def sample(run: Path, stage: str, count: int, at: float) -> list[dict]:
    """``count`` consecutive records of ``stage`` from ``at`` of the way along it: what a session writes, and a
    resume reads back."""
    paths = sorted((run / "manifest" / stage).glob("*.json"))
    if not paths:
        raise SystemExit(f"{run} has no records of stage {stage}")
    first = min(int(at * len(paths)), max(len(paths) - count, 0))
    records = [unseal(path.read_text()) for path in paths[first:first + count]]
    return [record for record in records if record is not None]


def one_task_each(client: Client, run: str, records: list[dict]) -> list[bool]:
    """The check before batches: a Dask task per chunk."""
    token = uuid.uuid4().hex[:8]
    futures = [client.submit(check_chunks, run, [record], key=f"each-{record['task']}-{token}") for record in records]
    return [ok for result in client.gather(futures) for ok in result]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a run directory")
    parser.add_argument("--stage", required=True, help="the stage whose records are read back, e.g. k12")
    parser.add_argument("--chunks", type=int, default=2000, help="how many of its chunks, one after another")
    parser.add_argument("--at", type=float, default=0.25, help="where along the stage they begin (0 to 1)")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    records = sample(args.run, args.stage, args.chunks, args.at)
    run = str(args.run.resolve())
    threads = os.cpu_count() or 1
    print(f"{len(records)} consecutive chunks of {args.stage} from {records[0]['task']} in {run}; "
          f"1 worker process of {threads} threads")
    with LocalCluster(n_workers=1, threads_per_worker=threads, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        executor = DaskExecutor(client)
        rates: dict[str, list[float]] = {"one task a chunk": [], "batches": []}
        for _ in range(args.repeats):
            for name, check in (("one task a chunk", lambda: one_task_each(client, run, records)),
                                ("batches", lambda: executor.check(run, records))):
                began = time.perf_counter()
                intact = check()
                seconds = time.perf_counter() - began
                if not all(intact):
                    raise SystemExit(f"{name}: {intact.count(False)} chunks damaged; is the run being written?")
                rates[name].append(len(records) / seconds)
                print(f"{name}: {len(records) / seconds:.1f} chunks/s ({seconds:.1f} s)")
    before, after = (sum(rates[name]) / len(rates[name]) for name in rates)
    print(f"mean: one task a chunk {before:.1f} chunks/s, batches {after:.1f} chunks/s, ratio x{after / before:.2f}")


if __name__ == "__main__":
    main()
