"""A run directory read for the views that show a run while it runs or after: ``epcg status``, the progress
page on the Dask dashboard and ``Run.readout()``. Read-only: no lock is taken and nothing is written."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from epcg.runtime.engine import Prepared, prepare_resume
from epcg.runtime.history import load
from epcg.runtime.readout import PLAN_FILE, Readout, outputs_written, read, with_plan_file
from epcg.runtime.store import LIVE, RunDir


@dataclass(frozen=True)
class Status:
    """A run as its views read it: the job and plan it runs, its records, the readout and the live session's
    connection details (empty when no client holds the run)."""

    prepared: Prepared
    done: dict[str, dict[str, Any]]
    readout: Readout
    live: dict[str, Any]
    batch: dict[str, Any] | None

    @property
    def run(self) -> RunDir:
        return self.prepared.run


def run_status(where: str | Any, now: float | None = None) -> Status:
    """Read the run at ``where`` (a path or URL) as every view shows it."""
    from epcg.runtime.batch import read_batch

    prepared = prepare_resume(where)
    run = prepared.run
    plan = with_plan_file(prepared.plan, run.read_text(PLAN_FILE))
    prepared = Prepared(prepared.job, plan, run, prepared.notes)
    done = run.done(plan.tasks())
    locked = run.is_locked()
    batch = read_batch(run)
    waiting = bool(batch) and not locked and load(run).next is not None
    figures = read(plan, done, run.epoch_starts(), locked, outputs_written(run), waiting, now)
    live = _live(run) if locked else {}
    return Status(prepared, done, figures, live, batch)


def _live(run: RunDir) -> dict[str, Any]:
    """What the live session wrote about itself (dashboard, scheduler, workers), {} if unreadable."""
    try:
        info = json.loads(run.read_text(LIVE) or "{}")
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}

