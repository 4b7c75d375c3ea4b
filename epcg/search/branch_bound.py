"""Algorithm 6 support, domain-free: the incumbent (best score so far) shared by every task.

Branch and bound prunes a partial set whose bound cannot beat the incumbent.
Tasks on different workers share one incumbent: they read it at batch
boundaries and offer improvements. A stale read only prunes less, so the answer
never depends on timing; an offer never lowers the value (compare-and-set under
a lock), so a concurrent better score is never lost.

>>> best = LocalIncumbent("doc")
>>> best.get(), best.offer(5), best.offer(3), best.get()
(0, 5, 5, 5)
"""

from __future__ import annotations

import threading
from typing import Protocol


class Incumbent(Protocol):
    def get(self) -> int:
        """The best score any task has offered so far (0 before any)."""

    def offer(self, score: int) -> int:
        """Raise the incumbent to ``score`` if it is higher; return the incumbent after."""


_LOCAL: dict[str, int] = {}
_LOCAL_LOCK = threading.Lock()


class LocalIncumbent:
    """An incumbent shared by the tasks of this process (the serial executor)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def get(self) -> int:
        with _LOCAL_LOCK:
            return _LOCAL.get(self.name, 0)

    def offer(self, score: int) -> int:
        with _LOCAL_LOCK:
            _LOCAL[self.name] = max(_LOCAL.get(self.name, 0), int(score))
            return _LOCAL[self.name]


class DaskIncumbent:
    """An incumbent in a ``distributed.Variable``, updated under a ``distributed.Lock``.

    Lives on the scheduler, so every worker process (and the client) sees the
    same value. Reads take one round trip to the scheduler; tasks read at batch
    boundaries, not per node.
    """

    def __init__(self, name: str) -> None:
        from distributed import Lock, Variable, get_client

        client = get_client()
        self.variable = Variable(name, client=client)
        self.lock = Lock(f"{name}-lock")
        with self.lock:  # set it once, so reads never wait for a first value
            if not client.get_metadata(["epcg", name], default=False):
                self.variable.set(0)
                client.set_metadata(["epcg", name], True)

    def get(self) -> int:
        return int(self.variable.get())

    def offer(self, score: int) -> int:
        with self.lock:
            current = self.get()
            if score > current:
                self.variable.set(int(score))
                return int(score)
            return current


def incumbent(name: str) -> LocalIncumbent | DaskIncumbent:
    """The shared incumbent called ``name``: on the cluster inside a Dask worker, else in-process."""
    try:
        from distributed import get_worker

        get_worker()
    except (ImportError, ValueError):
        return LocalIncumbent(name)
    return DaskIncumbent(name)
