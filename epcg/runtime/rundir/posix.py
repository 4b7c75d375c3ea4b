"""A run directory on a POSIX filesystem (local disk, or NFS/Lustre shared by the cluster)."""

from __future__ import annotations

import builtins
import contextlib
import functools
import errno
import fcntl
import hashlib
import os
import shutil
import struct
import tempfile
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from epcg.runtime.errors import Conflict, MissingBucket, PermissionDenied, Unreachable, UserError
from epcg.runtime.rundir.base import LOCK_KEY, Location

SCAFFOLD_LOGS = "logs"
"""Worker jobs' logs (SLURM/PBS), written while the cluster starts, before the run is laid out: a directory holding
only them and the lock is still empty."""
CAS_LOCK = ".cas"
"""File whose flock serialises :meth:`PosixLocation.replace` calls on one filesystem."""


def fsync_dir(path: Path) -> None:
    """Make a directory's entries (new files, renames) durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_path(path: Path) -> None:
    """fsync a file or directory if it exists (a store may hold no file for an all-zero chunk)."""
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


def _synced_temp(path: Path, data: bytes) -> str:
    """A temporary file beside ``path`` holding ``data``, fsynced; the caller renames or links it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return tmp


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write ``text`` to ``path`` so that readers see either nothing or all of it, durably."""
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    try:
        tmp = _synced_temp(path, data)
        try:
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        fsync_dir(path.parent)
    except OSError as exc:
        if exc.filename is None:  # a full disk names no file: name the one that was being written
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise


_FLOCK = "hhqqi4x"  # struct flock on Linux x86-64 and aarch64: type, whence, start, len, pid


def _ofd_lock(fd: int, command: int, kind: int) -> int:
    """An open-file-description lock on the whole file; returns the lock type found (F_GETLK)."""
    out = fcntl.fcntl(fd, command, struct.pack(_FLOCK, kind, os.SEEK_SET, 0, 0, 0))
    found: int = struct.unpack(_FLOCK, out)[0]
    return found


def _version(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


FAILED_ERRNOS = {errno.EIO, errno.ESTALE, errno.ENOTCONN, errno.ETIMEDOUT, errno.EHOSTDOWN, errno.ENXIO}
"""Errors of a failing disk or a network filesystem whose server is gone: the storage is unreachable, the run is
not damaged (nothing is forgotten or recomputed for them)."""


def _named(method: Callable[..., Any]) -> Callable[..., Any]:
    """A Location method whose OSError of a failing device is the Unreachable fault it is, with the path."""

    @functools.wraps(method)
    def call(self: PosixLocation, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except OSError as exc:
            if exc.errno not in FAILED_ERRNOS:
                raise
            where = exc.filename or self.describe(str(args[0]) if args and isinstance(args[0], str) else "")
            raise Unreachable(f"{where}: {exc.strerror} (the disk or network filesystem failed; nothing in the "
                              "run was changed: try again once it is back)") from None

    return call


class PosixLocation(Location):
    """Keys are files below ``root``; the lock is an open-file-description lock the kernel drops with its process."""

    metered = False

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).absolute()
        self.where = str(self.root)

    def __repr__(self) -> str:
        return f"PosixLocation({self.where!r})"

    def _path(self, key: str) -> Path:
        return self.root / key if key else self.root

    @_named
    def read(self, key: str) -> bytes | None:
        try:
            return self._path(key).read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    @_named
    def read_versioned(self, key: str) -> tuple[bytes, str] | None:
        data = self.read(key)
        return None if data is None else (data, _version(data))

    @_named
    def write(self, key: str, data: bytes) -> None:
        write_atomic(self._path(key), data)

    @_named
    def create(self, key: str, data: bytes) -> bool:
        """``link(2)`` a synced temporary file to ``key``: the kernel refuses if the name exists."""
        path = self._path(key)
        tmp = _synced_temp(path, data)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        finally:
            os.unlink(tmp)
        fsync_dir(path.parent)
        return True

    @_named
    def replace(self, key: str, data: bytes, version: str) -> bool:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / CAS_LOCK, "a") as guard:
            fcntl.flock(guard, fcntl.LOCK_EX)
            current = self.read(key)
            if current is None or _version(current) != version:
                return False
            write_atomic(self._path(key), data)
            return True

    @_named
    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    @_named
    def list(self, prefix: str = "") -> list[str]:
        base = self._path(prefix.rstrip("/"))
        if not base.is_dir():
            return []
        out = [str(p.relative_to(self.root)) for p in base.rglob("*") if p.is_file() and not p.name.endswith(".tmp")]
        return sorted(k for k in out if k != CAS_LOCK)

    @_named
    def sync(self, keys: Iterable[str]) -> None:
        paths: set[Path] = set()
        for key in keys:
            path = self._path(key)
            paths |= {path, path.parent}
        if paths:
            list(_SYNC_POOL.map(_fsync_path, paths))

    def zarr_store(self, key: str) -> Any:
        from zarr.storage import LocalStore

        return LocalStore(self._path(key))

    @contextlib.contextmanager
    def lock(self, owner: str) -> Iterator[None]:
        """An open-file-description lock on ``DIR/.lock``: a killed client never leaves a stale lock behind."""
        self.root.mkdir(parents=True, exist_ok=True)
        handle = open(self.root / LOCK_KEY, "a+")
        try:
            _ofd_lock(handle.fileno(), fcntl.F_OFD_SETLK, fcntl.F_WRLCK)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            handle.close()
            raise Conflict(
                f"run directory {self.where} is in use by another epcg process ({holder}); "
                "wait for it to finish or stop it first"
            ) from None
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(f"{owner}\n")
            handle.flush()
            yield
        finally:
            handle.close()

    @_named
    def is_locked(self) -> bool:
        try:
            fd = os.open(self.root / LOCK_KEY, os.O_RDONLY)
        except (FileNotFoundError, NotADirectoryError):
            return False
        try:
            return _ofd_lock(fd, fcntl.F_OFD_GETLK, fcntl.F_WRLCK) != fcntl.F_UNLCK
        finally:
            os.close(fd)

    def holder(self) -> str | None:
        if not self.is_locked():
            return None
        text = (self.read(LOCK_KEY) or b"").decode(errors="replace").strip() or "unknown"
        return f"({text}); wait for it to finish or stop it first (the kernel releases its lock when it exits)"

    def check(self) -> None:
        """Raise the StorageFault of the run directory's cause: gone (MissingBucket) or not readable
        (PermissionDenied), or a file (UserError); other path problems are found by ``outdir.run_directory``."""
        if not self.root.exists():
            if self.root.parent.is_dir():
                return  # a new run's directory, made when it starts
            raise MissingBucket(f"{self.where}: the directory holding it does not exist")
        if not self.root.is_dir():
            raise UserError(f"{self.where} is a file, not a run directory")
        if not os.access(self.root, os.R_OK | os.X_OK):
            raise PermissionDenied(f"{self.where}: permission denied (this user cannot read the run directory)")

    def scratch(self, name: str) -> Path:
        return self._path(name)

    def local_copy(self, prefix: str) -> Path:
        return self._path(prefix.rstrip("/"))

    def local_path(self, key: str = "") -> Path | None:
        return self._path(key)

    def drop_scratch(self, name: str) -> None:
        """Nothing: scratch here is the run's own directory."""

    def check_conditional(self) -> None:
        """Nothing: ``link(2)`` never overwrites."""

    def publish(self, prefix: str, directory: Path) -> builtins.list[str]:
        target = self._path(prefix.rstrip("/"))
        if Path(directory).absolute() != target:
            shutil.copytree(directory, target, dirs_exist_ok=True)
        return [str(p.relative_to(self.root)) for p in sorted(target.rglob("*")) if p.is_file()]

    def free_bytes(self) -> int | None:
        path = self.root
        while not path.exists() and path != path.parent:
            path = path.parent
        return shutil.disk_usage(path).free

    def is_empty(self) -> bool:
        if not self.root.exists():
            return True
        return not any(p.name not in (LOCK_KEY, CAS_LOCK, SCAFFOLD_LOGS) for p in self.root.iterdir())
