"""Reach compute: an embedded LocalCluster on 127.0.0.1 by default, or an existing scheduler."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator

from epcg.runtime.errors import UserError


def default_workers() -> int:
    """One single-threaded worker process per core: numba kernels never oversubscribe."""
    return max(1, len(os.sched_getaffinity(0)))


@contextlib.contextmanager
def connect(
    scheduler: str | None = None,
    workers: int | None = None,
    threads_per_worker: int | None = None,
    dashboard: bool = True,
) -> Iterator["distributed.Client"]:  # noqa: F821
    """Yield a Dask client: to ``scheduler`` if given, else to a new local cluster.

    The local cluster listens on 127.0.0.1 only; its workers are processes with
    ``threads_per_worker`` threads (default 1) and one numba thread each.
    """
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            client = Client(scheduler, timeout="5s")
        except OSError as exc:
            raise UserError(f"cannot reach scheduler {scheduler}: {exc}") from None
        with client:
            yield client
        return
    threads = threads_per_worker or 1
    env = {"NUMBA_NUM_THREADS": str(threads), "OMP_NUM_THREADS": "1"}
    cluster = LocalCluster(
        host="127.0.0.1",
        n_workers=workers or default_workers(),
        threads_per_worker=threads,
        processes=True,
        dashboard_address="127.0.0.1:8787" if dashboard else None,
        silence_logs=logging.ERROR,
        env=env,
    )
    with cluster, Client(cluster) as client:
        yield client
