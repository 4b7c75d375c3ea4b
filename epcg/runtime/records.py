"""A run's manifest: one sealed record per finished task, the fences that keep a straggler's out, and the vouch
that ties a record to the job parameters it was made under.

    DIR/manifest/<task>.json    one JSON record per finished task, created last, never overwritten
    DIR/manifest/reduce.json    the reduction's own record (the arrays ``finish`` wrote)

A task counts as done only when its record exists and is intact (Zarr skips
all-zero chunks, so the presence of a chunk never means "done"). A record is
created only after the task's chunks are durable (fsync on a filesystem; a
returned PUT on an object store), never over an intact one, and only while the
run's id and epoch are still the ones the task was started with.
"""

from __future__ import annotations

import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from epcg.runtime.arrays import StoreMissing, digest
from epcg.runtime.errors import Damaged, PermissionDenied, StorageFault, Unfinished
from epcg.runtime.plan import Task
from epcg.runtime.schemas import Malformed, Record, check
from epcg.runtime.shell import command

if TYPE_CHECKING:
    from epcg.runtime.store import RunDir

__all__ = ["Records", "Vouched", "OUTPUT_FREE_KEYS", "REDUCE", "REDUCED_FILE", "seal", "unseal", "vouch"]

RECORD_READERS = 16
"""Records read at once by :meth:`Records.done`."""
REDUCED_FILE = "manifest/reduce.json"
"""The reduction's own record: the arrays ``finish`` wrote (a Witness row's puzzles at its minimum)."""
REDUCE = "reduce"
"""The reduction's name where a task id stands (its record's ``task``)."""
OUTPUT_FREE_KEYS = ("name", "description")
"""Job keys no chunk's output depends on: a record's vouch leaves them out (every other key counts;
tests/test_record_vouch.py changes each key of each kind and checks both sides)."""


def vouch(job: dict[str, Any], task: Task) -> str:
    """What a task's record vouches it was made from: a digest of its chunk (stage, index, bounds) and of every
    key of the run's job.toml that may change its output (all but :data:`OUTPUT_FREE_KEYS`). A record whose
    vouch differs was made under other parameters and does not count (:meth:`Records.state`).

    >>> a = vouch({"name": "a", "seed": 0}, Task("k01", 0, 0, 8))
    >>> a == vouch({"name": "b", "seed": 0}, Task("k01", 0, 0, 8)), a == vouch({"name": "a", "seed": 1},
    ...     Task("k01", 0, 0, 8)), a == vouch({"name": "a", "seed": 0}, Task("k01", 0, 0, 9))
    (True, False, False)
    """
    body = json.dumps({"job": {k: v for k, v in job.items() if k not in OUTPUT_FREE_KEYS},
                       "task": [task.id, task.start, task.stop]}, sort_keys=True, default=str)
    return hashlib.sha256(body.encode()).hexdigest()[:32]


def seal(record: dict[str, Any]) -> str:
    """A record as JSON with a digest of its own body, so a torn or edited record is detected.

    >>> unseal(seal({"task": "t", "a": 1}))
    {'a': 1, 'task': 't'}
    >>> unseal(seal({"task": "t", "a": 1}).replace('"a": 1', '"a": 2')) is None
    True
    >>> unseal('{"task": "t", "a": 1}') is None  # a record without its seal is recomputed, never trusted
    True
    """
    body = json.dumps(record, sort_keys=True)
    return json.dumps({"record": record, "sha256": hashlib.sha256(body.encode()).hexdigest()}, sort_keys=True)


def unseal(text: str) -> dict[str, Any] | None:
    """The record in ``text``, or None if it is torn, corrupt, not sealed or not of a record's shape
    (:class:`~epcg.runtime.schemas.Record`)."""
    try:
        outer = json.loads(text)
        record = outer["record"]
        body = json.dumps(record, sort_keys=True)
        if hashlib.sha256(body.encode()).hexdigest() != outer["sha256"]:
            return None
        checked: dict[str, Any] = check(record, Record, "record")
        return checked
    except (ValueError, KeyError, TypeError, RecursionError, Malformed):
        return None


class Records:
    """The manifest of one run: which tasks are done, by the one definition resume, status, verify and every
    reader share (:meth:`state`). It asks its :class:`~epcg.runtime.store.RunDir` for the session's fence and the
    run's id and job, and its arrays to be durable before a record vouches for them."""

    def __init__(self, run: RunDir) -> None:
        self.run = run
        self.location = run.location

    @staticmethod
    def key(task: Task | str) -> str:
        return f"manifest/{task if isinstance(task, str) else task.id}.json"

    def write(self, task: Task, record: dict[str, Any]) -> None:
        """Mark ``task`` done, once its data is durable and its session still current; never overwrite.

        If an intact record is already there (the task ran twice: a retry, a
        resumed straggler) it is kept; the chunks are the same bytes. A torn or
        damaged one is removed and the new one created in its place.
        """
        self.run.arrays.sync_written()
        self.run.check_fence()
        key, body = self.key(task), seal(record).encode()
        if self.location.create(key, body):
            return
        if self.read(task) is None:
            self.location.delete(key)
            self.location.create(key, body)

    def read(self, task: Task) -> dict[str, Any] | None:
        """The task's record; None if it has none or it does not vouch for this task of this run (the task is
        redone): see :meth:`state`."""
        return self.state(task)[0]

    def state(self, task: Task) -> tuple[dict[str, Any] | None, str]:
        """``(record, "done")``, or ``(None, why)``: ``"missing"``, ``"damaged"`` (torn, corrupt, not sealed),
        ``"misplaced"`` (another chunk's record under this one's name), ``"foreign"`` (fenced by another run) or
        ``"stale"`` (made under other job parameters than job.toml's now: its :func:`vouch` differs). A record
        written before records vouched (none) counts, as job.sha256 vouches for job.toml; ``verify --repair``,
        which rebuilds that digest, forgets such records.

        The one definition of a finished chunk that resume, status, verify and every reader share. A record
        that cannot be read (the store failing, not the record) raises that fault: it says nothing of the chunk.
        """
        data = self.location.read(self.key(task))
        if data is None:
            return None, "missing"
        try:
            record = unseal(data.decode())
        except UnicodeDecodeError:
            record = None
        if record is None:
            return None, "damaged"
        if record.get("task") != task.id:
            return None, "misplaced"
        if not self._fenced_here(record):
            return None, "foreign"
        if "vouch" in record and record["vouch"] != vouch(self.run.job_data(), task):
            return None, "stale"
        return record, "done"

    def _fenced_here(self, record: dict[str, Any]) -> bool:
        """True unless the record's fence names another run id than this run's (a record copied from another
        run). A record without a fence (written before fences) and a run whose run.json is lost pass."""
        fence = record.get("fence")
        if not isinstance(fence, str):
            return fence is None
        own = self.run.stored_run_id()
        return own is None or fence.rpartition("/")[0] == own

    def done(self, tasks: list[Task]) -> dict[str, dict[str, Any]]:
        """Records of the given tasks that are finished and intact, by task id (one listing, then reads side by
        side: on an object store each is a request). Records with no store to vouch for are none: a missing or
        unreadable ``store.zarr`` raises StoreMissing."""
        present = set(self.location.list("manifest/"))
        listed = [task for task in tasks if self.key(task) in present]
        with ThreadPoolExecutor(RECORD_READERS) as pool:
            found = list(pool.map(self.read, listed))
        if listed:
            self.run.arrays.group  # noqa: B018 - raises StoreMissing: records of chunks whose store is gone vouch for nothing
        return {task.id: record for task, record in zip(listed, found) if record is not None}

    def torn(self, tasks: list[Task]) -> list[str]:
        """Tasks whose record exists but does not vouch for them (damaged, misplaced, foreign): not done."""
        return list(self.unsound(tasks))

    def unsound(self, tasks: list[Task]) -> dict[str, str]:
        """Task id -> why, for every record present that does not vouch for its task (see :meth:`state`)."""
        present = set(self.location.list("manifest/"))
        listed = [task for task in tasks if self.key(task) in present]
        with ThreadPoolExecutor(RECORD_READERS) as pool:
            states = list(pool.map(self.state, listed))
        return {task.id: why for task, (_, why) in zip(listed, states) if why not in ("done", "missing")}

    def unvouched(self, tasks: list[Task]) -> list[str]:
        """Tasks whose intact record was written before records vouched for their parameters (no ``vouch``)."""
        return [task_id for task_id, record in self.done(tasks).items() if "vouch" not in record]

    def reduced(self) -> dict[str, Any] | None:
        """The reduction's record (what ``finish`` wrote), if it is intact and this run's (a store that fails to
        read it raises its fault)."""
        try:
            record = unseal(self.run.read_text(REDUCED_FILE) or "")
        except UnicodeDecodeError:
            return None
        return record if record is not None and record.get("task") == REDUCE and self._fenced_here(record) else None

    def vouched(self, tasks: list[Task]) -> Vouched:
        """A reader of this run's arrays that reads only what the finished tasks' records (and the reduction's)
        vouch for."""
        self.run.check_present()
        records = self.done(tasks)
        reduced = self.reduced()
        if reduced is not None:
            records[REDUCE] = reduced
        return Vouched(self.run, records)

    def forget(self, task: Task | str) -> None:
        """Remove a task's record: the next resume computes it again."""
        self.location.delete(self.key(task))


class Vouched:
    """Reads a run's arrays only where a record vouches for them, and checks what it reads against the record.

    Every reader of a run's data (export, report.html's gallery, ``Run.boards()``, ``Run.puzzles()``) goes
    through this: a range no finished chunk's record covers is refused (:class:`Unfinished`, one line saying
    how far the array got), and bytes that do not match their record's digest, or that cannot be decoded at
    all, are :class:`~epcg.runtime.errors.Damaged` (one line naming the chunk and ``epcg resume --verify``).
    A record's range is read whole and checked once, so the check costs one hash of bytes read anyway.
    """

    def __init__(self, run: RunDir, records: dict[str, dict[str, Any]]) -> None:
        self.run = run
        self.spans: dict[str, list[tuple[int, int, str, str]]] = {}
        """Array name -> ``(start, stop, digest, task id)`` of every record that wrote part of it, by start."""
        for task_id, record in records.items():
            for name, (start, stop, expected) in (record.get("data") or {}).items():
                self.spans.setdefault(name, []).append((int(start), int(stop), str(expected), task_id))
        for spans in self.spans.values():
            spans.sort()

    def has(self, name: str) -> bool:
        """Some finished chunk wrote part of array ``name``."""
        return name in self.spans

    def _damaged(self, task_id: str, name: str, why: str) -> Damaged:
        self.run.check_present()
        where = self.run.path
        chunk = "the reduction" if task_id == REDUCE else f"chunk {task_id}"
        return Damaged(f"{chunk} of run {where} is damaged ({name}: {why}); {command('resume --verify', where)} "
                       "finds and recomputes it")

    def size(self, name: str) -> int:
        """Length of array ``name`` (Damaged if its metadata is gone)."""
        return int(self._array(name).shape[0])

    def chunk(self, name: str) -> int:
        """Entries per Zarr chunk of array ``name`` (what a reader steps by to hold one chunk at a time)."""
        return max(1, int(self._array(name).chunks[0]))

    def _array(self, name: str) -> Any:
        spans = self.spans.get(name)
        if not spans:
            self.run.check_present()
            raise Unfinished(f"run {self.run.path} has no finished chunk holding {name}: "
                             f"{command('resume', self.run.path)} computes it")
        try:
            return self.run.arrays.group[name]
        except (StoreMissing, StorageFault):
            raise
        except Exception as exc:  # noqa: BLE001 - an array whose metadata cannot be read is damage of its chunks
            raise self._damaged(spans[0][3], name, f"its metadata cannot be read: {type(exc).__name__}") from None

    def blocks(self, name: str, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
        """``(offset, values)`` covering ``[start, stop)`` of array ``name`` (all of it by default), one record's
        range at a time, each checked; Unfinished at the first part no record covers."""
        array = self._array(name)
        size = int(array.shape[0])
        stop = size if stop is None else min(stop, size)
        at = start
        for first, last, expected, task_id in self.spans[name]:
            if at >= stop:
                return
            if last <= at:
                continue
            if first > at:
                break
            values = self._read(array, name, first, last, expected, task_id)
            end = min(last, stop)
            yield at, values[at - first:end - first]
            at = end
        if at < stop:
            covered = sum(last - first for first, last, _, _ in self.spans[name])
            raise Unfinished(f"{name} of run {self.run.path} is not finished: its chunks cover {covered:,} of "
                             f"{size:,} entries; {command('resume', self.run.path)} computes the rest")

    def read(self, name: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        """``[start, stop)`` of array ``name`` (all of it by default), checked as :meth:`blocks` checks it."""
        parts = [values for _, values in self.blocks(name, start, stop)]
        if parts:
            return np.concatenate(parts)
        return np.zeros(0, dtype=self._array(name).dtype)

    def _read(self, array: Any, name: str, start: int, stop: int, expected: str, task_id: str) -> np.ndarray:
        try:
            values = np.asarray(array[start:stop])
        except StorageFault:
            raise
        except PermissionError as exc:
            raise PermissionDenied(f"{exc.filename or self.run.path}: permission denied (this user cannot read "
                                   "the run's chunks)") from None
        except Exception as exc:  # noqa: BLE001 - a chunk that cannot be decoded (zstd, truncated) is damaged
            raise self._damaged(task_id, name, f"it cannot be decoded: {type(exc).__name__}") from None
        if digest(values) != expected:
            raise self._damaged(task_id, name, f"entries [{start}, {stop}) do not match their record")
        return values
