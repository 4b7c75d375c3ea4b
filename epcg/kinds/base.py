"""The job fields every job kind shares, the spaces a job names by import path, and helpers for reductions."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import pydantic

from epcg.runtime.errors import one_line
from epcg.runtime.plan import Plan
from epcg.runtime.registry import load_object, require_import


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


def named_space(path: str, params_json: str, space_type: type, error: type[Exception]) -> Any:
    """The ``space_type`` a job row asks for, built once per process: the object at ``path`` itself, or a family
    function of the row's parameters (``params_json``) called with them; ``error`` naming what does not fit.
    Untrusted while reading a run, built before or not."""
    require_import(path)
    return _built_space(path, params_json, space_type, error)  # type: ignore[arg-type] # a class is hashable


@lru_cache(maxsize=64)
def _built_space(path: str, params_json: str, space_type: type, error: type[Exception]) -> Any:
    params = json.loads(params_json)
    kind = space_type.__name__
    obj = load_object(path)
    if isinstance(obj, space_type):
        if params:
            raise error(f"space {path!r} is a {kind}, not a function: its rows take no parameters, got {params}")
        return obj
    if not callable(obj):
        raise error(f"space {path!r} is a {type(obj).__name__}, not an epcg.search.{kind}")
    try:
        space = obj(**params)
    except Exception as exc:  # noqa: BLE001 - the user's function, reported in one line
        raise error(f"space {path!r} with {params}: {one_line(exc, named=True)}") from None
    if not isinstance(space, space_type):
        raise error(f"space {path!r} with {params} returned a {type(space).__name__}, not an epcg.search.{kind}")
    return space
