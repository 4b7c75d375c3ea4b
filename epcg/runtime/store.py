"""The run directory: the unit of resume. :class:`RunDir` holds the run's identity, job, lock and plan, and
composes the parts that hold the rest (:mod:`~epcg.runtime.records`, :mod:`~epcg.runtime.arrays`,
:mod:`~epcg.runtime.outputs`), each over the same :class:`~epcg.runtime.rundir.Location`.

    DIR/job.toml        the resolved job (resume refuses a different one)
    DIR/run.json        the run's id and its current epoch (one per client session)
    DIR/manifest/       one JSON record per finished task (run.records), job.sha256, plan.json
    DIR/store.zarr/     Zarr v3 arrays: layers, bitsets, partial results (run.arrays)
    DIR/results.json    the reduced result, summary.md, figures/, logs/ (run.outputs)

A task's records are written only while the run's id and epoch are still the
ones the task was started with (a straggler of an earlier client writes
nothing). Where the run lives is a :class:`~epcg.runtime.rundir.Location`: a
directory or an object-store prefix.
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
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from epcg.runtime.arrays import ZARR, Arrays, StoreMissing
from epcg.runtime.errors import StaleTask, StorageFault, UserError
from epcg.runtime.outputs import LOGS, Outputs
from epcg.runtime.plan import Plan, Stage, Task
from epcg.runtime.records import Records
from epcg.runtime.rundir import Location, open_location, write_atomic
from epcg.runtime.schemas import Identity, Malformed, PlanFile, loads
from epcg.runtime.shell import command

if TYPE_CHECKING:
    from epcg.runtime.jobs import Job

__all__ = ["RunDir", "write_atomic"]

JOB_FILE = "job.toml"
RUN_FILE = "run.json"
DIGEST_FILE = "manifest/job.sha256"
LOCK_FILE = ".lock"
LAYOUT = (RUN_FILE, DIGEST_FILE, f"{ZARR}/zarr.json")
"""What :meth:`RunDir.create` writes before job.toml (which it writes last)."""
PLAN_FILE = "manifest/plan.json"
"""The plan of a job that names a user's space, kept by every session that runs it (:meth:`RunDir.read_plan`)."""


_HELD_RUNS = threading.local()
"""``where`` of the runs whose lock this thread holds (:meth:`RunDir.lock`)."""


class RunDir:
    """One run directory, wherever it lives: its identity, job, lock and plan, and the parts that hold the rest
    (:attr:`records`, :attr:`arrays`, :attr:`outputs`); cheap to build on any worker (nothing is read until used).

    ``where`` is a path (made absolute at once, so a worker started in another
    working directory writes into the same place as the client) or an
    object-store URL; every read and write goes through its
    :class:`~epcg.runtime.rundir.Location`. ``fence`` (``"<run id>/<epoch>"``)
    is the session a task belongs to; records are written only while it is current.
    """

    def __init__(self, where: str | os.PathLike[str] | Location, fence: str | None = None) -> None:
        self.location = open_location(where)
        self.fence = fence
        self.arrays = Arrays(self.location)
        """The run's Zarr arrays, and what this process wrote and read of them."""
        self.records = Records(self)
        """The manifest: which tasks are done, their records and the reduction's."""
        self.outputs = Outputs(self)
        """Results, summary, figures, logs and this machine's scratch."""

    @property
    def path(self) -> Path | str:
        """The run directory as a person and a worker name it: an absolute path, or the URL."""
        return self.location.address()

    def describe(self, key: str = "") -> str:
        return self.location.describe(key)

    job_path = property(lambda self: self.describe(JOB_FILE))

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

    def job_data(self) -> dict[str, Any]:
        """job.toml as plain data, as stored (read once per RunDir; empty without one): what records vouch for."""
        if not hasattr(self, "_job_data"):
            from epcg.runtime.jobs import loads_toml

            text = self.read_text(JOB_FILE)
            self._job_data = {} if text is None else loads_toml(text, self.job_path)
        return self._job_data

    def is_empty(self) -> bool:
        """Nothing but a lock is stored here, or only the start of a layout that never got its job.toml (a client
        killed or failed while laying out a new run): a new run may be laid out."""
        return self.location.is_empty() or bool(self._abandoned_layout())

    def _abandoned_layout(self) -> list[str]:
        """The keys of a layout :meth:`create` began but never finished (no job.toml, nothing but its files)."""
        keys = [k for k in self.location.list() if k != LOCK_FILE and not k.startswith(f"{LOGS}/")]
        return keys if keys and set(keys) <= set(LAYOUT) else []

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

    def stored_run_id(self) -> str | None:
        """This run's id from run.json (read once per RunDir: an id never changes), None without a readable one."""
        if not hasattr(self, "_run_id"):
            try:
                ident, version = self._identity()
                self._run_id = ident["run_id"] if version is not None else None
            except UserError:
                self._run_id = None
        return self._run_id

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
