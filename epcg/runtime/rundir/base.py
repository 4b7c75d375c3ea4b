"""The operations a run directory needs from where it lives, and nothing more.

A run directory is a set of objects named by keys (``job.toml``,
``manifest/k03-0001.json``, ``store.zarr/...``). The runtime reads and writes
them only through a :class:`Location`: a POSIX directory
(:class:`~epcg.runtime.rundir.posix.PosixLocation`) or a prefix of an object
store (:class:`~epcg.runtime.rundir.objects.ObjectLocation`). Both keep the
same promises, each with its own primitives:

- ``create`` never overwrites: it makes ``key`` only if nothing is there
  (``link(2)`` of a synced temporary file; a PUT with ``If-None-Match: *``).
- ``replace`` is a compare-and-swap on a version read with ``read_versioned``
  (under a lock file; a PUT with ``If-Match: <ETag>``).
- ``write`` makes ``key`` whole or not at all (rename; a single PUT).
- ``sync`` makes written keys durable (fsync; a PUT is durable when it returns).
- ``lock`` holds the run for one client; a second gets one line and exit status 75.
"""

from __future__ import annotations

import builtins
import contextlib
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

LOCK_KEY = ".lock"
"""The lock's own key: not part of the run, ignored when asking whether a location is empty."""
PROBE_KEY = ".epcg-probe"
"""Prefix of the objects a store's conditional writes are tried with: one left by a failed delete is ignored too."""


class Location(ABC):
    """Where a run directory lives: a root and keys below it."""

    where: str
    """How the location is shown and passed to workers: an absolute path or a URL (never credentials)."""
    metered: bool
    """True where every read and write is a request to the store (an object store): plans show how many."""

    @abstractmethod
    def read(self, key: str) -> bytes | None:
        """The bytes at ``key``, or None if there is nothing there."""

    @abstractmethod
    def read_versioned(self, key: str) -> tuple[bytes, str] | None:
        """The bytes at ``key`` and a version token for :meth:`replace`, or None."""

    @abstractmethod
    def write(self, key: str, data: bytes) -> None:
        """Put ``data`` at ``key``, replacing what was there; readers see all of it or the old value."""

    @abstractmethod
    def create(self, key: str, data: bytes) -> bool:
        """Put ``data`` at ``key`` only if nothing is there; False (nothing written) if something is."""

    @abstractmethod
    def replace(self, key: str, data: bytes, version: str) -> bool:
        """Put ``data`` at ``key`` only if it is still at ``version``; False (nothing written) otherwise."""

    @abstractmethod
    def delete(self, key: str) -> None:
        """Remove ``key`` if it is there."""

    @abstractmethod
    def list(self, prefix: str = "") -> list[str]:
        """Keys under ``prefix`` (a folder such as ``"manifest/"``, or ``""`` for everything), sorted."""

    @abstractmethod
    def sync(self, keys: Iterable[str]) -> None:
        """Make the given keys (and their folders) durable before anything that depends on them is written."""

    @abstractmethod
    def zarr_store(self, key: str) -> Any:
        """A Zarr 3 store rooted at ``key`` (the run's ``store.zarr``)."""

    @abstractmethod
    def lock(self, owner: str) -> contextlib.AbstractContextManager[None]:
        """Hold the run for one client; raises UserError naming the holder if another has it."""

    @abstractmethod
    def is_locked(self) -> bool:
        """True while some client holds the lock; never takes it."""

    def holder(self) -> str | None:
        """Who holds the lock, as the clause after "in use by another epcg client" (None while nobody does)."""
        return "(unknown)" if self.is_locked() else None

    @abstractmethod
    def check(self) -> None:
        """Raise UserError in one line if the location cannot be reached (missing bucket, credentials, endpoint)."""

    @abstractmethod
    def check_conditional(self) -> None:
        """Refuse, in one line, a store whose ``create`` would overwrite (one that ignores conditional writes):
        records could then be overwritten."""

    @abstractmethod
    def scratch(self, name: str) -> Path:
        """A directory on this machine's disk for per-machine copies (shared by the processes of one machine)."""

    @abstractmethod
    def local_copy(self, prefix: str) -> Path:
        """A local directory holding the objects under ``prefix`` (for reading pictures by path)."""

    @abstractmethod
    def publish(self, prefix: str, directory: Path) -> builtins.list[str]:
        """Store the files of the local ``directory`` under ``prefix``; return their keys."""

    @abstractmethod
    def free_bytes(self) -> int | None:
        """Free space where the run will be written (None: not limited, as on an object store)."""

    @abstractmethod
    def local_path(self, key: str = "") -> Path | None:
        """``key`` as a path every process of this machine can open (the run's own file on a filesystem), or None
        where the run has no such path (an object store)."""

    @abstractmethod
    def drop_scratch(self, name: str) -> None:
        """Forget this machine's :meth:`scratch` copy ``name`` so that it is made afresh; where scratch is the run's
        own directory (a filesystem) it is kept."""

    def io(self) -> dict[str, int] | None:
        """Requests and bytes this process has sent to the store so far; None where none are counted (a
        filesystem, not :attr:`metered`)."""
        return None

    def address(self, key: str = "") -> Path | str:
        """``key`` as a person and a worker name it: its absolute path, or its URL on an object store."""
        local = self.local_path(key)
        return self.describe(key) if local is None else local

    @contextlib.contextmanager
    def written_through(self, key: str) -> Iterator[Path]:
        """A local file to write ``key`` through, for a writer that takes a filename: the key's own file where
        the run has a local path; elsewhere a :meth:`scratch` file, stored at ``key`` when the block ends (if the
        writer wrote it)."""
        local = self.local_path(key)
        if local is not None:
            yield local
            return
        staged = self.scratch("out") / key
        yield staged
        if staged.is_file():
            self.write(key, staged.read_bytes())

    def exists(self, key: str) -> bool:
        return self.read(key) is not None

    def is_empty(self) -> bool:
        """True if nothing but the lock (or a left-over probe object) is stored here."""
        return not any(key != LOCK_KEY and not key.startswith(PROBE_KEY) for key in self.list())

    def describe(self, key: str = "") -> str:
        """``key`` as a person reads it: a path or a URL."""
        return f"{self.where.rstrip('/')}/{key}" if key else self.where
