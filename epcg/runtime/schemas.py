"""The shape of every JSON file epcg reads back from a run directory, and the one function that reads one.

A run directory is data anybody may have edited, truncated or replaced, so what is read back is checked
against a typed schema before any code uses it: a file of the wrong shape (``{}``, ``null``, ``[]``, a list
where a table is expected, text where a number is) is one line naming the file, exactly as a truncated or
undecodable one is. Each reader decides, as it did for a torn file, whether that line is an error or the file
counts as absent (a torn ``verified.json`` only means "verify again").

Scalars are strict (``"5"`` is not a number, ``true`` is not 1); tables keep keys they do not name, so a file
written by a newer epcg still reads. :func:`loads` returns the parsed value itself once it passed.

>>> loads('{"run_id": "a", "epoch": 1}', Identity, "run.json")["epoch"]
1
>>> try:
...     loads('{"rows": "oops"}', Results, "DIR/results.json")
... except Malformed as exc:
...     print(exc)
DIR/results.json is damaged (rows: Input should be a valid list)
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal, TypeVar

import pydantic
from pydantic import ConfigDict, StrictBool, StrictFloat, StrictInt, StrictStr

from epcg.runtime.errors import UserError, one_line

__all__ = ["Malformed", "Stored", "Identity", "Record", "Results", "Allocation", "History", "Batch",
           "SystemBatch", "DetachedBatch", "Live", "Verified", "Lease", "PlanFile", "loads", "check", "typed"]

Number = Annotated[StrictInt | StrictFloat, pydantic.Field(allow_inf_nan=False)]
"""A finite number (JSON reads NaN and Infinity too)."""
Seconds = Annotated[StrictInt | StrictFloat, pydantic.Field(ge=0, le=1e11, allow_inf_nan=False)]
"""A time in epoch seconds, or a duration: what ``time.localtime`` and arithmetic on times can take."""
Model = TypeVar("Model", bound=pydantic.BaseModel)


class Malformed(UserError):
    """A JSON file read back from a run is truncated, undecodable or of the wrong shape (one line naming it)."""


class Stored(pydantic.BaseModel):
    """A table read back from a run: the keys it names are typed, keys it does not name are kept."""

    model_config = ConfigDict(extra="allow")


class Identity(Stored):
    """run.json: the run's id and its current epoch (the fence), and when each epoch began."""

    run_id: StrictStr
    epoch: Annotated[StrictInt, pydantic.Field(ge=0)]
    started_at: Seconds = 0
    starts: dict[str, Seconds] = {}


Span = tuple[StrictInt, StrictInt, StrictStr]
"""An array range a task wrote and the digest of its bytes: ``[start, stop, digest]``."""


class Record(Stored):
    """A task's manifest record (and the reduction's, manifest/reduce.json), inside its seal."""

    task: StrictStr
    fence: StrictStr | None = None
    data: dict[str, Span] = {}
    seconds: Seconds = 0
    ended_at: Seconds = 0
    cpu_seconds: Seconds | None = None
    start: StrictInt | None = None
    stop: StrictInt | None = None


class Results(Stored):
    """results.json as every kind writes it: one table row per entry of ``rows``, the timing, the allocations
    of a submitted run. A kind whose readers need more names it in its own ``Results`` (a subclass)."""

    rows: list[dict[str, Any]]
    warm_up_seconds: Seconds | None = None
    wall_seconds: Seconds | None = None
    parts: list[dict[str, Any]] | None = None
    allocations: list[dict[str, Any]] | None = None


class Allocation(Stored):
    """One allocation in allocations.json, as its driver and later ones record it."""

    job: StrictStr | None = None
    pid: StrictInt | None = None
    node: StrictStr | None = None
    started_at: Seconds
    ended_at: Seconds | None = None
    why: StrictStr | None = None
    signal_at: Seconds | None = None
    chunks: StrictInt | None = None
    first_chunk_at: Seconds | None = None


class History(Stored):
    """allocations.json: every allocation of a submitted run, the pending continuation, a cancel asked for."""

    allocations: list[Allocation] = []
    next: StrictStr | None = None
    cancel: StrictBool = False
    base: StrictInt = 0


class Connect(Stored):
    """How a detached driver reaches its cluster (batch.json's ``connect``)."""

    cluster_file: StrictStr | None = None
    scheduler: StrictStr | None = None
    workers: StrictInt | None = None
    threads_per_worker: StrictInt | None = None
    scheduler_file: StrictStr | None = None


class SystemBatch(Stored):
    """batch.json of a run submitted to a batch system (SLURM, PBS): its script and limits, and the cluster file
    its allocations start."""

    kind: Literal["slurm", "pbs"]
    script: StrictStr
    walltime_seconds: Seconds
    signal_lead: Seconds
    max_requeues: Annotated[StrictInt, pydantic.Field(ge=0)]
    cluster: dict[str, Any]


class DetachedBatch(Stored):
    """batch.json of a run a detached driver on this machine runs: how it reaches its cluster."""

    kind: Literal["detached"]
    connect: Connect = Connect()


Batch = Annotated[SystemBatch | DetachedBatch, pydantic.Field(discriminator="kind")]
"""batch.json: how a run was submitted, as the record of its batch kind (``epcg.runtime.batch.KINDS``)."""


class Live(Stored):
    """live.json: where a live client's dashboard and scheduler are, and its workers by host."""

    pid: StrictInt | None = None
    host: StrictStr | None = None
    dashboard: StrictStr | None = None
    scheduler: StrictStr | None = None
    hosts: dict[str, StrictInt] = {}
    workers: StrictInt | None = None


Verified = list[StrictStr]
"""manifest/verified.json: the stamps of the chunks the last verification found intact."""


class Lease(Stored):
    """An object store's lock: who holds the run, and until when."""

    owner: StrictStr = "unknown"
    expires: Seconds = 0
    host: StrictStr | None = None
    pid: StrictInt | None = None
    token: StrictStr | None = None


class PlanStage(Stored):
    """A stage of a stored plan; each task ``[index, start, stop, group]``."""

    name: StrictStr
    after: list[StrictStr] = []
    label: StrictStr = ""
    size: StrictInt = 0
    task_seconds: Annotated[Seconds, pydantic.Field(gt=0)] | None = None
    read_bytes: Annotated[StrictInt, pydantic.Field(ge=0)] | None = None
    source_bytes: Annotated[StrictInt, pydantic.Field(ge=0)] = 0
    tasks: list[tuple[StrictInt, StrictInt, StrictInt, StrictInt | None]]


class PlanFile(Stored):
    """manifest/plan.json: the plan as the run's last session made it, fitted to its workers (readers of the
    run count and read its chunks by it without running a space's code, and weigh them for the time left)."""

    stages: list[PlanStage]
    slots: Annotated[StrictInt, pydantic.Field(gt=0)] | None = None


def check(value: Any, schema: Any, where: str, context: dict[str, Any] | None = None) -> Any:
    """``value`` (parsed JSON) if it has the shape of ``schema`` (a model or a type), else Malformed naming
    ``where`` and the first thing wrong. ``context`` reaches the schema's validators (a run's job config, for a
    shape that depends on what the job asked for)."""
    try:
        _adapter(schema).validate_python(value, context=context)
    except pydantic.ValidationError as exc:
        raise Malformed(f"{where} is damaged ({_first(exc)})") from None
    except (RecursionError, OverflowError, MemoryError) as exc:
        raise Malformed(f"{where} is damaged (nested or sized beyond reading: {type(exc).__name__})") from None
    return value


def typed(value: Any, schema: Any) -> Any:
    """``value`` (checked against ``schema`` already: :func:`check`) as ``schema``'s objects, models and all."""
    return _adapter(schema).validate_python(value)


def loads(data: str | bytes | None, schema: Any, where: str, context: dict[str, Any] | None = None) -> Any:
    """The JSON in ``data``, checked against ``schema``; a truncated, undecodable, empty or misshapen file is
    Malformed, one line naming ``where``."""
    try:
        value = json.loads(data if data is not None else "")
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        reason = one_line(exc)[:120] if not isinstance(exc, RecursionError) else "nested too deep"
        raise Malformed(f"{where} is damaged (not JSON: {reason or 'empty'})") from None
    return check(value, schema, where, context)


_ADAPTERS: dict[Any, pydantic.TypeAdapter[Any]] = {}


def _adapter(schema: Any) -> pydantic.TypeAdapter[Any]:
    if schema not in _ADAPTERS:
        _ADAPTERS[schema] = pydantic.TypeAdapter(schema)
    return _ADAPTERS[schema]


def _first(exc: pydantic.ValidationError) -> str:
    """The first error of a validation, as ``key.path: message`` on one line."""
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in error["loc"])
    message = one_line(str(error["msg"])).removeprefix("Value error, ")
    message = re.sub(r" or instance of \w+$", "", message)[:160]
    return f"{where}: {message}" if where else message
