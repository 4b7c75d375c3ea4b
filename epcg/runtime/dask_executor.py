"""Run a plan's tasks on a Dask cluster, one task per chunk, stages in dependency order."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence

from dask.base import tokenize
from distributed import Client, as_completed

from epcg.runtime.errors import Drain
from epcg.runtime.execute import OnDone, run_task, warm_up
from epcg.runtime.plan import Stage, Task
from epcg.runtime.store import check_chunk


class DaskExecutor:
    """Submit each ready stage's pending tasks; a stage is ready when its ``after`` are done.

    Tasks of earlier stages get a higher priority, so rows finish in order and a
    progress bar moves steadily. A lost worker's tasks are rescheduled by the
    scheduler; a task that raises stops the run (its manifest record is missing,
    so resume reruns it).
    """

    name = "dask"

    def __init__(self, client: Client) -> None:
        self.client = client

    def warm_up(self, domain: str, job_json: str) -> float:
        self.client.wait_for_workers(1)  # adaptive clusters (SLURM, PBS) start with none
        seconds = self.client.run(warm_up, domain, job_json)
        return max(seconds.values(), default=0.0)

    def check(self, run_path: str, records: list[dict]) -> list[bool]:
        """Verify chunks on the workers (they read the store where it lives), one task per record.

        A check that raises (StoreMissing: the store itself is gone) cancels the
        others and reaches the caller before anything is deleted.
        """
        if not records:
            return []
        batch = uuid.uuid4().hex[:12]
        futures = [self.client.submit(check_chunk, run_path, record, key=f"epcg-verify-{record['task']}-{batch}")
                   for record in records]
        try:
            return self.client.gather(futures)
        except BaseException:
            self.client.cancel(futures)
            raise

    def run(
        self,
        stages: Sequence[Stage],
        pending: dict[str, list[Task]],
        call: tuple[str, str, str, str | None],
        on_done: OnDone,
    ) -> None:
        order = {stage.name: i for i, stage in enumerate(stages)}
        left = {name: len(tasks) for name, tasks in pending.items()}
        waiting = [stage for stage in stages if left.get(stage.name)]
        futures = as_completed()
        submitted: set[str] = set()

        def submit_ready() -> None:
            for stage in list(waiting):
                if all(left.get(dep, 0) == 0 for dep in stage.after):
                    waiting.remove(stage)
                    submitted.add(stage.name)
                    for task in pending[stage.name]:
                        future = self.client.submit(
                            run_task,
                            *call,
                            task,
                            key=f"epcg-{task.id}-{tokenize(call, task)}",
                            priority=-order[stage.name],
                            pure=False,
                        )
                        future.epcg_task = task
                        futures.add(future)

        submit_ready()
        try:
            for future in futures:
                task = future.epcg_task
                record = future.result()
                left[task.stage] -= 1
                on_done(task, record)
                if left[task.stage] == 0:
                    submit_ready()
        except BaseException as exc:
            for future in list(futures.futures):
                future.cancel()
            if isinstance(exc, Drain):
                finish_running(self.client, exc)
            raise


def _running(dask_worker) -> int:
    return len(dask_worker.active_threads)


def finish_running(client: Client, drain: Drain) -> None:
    """Wait (at most ``drain.grace`` seconds) for the chunks still running on the workers: a cancelled
    task keeps running in its worker thread and writes its record when it ends, so a whole chunk is kept."""
    began = time.monotonic()
    while True:
        try:
            running = sum(client.run(_running).values())
        except (OSError, TimeoutError):
            running = None
        if drain.in_flight is None:
            drain.in_flight = running
        if not running or time.monotonic() - began >= drain.grace:
            drain.unfinished, drain.waited = running, round(time.monotonic() - began, 1)
            return
        time.sleep(0.25)
