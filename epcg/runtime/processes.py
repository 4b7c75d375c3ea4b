"""Which recorded process is still ours: the one test every signal and every "is it alive" passes.

A pid alone names nobody: once its process dies (SIGKILL, the OOM killer) the kernel hands the number to the
next process that starts, and a pid read on one machine means nothing on another. So a driver records, beside
its pid, its host and :func:`token` (the boot and the moment the kernel started the process, from
``/proc/<pid>/stat``); :func:`state` calls it alive only if this host has a process of that pid with the same
token now. Anything else is gone (or, on another host, out of sight), and nothing signals it.
"""

from __future__ import annotations

import os
import signal
import socket
from pathlib import Path
from collections.abc import Mapping
from typing import Any, Literal

State = Literal["alive", "gone", "elsewhere"]
"""``alive``: this host runs the very process recorded; ``gone``: it does not (the pid is free or belongs to
another process, or the record cannot prove which process it was); ``elsewhere``: recorded on another host,
which this one cannot see into."""


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown-boot"


def token(pid: int) -> str | None:
    """What tells process ``pid`` from any later process given the same pid: this boot's id and the process's
    start time in clock ticks since boot; None if there is no such process (or no ``/proc`` to ask)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return None
    fields = stat[stat.rfind(")") + 2:].split()  # the command name in parentheses may hold spaces
    if len(fields) < 20:
        return None
    return f"{_boot_id()}/{fields[19]}"  # field 22 of stat: starttime


def identity(pid: int | None = None) -> dict[str, Any]:
    """``pid``, ``node`` and ``token`` of a process of this host (default: this process), as a record keeps them."""
    pid = os.getpid() if pid is None else pid
    return {"pid": pid, "node": socket.gethostname(), "token": token(pid)}


def state(record: Mapping[str, Any]) -> State:
    """Whether the process a record names (``pid``, ``node``, ``token``) is alive here, gone, or elsewhere."""
    if record.get("node") != socket.gethostname():
        return "elsewhere"
    pid, recorded = record.get("pid"), record.get("token")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0 or not isinstance(recorded, str):
        return "gone"
    return "alive" if token(pid) == recorded else "gone"


def signal_if_ours(record: Mapping[str, Any], signum: int) -> State:
    """Send ``signum`` to the recorded process only if :func:`state` proves it alive here; returns the state
    (``alive``: signalled)."""
    found = state(record)
    if found != "alive":
        return found
    try:
        handle = os.pidfd_open(record["pid"])  # pins the process: its pid cannot be reused while this is open
    except ProcessLookupError:
        return "gone"
    except OSError:  # a kernel without pidfds (before 5.3): the check above is all there is
        try:
            os.kill(record["pid"], signum)
        except ProcessLookupError:
            return "gone"
        return "alive"
    try:
        if state(record) != "alive":  # checked again for the process the handle holds
            return "gone"
        signal.pidfd_send_signal(handle, signum)
    except ProcessLookupError:
        return "gone"
    finally:
        os.close(handle)
    return "alive"
