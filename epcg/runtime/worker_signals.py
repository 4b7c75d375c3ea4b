"""Stops by signal are the client's: a worker process its nanny started ignores the signals a terminal or a batch
system sends to a whole process group.

Ctrl-C reaches every process of the terminal's foreground group, SIGTERM from a batch system every process of
the job step; the embedded cluster's worker processes and those of ``dask worker`` started by hand in the same
terminal are among them. Left alone, each prints a ``KeyboardInterrupt`` traceback or dies at once, and the
scheduler reports the lost workers, before the client has cancelled anything. Instead the client stops the run
(futures cancelled, whole chunks kept, the resume command printed) and whoever started the workers closes them:
the nanny asks its worker to close and kills it if it does not, and a worker whose nanny died exits. A worker
without a nanny (``dask worker --no-nanny``) handles its signals itself and is left as it is.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

from distributed.core import Status
from distributed.diagnostics.plugin import WorkerPlugin

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""What a terminal (Ctrl-C, closing) and a batch system send to a whole process group to stop it."""


class LeaveStopsToClient(WorkerPlugin):
    """A Dask worker plugin: a nanny's worker process ignores :data:`SIGNALS` while the plugin is registered.

    Removed from a running worker (a scheduler the user runs, once the run is over) it gives the worker its
    previous handlers back; a closing worker keeps ignoring them until it has closed.
    """

    name = "epcg-stops-to-client"

    def __init__(self) -> None:
        self.saved: dict[int, Any] = {}

    def setup(self, worker: Any) -> None:
        if getattr(worker, "nanny", None) is None or threading.current_thread() is not threading.main_thread():
            return
        self.saved = {signum: signal.signal(signum, signal.SIG_IGN) for signum in SIGNALS}

    def teardown(self, worker: Any) -> None:
        if getattr(worker, "status", None) != Status.running or not self.saved:
            return
        for signum, handler in self.saved.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        self.saved.clear()


@contextlib.contextmanager
def left_to_client(client: Any) -> Iterator[Any]:
    """For the block, the workers of ``client``'s cluster (and those that join it) leave stops by signal to this
    client; a scheduler the user runs gets its workers' handlers back afterwards."""
    client.register_plugin(LeaveStopsToClient(), name=LeaveStopsToClient.name)
    try:
        yield client
    finally:
        if client.cluster is None and client.status == "running":
            with contextlib.suppress(Exception):
                client.unregister_worker_plugin(LeaveStopsToClient.name)
