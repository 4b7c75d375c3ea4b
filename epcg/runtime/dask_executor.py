"""Run a plan's tasks on a Dask cluster, one task per chunk, stages in dependency order."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence

from dask.base import tokenize
from distributed import Client, as_completed
from distributed.scheduler import KilledWorker

from epcg.runtime.errors import Drain, TaskFailed
from epcg.runtime.execute import Failed, OnDone, run_task_quietly, warm_up
from epcg.runtime.plan import Stage, Task
from epcg.runtime.store import check_chunk

PATIENCE = 20.0
"""Seconds a run waits with no live worker (none started, or all died) before it ends with one line."""
WARM_UP_TRIES = 3
"""Attempts at preparing the workers when one dies meanwhile."""
POLL = 1.0
"""Seconds between looks at the cluster's workers while tasks run."""


def crashed(task: Task, failures: int) -> TaskFailed:
    """The one line for a task whose worker process died every time it ran it."""
    return TaskFailed(
        f"chunk {task.id} (stage {task.stage}, range [{task.start:,}, {task.stop:,})) killed its worker process "
        f"{failures} times: a compiled kernel most likely crashed the process (an index out of bounds, which numba "
        "does not check unless told: compile with @njit(boundscheck=True), or 'epcg run --check' finds the rank), "
        "or the chunk needs more memory than a worker has; finished chunks are kept")


def no_workers(seconds: float) -> TaskFailed:
    """The one line for a cluster with no live worker for ``seconds``."""
    return TaskFailed(
        f"no Dask worker has been alive for {seconds:.0f} s: the workers cannot start or keep dying (a memory limit "
        "below the ~250 MB a worker needs at start-up? see the cluster file or --memory-limit, and the workers' "
        "logs); finished chunks are kept")


class DaskExecutor:
    """Submit each ready stage's pending tasks; a stage is ready when its ``after`` are done.

    Tasks of earlier stages get a higher priority, so rows finish in order and a
    progress bar moves steadily. A lost worker's tasks are rescheduled by the
    scheduler; a task that raises stops the run (its manifest record is missing,
    so resume reruns it). A task whose worker dies every time it runs it (the
    scheduler's ``allowed-failures``) ends the run with one line naming the
    chunk, and so does a cluster with no live worker for ``patience`` seconds.
    """

    name = "dask"

    def __init__(self, client: Client, patience: float | None = PATIENCE) -> None:
        self.client = client
        self.patience = patience
        """Seconds without a live worker before the run ends (None: wait for ever, e.g. a batch queue)."""

    def warm_up(self, domain: str, job_json: str) -> float:
        """Prepare every live worker; a worker dying meanwhile is waited for again, up to ``WARM_UP_TRIES`` times."""
        for attempt in range(1, WARM_UP_TRIES + 1):
            try:
                self.client.wait_for_workers(1, timeout=self.patience)  # adaptive clusters start with none
            except TimeoutError:
                raise no_workers(self.patience) from None
            try:
                seconds = self.client.run(warm_up, domain, job_json)
            except OSError:  # CommClosedError: a worker died while preparing
                if attempt == WARM_UP_TRIES:
                    raise TaskFailed(
                        f"the Dask workers died {WARM_UP_TRIES} times while preparing the job (compiling its kernels): "
                        "they cannot start with this memory limit, or the job's set-up code crashes them; "
                        "see the workers' logs") from None
                continue
            return max(seconds.values(), default=0.0)
        raise AssertionError("unreachable")

    def _workers(self) -> int:
        return len(self.client.scheduler_info(n_workers=-1)["workers"])

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
        alive = looked = time.monotonic()
        try:
            while not futures.is_empty():
                ready = futures.next_batch(block=False)
                if not ready:
                    now = time.monotonic()
                    if self.patience is not None and now - looked >= POLL:
                        looked = now
                        if self._workers():
                            alive = now
                        elif now - alive >= self.patience:
                            raise no_workers(now - alive)
                    time.sleep(0.02)
                    continue
                for future in ready:
                    task = future.epcg_task
                    try:
                        record = future.result()
                    except KilledWorker as exc:
                        raise crashed(task, exc.allowed_failures + 1) from None
                    if isinstance(record, Failed):
                        raise record.exception()
                    left[task.stage] -= 1
                    on_done(task, record)
                    if left[task.stage] == 0:
                        submit_ready()
                alive = time.monotonic()
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
