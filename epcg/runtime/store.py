"""The run directory: the unit of resume.

    DIR/job.toml        the resolved job (resume refuses a different one)
    DIR/run.json        the run's id and its current epoch (one per client session)
    DIR/manifest/       one JSON record per finished task, created last, never overwritten, with its own digest
    DIR/store.zarr/     Zarr v3 arrays: layers, bitsets, partial results
    DIR/results.json    the reduced result
    DIR/summary.md      the paper-style table
    DIR/figures/        pictures

A task counts as done only when its manifest record exists and is intact;
Zarr skips all-zero chunks, so the presence of a chunk never means "done".
A record is created only after the task's chunks are durable (fsync on a
filesystem; a returned PUT on an object store), never over an intact one, and
only while the run's id and epoch are still the ones the task was started
with (a straggler of an earlier client writes nothing). Where the run lives is
a :class:`~epcg.runtime.rundir.Location`: a directory or an object-store prefix.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from epcg.runtime.allocator import keep_chunk_buffers
from epcg.runtime.errors import Damaged, PermissionDenied, StaleTask, StorageFault, Unfinished, UserError, one_line
from epcg.runtime.plan import Plan, Stage, Task
from epcg.runtime.rundir import IO, Location, open_location, write_atomic
from epcg.runtime.schemas import Identity, Malformed, PlanFile, Record, check, loads
from epcg.runtime.shell import command

if TYPE_CHECKING:
    import zarr
    from zarr.core.array_spec import ArrayConfigParams

    from epcg.runtime.jobs import Job

__all__ = ["RunDir", "StoreMissing", "Vouched", "CHECK_BATCH", "check_chunks", "digest", "seal", "unseal",
           "write_atomic", "vouch", "OUTPUT_FREE_KEYS"]

JOB_FILE = "job.toml"
RUN_FILE = "run.json"
DIGEST_FILE = "manifest/job.sha256"
ZARR = "store.zarr"
RESULTS = "results.json"
SUMMARY = "summary.md"
FIGURES = "figures"
LIVE = "live.json"
REPORT = "report.html"
LOGS = "logs"
RECORD_READERS = 16
"""Records read at once by :meth:`RunDir.done`."""
WRITE_CONFIG: ArrayConfigParams = {"write_empty_chunks": True}
"""How the run's arrays are written: every chunk stored, all-zero ones too. Zarr would test each chunk against
the fill value to skip those, a comparison of the whole chunk on its one I/O thread that every task's write waits
for, and dearer than storing the few bytes an empty chunk compresses to."""
LOCK_FILE = ".lock"
LAYOUT = (RUN_FILE, DIGEST_FILE, f"{ZARR}/zarr.json")
"""What :meth:`RunDir.create` writes before job.toml (which it writes last)."""
PLAN_FILE = "manifest/plan.json"
"""The plan of a job that names a user's space, kept by every session that runs it (:meth:`RunDir.read_plan`)."""
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
    vouch differs was made under other parameters and does not count (:meth:`RunDir.record_state`).

    >>> a = vouch({"name": "a", "seed": 0}, Task("k01", 0, 0, 8))
    >>> a == vouch({"name": "b", "seed": 0}, Task("k01", 0, 0, 8)), a == vouch({"name": "a", "seed": 1},
    ...     Task("k01", 0, 0, 8)), a == vouch({"name": "a", "seed": 0}, Task("k01", 0, 0, 9))
    (True, False, False)
    """
    body = json.dumps({"job": {k: v for k, v in job.items() if k not in OUTPUT_FREE_KEYS},
                       "task": [task.id, task.start, task.stop]}, sort_keys=True, default=str)
    return hashlib.sha256(body.encode()).hexdigest()[:32]


def digest(data: np.ndarray) -> str:
    """Short BLAKE2b digest of an array's bytes: what ``verify`` compares."""
    return hashlib.blake2b(np.ascontiguousarray(data).tobytes(), digest_size=16).hexdigest()


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


_HELD_RUNS = threading.local()
"""``where`` of the runs whose lock this thread holds (:meth:`RunDir.lock`)."""


class RunDir:
    """Keys and records of one run directory, wherever it lives; cheap to build on any worker.

    ``where`` is a path (made absolute at once, so a worker started in another
    working directory writes into the same place as the client) or an
    object-store URL; every read and write goes through its
    :class:`~epcg.runtime.rundir.Location`. Every array write through
    :meth:`write_array` or :meth:`write_slice` is logged in ``written``
    (name → ``[start, stop, digest]``); the task's manifest record keeps that
    log, so :func:`check_chunks` can later tell whether the stored bytes are
    still the ones the task wrote. ``fence`` (``"<run id>/<epoch>"``) is the
    session a task belongs to; records are written only while it is current.
    """

    def __init__(self, where: str | os.PathLike[str] | Location, fence: str | None = None) -> None:
        self.location = open_location(where)
        self.fence = fence
        self.written: dict[str, list[Any]] = {}
        self.bytes_read = 0
        """Uncompressed bytes of arrays read through this RunDir (:meth:`read_array`, :meth:`read_slice`): what a
        task read of earlier stages, for its record."""
        self._arrays: dict[str, zarr.Array[Any]] = {}

    @property
    def path(self) -> Path | str:
        """The run directory as a person and a worker name it: an absolute path, or the URL."""
        return Path(self.location.where) if self.location.is_local else self.location.where

    def describe(self, key: str = "") -> str:
        return self.location.describe(key)

    job_path = property(lambda self: self.describe(JOB_FILE))
    results_path = property(lambda self: self.describe(RESULTS))
    summary_path = property(lambda self: self.describe(SUMMARY))

    def read_text(self, key: str) -> str | None:
        data = self.location.read(key)
        return None if data is None else data.decode()

    def read_json(self, key: str, schema: Any, remedy: str = "", context: dict[str, Any] | None = None) -> Any:
        """The JSON file ``key`` checked against ``schema`` (:mod:`epcg.runtime.schemas`), None if absent: every
        JSON file read back from a run passes here. A truncated, undecodable or misshapen one is
        :class:`~epcg.runtime.schemas.Malformed`, one line naming it (and ``remedy``, if given)."""
        data = self.location.read(key)
        if data is None:
            return None
        try:
            return loads(data, schema, self.describe(key), context)
        except Malformed as exc:
            raise Malformed(f"{exc}{': ' + remedy if remedy else ''}") from None

    def write_text(self, key: str, text: str) -> None:
        """UTF-8; a path of another locale's bytes (surrogate escapes) is written back as those bytes."""
        self.location.write(key, text.encode("utf-8", "surrogateescape"))

    def has(self, key: str) -> bool:
        return self.location.exists(key)

    def delete(self, key: str) -> None:
        self.location.delete(key)

    def exists(self) -> bool:
        return self.has(JOB_FILE)

    def check_present(self) -> None:
        """StoreMissing if the run was deleted or moved since it was opened (its job.toml is gone): the real
        cause, said before a reader would call its chunks unfinished or damaged."""
        if not self.exists():
            raise StoreMissing(f"run {self.path} is gone: {self.job_path} no longer exists (the run directory "
                               "was deleted or moved)")

    def read_job(self) -> Job:
        """The run's job as it was started (UserError if the location holds no run), validated without importing
        a space it names (its checks of the space were made when the run started)."""
        from epcg.runtime.jobs import loads_toml, validate
        from epcg.runtime.registry import reading

        text = self.read_text(JOB_FILE)
        if text is None:
            raise UserError(f"{self.describe()} is not an epcg run directory (no {JOB_FILE})")
        with reading():  # job.toml is data: a space it names is neither imported nor run to validate it
            return validate(loads_toml(text, self.job_path), source=self.job_path)

    def is_empty(self) -> bool:
        """Nothing but a lock is stored here, or only the start of a layout that never got its job.toml (a client
        killed or failed while laying out a new run): a new run may be laid out."""
        return self.location.is_empty() or bool(self._abandoned_layout())

    def _abandoned_layout(self) -> list[str]:
        """The keys of a layout :meth:`create` began but never finished (no job.toml, nothing but its files)."""
        keys = [k for k in self.location.list() if k != LOCK_FILE and not k.startswith(f"{LOGS}/")]
        return keys if keys and set(keys) <= set(LAYOUT) else []

    @property
    def figures_dir(self) -> Path:
        """Local directory the report draws into; :meth:`publish_figures` stores it in the run."""
        return self.location.scratch(FIGURES)

    def publish_figures(self) -> None:
        if self.figures_dir.is_dir():
            self.location.publish(FIGURES, self.figures_dir)

    def local_figures(self) -> Path:
        """The run's figures in a local directory (the run's own on a filesystem, a copy from an object store)."""
        return self.location.local_copy(FIGURES + "/")

    @contextlib.contextmanager
    def published(self, writer: Any, key: str) -> Iterator[None]:
        """Run ``writer(filename=...)`` (a context manager writing a local file) and store the file at ``key``."""
        local = Path(self.location.where) / key if self.location.is_local else self.scratch("out") / key
        with writer(filename=str(local)):
            yield
        if not self.location.is_local and local.is_file():
            self.location.write(key, local.read_bytes())

    def logs_dir(self) -> Path:
        """Where this run's client and worker logs go: DIR/logs on a filesystem; on an object store a directory
        of each machine's own temp directory (log handlers append to local files)."""
        return self.location.scratch(LOGS)

    def scratch(self, name: str) -> Path:
        """A directory on this machine shared by its processes (on a filesystem, inside the run)."""
        return self.location.scratch(name)

    # -- creation, identity and locking (client side) -------------------------

    def create(self, job_toml: str, digest: str) -> None:
        """Lay out a new run directory with a fresh run id; the caller holds the lock. What an earlier layout that
        never finished left (see :meth:`is_empty`) is removed first."""
        import zarr

        for key in self._abandoned_layout():
            self.location.delete(key)
        zarr.open_group(self.location.zarr_store(ZARR), mode="w-")
        ident = {"run_id": uuid.uuid4().hex, "epoch": 0, "started_at": 0}
        if not self.location.create(RUN_FILE, json.dumps(ident).encode()):
            raise UserError(f"{self.describe(RUN_FILE)} appeared while this run was being laid out")
        self.location.write(DIGEST_FILE, (digest + "\n").encode())
        self.location.write(JOB_FILE, job_toml.encode())  # last: a run directory exists once job.toml does

    def _identity(self) -> tuple[dict[str, Any], str | None]:
        found: tuple[bytes, str | None] | None
        try:
            found = self.location.read_versioned(RUN_FILE)
        except (IsADirectoryError, NotADirectoryError):  # run.json made a directory: damaged like a torn one
            found = (b"", None)
        except OSError as exc:
            if exc.errno is None:  # the object store failed, not the file: named for that, never "damaged"
                raise StorageFault(f"{self.describe(RUN_FILE)} cannot be read: {exc}") from None
            raise
        if found is None:
            derived = hashlib.sha256(self.location.where.encode("utf-8", "surrogateescape")).hexdigest()[:32]
            return {"run_id": derived, "epoch": 0, "started_at": 0}, None
        try:
            ident = loads(found[0], Identity, self.describe(RUN_FILE))
        except Malformed:
            raise UserError(f"{self.describe(RUN_FILE)} is damaged, the run's identity cannot be read: "
                            f"{command('verify --repair', self.path)} rebuilds it from the records") from None
        return ident, found[1]

    def identity(self) -> dict[str, Any]:
        """``{"run_id", "epoch", "started_at", "starts"}`` from DIR/run.json (a run started before ids:
        derived); ``starts`` maps each epoch to when its session began (not kept before parts were counted)."""
        return self._identity()[0]

    def epoch_starts(self) -> dict[int, float]:
        """When each epoch's session began, as far as run.json kept it."""
        starts = self.identity().get("starts")
        if not isinstance(starts, dict):
            return {}
        return {int(e): float(t) for e, t in starts.items() if e.isdigit() and isinstance(t, (int, float))}

    def new_epoch(self) -> str:
        """Start a client session: bump the epoch with a compare-and-swap on run.json; return the new fence.

        Two clients that both got past the lock (an expired lease taken over)
        cannot both bump from the same epoch: the second gets a UserError.
        """
        ident, version = self._identity()
        epoch, started = int(ident["epoch"]) + 1, round(time.time(), 3)
        starts: dict[str, Any] = ident["starts"] if isinstance(ident.get("starts"), dict) else {}
        ident.update(epoch=epoch, started_at=started, starts={**starts, str(epoch): started})
        body = json.dumps(ident).encode()
        swapped = self.location.create(RUN_FILE, body) if version is None else \
            self.location.replace(RUN_FILE, body, version)
        if not swapped:
            raise UserError(f"run {self.describe()} was claimed by another client at the same moment")
        self.fence = f"{ident['run_id']}/{ident['epoch']}"
        return self.fence

    @property
    def cache_key(self) -> str:
        """What per-process caches of this run's data are keyed by: its run id and epoch."""
        return self.fence or "{run_id}/{epoch}".format(**self.identity())

    def check_fence(self) -> None:
        """Raise StaleTask if this task's session is no longer the run's current one."""
        if self.fence is None:
            return
        ident, version = self._identity()
        current = f"{ident['run_id']}/{ident['epoch']}" if version is not None else None
        if current != self.fence:
            raise StaleTask(f"run {self.describe()} is now {current or 'gone'}, this task belongs to {self.fence}")

    def stored_digest(self) -> str | None:
        text = self.read_text(DIGEST_FILE)
        return None if text is None else text.strip()

    def job_file_digest(self) -> str | None:
        """SHA-256 of job.toml's bytes, as :meth:`stored_digest` recorded them when the run started: what tells an
        edited job.toml from the one the run began with, whatever keys later versions of epcg added since (a job
        is resolved with today's defaults, so its :attr:`~epcg.runtime.jobs.Job.digest` may differ)."""
        text = self.read_text(JOB_FILE)
        return None if text is None else hashlib.sha256(text.encode()).hexdigest()

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the run for the life of a client (a second client gets one line and exit status 75).

        Reentrant within a thread: a batch driver holds the run for its whole life, and the engine it runs
        takes the lock again inside; only the outermost hold takes and releases it."""
        held = _HELD_RUNS.__dict__.setdefault("where", set())
        if self.location.where in held:
            yield
            return
        with self.location.lock(f"pid {os.getpid()} on {socket.gethostname()}"):
            held.add(self.location.where)
            try:
                yield
            finally:
                held.discard(self.location.where)

    def held_here(self) -> bool:
        """True while this thread holds the run's lock (:meth:`lock`)."""
        return self.location.where in _HELD_RUNS.__dict__.get("where", set())

    def is_locked(self) -> bool:
        """True while some client holds the run's lock (a run is live); reads only, never locks."""
        return self.location.is_locked()

    # -- the plan of a space's job ------------------------------------------

    def write_plan(self, plan: Plan) -> None:
        """Keep the session's ``plan``, fitted to its workers: readers count the run's chunks by it without
        running a user's space, and weigh them by each stage's estimated task seconds for the time left."""
        stages = [{"name": s.name, "after": list(s.after), "label": s.label, "size": s.size,
                   "task_seconds": s.task_seconds, "read_bytes": s.read_bytes, "source_bytes": s.source_bytes,
                   "tasks": [[t.index, t.start, t.stop, t.group] for t in s.tasks]} for s in plan.stages]
        self.write_text(PLAN_FILE, json.dumps({"stages": stages, "slots": plan.slots}))

    def read_plan(self) -> Plan | None:
        """The plan :meth:`write_plan` kept (None if none was), Malformed if it is damaged."""
        found = self.read_json(PLAN_FILE, PlanFile, f"{command('resume', self.path)} writes it again")
        if found is None:
            return None
        try:
            return Plan(tuple(Stage(s["name"], tuple(Task(s["name"], *task) for task in s["tasks"]),
                                    tuple(s.get("after", ())), s.get("label", ""), s.get("size", 0),
                                    s.get("read_bytes"), s.get("source_bytes", 0), s.get("task_seconds"))
                              for s in found["stages"]), slots=found.get("slots"))
        except ValueError as exc:
            raise Malformed(f"{self.describe(PLAN_FILE)} is damaged ({exc}): {command('resume', self.path)} writes it "
                            "again") from None

    # -- manifest -----------------------------------------------------------

    @staticmethod
    def record_key(task: Task | str) -> str:
        return f"manifest/{task if isinstance(task, str) else task.id}.json"

    def write_record(self, task: Task, record: dict[str, Any]) -> None:
        """Mark ``task`` done, once its data is durable and its session still current; never overwrite.

        If an intact record is already there (the task ran twice: a retry, a
        resumed straggler) it is kept; the chunks are the same bytes. A torn or
        damaged one is removed and the new one created in its place.
        """
        self.sync_written()
        self.check_fence()
        key, body = self.record_key(task), seal(record).encode()
        if self.location.create(key, body):
            return
        if self.read_record(task) is None:
            self.location.delete(key)
            self.location.create(key, body)

    def read_record(self, task: Task) -> dict[str, Any] | None:
        """The task's record; None if it has none or it does not vouch for this task of this run (the task is
        redone): see :meth:`record_state`."""
        return self.record_state(task)[0]

    def record_state(self, task: Task) -> tuple[dict[str, Any] | None, str]:
        """``(record, "done")``, or ``(None, why)``: ``"missing"``, ``"damaged"`` (torn, corrupt, not sealed),
        ``"misplaced"`` (another chunk's record under this one's name), ``"foreign"`` (fenced by another run) or
        ``"stale"`` (made under other job parameters than job.toml's now: its :func:`vouch` differs). A record
        written before records vouched (none) counts, as job.sha256 vouches for job.toml; ``verify --repair``,
        which rebuilds that digest, forgets such records.

        The one definition of a finished chunk that resume, status, verify and every reader share. A record
        that cannot be read (the store failing, not the record) raises that fault: it says nothing of the chunk.
        """
        data = self.location.read(self.record_key(task))
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
        if "vouch" in record and record["vouch"] != vouch(self.job_data(), task):
            return None, "stale"
        return record, "done"

    def job_data(self) -> dict[str, Any]:
        """job.toml as plain data, as stored (read once per RunDir; empty without one): what records vouch for."""
        if not hasattr(self, "_job_data"):
            from epcg.runtime.jobs import loads_toml

            text = self.read_text(JOB_FILE)
            self._job_data = {} if text is None else loads_toml(text, self.job_path)
        return self._job_data

    def _fenced_here(self, record: dict[str, Any]) -> bool:
        """True unless the record's fence names another run id than this run's (a record copied from another
        run). A record without a fence (written before fences) and a run whose run.json is lost pass."""
        fence = record.get("fence")
        if not isinstance(fence, str):
            return fence is None
        own = self._own_run_id()
        return own is None or fence.rpartition("/")[0] == own

    def _own_run_id(self) -> str | None:
        """This run's id from run.json (read once per RunDir: an id never changes), None without a readable one."""
        if not hasattr(self, "_run_id"):
            try:
                ident, version = self._identity()
                self._run_id = ident["run_id"] if version is not None else None
            except UserError:
                self._run_id = None
        return self._run_id

    def done(self, tasks: list[Task]) -> dict[str, dict[str, Any]]:
        """Records of the given tasks that are finished and intact, by task id (one listing, then reads side by
        side: on an object store each is a request). Records with no store to vouch for are none: a missing or
        unreadable ``store.zarr`` raises StoreMissing."""
        present = set(self.location.list("manifest/"))
        listed = [task for task in tasks if self.record_key(task) in present]
        with ThreadPoolExecutor(RECORD_READERS) as pool:
            found = list(pool.map(self.read_record, listed))
        if listed:
            self.group  # noqa: B018 - raises StoreMissing: records of chunks whose store is gone vouch for nothing
        return {task.id: record for task, record in zip(listed, found) if record is not None}

    def torn(self, tasks: list[Task]) -> list[str]:
        """Tasks whose record exists but does not vouch for them (damaged, misplaced, foreign): not done."""
        return list(self.unsound(tasks))

    def unsound(self, tasks: list[Task]) -> dict[str, str]:
        """Task id -> why, for every record present that does not vouch for its task (see :meth:`record_state`)."""
        present = set(self.location.list("manifest/"))
        listed = [task for task in tasks if self.record_key(task) in present]
        with ThreadPoolExecutor(RECORD_READERS) as pool:
            states = list(pool.map(self.record_state, listed))
        return {task.id: why for task, (_, why) in zip(listed, states) if why not in ("done", "missing")}

    def unvouched(self, tasks: list[Task]) -> list[str]:
        """Tasks whose intact record was written before records vouched for their parameters (no ``vouch``)."""
        return [task_id for task_id, record in self.done(tasks).items() if "vouch" not in record]

    def reduced_record(self) -> dict[str, Any] | None:
        """The reduction's record (what ``finish`` wrote), if it is intact and this run's (a store that fails to
        read it raises its fault)."""
        try:
            record = unseal(self.read_text(REDUCED_FILE) or "")
        except UnicodeDecodeError:
            return None
        return record if record is not None and record.get("task") == REDUCE and self._fenced_here(record) else None

    def vouched(self, tasks: list[Task]) -> Vouched:
        """A reader of this run's arrays that reads only what the finished tasks' records (and the reduction's)
        vouch for."""
        self.check_present()
        records = self.done(tasks)
        reduced = self.reduced_record()
        if reduced is not None:
            records[REDUCE] = reduced
        return Vouched(self, records)

    def forget(self, task: Task | str) -> None:
        """Remove a task's record: the next resume computes it again."""
        self.location.delete(self.record_key(task))

    # -- Zarr arrays --------------------------------------------------------

    @cached_property
    def group(self) -> zarr.Group:
        """The run's Zarr group; a missing store is an error, never silently re-created. Every chunk a process reads
        or writes passes through it, so opening it first has the process keep its freed chunk buffers."""
        import zarr

        keep_chunk_buffers()

        where = self.describe(ZARR)
        try:
            if not self.location.exists(f"{ZARR}/zarr.json"):  # opening a store for writing would create it
                raise FileNotFoundError(f"no {ZARR}/zarr.json")
            # format 3 named: one read of zarr.json, where an unnamed format also looks for format 2's three files
            return zarr.open_group(self.location.zarr_store(ZARR), mode="r+", zarr_format=3)
        except StorageFault:
            raise
        except UserError as exc:
            raise StoreMissing(f"the store {where} is unreadable ({exc})") from None
        except (FileNotFoundError, NotADirectoryError, PermissionError, ValueError, OSError,
                zarr.errors.BaseZarrError) as exc:
            reason = one_line(exc)[:200] or type(exc).__name__
            raise StoreMissing(f"the store {where} is missing or unreadable ({reason})") from None

    def write_array(self, name: str, data: np.ndarray, chunks: int | None = None) -> None:
        """Store a 1-D array under ``name``, replacing any earlier copy (idempotent)."""
        data = np.ascontiguousarray(data)
        chunk = max(1, min(chunks or len(data) or 1, 1 << 24))
        array = self._arrays[name] = self.group.create_array(
            name, shape=data.shape, dtype=data.dtype, chunks=(chunk,), overwrite=True, config=WRITE_CONFIG
        )
        if data.size:
            array[:] = data
        self.written[name] = [0, len(data), digest(data)]

    def array(self, name: str) -> zarr.Array[Any]:
        """The run's array ``name``, opened once per RunDir: a task writes, syncs and measures it with one read of
        its metadata (each opening is a request on an object store and a trip through Zarr's event loop)."""
        if name not in self._arrays:
            self._arrays[name] = cast("zarr.Array[Any]", self.group[name]).with_config(WRITE_CONFIG)
        return self._arrays[name]

    def write_slice(self, name: str, start: int, data: np.ndarray) -> None:
        """Store ``data`` at ``[start, start+len)`` of an existing array (whole chunks, ideally)."""
        self.array(name)[start:start + len(data)] = data
        self.written[name] = [start, start + len(data), digest(data)]

    def sync_written(self) -> None:
        """Make the chunks (and metadata) of every array this task wrote durable (fsync on a filesystem)."""
        keys: set[str] = set()
        for name, (start, stop, _digest) in self.written.items():
            array = self.array(name)
            base = f"{ZARR}/{name}"
            keys.add(f"{base}/zarr.json")
            size = array.chunks[0]
            for index in range(start // size, (max(stop, start + 1) - 1) // size + 1):
                keys.add(f"{base}/{array.metadata.encode_chunk_key((index,))}")
        if keys:
            self.location.sync(keys)

    def bytes_written(self) -> int:
        """Uncompressed bytes of the arrays this task wrote (what ``epcg plan`` estimates)."""
        return sum((stop - start) * self.array(name).dtype.itemsize for name, (start, stop, _) in self.written.items())

    def read_array(self, name: str) -> np.ndarray:
        return self.read_slice(name, 0, self.array(name).shape[0])

    def read_slice(self, name: str, start: int, stop: int) -> np.ndarray:
        """Elements ``[start, stop)`` of array ``name``, counted in :attr:`bytes_read`."""
        data = np.asarray(self.array(name)[start:stop])
        self.bytes_read += data.nbytes
        return data

    def has_array(self, name: str) -> bool:
        return name in self.group

    # -- outputs ------------------------------------------------------------

    def write_results(self, results: dict[str, Any]) -> None:
        self.write_text(RESULTS, json.dumps(results, indent=2) + "\n")

    def write_summary(self, text: str) -> None:
        self.write_text(SUMMARY, text)

    def io(self) -> dict[str, int] | None:
        """Requests and bytes this process has sent to the run's object store so far (None on a filesystem)."""
        return None if self.location.is_local else IO.snapshot()


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
            return self.run.group[name]
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


class StoreMissing(UserError):
    """The run's Zarr store is gone or unreadable: nothing is recomputed or deleted."""


CHECK_BATCH = 64
"""Most chunks one verification task reads: few enough for progress and balance, enough that a task's
overhead and opening the store are spread over many."""

READ_BYTES = 32 << 20
"""Most bytes one read brings back when adjacent chunks are checked together (Zarr decodes the chunks of one
read concurrently)."""


def check_chunks(run_path: str, records: Sequence[dict[str, Any]]) -> list[bool]:
    """For each of ``records``: True if every array range it names still has the digest it was written with.

    The store is opened once for all of them (``verify`` sends chunks in
    batches), and adjacent ranges of one array are read together, up to
    :data:`READ_BYTES`; a read that fails is repeated range by range, so one
    damaged chunk does not condemn its neighbours. Raises StoreMissing if the
    store itself cannot be opened (that is not damage of one chunk). A chunk
    that cannot be read (a damaged compressed block, a missing array) counts
    as damaged.
    """
    group = RunDir(run_path).group
    intact = [True] * len(records)
    ranges: dict[str, list[tuple[int, int, str, int]]] = {}
    for i, record in enumerate(records):
        for name, (start, stop, expected) in record.get("data", {}).items():
            ranges.setdefault(name, []).append((start, stop, expected, i))
    for name, entries in ranges.items():
        array = _read_back(run_path, group.__getitem__, name)
        if array is None:
            for *_, i in entries:
                intact[i] = False
            continue
        for together in _adjacent(sorted(entries), max(1, READ_BYTES // array.dtype.itemsize)):
            first = together[0][0]
            values = _read_back(run_path, _values, array, first, together[-1][1])
            for start, stop, expected, i in together:
                if values is None and len(together) > 1:
                    alone = _read_back(run_path, _values, array, start, stop)
                    ok = alone is not None and digest(alone) == expected
                else:
                    ok = values is not None and digest(values[start - first:stop - first]) == expected
                intact[i] = intact[i] and ok
    return intact


def _adjacent(entries: list[tuple[int, int, str, int]], most: int) -> Iterator[list[tuple[int, int, str, int]]]:
    """Runs of sorted ranges, each starting where the one before stopped, each run spanning at most ``most``
    array entries (a longer range alone is a run of its own).

    >>> [[entry[:2] for entry in run] for run in _adjacent([(0, 4, "", 0), (4, 8, "", 1), (9, 12, "", 2),
    ...                                                      (12, 20, "", 3)], 8)]
    [[(0, 4), (4, 8)], [(9, 12)], [(12, 20)]]
    """
    together: list[tuple[int, int, str, int]] = []
    for entry in entries:
        if together and (entry[0] != together[-1][1] or entry[1] - together[0][0] > most):
            yield together
            together = []
        together.append(entry)
    if together:
        yield together


def _values(array: Any, start: int, stop: int) -> np.ndarray:
    return np.asarray(array[start:stop])


def _read_back(run_path: str, read: Callable[..., Any], *args: Any) -> Any:
    """``read(*args)``, or None where what it reads is damaged; a failing store raises as itself."""
    try:
        return read(*args)
    except StorageFault:
        raise  # the store failed (unreachable, permission): not damage of a chunk, nothing is forgotten
    except PermissionError as exc:
        raise PermissionDenied(f"{exc.filename or run_path}: permission denied (this user cannot read the "
                               "run's chunks); nothing was checked or forgotten") from None
    except Exception:  # noqa: BLE001 - any failure to read back a chunk is damage of that chunk
        return None
