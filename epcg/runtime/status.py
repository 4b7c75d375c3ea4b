"""A run directory read for the views that show a run while it runs or after: ``epcg status``, the progress
page on the Dask dashboard and ``Run.readout()``. Read-only: no lock is taken and nothing is written."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from epcg.runtime.engine import prepare_resume
from epcg.runtime.history import load
from epcg.runtime.plan import Plan
from epcg.runtime.readout import Readout, outputs_written, read
from epcg.runtime.registry import job_kind, reading
from epcg.runtime.runplan import RunPlan
from epcg.runtime.schemas import DetachedBatch, Live, Malformed, SystemBatch
from epcg.runtime.shell import command
from epcg.runtime.outputs import LIVE, RESULTS
from epcg.runtime.store import RunDir


@dataclass(frozen=True)
class Status:
    """A run as its views read it: the job and plan it runs, its records, the readout and the live session's
    connection details (empty when no client holds the run)."""

    planned: RunPlan
    done: dict[str, dict[str, Any]]
    readout: Readout
    live: dict[str, Any]
    batch: SystemBatch | DetachedBatch | None
    """How the run was submitted (batch.json), None for a run that was not."""
    damaged: str | None
    """The line saying results.json is damaged (truncated, or not of its kind's shape); None if absent or sound."""

    @property
    def run(self) -> RunDir:
        return self.planned.run


def run_status(where: str | Any, now: float | None = None) -> Status:
    """Read the run at ``where`` (a path or URL) as every view shows it, as data: no code its job names runs."""
    from epcg.runtime.batch import read_batch

    with reading():
        planned = prepare_resume(where)
    run = planned.run
    plan = _fitted(run, planned.plan)
    planned = replace(planned, plan=plan)
    done = run.records.done(plan.tasks())
    locked = run.is_locked()
    batch = read_batch(run)
    waiting = bool(batch) and not locked and load(run).next is not None
    damaged = damaged_results(planned) if run.has(RESULTS) else None
    figures = read(plan, done, run.epoch_starts(), locked, outputs_written(run), waiting, damaged is not None, now)
    live = _live(run) if locked else {}
    return Status(planned, done, figures, live, batch, damaged)


def _fitted(run: RunDir, plan: Plan) -> Plan:
    """``plan`` as the run's last session fitted it to its workers (each stage's task seconds, the tasks at
    once), where the run kept it; ``plan`` itself where it did not, or kept another."""
    try:
        kept = run.read_plan()
    except Malformed:
        return plan
    return kept if kept is not None and kept == plan else plan


def damaged_results(planned: RunPlan) -> str | None:
    """The line saying results.json is damaged (truncated, or not of its kind's shape), None if it is absent or
    sound."""
    job, run = planned.job, planned.run
    try:
        run.read_json(RESULTS, job_kind(job.domain).Results, f"{command('report', run.path)} writes it again",
                      {"config": job.config})
    except Malformed as exc:
        return str(exc)
    return None


def _live(run: RunDir) -> dict[str, Any]:
    """What the live session wrote about itself (dashboard, scheduler, workers), {} if unreadable."""
    try:
        return dict(run.read_json(LIVE, Live) or {})
    except (OSError, Malformed):
        return {}

