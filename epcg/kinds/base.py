"""The job fields every built-in job kind shares, and small helpers for their reductions."""

from __future__ import annotations

from typing import Any

import pydantic

from epcg.runtime.plan import Plan


class JobConfig(pydantic.BaseModel):
    """Keys every job file has. Domain configs extend this; unknown keys are errors."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    name: str = pydantic.Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    """The job's name; the default run directory is ``runs/<name>``."""
    domain: str
    description: str = ""


def stage_records(plan: Plan, stage: str, records: dict[str, dict]) -> list[dict[str, Any]]:
    """The records of one stage's tasks, in task order."""
    return [records[task.id] for task in plan.by_name[stage].tasks]
