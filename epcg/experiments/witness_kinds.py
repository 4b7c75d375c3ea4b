"""The ``witness`` job kind: the scans of :mod:`epcg.experiments.witness` and the triple panels of
:mod:`epcg.experiments.witness_triple`, chosen by the job file's ``kind``.

A job file with ``domain = "witness"`` and ``kind = "triple"`` is a triple-panel
search (paper Algorithm 6); any other ``kind`` (paths, must-cross, regions,
joint) a scan (Algorithm 1). Each module keeps its own schema; this one only
picks the module, from the job's data when validating and from the config's
type afterwards.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pydantic

from epcg.experiments import witness, witness_triple
from epcg.runtime.plan import Plan, Task
from epcg.runtime.store import RunDir


def _schema(data: Any) -> type[pydantic.BaseModel]:
    kind = data.get("kind") if isinstance(data, dict) else None
    return witness_triple.Config if kind == "triple" else witness.Config


def _module(config: pydantic.BaseModel) -> ModuleType:
    return witness_triple if isinstance(config, witness_triple.Config) else witness


class Config:
    """The schema of a Witness job: ``witness_triple.Config`` if ``kind = "triple"``, else ``witness.Config``."""

    model_fields = {**witness.Config.model_fields, **witness_triple.Config.model_fields}
    """Every key either schema allows (for error messages)."""

    @staticmethod
    def model_validate(data: Any) -> pydantic.BaseModel:
        return _schema(data).model_validate(data)


COARSEN = witness.COARSEN
"""Chunk keys the runtime may scale (the scans'; a triple job has none of them)."""


def estimate(config: Any) -> dict:
    return _module(config).estimate(config)


def cleanup(config: Any, run: RunDir) -> None:
    done = getattr(_module(config), "cleanup", None)
    if done is not None:
        done(config, run)


def plan(config: Any) -> Plan:
    return _module(config).plan(config)


def warm_up(config: Any) -> None:
    _module(config).warm_up(config)


def run_task(config: Any, task: Task, run: RunDir) -> dict[str, Any]:
    return _module(config).run_task(config, task, run)


def reduce(config: Any, plan: Plan, records: dict[str, dict], run: RunDir) -> dict[str, Any]:
    return _module(config).reduce(config, plan, records, run)


def report(config: Any, results: dict[str, Any], run: RunDir) -> tuple[str, list[Path]]:
    return _module(config).report(config, results, run)
