"""Execute a plan: run the unfinished tasks, stage after stage, on an executor.

Executors are small classes with a name, ``warm_up()``, ``run()`` and ``check()``
(:class:`Executor`); the Dask one is imported only when chosen. Resume needs no log: the manifest says which tasks are done,
and only the others run.
"""

from __future__ import annotations

import errno
import json
import resource
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

from epcg.runtime.allocator import give_back
from epcg.runtime.errors import StaleTask, TaskFailed, UserError, one_line
from epcg.runtime.estimate import usable_memory
from epcg.runtime.jobs import Job
from epcg.runtime.plan import Plan, Stage, Task
from epcg.runtime.registry import job_kind, vetted
from epcg.runtime.progress import Callback, TaskEndEvent
from epcg.runtime.shell import command
from epcg.runtime.arrays import CHECK_BATCH, check_chunks
from epcg.runtime.records import vouch
from epcg.runtime.store import RunDir

OnDone = Callable[[Task, dict[str, Any]], None]


@lru_cache(maxsize=8)
def _config(domain: str, job_json: str) -> Any:
    """The validated config on a worker, parsed once per process and job."""
    return job_kind(domain).validate(json.loads(job_json))


@lru_cache(maxsize=8)
def _job_data(run_path: str, fence: str | None) -> dict[str, Any]:
    """The run's job.toml as stored, read once per process and session: what a record vouches for."""
    return RunDir(run_path).job_data()


RETRIES = 3
"""Attempts of a task that raises a transient OSError (a flaky shared filesystem) before the run stops."""
FATAL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM}
"""OSErrors that a retry cannot cure: the run stops at once and says why."""


def run_task(domain: str, job_json: str, run_path: str, fence: str | None, task: Task) -> dict[str, Any]:
    """Run one task where it lands (any worker), store its data, then its record.

    A transient OSError is retried up to ``RETRIES`` times; a full disk raises
    TaskFailed (exit 1: the run wrote, and stopped), a read-only or forbidden
    place UserError; any other exception becomes a TaskFailed naming the chunk
    (one line at the client).
    """
    try:
        return _attempts(domain, job_json, run_path, fence, task)
    finally:
        _give_back_near_pause()


def _attempts(domain: str, job_json: str, run_path: str, fence: str | None, task: Task) -> dict[str, Any]:
    """:func:`run_task`'s attempts."""
    for attempt in range(1, RETRIES + 1):
        try:
            with vetted():
                return _attempt(domain, job_json, run_path, fence, task)
        except (StaleTask, UserError):
            raise
        except OSError as exc:
            if exc.errno in FATAL_ERRNOS:
                full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
                raise (TaskFailed if full else UserError)(f"chunk {task.id}: {one_line(exc, named=True)} in {run_path}; "
                                                          f"fix that, then {command('resume', run_path)}") from None
            if attempt == RETRIES:
                raise TaskFailed(f"chunk {task.id} failed {RETRIES} times: {one_line(exc, named=True)}") from None
            time.sleep(0.2 * 2**attempt)
        except Exception as exc:  # noqa: BLE001 - a deterministic failure: one line naming the chunk
            raise TaskFailed(f"chunk {task.id} failed: {one_line(exc, named=True)}") from None
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class Failed:
    """What :func:`run_task_quietly` returns instead of raising: the error's class and its one line."""

    error: str
    message: str

    def exception(self) -> Exception:
        """The error as the task raised it: its class (a storage fault keeps its cause and exit status)."""
        from epcg.runtime import errors

        cls = getattr(errors, self.error, None)
        return (cls if isinstance(cls, type) and issubclass(cls, Exception) else UserError)(self.message)


def run_task_quietly(domain: str, job_json: str, run_path: str, fence: str | None,
                     task: Task) -> dict[str, Any] | Failed:
    """:func:`run_task` for a Dask worker: its one-line errors come back as a :class:`Failed` value, so the
    worker logs no "Compute Failed" traceback for what the client reports in one line."""
    try:
        return run_task(domain, job_json, run_path, fence, task)
    except (UserError, TaskFailed) as exc:
        return Failed(type(exc).__name__ if type(exc).__module__ == UserError.__module__ else "UserError", str(exc))


def run_tasks_quietly(domain: str, job_json: str, run_path: str, fence: str | None,
                      tasks: Sequence[Task]) -> list[dict[str, Any] | Failed]:
    """:func:`run_task_quietly` over tasks that share what they read (one ``Task.group``), one after another in
    this thread, so the worker reads it once; it stops at the first failure. A task that already has its record
    (the call run again after a worker died) is not run again: its record is returned."""
    run = RunDir(run_path, fence)
    out: list[dict[str, Any] | Failed] = []
    for task in tasks:
        try:
            record = run.records.read(task)
        except (OSError, UserError):  # the task itself meets the fault, and says it in its one line
            record = None
        out.append(record or run_task_quietly(domain, job_json, run_path, fence, task))
        if isinstance(out[-1], Failed):
            break
    return out


def _give_back_near_pause() -> None:
    """On a Dask worker with a memory limit, the kept chunk buffers back to the system when the worker is near the
    memory at which Dask pauses it (:func:`~epcg.runtime.allocator.give_back`)."""
    distributed = sys.modules.get("distributed")  # a process that never imported it is no worker
    try:
        limit = distributed.get_worker().memory_manager.memory_limit if distributed is not None else None
    except ValueError:
        return
    if limit:
        give_back(usable_memory(limit))


def worker_address() -> str | None:
    """The address of the Dask worker running this task (its host as the scheduler sees it), None outside one."""
    distributed = sys.modules.get("distributed")  # a process that never imported it is no worker
    try:
        return distributed.get_worker().address if distributed is not None else None
    except ValueError:
        return None


def _attempt(domain: str, job_json: str, run_path: str, fence: str | None, task: Task) -> dict[str, Any]:
    experiment = job_kind(domain)
    config = _config(domain, job_json)
    run = RunDir(run_path, fence)
    run.check_fence()
    io_before = run.location.io()
    began, cpu = time.perf_counter(), time.thread_time()
    result = experiment.run_task(config, task, run)
    record = {
        "task": task.id,
        "start": task.start,
        "stop": task.stop,
        "vouch": vouch(_job_data(run_path, fence), task),
        "seconds": round(time.perf_counter() - began, 6),
        "cpu_seconds": round(time.thread_time() - cpu, 6),
        "ended_at": round(time.time(), 3),
        "fence": fence,
        "bytes": run.arrays.bytes_written(),
        "read_bytes": run.arrays.bytes_read,
        "max_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "worker": worker_address(),
        "result": result,
        "data": run.arrays.written,
    }
    if io_before is not None:
        record["io"] = {key: value - io_before[key] for key, value in (run.location.io() or {}).items()}
    run.records.write(task, record)
    return record


def warm_up(domain: str, job_json: str) -> float:
    """Compile (or load from numba's cache) the kernels a job uses; return seconds."""
    began = time.perf_counter()
    with vetted():
        job_kind(domain).warm_up(_config(domain, job_json))
    return time.perf_counter() - began


class Executor(Protocol):
    """Where tasks run: a name, a warm-up of every worker, the tasks of a plan, and the checks of stored chunks."""

    name: str

    def warm_up(self, domain: str, job_json: str) -> float:
        """Prepare every worker; return the slowest worker's seconds."""

    def check(self, run_path: str, records: list[dict[str, Any]], on_checked: Callable[[int], None]) -> list[bool]:
        """Whether each record's chunk is stored intact (``arrays.check_chunks``), read where the tasks run;
        ``on_checked`` is told how many chunks each batch held as it ends."""

    def run(
        self,
        stages: Sequence[Stage],
        pending: dict[str, list[Task]],
        call: tuple[str, str, str, str | None],
        on_done: OnDone,
    ) -> None:
        """Run the pending tasks, a stage only after the stages it depends on."""


class SerialExecutor:
    """Everything in this process, in plan order: tests, notebooks, debugging."""

    name = "serial"

    def warm_up(self, domain: str, job_json: str) -> float:
        return warm_up(domain, job_json)

    def check(self, run_path: str, records: list[dict[str, Any]], on_checked: Callable[[int], None]) -> list[bool]:
        intact: list[bool] = []
        for at in range(0, len(records), CHECK_BATCH):
            batch = records[at:at + CHECK_BATCH]
            intact += check_chunks(run_path, batch)
            on_checked(len(batch))
        return intact

    def run(self, stages: Sequence[Stage], pending: dict[str, list[Task]], call: tuple[str, str, str, str | None],
            on_done: OnDone) -> None:
        for stage in stages:
            for task in pending.get(stage.name, []):
                on_done(task, run_task(*call, task))


def execute(
    job: Job,
    plan: Plan,
    run: RunDir,
    executor: Executor,
    callbacks: Sequence[Callback] = (),
) -> dict[str, dict[str, Any]]:
    """Run every task of ``plan`` that has no manifest record; return all records."""
    done = run.records.done(plan.tasks())
    pending = {
        stage.name: [task for task in stage.tasks if task.id not in done] for stage in plan.stages
    }
    left = {name: len(tasks) for name, tasks in pending.items()}
    for callback in callbacks:
        callback.on_run_start(plan, sum(left.values()))

    def on_done(task: Task, record: dict[str, Any]) -> None:
        done[task.id] = record
        event = TaskEndEvent(task, record)
        for callback in callbacks:
            callback.on_task_end(event)
        left[task.stage] -= 1
        if left[task.stage] == 0:
            for callback in callbacks:
                callback.on_stage_end(plan.by_name[task.stage])

    call = (job.domain, json.dumps(job.to_dict(), sort_keys=True), run.location.where, run.fence)
    try:
        if any(left.values()):
            executor.run(plan.stages, pending, call, on_done)
    finally:
        for callback in callbacks:
            callback.on_run_end()
    return done
