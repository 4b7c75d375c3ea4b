"""The run directory: the unit of resume.

    DIR/job.toml        the resolved job (resume refuses a different one)
    DIR/manifest/       one JSON record per finished task, written last and atomically
    DIR/store.zarr/     Zarr v3 arrays: layers, bitsets, partial results
    DIR/results.json    the reduced result
    DIR/summary.md      the paper-style table
    DIR/figures/        pictures

A task counts as done only when its manifest record exists; Zarr skips all-zero
chunks, so the presence of a chunk never means "done".
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import zarr

from epcg.runtime.errors import UserError
from epcg.runtime.plan import Task

JOB_FILE = "job.toml"
DIGEST_FILE = "manifest/job.sha256"
LOCK_FILE = ".lock"


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see either nothing or all of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def digest(data: np.ndarray) -> str:
    """Short BLAKE2b digest of an array's bytes: what ``verify`` compares."""
    return hashlib.blake2b(np.ascontiguousarray(data).tobytes(), digest_size=16).hexdigest()


class RunDir:
    """Paths and records of one run directory; cheap to build on any worker.

    Every array write through :meth:`write_array` or :meth:`write_slice` is
    logged in ``written`` (name → ``[start, stop, digest]``); the task's manifest
    record keeps that log, so :func:`corrupted` can later tell whether the bytes
    on disk are still the ones the task wrote.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.written: dict[str, list] = {}

    job_path = property(lambda self: self.path / JOB_FILE)
    manifest_dir = property(lambda self: self.path / "manifest")
    zarr_path = property(lambda self: self.path / "store.zarr")
    results_path = property(lambda self: self.path / "results.json")
    summary_path = property(lambda self: self.path / "summary.md")
    figures_dir = property(lambda self: self.path / "figures")

    def exists(self) -> bool:
        return self.job_path.is_file()

    # -- creation and locking (client side) ---------------------------------

    def create(self, job_toml: str, digest: str) -> None:
        """Lay out a new run directory; the caller holds the lock."""
        self.manifest_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(self.job_path, job_toml)
        write_atomic(self.path / DIGEST_FILE, digest + "\n")
        zarr.open_group(self.zarr_path, mode="a")

    def stored_digest(self) -> str | None:
        path = self.path / DIGEST_FILE
        return path.read_text().strip() if path.is_file() else None

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold an exclusive lock on the run directory for the life of a client.

        The lock is an ``flock`` on ``DIR/.lock``: the kernel drops it when the
        process dies, so a killed run never leaves a stale lock behind.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        handle = open(self.path / LOCK_FILE, "a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
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
        """True while some process holds the run's lock (a run is live)."""
        path = self.path / LOCK_FILE
        if not path.exists():
            return False
        with open(path) as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(handle, fcntl.LOCK_UN)
        return False

    # -- manifest -----------------------------------------------------------

    def record_path(self, task: Task) -> Path:
        return self.manifest_dir / f"{task.id}.json"

    def write_record(self, task: Task, record: dict[str, Any]) -> None:
        """Mark ``task`` done; call this only after all of its data is stored."""
        write_atomic(self.record_path(task), json.dumps(record, sort_keys=True))

    def read_record(self, task: Task) -> dict[str, Any] | None:
        path = self.record_path(task)
        return json.loads(path.read_text()) if path.is_file() else None

    def done(self, tasks: list[Task]) -> dict[str, dict[str, Any]]:
        """Records of the given tasks that are finished, by task id."""
        out = {}
        for task in tasks:
            record = self.read_record(task)
            if record is not None:
                out[task.id] = record
        return out

    # -- Zarr arrays --------------------------------------------------------

    @cached_property
    def group(self) -> zarr.Group:
        return zarr.open_group(self.zarr_path, mode="a")

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

    def read_array(self, name: str) -> np.ndarray:
        return np.asarray(self.group[name][:])

    def has_array(self, name: str) -> bool:
        return name in self.group

    # -- outputs ------------------------------------------------------------

    def write_results(self, results: dict[str, Any]) -> None:
        write_atomic(self.results_path, json.dumps(results, indent=2) + "\n")

    def write_summary(self, text: str) -> None:
        write_atomic(self.summary_path, text)


def corrupted(run: RunDir, records: dict[str, dict[str, Any]]) -> list[str]:
    """Task ids whose stored arrays no longer match the digests in their records.

    A chunk that cannot be read at all (a damaged compressed block) counts as
    corrupted too.
    """
    bad = []
    for task_id, record in sorted(records.items()):
        for name, (start, stop, expected) in record.get("data", {}).items():
            try:
                ok = digest(np.asarray(run.group[name][start:stop])) == expected
            except Exception:  # noqa: BLE001 - any failure to read back is damage
                ok = False
            if not ok:
                bad.append(task_id)
                break
    return bad
