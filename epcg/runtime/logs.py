"""Dask's own logs go to the run directory (``DIR/logs/``), not to the user's terminal.

A run's terminal output is epcg's: notes, progress, the results, one line for
an error. Dask, tornado and asyncio log what happens inside the scheduler and
the workers, warnings included (a dashboard port already taken, a worker
restarted, the cancellations of a run stopped with Ctrl-C or SIGTERM); those
records are kept, in ``DIR/logs/client.log`` for this process (where the
embedded cluster's scheduler runs) and ``DIR/logs/worker-<host>-<pid>.log`` for
each worker process, and shown only when the run fails.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from distributed.core import Status
from distributed.diagnostics.plugin import WorkerPlugin

from epcg.runtime.text import shown

LOGGERS = ("distributed", "tornado", "asyncio", "bokeh", "py.warnings")
"""The loggers whose records go to the run directory instead of the terminal, with every logger under them."""
QUIET_TRACKER = "ignore::UserWarning:multiprocessing.resource_tracker"
"""A warning filter handed to multiprocessing's resource tracker (it starts with this process's ``-W`` options):
the semaphores of worker processes killed at shutdown are its to clean, not the user's to read about."""
FORMAT = "%(asctime)s %(process)d %(name)s %(levelname)s %(message)s"
KEEP = 10_000
"""Records held before the run directory exists (the earliest kept)."""


class Redacting(logging.Formatter):
    """Log lines without a URL's password or a secret parameter, and without control sequences."""

    def format(self, record: logging.LogRecord) -> str:
        return shown(super().format(record))


class LogFile(logging.FileHandler):
    """A run's log file that meets a full or read-only disk (any OSError of a write) with one line on standard
    error and drops its later records: a log is never worth a traceback per record, nor stopping the run."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, encoding="utf-8")
        self.failed = False

    def emit(self, record: logging.LogRecord) -> None:
        if not self.failed:
            super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        exc = sys.exc_info()[1]
        if not isinstance(exc, OSError):
            super().handleError(record)
            return
        self.failed = True
        self._drop_stream()
        with contextlib.suppress(Exception):  # standard error itself may be gone
            sys.stderr.write(f"epcg: note: cannot write {self.baseFilename} ({exc.strerror or exc}); "
                             "Dask's log records are dropped from here on\n")
            sys.stderr.flush()

    def _drop_stream(self) -> None:
        stream, self.stream = self.stream, None
        with contextlib.suppress(OSError, ValueError):  # its buffer cannot be written either
            if stream is not None:
                stream.close()

    def close(self) -> None:
        if self.failed:
            self._drop_stream()
        with contextlib.suppress(OSError):
            super().close()


class RunLog(logging.Handler):
    """Holds records until :meth:`attach` names the file, then appends them there; counts the errors."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(Redacting(FORMAT))
        self.held: list[logging.LogRecord] = []
        self.file: LogFile | None = None
        self.errors = 0
        self.path: Path | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR:
            self.errors += 1
        if self.file is not None:
            self.file.emit(record)
        elif len(self.held) < KEEP:
            self.held.append(record)

    def attach(self, path: Path) -> None:
        """Write the held records and every later one to ``path`` (its directory is created)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.file = LogFile(path)
        self.file.setFormatter(self.formatter)
        for record in self.held:
            self.file.emit(record)
        self.held.clear()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
        super().close()


def loggers() -> list[logging.Logger]:
    """The :data:`LOGGERS` and those under them with handlers of their own: Dask's logging set-up gives
    ``distributed.client`` and ``tornado.application`` their own terminal handler, which would print past a
    handler of ``distributed`` (a client's failed reconnection to a scheduler stopped with it, for one)."""
    under = tuple(f"{name}." for name in LOGGERS)
    named = [logging.getLogger(name) for name in LOGGERS]
    return named + [logging.getLogger(name) for name, logger in sorted(logging.root.manager.loggerDict.items())
                    if name.startswith(under) and isinstance(logger, logging.Logger)
                    and (logger.handlers or not logger.propagate)]


@contextlib.contextmanager
def kept(restore: bool = True) -> Iterator[RunLog]:
    """For the block, Dask's loggers (and Python warnings) write to one :class:`RunLog`, not the terminal.

    Records logged before :meth:`RunLog.attach` and never attached (a refused
    job: nothing is written) are dropped with the handler. ``restore=False``
    leaves the handler in place after the block, for a process about to exit
    (clusters and clients closed by finalizers still log while it does).
    """
    handler = RunLog()
    saved = []
    for logger in loggers():
        saved.append((logger, logger.handlers[:], logger.propagate))
        logger.handlers = [handler]
        logger.propagate = False
    logging.captureWarnings(True)
    tracker = QUIET_TRACKER not in sys.warnoptions
    if tracker:
        sys.warnoptions.append(QUIET_TRACKER)
    try:
        yield handler
    finally:
        if restore:
            if tracker:
                sys.warnoptions.remove(QUIET_TRACKER)
            logging.captureWarnings(False)
            for logger, handlers, propagate in saved:
                logger.handlers, logger.propagate = handlers, propagate
            handler.close()


class WorkerLogs(WorkerPlugin):
    """A Dask worker plugin: the worker process's Dask logs go to ``DIR/logs/worker-<host>-<pid>.log``.

    Its own terminal handlers are put back when the plugin is removed from a
    running worker, so the workers of a scheduler the user runs are left as they were.
    """

    name = "epcg-worker-logs"

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.saved: list[tuple[logging.Logger, list[logging.Handler], bool]] = []

    def setup(self, worker: Any) -> None:
        path = Path(self.directory) / f"worker-{socket.gethostname()}-{os.getpid()}.log"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handler = LogFile(path)
        except OSError:
            return  # a worker that cannot write the run directory fails its tasks, which say so
        handler.setFormatter(Redacting(FORMAT))
        for logger in loggers():
            self.saved.append((logger, logger.handlers[:], logger.propagate))
            logger.handlers = [handler]
            logger.propagate = False

    def teardown(self, worker: Any) -> None:
        if getattr(worker, "status", None) != Status.running:
            return  # a closing worker still logs (lost heartbeats); its file takes it to the end
        for logger, handlers, propagate in self.saved:
            for handler in logger.handlers:
                handler.close()
            logger.handlers, logger.propagate = handlers, propagate
        self.saved.clear()


@contextlib.contextmanager
def to_run_directory(log: RunLog, client: Any, directory: Path) -> Iterator[None]:
    """For the block, this process's held and later records go to ``directory/client.log`` (a run's ``logs``
    directory) and (with a client) each worker's to its own file there; a scheduler the user runs gets its
    workers' handlers back afterwards."""
    directory = Path(directory)
    log.attach(directory / "client.log")
    if client is None:
        yield
        return
    client.register_plugin(WorkerLogs(str(directory)), name=WorkerLogs.name)
    try:
        yield
    finally:
        if client.cluster is None and client.status == "running":
            with contextlib.suppress(Exception):
                client.unregister_worker_plugin(WorkerLogs.name)
