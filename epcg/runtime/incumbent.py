"""The incumbent of a branch-and-bound job shared by every worker process (paper Algorithm 6).

:func:`epcg.search.branch_bound.search` takes its incumbent as an argument;
this module supplies it: inside a Dask worker a :class:`DaskIncumbent` on the
scheduler, elsewhere (the serial executor, tests) the in-process
:class:`~epcg.search.branch_bound.LocalIncumbent`.

>>> shared_incumbent("doc-runtime").offer(4)   # no Dask worker here: in-process
4
"""

from __future__ import annotations

from epcg.search.branch_bound import Incumbent, LocalIncumbent


class DaskIncumbent:
    """An incumbent in a ``distributed.Variable``, updated under a ``distributed.Lock``.

    Lives on the scheduler, so every worker process (and the client) sees the
    same value. Reads take one round trip to the scheduler; the search reads
    at batch boundaries, not per node. An offer never lowers the value
    (compare-and-set under the lock), so a concurrent better score is never lost.
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


def incumbent_name(run_key: str, stage: str) -> str:
    """The name of a run's incumbent for one stage: fenced by the run's id and epoch.

    A resumed run (a new epoch) starts from a fresh incumbent, and a straggling
    task of an older session can only touch that session's incumbent.

    >>> incumbent_name("a1b2/3", "plain")
    'epcg-incumbent-a1b2-3-plain'
    """
    return f"epcg-incumbent-{run_key.replace('/', '-')}-{stage}"


def release(name: str) -> None:
    """Delete the incumbent ``name`` wherever it lives (called by the client when its run ends)."""
    LocalIncumbent(name).delete()
    try:
        from distributed import Variable, get_client

        client = get_client()
    except (ImportError, ValueError):
        return
    Variable(name, client=client).delete()
    client.set_metadata(["epcg", name], False)


def shared_incumbent(name: str) -> Incumbent:
    """The incumbent called ``name``: on the scheduler inside a Dask worker, else in-process."""
    try:
        from distributed import get_worker

        get_worker()
    except (ImportError, ValueError):
        return LocalIncumbent(name)
    return DaskIncumbent(name)
