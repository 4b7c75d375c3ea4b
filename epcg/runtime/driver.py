"""One allocation of a submitted run (what ``epcg drive DIR`` runs), and ``epcg cancel``'s request to stop.

:class:`Driver` holds the run's lock for its whole life (one live driver per run), records the allocation,
decides whether it computes, submits its continuation, runs the unfinished chunks through the one callable it
is given, turns the early signal into a drain, records the end and cancels a continuation nobody needs. Every
change to the history is one :func:`~epcg.runtime.history.update` (compare-and-swap), and the driver looks at
the record that update stored, so a concurrent ``epcg cancel`` is never overwritten nor missed: if it lands
before the allocation is recorded, the allocation does not compute; after, it finds the allocation and signals
it; between the continuation's submission and its record, the driver cancels the continuation itself.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, cast

from epcg.runtime import batch, processes
from epcg.runtime.errors import Drain, TaskFailed, UserError, one_line
from epcg.runtime.history import Allocation, History, decide, for_results, load, settle, update
from epcg.runtime.plan import Task
from epcg.runtime.readout import FINISHED, outputs_written, state
from epcg.runtime.stopping import handled
from epcg.runtime.store import RunDir

Chunks = Callable[[Path | str | None], None]
"""Runs the run's unfinished chunks as ``resume`` does, given the scheduler file to connect through (None:
the cluster the submission named)."""
EARLY = 5
"""Seconds before ``walltime - signal_lead`` from which the batch system's signal is obeyed at once."""


class Driver:
    """One allocation: call :meth:`drive` once; it returns the exit status.

    ``run_chunks`` computes (the only step that knows how a run is executed; the run's results list the
    allocations :meth:`ending` gives); ``say`` prints a line; ``cluster`` gives the scheduler file for
    ``run_chunks`` (default: the allocation's own Dask cluster for a batch kind, the submission's scheduler file
    for ``--detach``)."""

    def __init__(self, run: RunDir, tasks: list[Task], info: batch.Submitted, run_chunks: Chunks,
                 say: Callable[[str], None] = print,
                 cluster: Callable[[], AbstractContextManager[Path | str | None]] | None = None) -> None:
        self.run, self.tasks, self.info = run, tasks, info
        self.run_chunks, self.say = run_chunks, say
        self.kind = batch.kind_of(info)
        self.cluster = cluster or (lambda: self.kind.cluster(run, info))
        self.began = round(time.time(), 3)
        self.job_id = self.kind.allocation_id()
        self.grace = self.kind.grace(info)
        self.end, self.drain_at = self.kind.limits(info, self.job_id, self.began)
        self.caught: dict[str, Any] = {}
        """The drain signal once taken: ``signal``, ``at``, and the ``drain`` exception once it is raised."""
        self.computing = False
        """True while a signal may raise Drain (inside :meth:`_compute`); otherwise it is only noted."""
        self.number = 0
        """This allocation's number in its submission (1 for the first), once recorded."""
        self.finished_at: float | None = None
        """When the run's results were written with this allocation's end (:meth:`ending`): the end it records."""

    # -- the allocation's life -----------------------------------------------------

    def drive(self) -> int:
        """Take the run's lock for the allocation's whole life (another live driver, run or resume of the run
        ends this one with one line, exit status 75, before it records anything); record, decide, continue,
        compute, record the end; the exit status."""
        with self.run.lock(), self._signals():
            stop = self._start()
            if stop is not None:
                finished = stop.startswith("finished")
                self.say(f"epcg: stopping: {stop}")
                return 0 if finished or stop.startswith("cancelled") else 1
            self._continue()
            why, status = self._compute()
            self._end(why)
            return status

    def _start(self) -> str | None:
        """Record this allocation and decide in one update; why it must not compute (None: it computes)."""
        done = self.run.records.done(self.tasks)
        finished = state(False, len(done), len(self.tasks), outputs_written(self.run), False) == FINISHED
        limit = self.kind.max_requeues(self.info)
        alloc = cast(Allocation, {"job": self.job_id, **processes.identity(), "started_at": self.began})
        stop: list[str | None] = [None]

        def record(history: History) -> None:
            settle(history, done, starting=self.began)
            stop[0] = "finished: nothing was left to compute" if finished else decide(
                history, None if limit is None else limit + history.base, len(self.tasks) - len(done))
            mine = alloc.copy()
            if stop[0] is not None:
                mine.update({"ended_at": round(time.time(), 3),
                             "why": stop[0] if finished else f"did not compute: {stop[0]}"})
            history.allocations.append(mine)
            if self.job_id is not None and history.next == self.job_id:
                history.next = None

        history = update(self.run, record)
        self.number = len(history.allocations) - history.base
        where = f"job {self.job_id}" if self.job_id else f"pid {os.getpid()}"
        self.say(f"epcg: allocation {self.number} of {self.run.path} ({where} on {alloc['node']}), "
                 f"{len(done)} of {len(self.tasks)} chunks done before it")
        return stop[0]

    def _continue(self) -> None:
        """Submit the continuation (``afterany`` this job) at once, so a driver killed outright is followed."""
        job = self.kind.continuation(self.run, self.info, self.job_id, self.number, self.say)
        if job is None:
            return

        def record(history: History) -> None:
            if not history.cancel:
                history.next = job

        if update(self.run, record).cancel:  # epcg cancel came after the decision: it could not see this job
            self.kind.cancel_job(job, drain=False)
            self.say(f"epcg: continuation job {job} cancelled: cancelled by epcg cancel")
            return
        self.say(f"epcg: continuation: job {job} submitted, starts after job {self.job_id} ends "
                 f"(requeue {self.number} of {self.kind.max_requeues(self.info)})")

    def _compute(self) -> tuple[str, int]:
        """Run the unfinished chunks; why the allocation ended and the exit status."""
        try:
            self.computing = True
            if self.caught or load(self.run).cancel:  # a signal or a cancel before computing: do not start
                self._obey(self.caught.get("signal", signal.SIGUSR1))
            with self.cluster() as scheduler_file:
                self.run_chunks(scheduler_file)
            return "finished", 0
        except Drain:
            return self._drained(), 0
        except SystemExit as exc:
            if "signal" in self.caught:
                return self._drained(), 0
            return f"stopped by a signal (exit status {exc.code}): the time limit or scancel", int(exc.code or 1)
        except (UserError, TaskFailed) as exc:
            why = f"failed: {one_line(exc)}"
            self.computing = False
            self._end(why)
            self._cancel_next(why)
            raise
        finally:
            self.computing = False

    def _drained(self) -> str:
        """The allocation's end after the drain, and what happened to the chunks in flight."""
        drain: Drain = self.caught["drain"]
        name = signal.Signals(self.caught["signal"]).name
        if load(self.run).cancel:
            why = "cancelled by epcg cancel"
        elif self.caught["signal"] == signal.SIGALRM:
            why = "signal_lead before the time limit (the driver's timer)"
        else:
            why = f"{name} before the time limit"
        if drain.in_flight is not None:
            why += (f"; {drain.in_flight} chunks were in flight, {drain.in_flight - (drain.unfinished or 0)} "
                    f"finished in {drain.waited:.0f} s, {drain.unfinished or 0} left for the next allocation")
        self.say(f"epcg: {name} at {time.strftime('%H:%M:%S', time.localtime(self.caught['at']))}: {why}")
        return why

    def ending(self, run: RunDir, records: dict[str, dict[str, Any]]) -> list[dict[str, Any]] | None:
        """The allocations for the results of the run this allocation finishes: the history with this one
        ended now, "finished" (the end :meth:`_end` then records)."""
        self.finished_at = round(time.time(), 3)
        past = load(run)
        self._ended(past, "finished", self.finished_at)
        return for_results(run, records, past)

    def _ended(self, history: History, why: str, at: float) -> None:
        mine = history.find(os.getpid(), self.began)
        mine.update({"ended_at": at, "why": why})
        if "signal" in self.caught:
            mine["signal_at"] = round(self.caught["at"], 3)

    def _end(self, why: str) -> None:
        """Record how this allocation ended; if it computed nothing or the run is done, cancel the continuation."""
        records = self.run.records.done(self.tasks)
        at = self.finished_at if why == "finished" and self.finished_at is not None else round(time.time(), 3)

        def record(history: History) -> None:
            self._ended(history, why, at)

        history = update(self.run, record)
        settle(history, records)
        stop = "the run is finished" if why == "finished" else decide(history, None, len(self.tasks) - len(records))
        if stop:
            self._cancel_next(stop)
        done = history.find(os.getpid(), self.began)["chunks"]
        self.say(f"epcg: allocation ended: {why}; {done} chunks done in it")

    def _cancel_next(self, why: str) -> None:
        if not load(self.run).next:
            return
        taken: list[str | None] = [None]

        def clear(history: History) -> None:
            taken[0], history.next = history.next, None

        update(self.run, clear)
        if taken[0]:
            self.kind.cancel_job(taken[0], drain=False)
            self.say(f"epcg: continuation job {taken[0]} cancelled: {why}")

    # -- signals ---------------------------------------------------------------------

    @contextlib.contextmanager
    def _signals(self) -> Iterator[None]:
        """SIGUSR1 (the batch system's early signal, ``epcg cancel``) and the driver's own timer at
        ``walltime - signal_lead`` drain the allocation; the previous handlers come back at the end."""
        with handled({signal.SIGUSR1: self._on_signal, signal.SIGALRM: self._on_signal}):
            if self.drain_at is not None:
                signal.alarm(max(1, round(self.drain_at - time.time())))
            try:
                yield
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)

    def _on_signal(self, signum: int, _frame: Any) -> None:
        if "signal" in self.caught:
            if signum == signal.SIGUSR1:
                _note(f"SIGUSR1 at {time.strftime('%H:%M:%S')}: already stopping")
            return
        if not self.computing:
            # the main thread may be anywhere (halfway through importing a module): only note the signal, with
            # no reading or importing here; _compute decides before it starts (a cancel it reads from the run)
            if signum == signal.SIGUSR1 and self._early(time.time()):
                return
            self.caught.update(signal=signum, at=time.time())
            return
        now = time.time()
        cancelled = load(self.run).cancel
        if not cancelled and len(self.run.records.done(self.tasks)) == len(self.tasks):
            _note(f"{signal.Signals(signum).name} at {time.strftime('%H:%M:%S')}: every chunk is done, "
                  "finishing the results")
            return
        if signum == signal.SIGUSR1 and not cancelled and self._early(now):
            return
        self._obey(signum)

    def _early(self, now: float) -> bool:
        """Whether a SIGUSR1 came before ``walltime - signal_lead`` (the batch system checks time limits every so
        often and signals up to a minute early): then it is noted, and the driver's timer stops the allocation."""
        if self.drain_at is None or self.end is None or now >= self.drain_at - EARLY:
            return False
        _note(f"SIGUSR1 at {time.strftime('%H:%M:%S')}, {self.end - now:.0f} s before the time limit: stopping at "
              f"{time.strftime('%H:%M:%S', time.localtime(self.drain_at))} (walltime - signal_lead)")
        return True

    def _obey(self, signum: int) -> None:
        self.caught.update(signal=signum, at=self.caught.get("at", time.time()), drain=Drain(signum, self.grace))
        raise self.caught["drain"]


def _note(line: str) -> None:
    """A line to standard error from a signal handler (print is not reentrant)."""
    os.write(2, f"epcg: {line}\n".encode())


# -- epcg cancel -----------------------------------------------------------------------


def cancel(run: RunDir, info: batch.Submitted) -> tuple[History, list[str], list[str]]:
    """Ask a submitted run to stop: ``cancel`` set (no allocation computes after this), the waiting
    continuation cancelled, each running allocation told to drain. Returns the history as stored, what was
    stopped and what was not signalled (a driver gone, or on another host), as phrases."""
    waiting: list[str | None] = [None]

    def ask(history: History) -> None:
        waiting[0], history.cancel, history.next = history.next, True, None

    history = update(run, ask)
    stopped, left = batch.kind_of(info).stop(run, history, waiting[0])
    return history, stopped, left


def still_running(history: History, pids: set[int]) -> bool:
    """True while one of these allocations has not recorded its end and its driver may live: proven alive on
    this host, or on another host (which only its own end record tells)."""
    return any(alloc.get("pid") in pids and not alloc.get("ended_at") and processes.state(alloc) != "gone"
               for alloc in history.allocations)
