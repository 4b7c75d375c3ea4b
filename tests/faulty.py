"""Faults injected at the storage interface: every call a run makes to its :class:`~epcg.runtime.rundir.Location`
is counted, and call N fails with a chosen fault (or the process is SIGKILLed there), as SQLite's I/O-error tests
fail its N-th file operation.

In this process: ``with injected(n, kind): ...`` (``n = 0``: count only; :data:`CALLS` holds the count).
As a process: ``EPCG_FAULT=N:KIND python -m tests.faulty ARGS`` runs ``epcg ARGS`` with the fault installed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any

from epcg.runtime import errors, store
from epcg.runtime.rundir import Location, open_location

METHODS = ("read", "read_versioned", "write", "create", "replace", "delete", "list", "sync", "exists", "zarr_store",
           "lock", "is_locked", "check", "publish", "local_copy", "is_empty", "holder")
"""The Location calls a run makes (every one of them goes through here once installed)."""
KINDS = ("unreachable", "permission", "missing-bucket", "damaged", "conflict", "full")
"""Fault classes of the storage interface, and a full disk (the one OSError a Location passes on)."""


def fault(kind: str, call: int, method: str, key: str) -> BaseException:
    text = f"INJECTED {kind} at storage call {call} ({method} {key})"
    return {
        "unreachable": errors.Unreachable, "permission": errors.PermissionDenied,
        "missing-bucket": errors.MissingBucket, "damaged": errors.Damaged, "conflict": errors.Conflict,
    }.get(kind, lambda t: OSError(errno.ENOSPC, f"No space left on device ({t})"))(text)


class State:
    calls = 0
    target = 0
    kind = ""
    log: list[str] = []


CALLS = State()


def _tick(method: str, args: tuple[Any, ...]) -> None:
    CALLS.calls += 1
    if CALLS.calls != CALLS.target:
        return
    key = str(args[0]) if args else ""
    CALLS.log.append(f"{CALLS.calls} {method} {key}")
    if CALLS.kind == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    raise fault(CALLS.kind, CALLS.calls, method, key)


def instrument(location: Location) -> Location:
    """Make every call of ``location`` go through the counter (once per instance)."""
    if getattr(location, "_faulty", False):
        return location
    for name in METHODS:
        inner = getattr(location, name)

        def call(*args: Any, _inner: Any = inner, _name: str = name, **kwargs: Any) -> Any:
            _tick(_name, args)
            return _inner(*args, **kwargs)

        setattr(location, name, call)
    location._faulty = True
    return location


def _open(where: Any) -> Location:
    return instrument(open_location(where))


@contextlib.contextmanager
def injected(target: int, kind: str) -> Iterator[State]:
    """Count this process's Location calls from 0 and fail call ``target`` with ``kind`` (0: never)."""
    saved = store.open_location
    CALLS.calls, CALLS.target, CALLS.kind, CALLS.log = 0, target, kind, []
    store.open_location = _open
    try:
        yield CALLS
    finally:
        store.open_location = saved
        CALLS.target = 0


def main() -> None:
    target, _, kind = os.environ.get("EPCG_FAULT", "0:").partition(":")
    from epcg.cli import main as epcg

    with injected(int(target), kind):
        sys.argv[0] = "epcg"
        epcg()


if __name__ == "__main__":
    main()
