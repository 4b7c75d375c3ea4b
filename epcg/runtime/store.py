"""The run directory: the unit of resume.

    DIR/job.toml        the resolved job (resume refuses a different one)
    DIR/run.json        the run's id and its current epoch (one per client session)
    DIR/manifest/       one JSON record per finished task, written last, atomically, with its own digest
    DIR/store.zarr/     Zarr v3 arrays: layers, bitsets, partial results
    DIR/results.json    the reduced result
    DIR/summary.md      the paper-style table
    DIR/figures/        pictures

A task counts as done only when its manifest record exists and is intact;
Zarr skips all-zero chunks, so the presence of a chunk never means "done".
A record is written only after the task's chunk files and their directories
are on disk (fsync), and only while the run's id and epoch are still the ones
the task was started with (a straggler of an earlier client writes nothing).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import struct
import tempfile
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from epcg.runtime.errors import StaleTask, UserError
from epcg.runtime.plan import Task

if TYPE_CHECKING:
    import zarr

JOB_FILE = "job.toml"
RUN_FILE = "run.json"
DIGEST_FILE = "manifest/job.sha256"
LOCK_FILE = ".lock"


def fsync_dir(path: Path) -> None:
    """Make a directory's entries (new files, renames) durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_path(path: Path) -> None:
    """fsync a file or directory if it exists (Zarr does not store all-zero chunks)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_SYNC_POOL = ThreadPoolExecutor(8, thread_name_prefix="epcg-fsync")
"""fsyncs of one task's files run side by side: the task waits for the slowest, not for their sum."""


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see either nothing or all of it, durably."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename is None:
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise
    fsync_dir(path.parent)


def digest(data: np.ndarray) -> str:
    """Short BLAKE2b digest of an array's bytes: what ``verify`` compares."""
    return hashlib.blake2b(np.ascontiguousarray(data).tobytes(), digest_size=16).hexdigest()


def seal(record: dict[str, Any]) -> str:
    """A record as JSON with a digest of its own body, so a torn or edited record is detected.

    >>> unseal(seal({"a": 1}))
    {'a': 1}
    >>> unseal(seal({"a": 1}).replace('"a": 1', '"a": 2')) is None
    True
    """
    body = json.dumps(record, sort_keys=True)
    return json.dumps({"record": record, "sha256": hashlib.sha256(body.encode()).hexdigest()}, sort_keys=True)


def unseal(text: str) -> dict[str, Any] | None:
    """The record in ``text``, or None if it is torn, corrupt or not sealed."""
    try:
        outer = json.loads(text)
        if isinstance(outer, dict) and "sha256" not in outer and "task" in outer:
            return outer  # written before records were sealed: JSON that parses whole is complete
        record = outer["record"]
        body = json.dumps(record, sort_keys=True)
        if hashlib.sha256(body.encode()).hexdigest() != outer["sha256"]:
            return None
    except (ValueError, KeyError, TypeError):
        return None
    return record if isinstance(record, dict) else None


_FLOCK = "hhqqi4x"  # struct flock on Linux x86-64 and aarch64: type, whence, start, len, pid


def _ofd_lock(fd: int, command: int, kind: int) -> int:
    """An open-file-description lock on the whole file; returns the lock type found (F_GETLK)."""
    out = fcntl.fcntl(fd, command, struct.pack(_FLOCK, kind, os.SEEK_SET, 0, 0, 0))
    return struct.unpack(_FLOCK, out)[0]


class RunDir:
    """Paths and records of one run directory; cheap to build on any worker.

    The path is made absolute at once, so a worker started in another working
    directory writes into the same place as the client. Every array write
    through :meth:`write_array` or :meth:`write_slice` is logged in ``written``
    (name → ``[start, stop, digest]``); the task's manifest record keeps that
    log, so :func:`corrupted` can later tell whether the bytes on disk are
    still the ones the task wrote. ``fence`` (``"<run id>/<epoch>"``) is the
    session a task belongs to; records are written only while it is current.
    """

    def __init__(self, path: str | os.PathLike[str], fence: str | None = None) -> None:
        self.path = Path(path).absolute()
        self.fence = fence
        self.written: dict[str, list] = {}

    job_path = property(lambda self: self.path / JOB_FILE)
    run_file = property(lambda self: self.path / RUN_FILE)
    manifest_dir = property(lambda self: self.path / "manifest")
    zarr_path = property(lambda self: self.path / "store.zarr")
    results_path = property(lambda self: self.path / "results.json")
    summary_path = property(lambda self: self.path / "summary.md")
    figures_dir = property(lambda self: self.path / "figures")

    def exists(self) -> bool:
        return self.job_path.is_file()

    # -- creation, identity and locking (client side) -------------------------

    def create(self, job_toml: str, digest: str) -> None:
        """Lay out a new run directory with a fresh run id; the caller holds the lock."""
        import zarr

        self.manifest_dir.mkdir(parents=True, exist_ok=True)
        zarr.open_group(self.zarr_path, mode="w-")
        write_atomic(self.run_file, json.dumps({"run_id": uuid.uuid4().hex, "epoch": 0, "started_at": 0}))
        write_atomic(self.path / DIGEST_FILE, digest + "\n")
        write_atomic(self.job_path, job_toml)  # last: a run directory exists once job.toml does

    def identity(self) -> dict[str, Any]:
        """``{"run_id", "epoch", "started_at"}`` from DIR/run.json (a run started before ids: derived)."""
        try:
            ident = json.loads(self.run_file.read_text())
        except FileNotFoundError:
            return {"run_id": hashlib.sha256(str(self.path).encode()).hexdigest()[:32], "epoch": 0, "started_at": 0}
        except (ValueError, OSError):
            ident = None
        if not (isinstance(ident, dict) and isinstance(ident.get("run_id"), str)
                and type(ident.get("epoch")) is int):
            raise UserError(f"{self.run_file} is damaged, the run's identity cannot be read: "
                            f"'epcg verify --repair {self.path}' rebuilds it from the records")
        return ident

    def new_epoch(self) -> str:
        """Start a client session: bump the epoch (caller holds the lock); return the new fence."""
        ident = self.identity()
        ident.update(epoch=int(ident["epoch"]) + 1, started_at=round(time.time(), 3))
        write_atomic(self.run_file, json.dumps(ident))
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
        ident = self.identity() if self.run_file.exists() else None
        current = f"{ident['run_id']}/{ident['epoch']}" if ident else None
        if current != self.fence:
            raise StaleTask(f"run {self.path} is now {current or 'gone'}, this task belongs to {self.fence}")

    def stored_digest(self) -> str | None:
        path = self.path / DIGEST_FILE
        return path.read_text().strip() if path.is_file() else None

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold an exclusive lock on the run directory for the life of a client.

        An open-file-description lock on ``DIR/.lock``: the kernel drops it when
        the process dies, so a killed run never leaves a stale lock behind, and
        :meth:`is_locked` can ask about it without taking it.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        handle = open(self.path / LOCK_FILE, "a+")
        try:
            _ofd_lock(handle.fileno(), fcntl.F_OFD_SETLK, fcntl.F_WRLCK)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            handle.seek(0)
            owner = handle.read().strip() or "unknown"
            handle.close()
            raise UserError(
                f"run directory {self.path} is in use by another epcg process ({owner}); "
                "wait for it to finish or stop it first"
            ) from None
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()}\n")
            handle.flush()
            yield
        finally:
            handle.close()

    def is_locked(self) -> bool:
        """True while some process holds the run's lock (a run is live); reads only, never locks."""
        path = self.path / LOCK_FILE
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            return _ofd_lock(fd, fcntl.F_OFD_GETLK, fcntl.F_WRLCK) != fcntl.F_UNLCK
        finally:
            os.close(fd)

    # -- manifest -----------------------------------------------------------

    def record_path(self, task: Task) -> Path:
        return self.manifest_dir / f"{task.id}.json"

    def write_record(self, task: Task, record: dict[str, Any]) -> None:
        """Mark ``task`` done, once its data is durable and its session still current."""
        self.sync_written()
        self.check_fence()
        write_atomic(self.record_path(task), seal(record))

    def read_record(self, task: Task) -> dict[str, Any] | None:
        """The task's record; None if it has none, or if it is torn or corrupt (the task is redone)."""
        try:
            text = self.record_path(task).read_text()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (OSError, UnicodeDecodeError):
            return None
        record = unseal(text)
        return record if record is not None and record.get("task") == task.id else None

    def done(self, tasks: list[Task]) -> dict[str, dict[str, Any]]:
        """Records of the given tasks that are finished and intact, by task id."""
        out = {}
        for task in tasks:
            record = self.read_record(task)
            if record is not None:
                out[task.id] = record
        return out

    def torn(self, tasks: list[Task]) -> list[str]:
        """Tasks whose record file exists but is torn or corrupt (they count as not done)."""
        return [t.id for t in tasks if self.record_path(t).is_file() and self.read_record(t) is None]

    # -- Zarr arrays --------------------------------------------------------

    @cached_property
    def group(self) -> zarr.Group:
        """The run's Zarr group; a missing store is an error, never silently re-created."""
        import zarr

        try:
            return zarr.open_group(self.zarr_path, mode="r+")
        except (FileNotFoundError, NotADirectoryError, PermissionError, ValueError, zarr.errors.BaseZarrError) as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise StoreMissing(f"the store {self.zarr_path} is missing or unreadable ({reason})") from None

    def write_array(self, name: str, data: np.ndarray, chunks: int | None = None) -> None:
        """Store a 1-D array under ``name``, replacing any earlier copy (idempotent)."""
        data = np.ascontiguousarray(data)
        chunk = max(1, min(chunks or len(data) or 1, 1 << 24))
        array = self.group.create_array(
            name, shape=data.shape, dtype=data.dtype, chunks=(chunk,), overwrite=True
        )
        if data.size:
            array[:] = data
        self.written[name] = [0, len(data), digest(data)]

    def write_slice(self, name: str, start: int, data: np.ndarray) -> None:
        """Store ``data`` at ``[start, start+len)`` of an existing array (whole chunks, ideally)."""
        self.group[name][start:start + len(data)] = data
        self.written[name] = [start, start + len(data), digest(data)]

    def sync_written(self) -> None:
        """fsync the chunk files (and their directories) of every array this task wrote, concurrently."""
        paths: set[Path] = set()
        for name, (start, stop, _digest) in self.written.items():
            array = self.group[name]
            base = self.zarr_path / name
            paths |= {base, base / "zarr.json"}
            size = array.chunks[0]
            for index in range(start // size, (max(stop, start + 1) - 1) // size + 1):
                chunk = base / array.metadata.encode_chunk_key((index,))
                paths |= {chunk, chunk.parent}
        if paths:
            list(_SYNC_POOL.map(_fsync_path, paths))

    def bytes_written(self) -> int:
        """Uncompressed bytes of the arrays this task wrote (what ``epcg plan`` estimates)."""
        return sum((stop - start) * self.group[name].dtype.itemsize for name, (start, stop, _) in self.written.items())

    def read_array(self, name: str) -> np.ndarray:
        return np.asarray(self.group[name][:])

    def has_array(self, name: str) -> bool:
        return name in self.group

    # -- outputs ------------------------------------------------------------

    def write_results(self, results: dict[str, Any]) -> None:
        write_atomic(self.results_path, json.dumps(results, indent=2) + "\n")

    def write_summary(self, text: str) -> None:
        write_atomic(self.summary_path, text)


class StoreMissing(UserError):
    """The run's Zarr store is gone or unreadable: nothing is recomputed or deleted."""


def check_chunk(run_path: str, record: dict[str, Any]) -> bool:
    """True if every array range of ``record`` still has the digest it was written with.

    Raises StoreMissing if the store itself cannot be opened (that is not
    damage of one chunk). A chunk that cannot be read (a damaged compressed
    block, a missing array) counts as damaged.
    """
    run = RunDir(run_path)
    group = run.group
    for name, (start, stop, expected) in record.get("data", {}).items():
        try:
            ok = digest(np.asarray(group[name][start:stop])) == expected
        except Exception:  # noqa: BLE001 - any failure to read back one chunk is damage of that chunk
            ok = False
        if not ok:
            return False
    return True


def corrupted(run: RunDir, records: dict[str, dict[str, Any]]) -> list[str]:
    """Task ids whose stored arrays no longer match the digests in their records (in this process)."""
    return [task_id for task_id, record in sorted(records.items()) if not check_chunk(str(run.path), record)]
