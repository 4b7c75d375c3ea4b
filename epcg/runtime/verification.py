"""Verification and repair of a run directory: chunk bytes checked against their records where the tasks run,
damaged chunks forgotten so resume recomputes exactly them, and a lost identity rebuilt from what vouches
for it."""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from epcg.runtime.errors import UserError
from epcg.runtime.execute import Executor, SerialExecutor
from epcg.runtime.plan import Plan
from epcg.runtime.schemas import Malformed, Verified
from epcg.runtime.outputs import RESULTS
from epcg.runtime.records import REDUCE, REDUCED_FILE, unseal
from epcg.runtime.store import DIGEST_FILE, JOB_FILE, RUN_FILE, RunDir
from epcg.runtime.tuning import plan_of_run

VERIFIED_FILE = "manifest/verified.json"


def open_run(where: str | os.PathLike[str]) -> RunDir:
    """The existing run at ``where`` (a path or URL), its store reached; UserError if there is none."""
    run = RunDir(where)
    run.location.check()
    if not run.exists():
        raise UserError(f"{where} is not an epcg run directory (no {JOB_FILE})")
    return run


def repair(path: str | os.PathLike[str]) -> list[str]:
    """Rebuild a run's identity where it is lost: ``manifest/job.sha256`` from job.toml, ``run.json`` (run id
    and epoch) from the fences of the records. The caller holds the lock and then verifies every chunk, which
    is what vouches for the data. Returns what was rebuilt (nothing when both are sound)."""
    run = open_run(path)
    job = run.read_job()
    plan = plan_of_run(run, job)
    for task in plan.tasks():
        record = run.records.read(task)
        if record is not None and (record.get("start"), record.get("stop")) != (task.start, task.stop):
            raise UserError(f"job.toml does not match the records (chunk {task.id} covers [{record.get('start')}, "
                            f"{record.get('stop')}) in its record, [{task.start}, {task.stop}) by job.toml): "
                            "restore the job.toml the run started with, then repair")
    rebuilt = []
    stored = run.stored_digest()
    if stored is None or not re.fullmatch(r"[0-9a-f]{64}", stored):
        unvouched = run.records.unvouched(plan.tasks())
        for task_id in unvouched:  # nothing says which job.toml made them: computed again under this one
            run.records.forget(task_id)
        digest = run.job_file_digest()
        assert digest is not None  # read_job() has just read job.toml
        run.write_text(DIGEST_FILE, digest + "\n")
        rebuilt.append(f"{DIGEST_FILE} (the digest of job.toml)" + (
            f"; {len(unvouched)} chunks recorded by an earlier epcg, whose records do not say which job "
            "parameters made them, were forgotten" if unvouched else ""))
    try:
        run.identity()
    except UserError:
        fences = [str(r.get("fence") or "") for r in run.records.done(plan.tasks()).values()]
        seen = [(int(epoch), run_id) for run_id, _, epoch in (f.rpartition("/") for f in fences)
                if run_id and epoch.isdigit()]
        epoch, run_id = max(seen) if seen else (0, uuid.uuid4().hex)
        run.write_text(RUN_FILE, json.dumps({"run_id": run_id, "epoch": epoch, "started_at": 0}))
        rebuilt.append(f"run.json (run id and epoch {epoch} {'from the records' if seen else 'new'})")
    return rebuilt



def _stamp(task_id: str, record: dict[str, Any]) -> str:
    return f"{task_id}@{record.get('ended_at')}@{record.get('fence')}"


Progress = Callable[[int], AbstractContextManager[Callable[[int], None]]]
"""Given how many chunks :func:`verify` will read, a context whose counter is told how many each batch held."""


def unwatched(total: int) -> AbstractContextManager[Callable[[int], None]]:
    """No progress: a counter that counts nothing."""
    return nullcontext(lambda n: None)


def verify(plan: Plan, run: RunDir, executor: Executor | None = None, everything: bool = True,
           progress: Progress = unwatched) -> tuple[int, list[str]]:
    """Check finished chunks' stored bytes against their records; forget the damaged ones.

    Returns ``(chunks checked, damaged task ids)``; records that cannot be read (torn, or another chunk's
    record under this one's name: what ``status`` lists as damaged) count as damaged too. ``everything=False`` checks
    only chunks not verified since they were recorded. The checks run where
    the executor runs tasks (on the cluster for Dask), a batch at a time,
    within ``progress``. Nothing is written when there is nothing to read and
    no torn record. A damaged chunk's record is removed (and results.json
    with it), so the next resume recomputes exactly those chunks. A missing or unreadable store is not damage: it
    raises StoreMissing (a UserError) and nothing is deleted. The caller holds
    the run's lock.
    """
    run.arrays.group  # noqa: B018 - raises StoreMissing before anything is checked or deleted
    records = checkable(run, plan)
    verified = _verified(run)
    todo = _to_read(records, verified, everything)
    ids = sorted(todo)
    with progress(len(ids)) as on_checked:
        intact = (executor or SerialExecutor()).check(run.location.where, [todo[t] for t in ids], on_checked)
    torn = run.records.torn(plan.tasks())
    if not ids and not torn:
        return 0, []
    bad = [t for t, ok in zip(ids, intact) if not ok] + torn
    for task_id in bad:
        run.delete(REDUCED_FILE) if task_id == REDUCE else run.records.forget(task_id)
    if bad:
        run.delete(RESULTS)
    good = {_stamp(t, r) for t, r in records.items() if t not in bad and (t in todo or _stamp(t, r) in verified)}
    run.write_text(VERIFIED_FILE, json.dumps(sorted(good)))
    return len(ids) + len(torn), bad


def unverified(plan: Plan, run: RunDir) -> int:
    """Finished chunks not verified since they were recorded, and damaged records: what :func:`verify` reads by
    default."""
    return len(_to_read(checkable(run, plan), _verified(run), everything=False)) + len(run.records.torn(plan.tasks()))


def _to_read(records: dict[str, dict[str, Any]], verified: set[str], everything: bool) -> dict[str, dict[str, Any]]:
    return {t: r for t, r in records.items() if everything or _stamp(t, r) not in verified}


def checkable(run: RunDir, plan: Plan) -> dict[str, dict[str, Any]]:
    """What verify checks, by name: the finished tasks' records, and the reduction's (:data:`REDUCE`) if intact."""
    records = run.records.done(plan.tasks())
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
        return set(run.read_json(VERIFIED_FILE, Verified) or [])
    except Malformed:
        return set()
