"""Run a plan's tasks on a Dask cluster, one task per chunk, stages in dependency order."""

from __future__ import annotations

import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from dask.base import tokenize
from distributed import Client, as_completed
from distributed.scheduler import KilledWorker

from epcg.runtime.errors import Drain, TaskFailed, UserError, one_line
from epcg.runtime.execute import Failed, OnDone, run_task_quietly, run_tasks_quietly, warm_up
from epcg.runtime.plan import Stage, Task
from epcg.runtime.progress import WorkersLost, note
from epcg.runtime.reads import host_of
from epcg.runtime.shell import command
from epcg.runtime.arrays import CHECK_BATCH, check_chunks
from epcg.runtime.store import RUN_FILE, RunDir

PATIENCE = 20.0
"""Seconds a run waits with no live worker (none started, or all died) before it ends with one line."""
WARM_UP_TRIES = 3
"""Attempts at preparing the workers when one dies meanwhile."""
POLL = 1.0
"""Seconds between looks at the cluster's workers while tasks run."""
LOST_SETTLE = 2.0
"""Seconds a host's lost workers are gathered before one line reports them (a node's workers go together)."""


def hosts(client: Client) -> dict[str, int]:
    """Live workers per host, as the scheduler knows them (``epcg status`` and the dashboard name them so)."""
    counts: dict[str, int] = defaultdict(int)
    for address in client.scheduler_info(n_workers=-1)["workers"]:
        counts[host_of(address)] += 1
    return dict(sorted(counts.items()))


def can_see(run_path: str) -> str | None:
    """On a worker: None if this machine reads the run directory's run.json, else why not (one line).

    A node without the shared filesystem (or without the object store's
    credentials) would otherwise fail each chunk it takes, or write where no
    other node looks.
    """
    try:
        run = RunDir(run_path)
        run.location.check()
        if run.location.read(RUN_FILE) is None:
            return f"no {RUN_FILE} there"
    except (UserError, OSError) as exc:
        return one_line(exc) or type(exc).__name__
    return None


def blind(address: str, run_path: str, why: str) -> UserError:
    """The one line for a worker whose machine cannot see the run directory."""
    return UserError(
        f"host {host_of(address)} (worker {address}) cannot see the run directory {run_path}: {why}; every node "
        "needs the same path mounted (or the object store's credentials): see docs/nodes.md; finished chunks are "
        f"kept, {command('resume', run_path)} once that node sees it or is gone")


class LostHosts:
    """Gathers the scheduler's ``remove-worker`` events by host and reports each host once they settle.

    A node that dies takes all its workers at once; its line says how many and
    how many of this run's chunks they were running (the scheduler runs those
    again elsewhere).
    """

    def __init__(self, report: Callable[[WorkersLost], None]) -> None:
        self.report = report
        self.lock = threading.Lock()
        self.pending: dict[str, list[Any]] = {}
        """host -> [time of its last event, workers lost, chunks they were running]"""
        self.dropped = False

    def on_event(self, event: tuple[float, dict[str, Any]]) -> None:
        """A scheduler event (called on the client's event loop)."""
        _, msg = event
        if not isinstance(msg, dict) or msg.get("action") != "remove-worker" or msg.get("expected"):
            return
        chunks = sum(1 for key in msg.get("processing-tasks", ()) if _is_chunk(key))
        with self.lock:
            if self.dropped:
                return
            entry = self.pending.setdefault(host_of(msg.get("worker", "?")), [0.0, 0, 0])
            entry[0], entry[1], entry[2] = time.monotonic(), entry[1] + 1, entry[2] + chunks

    def drop(self) -> None:
        """Forget the losses not reported yet, and any later ones (a run stopped by signal)."""
        with self.lock:
            self.pending.clear()
            self.dropped = True

    def flush(self, settle: float = LOST_SETTLE) -> None:
        """Report the hosts with no new event for ``settle`` seconds (0: every host now)."""
        now = time.monotonic()
        with self.lock:
            ripe = [host for host, (last, _, _) in self.pending.items() if now - last >= settle]
            events = [WorkersLost(host, *self.pending.pop(host)[1:]) for host in ripe]
        for event in events:
            self.report(event)


def _is_chunk(key: object) -> bool:
    return isinstance(key, str) and key.startswith("epcg-") and not key.startswith("epcg-verify-")


def crashed(task: Task, failures: int) -> TaskFailed:
    """The one line for a task whose worker process died every time it ran it."""
    return TaskFailed(
        f"chunk {task.id} (stage {task.stage}, range [{task.start:,}, {task.stop:,})) killed its worker process "
        f"{failures} times: a compiled kernel most likely crashed the process (an index out of bounds, which numba "
        "does not check unless told: compile with @njit(boundscheck=True), or 'epcg run --check' finds the rank), "
        "or the chunk needs more memory than a worker has; finished chunks are kept")


def no_workers(seconds: float | None) -> TaskFailed:
    """The one line for a cluster with no live worker for ``seconds``."""
    return TaskFailed(
        f"no Dask worker has been alive for {seconds:.0f} s: the workers cannot start or keep dying (a memory limit "
        "below the ~250 MB a worker needs at start-up? see the cluster file or --memory-limit, and the workers' "
        "logs); finished chunks are kept")


def bundles(tasks: Sequence[Task]) -> list[tuple[Task, ...]]:
    """A stage's tasks as they are submitted: the tasks of one ``Task.group`` together (in order), each other task
    alone.

    >>> [[t.index for t in b] for b in bundles([Task("k", i, i, i + 1, group=g) for i, g in enumerate([0, 0, 1, None])])]
    [[0, 1], [2], [3]]
    """
    out: list[tuple[Task, ...]] = []
    where: dict[int, int] = {}
    for task in tasks:
        if task.group is None:
            out.append((task,))
        elif task.group in where:
            out[where[task.group]] += (task,)
        else:
            where[task.group] = len(out)
            out.append((task,))
    return out


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

    def __init__(self, client: Client, patience: float | None = PATIENCE,
                 on_lost: Callable[[WorkersLost], None] | None = None) -> None:
        self.client = client
        self.patience = patience
        """Seconds without a live worker before the run ends (None: wait for ever, e.g. a batch queue)."""
        self.on_lost = on_lost or (lambda event: note(event.line()))
        """Told of each host whose workers the scheduler lost (default: one line in the progress output)."""

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

    def _workers(self) -> set[str]:
        return set(self.client.scheduler_info(n_workers=-1)["workers"])

    def check_sight(self, run_path: str, workers: set[str] | None = None) -> None:
        """Raise the one line of :func:`blind` for the first of ``workers`` (default: all) that cannot see
        ``run_path`` while this client can; a worker that dies meanwhile is not a finding, and neither is a run
        directory nobody sees (the store is down or gone: the fault itself says so)."""
        if workers is not None and not workers:
            return
        try:
            seen = self.client.run(can_see, run_path, workers=sorted(workers) if workers else None, on_error="return")
        except (OSError, TimeoutError):
            return
        blinded = [(address, why) for address, why in sorted(seen.items()) if isinstance(why, str)]
        if blinded and can_see(run_path) is None:
            address, why = blinded[0]
            raise blind(address, run_path, why)

    def check(self, run_path: str, records: list[dict[str, Any]], on_checked: Callable[[int], None] = lambda n: None
              ) -> list[bool]:
        """Verify chunks on the workers (they read the store where it lives), in batches of :data:`CHECK_BATCH`
        at most (smaller where that leaves fewer than four batches a thread); ``on_checked`` is told how many
        chunks each batch held as it ends.

        A check that raises (StoreMissing: the store itself is gone) cancels the
        others and reaches the caller before anything is deleted.
        """
        if not records:
            return []
        threads = sum(w.get("nthreads", 1) for w in self.client.scheduler_info(n_workers=-1)["workers"].values())
        size = max(1, min(CHECK_BATCH, -(-len(records) // (4 * max(threads, 1)))))
        batches = [records[i:i + size] for i in range(0, len(records), size)]
        token = uuid.uuid4().hex[:12]
        futures = {}
        for i, batch in enumerate(batches):
            key = f"epcg-verify-{batch[0]['task']}-{token}"
            futures[self.client.submit(check_chunks, run_path, batch, key=key)] = i
        intact: list[list[bool]] = [[] for _ in batches]
        try:
            for future in as_completed(futures):
                i = futures[future]
                intact[i] = future.result()
                on_checked(len(batches[i]))
        except BaseException:
            self.client.cancel(list(futures))
            raise
        return [ok for batch in intact for ok in batch]

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
                    for tasks in bundles(pending[stage.name]):  # a group's tasks in one call: stealing moves it whole
                        future = self.client.submit(
                            run_task_quietly if len(tasks) == 1 else run_tasks_quietly,
                            *call,
                            tasks[0] if len(tasks) == 1 else tasks,
                            key=f"epcg-{tasks[0].id}-{tokenize(call, tasks)}",
                            priority=-order[stage.name],
                            pure=False,
                        )
                        future.epcg_tasks = tasks  # type: ignore[attr-defined]
                        futures.add(future)

        run_path = call[2]
        known = self._workers()
        self.check_sight(run_path, known)
        lost = LostHosts(self.on_lost)
        self.client.subscribe_topic("all", lost.on_event)
        submit_ready()
        alive = looked = time.monotonic()
        try:
            while not futures.is_empty():
                ready = futures.next_batch(block=False)
                if not ready:
                    now = time.monotonic()
                    if now - looked >= POLL:
                        looked = now
                        lost.flush()
                        workers = self._workers()
                        self.check_sight(run_path, workers - known)
                        known = workers
                        if workers:
                            alive = now
                        elif self.patience is not None and now - alive >= self.patience:
                            raise no_workers(now - alive)
                    time.sleep(0.02)
                    continue
                for future in ready:
                    tasks = future.epcg_tasks
                    try:
                        records = future.result()
                    except KilledWorker as exc:
                        raise crashed(tasks[0], exc.allowed_failures + 1) from None
                    except Exception:
                        self.check_sight(run_path)  # a node that cannot see the run is the likelier cause
                        raise
                    for task, record in zip(tasks, records if len(tasks) > 1 else [records]):
                        if isinstance(record, Failed):
                            self.check_sight(run_path)
                            raise record.exception()
                        left[task.stage] -= 1
                        on_done(task, record)
                        if left[task.stage] == 0:
                            submit_ready()
                alive = time.monotonic()
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt) and not isinstance(exc, Drain):
                lost.drop()  # a stop by signal reaches the workers of the process group too: no news
            for future in list(futures.futures):
                future.cancel()
            if isinstance(exc, Drain):
                finish_running(self.client, exc)
            raise
        finally:
            lost.flush(0)
            self.client.unsubscribe_topic("all")


def _running(dask_worker: Any) -> int:
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
