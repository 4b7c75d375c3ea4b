"""The history of a submitted run's allocations (``DIR/allocations.json``): one typed record, changed only by
compare-and-swap.

Three kinds of process write it, each at moments it does not choose: ``epcg submit`` (a fresh submission),
each allocation's driver (its start, its continuation, its end) and ``epcg cancel``. Every write goes through
:func:`update`, which reads the record with its version, applies a change and stores it only if nobody wrote
in between (``Location.create``/``replace``), else reads and applies the change again. So no writer can undo
another's field: a ``cancel`` set between a driver's read and its write is still there after it.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from epcg.runtime.store import RunDir

HISTORY_FILE = "allocations.json"
IDLE_ALLOCATIONS = 2
"""Allocations in a row without a finished chunk after which the run stops (one may be a slow start)."""
ATTEMPTS = 200
"""Compare-and-swap attempts before :func:`update` gives up (each conflict means another writer succeeded)."""


class Allocation(TypedDict, total=False):
    """One allocation as its driver and later ones record it (epoch seconds)."""

    job: str | None
    """The batch job id (None for a detached driver)."""
    pid: int
    node: str
    started_at: float
    ended_at: float
    why: str
    """Why it ended: "finished", a drain, "did not compute: ...", "failed: ...", "killed (...)"."""
    signal_at: float
    chunks: int
    """Chunks whose records were written between its start and its end (filled in by :func:`settle`)."""
    first_chunk_at: float


@dataclass
class History:
    """What ``allocations.json`` holds."""

    allocations: list[Allocation] = field(default_factory=list)
    next: str | None = None
    """The continuation job submitted and not started yet."""
    cancel: bool = False
    """``epcg cancel`` was asked: no allocation computes until ``epcg submit --resume`` clears it."""
    base: int = 0
    """Allocations of earlier submissions (``submit --resume`` counts its requeues from here)."""

    @classmethod
    def from_json(cls, data: bytes | None) -> History:
        """The record in ``data``; an empty history for nothing, or for a record that is not JSON or not of
        the shape of :class:`epcg.runtime.schemas.History`."""
        from epcg.runtime.schemas import History as Schema
        from epcg.runtime.schemas import Malformed, loads

        try:
            found = loads(data, Schema, HISTORY_FILE) if data else {}
        except Malformed:
            found = {}
        return cls(allocations=list(found.get("allocations") or []), next=found.get("next"),
                   cancel=found.get("cancel", False), base=found.get("base", 0))

    def to_json(self) -> bytes:
        return (json.dumps(asdict(self), indent=2) + "\n").encode()

    def resubmit(self) -> None:
        """A new submission (``epcg submit``, ``--resume``): earlier allocations are its base, a cancel is lifted."""
        self.cancel, self.base, self.next = False, len(self.allocations), None

    def waiting(self, job_id: str) -> None:
        """``job_id`` was submitted and waits to run, unless its driver has recorded itself already."""
        if self.next is None and not any(a.get("job") == job_id for a in self.allocations):
            self.next = job_id

    def find(self, pid: int, started_at: float) -> Allocation:
        """The allocation a driver recorded (its process id and start)."""
        return next(a for a in self.allocations if a.get("pid") == pid and a.get("started_at") == started_at)


def load(run: RunDir) -> History:
    """The history as it is now (read-only: for deciding to write, use :func:`update`)."""
    return History.from_json(run.location.read(HISTORY_FILE))


def update(run: RunDir, change: Callable[[History], None]) -> History:
    """Apply ``change`` to the current history and store it by compare-and-swap; on a conflict read again and
    apply ``change`` to the newer record. Returns the history as stored.

    ``change`` may run more than once, so it only edits the record: side effects (submitting, cancelling a
    job) belong before or after, decided from what it returns."""
    location = run.location
    for _ in range(ATTEMPTS):
        found = location.read_versioned(HISTORY_FILE)
        history = History.from_json(found[0] if found else None)
        change(history)
        data = history.to_json()
        if location.create(HISTORY_FILE, data) if found is None else location.replace(HISTORY_FILE, data, found[1]):
            return history
        time.sleep(random.uniform(0, 0.01))  # another writer won: let it finish before reading again
    raise RuntimeError(f"{run.describe(HISTORY_FILE)}: {ATTEMPTS} writers in a row changed it first")


def chunks_between(records: dict[str, dict[str, Any]], start: float, end: float | None) -> list[dict[str, Any]]:
    """The records of chunks finished in ``[start, end)`` (end None: up to now)."""
    return [r for r in records.values() if r.get("ended_at", 0) >= start and (end is None or r["ended_at"] < end)]


def settle(history: History, records: dict[str, dict[str, Any]], starting: float | None = None) -> None:
    """Fill in what the allocations could not write themselves: chunks done, and an end for one that was
    killed (it has none, and a later allocation started, or one is ``starting`` now)."""
    allocations = history.allocations
    for i, alloc in enumerate(allocations):
        later = allocations[i + 1]["started_at"] if i + 1 < len(allocations) else starting
        end = alloc.get("ended_at") or later
        finished = chunks_between(records, alloc["started_at"], end)
        alloc["chunks"] = len(finished)
        if finished:
            alloc["first_chunk_at"] = round(min(r["ended_at"] - r.get("seconds", 0) for r in finished), 3)
        if later is not None and not alloc.get("ended_at"):
            alloc["ended_at"] = round(max([r["ended_at"] for r in finished] + [alloc["started_at"]]), 3)
            alloc["why"] = "killed (the driver ended without a word: time limit, node failure or scancel)"


def for_results(run: RunDir, records: dict[str, dict[str, Any]], history: History | None = None
                ) -> list[dict[str, Any]] | None:
    """The allocations a submitted run used, chunks counted (for results.json and report.html): ``history`` as an
    allocation hands it in, else as stored; None for a run that was never submitted (it has no history)."""
    if history is None:
        if run.location.read(HISTORY_FILE) is None:
            return None
        history = load(run)
    settle(history, records)
    keep = ("job", "pid", "node", "started_at", "ended_at", "chunks", "why")
    return [{k: a[k] for k in keep if k in a} for a in history.allocations]  # type: ignore[literal-required]


def decide(history: History, max_requeues: int | None, left: int) -> str | None:
    """Why this allocation must not compute (None: it should), with ``left`` chunks still to do.
    Call after :func:`settle`, before adding this allocation."""
    allocations = history.allocations
    if history.cancel:
        return "cancelled by epcg cancel"
    idle = allocations[-IDLE_ALLOCATIONS:]
    if left and len(idle) == IDLE_ALLOCATIONS and not any(a.get("chunks", 0) for a in idle):
        return (f"{IDLE_ALLOCATIONS} allocations in a row (the last job {idle[-1].get('job')}) made no progress: "
                "a chunk may need longer than walltime - signal_lead, or the workers did not start "
                "(see DIR/logs/)")
    if max_requeues is not None and len(allocations) > max_requeues:
        return f"all {max_requeues} requeues are spent"
    return None
