"""Progress callbacks: they observe a run, they never change it (cubed style)."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from epcg.runtime.errors import UserError
from epcg.runtime.estimate import duration
from epcg.runtime.plan import Plan, Stage, Task
from epcg.runtime.readout import time_left
from epcg.runtime.text import shown


def bar_class() -> Any:
    """tqdm's notebook bar where it can draw (Jupyter with ipywidgets), else its text bar: ``tqdm.auto`` alone
    warns "IProgress not found" in a notebook without ipywidgets, on every run."""
    try:
        import ipywidgets  # noqa: F401 - the notebook bar's widgets
    except ImportError:
        from tqdm.std import tqdm as text_bar

        return text_bar
    from tqdm.auto import tqdm as auto_bar

    return auto_bar


tqdm = bar_class()


@dataclass(frozen=True)
class TaskEndEvent:
    """A task finished and its manifest record exists."""

    task: Task
    """The task that finished."""
    record: dict[str, Any]
    """Its manifest record (small, JSON)."""


@dataclass(frozen=True)
class WorkersLost:
    """The scheduler lost workers of one host (a node died or left the network)."""

    host: str
    """The host, as in the workers' addresses."""
    workers: int
    """How many of its workers were lost."""
    chunks: int
    """How many of this run's chunks they were running: the scheduler runs them again elsewhere."""

    def line(self) -> str:
        """The progress line.

        >>> WorkersLost("198.18.0.3", 2, 3).line()
        'host 198.18.0.3: 2 workers lost, 3 chunks rescheduled'
        """
        return (f"host {self.host}: {self.workers} worker{'s' * (self.workers != 1)} lost, "
                f"{self.chunks} chunk{'s' * (self.chunks != 1)} rescheduled")


def note(line: str, file: IO[str] | None = None) -> None:
    """One timestamped line in the progress output (above a progress bar, if one is drawn)."""
    tqdm.write(time.strftime("%H:%M:%S ") + shown(line), file=file if file is not None else sys.stderr)


class Callback:
    """No-op hooks; subclass and override what you need."""

    def on_run_start(self, plan: Plan, pending: int) -> None:
        """The run starts with ``pending`` of ``plan.num_tasks`` tasks left to do."""

    def on_task_end(self, event: TaskEndEvent) -> None:
        """One task is done."""

    def on_stage_end(self, stage: Stage) -> None:
        """Every task of ``stage`` is done."""

    def on_run_end(self) -> None:
        """Every task is done (also called when the run stops on an error)."""


class Session:
    """What the terminal knows of the session under way: the chunks done per stage and this session's records,
    for :func:`epcg.runtime.readout.time_left` (the figure every view shows)."""

    def __init__(self, plan: Plan, done: Iterable[str]) -> None:
        done = set(done)
        self.plan = plan
        self.stage_done = {stage.name: sum(t.id in done for t in stage.tasks) for stage in plan.stages}
        self.records: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def seen(self, event: TaskEndEvent) -> None:
        with self.lock:
            self.stage_done[event.task.stage] = self.stage_done.get(event.task.stage, 0) + 1
            self.records.append({**event.record, "stage": event.task.stage})

    def seconds_left(self) -> float | None:
        with self.lock:
            stage_done, records = dict(self.stage_done), list(self.records)
        return time_left(self.plan, stage_done, records, time.time())


class TqdmProgress(Callback):
    """One progress bar of finished chunks over the whole run, with the stage under way and the time left."""

    def __init__(self, done: Iterable[str] = (), **tqdm_kwargs: Any) -> None:
        self.done = frozenset(done)
        """Ids of the tasks finished before this session (a resumed run's)."""
        self.kwargs = tqdm_kwargs
        self.bar: Any = None  # a tqdm bar (tqdm has no type hints)
        self.session: Session | None = None

    def on_run_start(self, plan: Plan, pending: int) -> None:
        self.session = Session(plan, self.done)
        self.bar = tqdm(total=plan.num_tasks, initial=plan.num_tasks - pending, unit="chunk",
                        bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]", **self.kwargs)

    def on_task_end(self, event: TaskEndEvent) -> None:
        if self.bar is not None and self.session is not None:
            self.session.seen(event)
            left = self.session.seconds_left()
            self.bar.set_postfix_str(shown(event.task.stage) + (f", about {duration(left)} left" if left else ""),
                                     refresh=False)
            self.bar.update(1)

    def on_run_end(self) -> None:
        if self.bar is not None:
            self.bar.close()


INTERVAL = 60.0
"""Seconds between the status lines of :class:`PlainProgress` (``EPCG_PROGRESS_INTERVAL`` overrides it)."""


class PlainProgress(Callback):
    """One plain status line at a fixed interval and a summary at the end: progress for a log file.

    A batch job's log (SLURM's ``--output``, ``epcg run … > log``) is a file,
    where a progress bar's redraws become thousands of carriage returns. Each
    line says the stage under way (the first unfinished one in plan order), its
    chunks done of its total, the run's, the rate over this session and the
    time left (:func:`epcg.runtime.readout.time_left`).
    """

    def __init__(self, file: IO[str] | None = None, interval: float = INTERVAL, done: Iterable[str] = ()) -> None:
        self.file = file if file is not None else sys.stderr
        self.interval = interval
        self.done = frozenset(done)
        """Ids of the tasks finished before this session (a resumed run's)."""
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.thread: threading.Thread | None = None
        self.plan: Plan | None = None
        self.session: Session | None = None

    def on_run_start(self, plan: Plan, pending: int) -> None:
        self.plan, self.began, self.finished = plan, time.monotonic(), 0
        self.total, self.already = plan.num_tasks, plan.num_tasks - pending
        self.session = Session(plan, self.done)
        self.stopped.clear()
        self.thread = threading.Thread(target=self._tick, name="epcg-progress", daemon=True)
        self.thread.start()

    def on_task_end(self, event: TaskEndEvent) -> None:
        with self.lock:
            self.finished += 1
        if self.session is not None:
            self.session.seen(event)

    def on_run_end(self) -> None:
        if self.plan is None:
            return
        self.stopped.set()
        if self.thread is not None:
            self.thread.join()
        done = self.already + self.finished
        what = "finished" if done == self.total else "stopped with"
        self._write(f"progress: {what} {done:,} of {self.total:,} chunks")
        self.plan = None

    def status(self) -> str:
        """The status line as it would be printed now."""
        with self.lock:
            plan, finished = self.plan, self.finished
        assert plan is not None and self.session is not None
        stage_done = dict(self.session.stage_done)
        done = self.already + finished
        seconds = time.monotonic() - self.began
        current = next((s for s in plan.stages if stage_done.get(s.name, 0) < len(s.tasks)), plan.stages[-1])
        label = f" ({current.label})" if current.label else ""
        rate = finished / seconds if seconds > 0 else 0.0
        seconds_left = self.session.seconds_left()
        left = f", about {duration(seconds_left)} left" if seconds_left is not None else ""
        return (f"progress: {done:,} of {self.total:,} chunks ({100 * done / max(self.total, 1):.0f} %); stage "
                f"{current.name}{label} {min(stage_done.get(current.name, 0), len(current.tasks)):,} of "
                f"{len(current.tasks):,}; {rate:.1f} chunks/s{left}")

    def _tick(self) -> None:
        while not self.stopped.wait(self.interval):
            self._write(self.status())

    def _write(self, line: str) -> None:
        print(time.strftime("%H:%M:%S ") + shown(line), file=self.file, flush=True)


def interval() -> float:
    """Seconds between plain status lines: ``EPCG_PROGRESS_INTERVAL``, else :data:`INTERVAL`."""
    given = os.environ.get("EPCG_PROGRESS_INTERVAL", str(INTERVAL))
    try:
        seconds = float(given)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise UserError(f"EPCG_PROGRESS_INTERVAL={given!r} is not a number of seconds above 0")
    return seconds


def for_output(file: IO[str], done: Iterable[str] = ()) -> Callback:
    """The progress a reader of ``file`` wants: the bar on a terminal, else :class:`PlainProgress` lines
    (``done``: the ids of tasks finished before)."""
    if file.isatty():
        return TqdmProgress(done, file=file, dynamic_ncols=True)
    return PlainProgress(file, interval(), done)


@contextlib.contextmanager
def counting(say: Callable[[str], None], what: str, total: int, every: float | None
             ) -> Iterator[Callable[[int], None]]:
    """A counter of ``total`` units for the block to call as units end; every ``every`` seconds (None: never)
    ``say`` is told "<time> <what>: N of TOTAL (P %)": progress of a step that is not a run's chunks, such as
    verifying them before a resume. A block that outlasts one interval says it at least once."""
    done = lines = 0
    lock = threading.Lock()
    stopped = threading.Event()
    began = time.monotonic()

    def count(units: int) -> None:
        nonlocal done
        with lock:
            done += units

    def report() -> None:
        nonlocal lines
        with lock:
            now = done
            lines += 1
        say(f"{time.strftime('%H:%M:%S')} {what}: {now:,} of {total:,} ({100 * now / max(total, 1):.0f} %)")

    def tick() -> None:
        while not stopped.wait(every):
            report()

    thread = threading.Thread(target=tick, name="epcg-counting", daemon=True) if every else None
    if thread is not None:
        thread.start()
    try:
        yield count
    finally:
        stopped.set()
        if thread is not None:
            thread.join()
            if not lines and time.monotonic() - began >= (every or 0):
                report()  # the ticker may not have woken yet (a busy machine)
