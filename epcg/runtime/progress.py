"""Progress callbacks: they observe a run, they never change it (cubed style)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tqdm.auto import tqdm

from epcg.runtime.plan import Plan, Stage, Task


@dataclass(frozen=True)
class TaskEndEvent:
    """A task finished and its manifest record exists."""

    task: Task
    """The task that finished."""
    record: dict[str, Any]
    """Its manifest record (small, JSON)."""


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


class TaskCounter(Callback):
    """Counts the tasks a run actually executed (tests check resume with it)."""

    def __init__(self) -> None:
        self.count = 0
        self.ids: list[str] = []

    def on_task_end(self, event: TaskEndEvent) -> None:
        self.count += 1
        self.ids.append(event.task.id)


class TqdmProgress(Callback):
    """One progress bar of finished chunks over the whole run."""

    def __init__(self, **tqdm_kwargs: Any) -> None:
        self.kwargs = tqdm_kwargs
        self.bar: tqdm | None = None

    def on_run_start(self, plan: Plan, pending: int) -> None:
        done = plan.num_tasks - pending
        self.bar = tqdm(total=plan.num_tasks, initial=done, unit="chunk", **self.kwargs)

    def on_task_end(self, event: TaskEndEvent) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(event.task.stage, refresh=False)
            self.bar.update(1)

    def on_run_end(self) -> None:
        if self.bar is not None:
            self.bar.close()
