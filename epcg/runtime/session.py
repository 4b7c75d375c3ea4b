"""Start, resume and finish runs: the steps the CLI (and notebooks) take, in order."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from epcg.runtime.errors import UserError
from epcg.runtime.estimate import MAX_TASKS, coarsen_factor, figures, size
from epcg.runtime.execute import Executor, SerialExecutor, execute
from epcg.runtime.jobs import Job, validate
from epcg.runtime.plan import Plan, TooManyTasks
from epcg.runtime.progress import Callback
from epcg.runtime.registry import job_kind
from epcg.runtime.rundir import is_url, open_location
from epcg.runtime.store import JOB_FILE, RESULTS, RunDir, check_chunk

VERIFIED_FILE = "manifest/verified.json"


@dataclass(frozen=True)
class Prepared:
    """A job checked and planned, not yet started: nothing has been written."""

    job: Job
    plan: Plan
    run: RunDir
    notes: tuple[str, ...] = ()
    """What the runtime changed and why (chunks coarsened), to print before the run."""

    def __iter__(self) -> Iterator[Any]:
        return iter((self.job, self.plan, self.run))


def run_directory(out: str | os.PathLike[str]) -> Path | str:
    """``out`` as an absolute path or an object-store URL where a run can be made; UserError naming what is wrong.

    A URL is never taken for a path: ``s3://bucket/prefix`` is checked by
    reaching the store (bucket, credentials, endpoint), ``file://`` is a path.
    """
    if is_url(out):
        location = open_location(out)
        location.check()
        if location.is_local:
            out = location.where
        else:
            return location.where
    given = Path(out)
    if given.is_symlink() and not given.exists():
        raise UserError(f"--out {out} is a symbolic link to {os.readlink(given)}, which does not exist")
    path = given.absolute()
    if path.exists() and not path.is_dir():
        raise UserError(f"--out {out} is a file, not a directory")
    for parent in path.parents:
        if parent.is_symlink() and not parent.exists():
            raise UserError(f"--out {out}: {parent} is a symbolic link to a missing target")
        if parent.exists():
            if not parent.is_dir():
                raise UserError(f"--out {out}: {parent} is a file, not a directory")
            if not os.access(parent, os.W_OK | os.X_OK):
                raise UserError(f"--out {out}: cannot create directories in {parent} (permission denied)")
            break
    if path.is_dir() and not os.access(path, os.W_OK | os.X_OK):
        raise UserError(f"--out {out}: directory is not writable")
    return path


def prepare_new(job: Job, out: str | os.PathLike[str] | None, max_tasks: int = MAX_TASKS) -> Prepared:
    """Check that a new run can start in ``out`` (default ``runs/<name>``)."""
    run = RunDir(run_directory(out if out is not None else Path("runs") / job.name))
    _check_new(run)
    job, plan, notes = plan_job(job, max_tasks)
    return Prepared(job, plan, run, notes)


def _check_new(run: RunDir) -> None:
    if run.is_locked():
        raise UserError(f"run directory {run.path} is in use by another epcg process")
    if run.exists():
        raise UserError(
            f"run directory {run.path} already holds a run: continue it with "
            f"'epcg resume {run.path}', or pass another --out"
        )
    if not run.is_empty():
        raise UserError(f"--out {run.path} exists and is not an epcg run directory")


def open_run(where: str | os.PathLike[str]) -> RunDir:
    """The existing run at ``where`` (a path or URL), its store reached; UserError if there is none."""
    run = RunDir(where)
    run.location.check()
    if not run.exists():
        raise UserError(f"{where} is not an epcg run directory (no {JOB_FILE})")
    return run


def prepare_resume(path: str | os.PathLike[str]) -> Prepared:
    """Check that the run in ``path`` can be resumed with the job it started with."""
    run = open_run(path)
    job = run.read_job()
    if run.stored_digest() != job.digest:
        raise UserError(
            f"{run.job_path} has changed since the run started; resume only continues the "
            "same job (restore the file, or start a new run with 'epcg run')"
        )
    return Prepared(job, _plan(job), run)


def _plan(job: Job) -> Plan:
    try:
        plan = job_kind(job.domain).plan(job.config)
    except ValueError as exc:
        raise UserError(f"job {job.name}: {exc}") from None
    return _nonempty(job, plan)


def _nonempty(job: Job, plan: Plan) -> Plan:
    if plan.num_tasks == 0:
        raise UserError(f"job {job.name} has nothing to compute: its plan has no tasks")
    return plan


def plan_job(job: Job, max_tasks: int = MAX_TASKS) -> tuple[Job, Plan, tuple[str, ...]]:
    """The job's plan; if it has more than ``max_tasks`` tasks, its chunk keys scaled up until it has fewer.

    A job kind names in ``COARSEN`` the keys it may scale without changing any
    result (chunk sizes); without them a job beyond the bound is refused.
    """
    kind = job_kind(job.domain)
    keys = tuple(key for key in getattr(kind, "COARSEN", ()) if key in type(job.config).model_fields)
    original, first = job, None
    for _attempt in range(4):
        try:
            plan = kind.plan(job.config)
            tasks = plan.num_tasks
        except TooManyTasks as exc:
            plan, tasks = None, exc.tasks
        except ValueError as exc:
            raise UserError(f"job {job.name}: {exc}") from None
        first = tasks if first is None else first
        if plan is not None and tasks <= max_tasks:
            _nonempty(job, plan)
            if job is original:
                return job, plan, ()
            old, new = original.to_dict(), job.to_dict()
            note = (f"{', '.join(f'{k}={old[k]}' for k in keys)} would give {first:,} tasks, more than "
                    f"{max_tasks:,}; using {', '.join(f'{k}={new[k]}' for k in keys)} "
                    f"({tasks:,} tasks, identical results; --max-tasks raises the bound)")
            return job, plan, (note,)
        if not keys:
            break
        job = _coarsened(job, keys, coarsen_factor(tasks, max_tasks), max_tasks)
        if job is None:
            break
    raise UserError(
        f"job {original.name} has {first:,} tasks, more than --max-tasks {max_tasks:,}"
        + (f", even with bigger chunks ({', '.join(keys)})" if keys else "")
        + ": make the job smaller or raise --max-tasks"
    )


def _coarsened(job: Job, keys: tuple[str, ...], factor: int, max_tasks: int) -> Job | None:
    """The job with its chunk keys scaled by ``factor``: one key alone if that suffices (the fewest changes), else all."""
    data = job.to_dict()
    candidates = [(key,) for key in keys] + [keys] if len(keys) > 1 else [keys]
    for chosen in candidates:
        try:
            scaled = validate({**data, **{k: data[k] * factor for k in chosen}}, source=f"job {job.name}")
            if chosen == keys or job_kind(job.domain).plan(scaled.config).num_tasks <= max_tasks:
                return scaled
        except (UserError, ValueError):
            continue
    return None


MAX_SPLIT = 1 << 16
"""Largest value :func:`fit_memory` gives a job's ``SPLIT_FOR_MEMORY`` keys."""


def fit_memory(prepared: Prepared, memory_per_worker: int | None, workers: int) -> Prepared:
    """``prepared`` with its unset memory-splitting keys chosen so that every stage fits ``memory_per_worker``.

    A job kind names in ``SPLIT_FOR_MEMORY`` the keys that lower the memory a
    worker needs without changing any result (Fling!'s ``partitions``: a task
    reads the layer it needs in that many parts). Those the job leaves unset
    (None) stay so if the job fits; otherwise they are set to 2, 4, 8, …
    while the worst stage's estimated peak still falls, and the first value
    that fits is taken and said in a note. A key the job sets is its own
    choice, and a job that fits no value is returned as it was: the memory
    check refuses it in its words.
    """
    job, plan, run = prepared
    kind = job_kind(job.domain)
    data = job.to_dict()
    keys = tuple(key for key in getattr(kind, "SPLIT_FOR_MEMORY", ())
                 if key in type(job.config).model_fields and data.get(key) is None)
    if not keys or not memory_per_worker:
        return prepared

    def peak(candidate: Job, candidate_plan: Plan) -> int:
        return max((f.peak_memory or 0 for f in figures(kind, candidate.config, candidate_plan, workers)), default=0)

    first = last = peak(job, plan)
    value = 2
    while last > memory_per_worker and value <= MAX_SPLIT:
        try:
            scaled = validate({**data, **{k: value for k in keys}}, source=f"job {job.name}")
            scaled_plan = kind.plan(scaled.config)
        except (UserError, ValueError):
            break
        now = peak(scaled, scaled_plan)
        if now >= last:
            break
        if now <= memory_per_worker:
            note = (f"the whole layers need about {size(first)} per worker process, more than its memory limit "
                    f"{size(memory_per_worker)}; using {', '.join(f'{k}={value}' for k in keys)} "
                    f"({size(now)}, identical results)")
            return Prepared(scaled, scaled_plan, run, prepared.notes + (note,))
        last, value = now, value * 2
    return prepared


@contextlib.contextmanager
def claimed(prepared: Prepared, new: bool) -> Iterator[None]:
    """Hold the run directory's lock and start a new epoch; lay the directory out first if the run is new.

    The checks of :func:`prepare_new` are repeated under the lock, so of two
    runs started on one new directory at once exactly one proceeds.
    """
    run = prepared.run
    with run.lock():
        if not run.location.is_local:
            run.location.check_conditional()
        if new:
            _check_new_locked(run)
            run.create(prepared.job.to_toml(), prepared.job.digest)
        elif not run.exists() or run.stored_digest() != prepared.job.digest:
            raise UserError(f"run directory {run.path} changed while this client was starting")
        run.new_epoch()
        yield


def _check_new_locked(run: RunDir) -> None:
    if run.exists():
        raise UserError(f"run directory {run.path} already holds a run (started at the same moment?): "
                        f"'epcg resume {run.path}', or pass another --out")
    if not run.is_empty():
        raise UserError(f"--out {run.path} exists and is not an epcg run directory")


def run_plan(
    prepared: Prepared,
    executor: Executor | None = None,
    callbacks: Sequence[Callback] = (),
) -> dict[str, Any]:
    """Warm up, execute the unfinished tasks, reduce, write results/summary/figures.

    The caller holds the run's lock (see :func:`claimed`).
    """
    executor = executor or SerialExecutor()
    job, plan, run = prepared
    began = time.perf_counter()
    job_json = json.dumps(job.to_dict(), sort_keys=True)
    prepare = getattr(job_kind(job.domain), "prepare", None)
    if prepare is not None:
        prepare(job.config, run)
    warm = executor.warm_up(job.domain, job_json)
    cleanup = getattr(job_kind(job.domain), "cleanup", None)
    try:
        records = execute(job, plan, run, executor, callbacks)
    finally:
        if cleanup is not None:
            cleanup(job.config, run)
    timing = {
        "warm_up_seconds": round(warm, 3),
        "wall_seconds": round(time.perf_counter() - began, 3),
    }
    return finish(prepared, records, timing)


def finish(
    prepared: Prepared,
    records: dict[str, dict] | None = None,
    timing: dict[str, float] | None = None,
) -> dict[str, Any]:
    """Reduce the records into results.json and write the summary and figures."""
    job, plan, run = prepared
    records = records if records is not None else run.done(plan.tasks())
    missing = plan.num_tasks - len(records)
    if missing:
        raise UserError(f"run {run.path} has {missing} unfinished tasks: 'epcg resume {run.path}'")
    experiment = job_kind(job.domain)
    results = {"job": job.name, "domain": job.domain}
    results.update(experiment.reduce(job.config, plan, records, run))
    results.update(timing or {})
    run.write_results(results)
    if not run.location.is_local:
        shutil.rmtree(run.figures_dir, ignore_errors=True)  # this machine's drawing board, not the run's figures
    summary, _figures = experiment.report(job.config, results, run)
    run.write_summary(summary)
    run.publish_figures()
    return results


def _stamp(task_id: str, record: dict[str, Any]) -> str:
    return f"{task_id}@{record.get('ended_at')}@{record.get('fence')}"


def verify(prepared: Prepared, executor: Executor | None = None, everything: bool = True) -> tuple[int, list[str]]:
    """Check finished chunks' stored bytes against their records; forget the damaged ones.

    Returns ``(chunks checked, damaged task ids)``. ``everything=False`` checks
    only chunks not verified since they were recorded. The checks run where
    the executor runs tasks (on the cluster for Dask). A damaged chunk's record
    is removed (and results.json with it), so the next resume recomputes
    exactly those chunks. A missing or unreadable store is not damage: it
    raises StoreMissing (a UserError) and nothing is deleted. The caller holds
    the run's lock.
    """
    _job, plan, run = prepared
    run.group  # noqa: B018 - raises StoreMissing before anything is checked or deleted
    tasks = {task.id: task for task in plan.tasks()}
    records = run.done(list(tasks.values()))
    verified = _verified(run)
    todo = {t: r for t, r in records.items() if everything or _stamp(t, r) not in verified}
    ids = sorted(todo)
    checker = getattr(executor, "check", None)
    if checker is not None:
        intact = checker(run.location.where, [todo[t] for t in ids])
    else:
        intact = [check_chunk(run.location.where, todo[t]) for t in ids]
    bad = [t for t, ok in zip(ids, intact) if not ok]
    for task_id in bad:
        run.forget(task_id)
    if bad:
        run.delete(RESULTS)
    good = {_stamp(t, r) for t, r in records.items() if t not in bad and (t in todo or _stamp(t, r) in verified)}
    run.write_text(VERIFIED_FILE, json.dumps(sorted(good)))
    return len(ids), bad


def unverified(prepared: Prepared) -> int:
    """Finished chunks not verified since they were recorded: what :func:`verify` reads by default."""
    _job, plan, run = prepared
    verified = _verified(run)
    return sum(_stamp(t, r) not in verified for t, r in run.done(plan.tasks()).items())


def _verified(run: RunDir) -> set[str]:
    """Stamps (task id and record digest) of the chunks found intact by the last verification."""
    try:
        return set(json.loads(run.read_text(VERIFIED_FILE) or "[]"))
    except ValueError:
        return set()
