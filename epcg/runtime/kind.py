"""What a job kind is: a base class whose optional hooks do nothing, and the adapter for a kind written as a module.

The runtime calls every hook on every kind; a kind overrides the ones it needs (as xarray's
``BackendEntrypoint``), so nothing in the runtime asks whether a kind has a hook. A kind
registered under ``epcg.jobs`` may be a :class:`JobKind` subclass (or an instance of one), or a
module with the same names at module level (``epcg.kinds.scan``): :func:`as_job_kind` wraps such
a module in :class:`ModuleKind`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import pydantic

from epcg.runtime import schemas
from epcg.runtime.errors import UserError
from epcg.runtime.plan import Plan, Task

REQUIRED = ("Config", "plan", "run_task", "reduce", "report")
"""What a job kind must define: its schema, its plan, a task, the reduction and the report."""
HOOKS = ("warm_up", "prepare", "cleanup", "notes", "estimate", "estimate_basis", "plan_notes", "check_slice")
"""The optional methods, each a no-op on :class:`JobKind` (but ``check_slice``, which says there is none)."""
SETTINGS = ("COARSEN", "SPLIT_FOR_MEMORY", "Results")
"""The optional lists of job keys the runtime may set (empty on :class:`JobKind`), and the schema of results.json
(:class:`epcg.runtime.schemas.Results` on :class:`JobKind`)."""


class JobKind:
    """A job kind: ``Config``, ``plan``, ``run_task``, ``reduce`` and ``report`` are its own; the rest are
    optional hooks that do nothing here."""

    Config: ClassVar[type[pydantic.BaseModel]]
    """The job file's schema (extra keys forbidden); its ``name`` names the run."""
    COARSEN: ClassVar[tuple[str, ...]] = ()
    """Keys the runtime may scale up (chunk sizes) so tasks are not too small; results do not change."""
    SPLIT_FOR_MEMORY: ClassVar[tuple[str, ...]] = ()
    """Keys the runtime sets, when a job leaves them unset, so every stage fits the workers' memory."""

    Results: ClassVar[type[pydantic.BaseModel]] = schemas.Results
    """The shape of its results.json, checked whenever a run's results are read back (a subclass of
    :class:`epcg.runtime.schemas.Results` naming what the kind's readers use)."""

    name: str = ""
    """The name it is registered under (set by the registry)."""

    def plan(self, config: Any) -> Plan:
        """Stages and tasks of the job, built before anything runs."""
        raise NotImplementedError

    def run_task(self, config: Any, task: Task, run: Any) -> dict[str, Any]:
        """Compute one task, store its large data in ``run``, return a small JSON-able summary."""
        raise NotImplementedError

    def reduce(self, config: Any, plan: Plan, records: dict[str, dict[str, Any]], run: Any) -> dict[str, Any]:
        """Combine every task's record (and stored data) into the results.json object."""
        raise NotImplementedError

    def report(self, config: Any, results: dict[str, Any], run: Any) -> tuple[str, list[Path]]:
        """The summary.md text and the figures written for ``results``."""
        raise NotImplementedError

    def warm_up(self, config: Any) -> None:
        """Compile kernels once per worker process."""

    def prepare(self, config: Any, run: Any) -> None:
        """Create arrays before any task runs (idempotent)."""

    def cleanup(self, config: Any, run: Any) -> None:
        """In the client, when the session's tasks end or stop (shared state named by ``run.cache_key``)."""

    def notes(self, config: Any) -> Sequence[str]:
        """What a valid job asks for that does nothing (printed before it runs)."""
        return ()

    def estimate(self, config: Any) -> dict[str, Any] | None:
        """Per stage name, an :class:`epcg.runtime.estimate.StageCost`; None when the kind does not estimate."""
        return None

    def estimate_basis(self, config: Any) -> str | None:
        """A line saying what :meth:`estimate` timed (printed by ``epcg plan``)."""
        return None

    def plan_notes(self, config: Any) -> Sequence[str]:
        """``epcg plan``'s own lines after the table (what a choice costs)."""
        return ()

    def check_slice(self, config: Any) -> None:
        """Run a first slice of each stage with numba bounds checks (``run --check``); a kind without a checked
        mode says so."""
        raise UserError(f"job kind {self.name!r} has no checked mode (check_slice)")


class ModuleKind(JobKind):
    """A job kind written as a module: its functions stand in for the hooks it defines, the base's for the rest;
    any other name is the module's."""

    def __init__(self, module: ModuleType | Any, name: str = "") -> None:
        self.module = module
        self.name = name
        self.Config = module.Config  # type: ignore[misc]  # a module's kind holds its module's Config
        for attribute in REQUIRED[1:] + HOOKS + SETTINGS:
            if hasattr(module, attribute):
                setattr(self, attribute, getattr(module, attribute))

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.__dict__["module"], attribute)

    def __repr__(self) -> str:
        return f"<job kind {self.name!r} ({getattr(self.module, '__name__', self.module)})>"


def as_job_kind(obj: Any, name: str) -> JobKind:
    """``obj`` (a JobKind subclass, an instance, or a module of the same names) as a :class:`JobKind`."""
    if isinstance(obj, type) and issubclass(obj, JobKind):
        obj = obj()
    if isinstance(obj, JobKind):
        obj.name = obj.name or name
        return obj
    return ModuleKind(obj, name)


def missing(obj: Any) -> list[str]:
    """The required names ``obj`` does not define (a JobKind subclass must override the four methods)."""
    if isinstance(obj, type) and issubclass(obj, JobKind) or isinstance(obj, JobKind):
        cls = obj if isinstance(obj, type) else type(obj)
        return [a for a in REQUIRED if not hasattr(cls, a) or getattr(cls, a) is getattr(JobKind, a, None)]
    return [a for a in REQUIRED if not hasattr(obj, a)]
