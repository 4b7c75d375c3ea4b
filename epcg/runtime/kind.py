"""What a job kind is: a base class declaring every hook the runtime calls, each optional one with a default, and
the one adapter for a kind written as a module.

Every built-in kind subclasses :class:`JobKind` and overrides the hooks it needs (as xarray's
``BackendEntrypoint``); the runtime calls each hook directly and never asks whether a kind has one. A plugin
registered under ``epcg.jobs`` may name a subclass (or an instance of one), or a module defining the same names
at module level: :func:`as_job_kind` wraps such a module in :class:`ModuleKind`, the only place that reads a
module's names.
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
HOOKS = ("warm_up", "prepare", "cleanup", "notes", "estimate", "estimate_basis", "plan_notes", "check_slice",
         "schema_for")
"""The optional methods, each with a default on :class:`JobKind`."""
SETTINGS = ("COARSEN", "SPLIT_FOR_MEMORY", "THREADS_SHARE_READS", "Results")
"""The optional class attributes, each with a default on :class:`JobKind`."""


class JobKind:
    """A job kind: ``Config``, ``plan``, ``run_task``, ``reduce`` and ``report`` are its own; every other hook has
    a default here (most do nothing), so the runtime calls each on every kind."""

    Config: ClassVar[type[pydantic.BaseModel]]
    """The job file's schema (extra keys forbidden); its ``name`` names the run."""
    COARSEN: ClassVar[tuple[str, ...]] = ()
    """Keys the runtime may scale up (chunk sizes) so tasks are not too small; results do not change."""
    SPLIT_FOR_MEMORY: ClassVar[tuple[str, ...]] = ()
    """Keys the runtime sets, when a job leaves them unset, so every stage fits the workers' memory."""
    THREADS_SHARE_READS: ClassVar[bool] = False
    """True when tasks share what they read within a process and their kernels release the GIL: the embedded
    cluster then runs one process with a thread per core (:func:`epcg.runtime.cluster.default_shape`)."""

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

    def schema_for(self, data: Any) -> type[pydantic.BaseModel]:
        """The schema that validates a job's plain ``data`` (``Config``; a kind whose variants have schemas of
        their own picks one by the job's keys): :meth:`validate` uses it, and a refusal lists its keys only."""
        return self.Config

    def validate(self, data: Any) -> Any:
        """``data`` validated by the schema :meth:`schema_for` picks: the config every other hook is given (not a
        hook: a kind with several schemas overrides :meth:`schema_for`)."""
        return self.schema_for(data).model_validate(data)

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

    def __repr__(self) -> str:
        return f"<job kind {self.name!r} ({type(self).__module__}.{type(self).__qualname__})>"


class ModuleKind(JobKind):
    """A plugin's job kind written as a module: its functions and settings stand in for the hooks it defines, the
    base's defaults for the rest. Only the names :data:`REQUIRED`, :data:`HOOKS` and :data:`SETTINGS` list are
    read from the module."""

    def __init__(self, module: ModuleType, name: str = "") -> None:
        self.module = module
        self.name = name
        names = vars(module)
        for attribute in REQUIRED + HOOKS + SETTINGS:
            if attribute in names:
                setattr(self, attribute, names[attribute])

    def __repr__(self) -> str:
        return f"<job kind {self.name!r} ({self.module.__name__})>"


def as_job_kind(obj: Any, name: str) -> JobKind:
    """``obj`` (a JobKind subclass, an instance of one, or a module of the same names) as a :class:`JobKind`; a
    ValueError saying why it is none."""
    absent = missing(obj)
    if absent:
        raise ValueError(f"it has no {', '.join(absent)}")
    if isinstance(obj, ModuleType):
        return ModuleKind(obj, name)
    kind: JobKind = obj() if isinstance(obj, type) else obj
    kind.name = kind.name or name
    return kind


def missing(obj: Any) -> list[str]:
    """The required names ``obj`` does not define itself (a JobKind subclass must set ``Config`` and override the
    four methods); a ValueError if it is neither a JobKind subclass or instance nor a module."""
    if isinstance(obj, ModuleType):
        return [a for a in REQUIRED if a not in vars(obj)]
    cls = obj if isinstance(obj, type) else type(obj)
    if not issubclass(cls, JobKind):
        raise ValueError(f"it is a {'class' if isinstance(obj, type) else type(obj).__name__} not subclassing "
                         "epcg.runtime.kind.JobKind, and not a module")
    own = set(vars(obj)) if isinstance(obj, JobKind) else set()
    for base in cls.__mro__[:cls.__mro__.index(JobKind)]:
        own |= set(vars(base))
    return [a for a in REQUIRED if a not in own]
