"""Run a plan's tasks on a Dask cluster, one task per chunk, stages in dependency order."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from dask.base import tokenize
from distributed import Client, as_completed

from epcg.runtime.execute import Failed, OnDone, run_task_quietly, warm_up
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
                            run_task_quietly,
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
                if isinstance(record, Failed):
                    raise record.exception()
                left[task.stage] -= 1
                on_done(task, record)
                if left[task.stage] == 0:
                    submit_ready()
        except BaseException:
            for future in list(futures.futures):
                future.cancel()
            raise
