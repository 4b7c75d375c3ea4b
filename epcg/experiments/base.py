"""What every experiment module provides, and the job fields they all share."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import pydantic

from epcg.runtime.plan import Plan, Task
from epcg.runtime.store import RunDir


class JobConfig(pydantic.BaseModel):
    """Keys every job file has. Domain configs extend this; unknown keys are errors."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    name: str = pydantic.Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    """The job's name; the default run directory is ``runs/<name>``."""
    domain: str
    description: str = ""


class Experiment(Protocol):
    """The module-level interface of ``epcg.experiments.<domain>``."""

    Config: type[JobConfig]

    def plan(self, config: Any) -> Plan:
        """Stages and tasks of the job, built before anything runs."""

    # Optional: ``prepare(config, run)`` creates arrays every task writes into
    # (called once by the client before any task runs; must be idempotent).

    def warm_up(self, config: Any) -> None:
        """Compile the kernels the job uses (run once per worker before timing)."""

    def run_task(self, config: Any, task: Task, run: RunDir) -> dict[str, Any]:
        """Compute one task, store its large data in ``run``, return a small summary."""

    def reduce(self, config: Any, plan: Plan, records: dict[str, dict], run: RunDir) -> dict:
        """Combine every task's record (and stored data) into the results.json object."""

    def report(self, config: Any, results: dict, run: RunDir) -> tuple[str, list[Path]]:
        """The summary.md text and the figures written for ``results``."""


def stage_records(plan: Plan, stage: str, records: dict[str, dict]) -> list[dict[str, Any]]:
    """The records of one stage's tasks, in task order."""
    return [records[task.id] for task in plan.by_name[stage].tasks]
