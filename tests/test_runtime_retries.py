"""Transient errors are retried a bounded number of times; a deterministic error stops the run in one line."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from epcg.games.witness import scans as witness
from epcg.runtime import execute
from epcg.runtime.errors import TaskFailed
from epcg.runtime.jobs import load_job
from epcg.runtime.engine import claimed, prepare_new, run_plan


@pytest.fixture
def planned(small_job: Path, tmp_path: Path):
    return prepare_new(load_job(small_job), tmp_path / "run")


def flaky(monkeypatch, exc: Exception, failures: int) -> list[str]:
    """Make the first ``failures`` task attempts raise ``exc``; return the attempts made."""
    attempts: list[str] = []
    real = witness.ScansKind.run_task

    def run_task(config, task, run):
        attempts.append(task.id)
        if len(attempts) <= failures:
            raise exc
        return real(config, task, run)

    monkeypatch.setattr(witness.ScansKind, "run_task", staticmethod(run_task))
    monkeypatch.setattr(execute.time, "sleep", lambda s: None)
    return attempts


def test_transient_oserror_is_retried(monkeypatch, planned) -> None:
    attempts = flaky(monkeypatch, OSError(errno.EIO, "Input/output error"), execute.RETRIES - 1)
    with claimed(planned, new=True):
        run_plan(planned)
    assert attempts[: execute.RETRIES] == [attempts[0]] * execute.RETRIES
    assert len(planned.run.records.done(planned.plan.tasks())) == planned.plan.num_tasks


def test_persistent_oserror_stops_after_the_retries(monkeypatch, planned) -> None:
    attempts = flaky(monkeypatch, OSError(errno.EIO, "Input/output error"), 10**6)
    with pytest.raises(TaskFailed, match=rf"chunk 2x2-k2/00000 failed {execute.RETRIES} times: OSError"), \
            claimed(planned, new=True):
        run_plan(planned)
    assert len(attempts) == execute.RETRIES


def test_deterministic_error_names_the_chunk_once(monkeypatch, planned) -> None:
    attempts = flaky(monkeypatch, ValueError("bad board"), 10**6)
    with pytest.raises(TaskFailed, match=r"chunk 2x2-k2/00000 failed: ValueError: bad board"), \
            claimed(planned, new=True):
        run_plan(planned)
    assert len(attempts) == 1


def test_full_disk_is_not_retried(monkeypatch, planned) -> None:
    attempts = flaky(monkeypatch, OSError(errno.ENOSPC, "No space left on device"), 10**6)
    with pytest.raises(TaskFailed, match="No space left on device.*epcg resume"), claimed(planned, new=True):
        run_plan(planned)
    assert len(attempts) == 1
