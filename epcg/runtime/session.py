"""Start, resume and finish runs: the steps the CLI (and notebooks) take, in order."""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import shutil
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from epcg.runtime.batch import history_for_results
from epcg.runtime.errors import OutputFailed, UserError
from epcg.runtime.estimate import (
    MAX_TASKS,
    TARGET_TASK_SECONDS,
    TASK_OVERHEAD,
    coarsen_factor,
    figures,
    finer_than_target,
    overhead_share,
    share,
    size,
    too_fine,
)
from epcg.runtime.execute import Executor, SerialExecutor, execute
from epcg.runtime.jobs import Job, validate
from epcg.runtime.plan import Plan, TooManyTasks
from epcg.runtime.progress import Callback
from epcg.runtime.registry import job_kind
from epcg.runtime.rundir import is_url, open_location
from epcg.runtime.store import (
    DIGEST_FILE,
    JOB_FILE,
    LOCK_FILE,
    RESULTS,
    RUN_FILE,
    RunDir,
    check_chunk,
    seal,
    unseal,
)

VERIFIED_FILE = "manifest/verified.json"
REDUCED_FILE = "manifest/reduce.json"
"""The record of the arrays the reduction wrote (the rows' puzzles at the minimum): what verify checks of them."""
REDUCE = "reduce"
"""The name verify gives the reduction's arrays among the chunks it checks."""


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
            if os.statvfs(parent).f_blocks == 0:
                raise UserError(f"--out {out}: {parent} is on a filesystem that holds no files (like /proc or /sys)")
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
    stored = run.stored_digest()
    if stored is None or not re.fullmatch(r"[0-9a-f]{64}", stored):
        raise UserError(
            f"{run.describe(DIGEST_FILE)} is {'missing' if stored is None else 'damaged'}, so job.toml cannot be "
            f"checked against the job the run started with; if job.toml is that job, 'epcg verify --repair "
            f"{run.path}' rewrites it from job.toml and checks every chunk"
        )
    if stored != job.digest:
        raise UserError(
            f"{run.job_path} has changed since the run started; resume only continues the "
            "same job (restore the file, or start a new run with 'epcg run')"
        )
    return Prepared(job, _plan(job), run)


def refuse_in_use(run: RunDir) -> None:
    """A UserError if another process holds the run's lock: said before any cluster starts (the lock is taken later)."""
    if run.is_locked():
        try:
            owner = run.read_text(LOCK_FILE).strip() or "unknown"
        except (OSError, AttributeError, UnicodeDecodeError):
            owner = "unknown"
        raise UserError(f"run directory {run.path} is in use by another epcg process ({owner}); "
                        "wait for it to finish or stop it first")


def repair(path: str | os.PathLike[str]) -> list[str]:
    """Rebuild a run's identity where it is lost: ``manifest/job.sha256`` from job.toml, ``run.json`` (run id
    and epoch) from the fences of the records. The caller holds the lock and then verifies every chunk, which
    is what vouches for the data. Returns what was rebuilt (nothing when both are sound)."""
    run = open_run(path)
    job = run.read_job()
    plan = _plan(job)
    for task in plan.tasks():
        record = run.read_record(task)
        if record is not None and (record.get("start"), record.get("stop")) != (task.start, task.stop):
            raise UserError(f"job.toml does not match the records (chunk {task.id} covers [{record.get('start')}, "
                            f"{record.get('stop')}) in its record, [{task.start}, {task.stop}) by job.toml): "
                            "restore the job.toml the run started with, then repair")
    rebuilt = []
    stored = run.stored_digest()
    if stored is None or not re.fullmatch(r"[0-9a-f]{64}", stored):
        run.write_text(DIGEST_FILE, job.digest + "\n")
        rebuilt.append(f"{DIGEST_FILE} (the digest of job.toml)")
    try:
        run.identity()
    except UserError:
        fences = [str(r.get("fence") or "") for r in run.done(plan.tasks()).values()]
        seen = [(int(epoch), run_id) for run_id, _, epoch in (f.rpartition("/") for f in fences)
                if run_id and epoch.isdigit()]
        epoch, run_id = max(seen) if seen else (0, uuid.uuid4().hex)
        run.write_text(RUN_FILE, json.dumps({"run_id": run_id, "epoch": epoch, "started_at": 0}))
        rebuilt.append(f"run.json (run id and epoch {epoch} {'from the records' if seen else 'new'})")
    return rebuilt


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
    """The job's plan, its chunk keys scaled up where its tasks would be too small (results are identical).

    A job kind names in ``COARSEN`` the keys it may scale without changing any
    result (chunk sizes). The kind's own notes (``notes(config)``: what the job
    asks for that does nothing) come first. A job of more than ``max_tasks`` tasks is first
    coarsened until it has fewer (a plan of millions of tasks is not even
    built; without keys such a job is refused). Then, where the job kind
    estimates compute, each key whose stages spend more than a small share of
    their time on per-task overhead (:func:`~epcg.runtime.estimate.too_fine`)
    is scaled by a power of two until those stages' tasks are expected to take
    ``TARGET_TASK_SECONDS`` or are one task each (:func:`_fit_cost`). One note
    says what changed and why.
    """
    kind = job_kind(job.domain)
    keys = tuple(key for key in getattr(kind, "COARSEN", ()) if key in type(job.config).model_fields)
    said = tuple(getattr(kind, "notes", lambda _config: ())(job.config))
    original = job
    job, plan, first = _bounded(job, keys, max_tasks)
    fitted = _fit_cost(job, plan, keys)
    if fitted is None and job is original:
        return job, plan, said
    old, new = original.to_dict(), (fitted or (job,))[0].to_dict()
    changed = [k for k in keys if old[k] != new[k]]
    given, using = (", ".join(f"{k}={d[k]}" for k in changed) for d in (old, new))
    if fitted is None:
        note = (f"{given} would give {first:,} tasks, more than {max_tasks:,}; using {using} "
                f"({plan.num_tasks:,} tasks, identical results; --max-tasks raises the bound)")
        return job, plan, (*said, note)
    job, plan, before, after = fitted
    counts = {f.name: f.tasks for f in after}
    moved = [f for f in before if counts.get(f.name) != f.tasks]
    capped = first > sum(f.tasks for f in before)  # the cap coarsened first: the stages' own counts are unknown
    tasks = first if capped else sum(f.tasks for f in moved)
    if capped:
        spent = first * TASK_OVERHEAD
        was = spent / (spent + sum(f.cpu_seconds or 0.0 for f in before))
    else:
        was = overhead_share(moved) or 0.0
    stages = f"{len(moved)} stage{'s' if len(moved) != 1 else ''}"
    cut = f"would give {first:,} tasks" if capped else f"would cut {stages} into {tasks:,} tasks"
    note = (f"{given} {cut}, most far shorter than the {TARGET_TASK_SECONDS:g} s "
            f"a task should take here (scheduling them about {share(was)} of the work); using {using} "
            f"({sum(counts[f.name] for f in moved):,} tasks there, scheduling {share(overhead_share(after))} of "
            "the job, identical results)")
    return job, plan, (*said, note)


def _bounded(job: Job, keys: tuple[str, ...], max_tasks: int) -> tuple[Job, Plan, int]:
    """The job (its chunk keys scaled if needed), its plan of at most ``max_tasks`` tasks, and the task count the
    job as given would have had; UserError if no scaling brings it under the bound."""
    kind = job_kind(job.domain)
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
            return job, _nonempty(job, plan), first
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


def _fit_cost(job: Job, plan: Plan, keys: tuple[str, ...]) -> tuple[Job, Plan, list, list] | None:
    """The job with each chunk key whose stages are too fine together (:func:`~epcg.runtime.estimate.too_fine`)
    scaled until they reach the target task time, with its plan and the figures before and after; None when no
    key's stages are too fine (or none can be coarsened)."""
    kind = job_kind(job.domain)
    if not keys or getattr(kind, "estimate", None) is None:
        return None
    before = figs = figures(kind, job.config, plan, 1)
    cuts = {key: _stages_cut_by(job, plan, key) for key in keys}
    cuts = {key: stages for key, stages in cuts.items() if too_fine([f for f in figs if f.name in stages])}
    if not cuts:
        return None
    changed = False
    for _attempt in range(6):
        factors = {}
        for key, stages in cuts.items():
            need = max((finer_than_target(f) for f in figs if f.name in stages), default=1)
            if need > 1:
                factors[key] = 1 << math.ceil(math.log2(need))
        scaled = _scaled(job, factors)
        if scaled is None:
            break
        job, plan, changed = scaled, kind.plan(scaled.config), True
        figs = figures(kind, job.config, plan, 1)
    return (job, _nonempty(job, plan), before, figs) if changed else None


def _stages_cut_by(job: Job, plan: Plan, key: str) -> set[str]:
    """The stages whose task count falls when ``key`` doubles (those it cuts into tasks)."""
    doubled = _scaled(job, {key: 2})
    if doubled is None:
        return set()
    tasks = {stage.name: len(stage.tasks) for stage in job_kind(job.domain).plan(doubled.config).stages}
    return {stage.name for stage in plan.stages if tasks.get(stage.name, 0) < len(stage.tasks)}


def _scaled(job: Job, factors: dict[str, int]) -> Job | None:
    """The job with each key multiplied by its factor, halved while the job's schema refuses it (None: no change)."""
    data = job.to_dict()
    factors = dict(factors)
    while factors:
        try:
            return validate({**data, **{k: data[k] * f for k, f in factors.items()}}, source=f"job {job.name}")
        except UserError:
            factors = {k: f // 2 for k, f in factors.items() if f > 2}
    return None


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
    with writing_outputs(run):
        run.delete(REDUCED_FILE)
        run.written = {}
        results = {"job": job.name, "domain": job.domain}
        results.update(experiment.reduce(job.config, plan, records, run))
        results.update(timing or {})
        allocations = history_for_results(run, records)
        if allocations:
            results["allocations"] = allocations
        if run.written:
            run.sync_written()
            run.write_text(REDUCED_FILE, seal({"task": REDUCE, "ended_at": round(time.time(), 3),
                                               "fence": run.fence, "data": run.written}))
        run.write_results(results)
        if not run.location.is_local:
            shutil.rmtree(run.figures_dir, ignore_errors=True)  # this machine's drawing board, not the run's figures
        summary, _figures = experiment.report(job.config, results, run)
        run.write_summary(summary)
        run.publish_figures()
    return results


OUTPUT_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG, errno.EIO}
"""Errors writing a run's outputs that the user must fix (space, permissions) before writing them again."""


@contextlib.contextmanager
def writing_outputs(run: RunDir) -> Iterator[None]:
    """Turn a full disk (or a refused write) while results, summary, figures or report are written into an
    OutputFailed naming the file and how to write them again, once every chunk is done."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in OUTPUT_ERRNOS:
            raise
        where = exc.filename or f"the outputs in {run.path}"
        raise OutputFailed(f"cannot write {where}: {exc.strerror}; every chunk is done and kept: free space (or "
                           f"fix the permissions), then 'epcg report {run.path}' writes the results and the report"
                           ) from None


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
    records = checkable(run, plan)
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
        run.delete(REDUCED_FILE) if task_id == REDUCE else run.forget(task_id)
    if bad:
        run.delete(RESULTS)
    good = {_stamp(t, r) for t, r in records.items() if t not in bad and (t in todo or _stamp(t, r) in verified)}
    run.write_text(VERIFIED_FILE, json.dumps(sorted(good)))
    return len(ids), bad


def unverified(prepared: Prepared) -> int:
    """Finished chunks not verified since they were recorded: what :func:`verify` reads by default."""
    _job, plan, run = prepared
    verified = _verified(run)
    return sum(_stamp(t, r) not in verified for t, r in checkable(run, plan).items())


def checkable(run: RunDir, plan: Plan) -> dict[str, dict[str, Any]]:
    """What verify checks, by name: the finished tasks' records, and the reduction's (:data:`REDUCE`) if intact."""
    records = run.done(plan.tasks())
    try:
        reduced = unseal(run.read_text(REDUCED_FILE) or "")
    except (OSError, UnicodeDecodeError):
        reduced = None
    if reduced is not None and reduced.get("task") == REDUCE:
        records[REDUCE] = reduced
    return records


def _verified(run: RunDir) -> set[str]:
    """Stamps (task id and record digest) of the chunks found intact by the last verification."""
    try:
        return set(json.loads(run.read_text(VERIFIED_FILE) or "[]"))
    except ValueError:
        return set()
