"""Start, resume and finish runs: the steps the CLI (and notebooks) take, in order."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from epcg.runtime.errors import UserError
from epcg.runtime.execute import Executor, SerialExecutor, execute
from epcg.runtime.jobs import Job, read_toml, validate
from epcg.runtime.plan import Plan
from epcg.runtime.progress import Callback
from epcg.runtime.registry import job_kind
from epcg.runtime.store import RunDir, corrupted


@dataclass(frozen=True)
class Prepared:
    """A job checked and planned, not yet started: nothing has been written."""

    job: Job
    plan: Plan
    run: RunDir

    def __iter__(self) -> Iterator[Any]:
        return iter((self.job, self.plan, self.run))


def prepare_new(job: Job, out: Path | None) -> Prepared:
    """Check that a new run can start in ``out`` (default ``runs/<name>``)."""
    run = RunDir(out if out is not None else Path("runs") / job.name)
    if run.path.exists() and run.is_locked():
        raise UserError(f"run directory {run.path} is in use by another epcg process")
    if run.exists():
        raise UserError(
            f"run directory {run.path} already holds a run: continue it with "
            f"'epcg resume {run.path}', or pass another --out"
        )
    if run.path.exists() and any(p.name != ".lock" for p in run.path.iterdir()):
        raise UserError(f"--out {run.path} exists and is not an epcg run directory")
    return Prepared(job, _plan(job), run)


def prepare_resume(path: Path) -> Prepared:
    """Check that the run in ``path`` can be resumed with the job it started with."""
    run = RunDir(path)
    if not run.exists():
        raise UserError(f"{path} is not an epcg run directory (no {run.job_path.name})")
    job = validate(read_toml(run.job_path), source=str(run.job_path))
    if run.stored_digest() != job.digest:
        raise UserError(
            f"{run.job_path} has changed since the run started; resume only continues the "
            "same job (restore the file, or start a new run with 'epcg run')"
        )
    return Prepared(job, _plan(job), run)


def _plan(job: Job) -> Plan:
    try:
        return job_kind(job.domain).plan(job.config)
    except ValueError as exc:
        raise UserError(f"job {job.name}: {exc}") from None


@contextlib.contextmanager
def claimed(prepared: Prepared, new: bool) -> Iterator[None]:
    """Hold the run directory's lock; lay it out first if the run is new."""
    with prepared.run.lock():
        if new:
            prepared.run.create(prepared.job.to_toml(), prepared.job.digest)
        yield


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
    records = execute(job, plan, run, executor, callbacks)
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
    summary, _figures = experiment.report(job.config, results, run)
    run.write_summary(summary)
    return results


def verify(prepared: Prepared) -> tuple[int, list[str]]:
    """Check every finished chunk's stored bytes against its record; forget the damaged ones.

    Returns ``(chunks checked, damaged task ids)``. A damaged chunk's record is
    removed (and results.json with it), so the next resume recomputes exactly
    those chunks. The caller holds the run's lock.
    """
    _job, plan, run = prepared
    tasks = {task.id: task for task in plan.tasks()}
    records = run.done(list(tasks.values()))
    bad = corrupted(run, records)
    for task_id in bad:
        run.record_path(tasks[task_id]).unlink(missing_ok=True)
    if bad:
        run.results_path.unlink(missing_ok=True)
    return len(records), bad
