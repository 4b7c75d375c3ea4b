"""What a person reads about a run, each figure defined once: its state, chunks done, compute seconds, time
left and length.

The terminal's progress, ``epcg status``, the progress page on the Dask dashboard, ``Run.readout()`` and
results.json all call these functions, so two views of one run at one moment show the same numbers:

- **state**: :func:`state` (running, waiting for its next allocation, finished, damaged, stopped, new);
- **compute seconds**: :func:`compute_seconds`, the CPU seconds of the tasks' threads (not their wall time,
  which also counts waiting for storage and for a core);
- **time left**: :func:`time_left`, from the plan's estimate of each stage's tasks (kept in manifest/plan.json
  when the run was fitted to its workers) and this session's finished chunks;
- **length**: :func:`length`, the run's parts (client sessions) added up, each from its start to its last chunk.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from epcg.runtime.parts import computed_parts, epoch_of
from epcg.runtime.plan import Plan
from epcg.runtime.outputs import REPORT, RESULTS, SUMMARY
from epcg.runtime.store import RunDir

RUNNING, WAITING, FINISHED, DAMAGED, STOPPED, NEW = ("running", "waiting for its next allocation", "finished",
                                                   "damaged", "stopped", "new")

SETTLING = 0.2
"""The share of a session's estimated work over which the time left moves from the plan's estimate to the pace
measured: early chunks say little about the pace (a few of them, started together)."""


def compute_seconds(records: Iterable[Mapping[str, Any]]) -> float:
    """The tasks' compute summed, as reductions and progress report it: each record's CPU seconds on its worker
    thread (its wall seconds in a record written before they were kept). A task's wall time also counts waiting
    for storage, and for a core where a worker runs more threads than cores."""
    seconds: float = sum(r.get("cpu_seconds", r["seconds"]) for r in records)
    return seconds


def time_left(plan: Plan, done_by_stage: Mapping[str, int], session: Iterable[Mapping[str, Any]],
              now: float) -> float | None:
    """Seconds until every chunk of ``plan`` is done.

    ``session`` holds the records (with their ``stage``) finished by the session under way. Where every stage
    with chunks left or done in the session has an estimate (``Stage.task_seconds``), chunks are weighed by it, so
    a run whose next stage has many quick chunks is not told it has days left at the pace of a slow one; else
    they count alike. Before the session's first chunk the answer is the plan's (the weights over ``plan.slots``
    tasks at once; None without them); the pace measured, work done per second since the session's first chunk
    started, takes over along the first :data:`SETTLING` of the session's work.

    >>> from epcg.runtime.plan import Stage, Task
    >>> slow, quick = (Stage(n, tuple(Task(n, i, i, i + 1) for i in range(k)), task_seconds=s)
    ...                for n, k, s in (("slow", 10, 5.0), ("quick", 100, 0.1)))
    >>> plan = Plan((slow, quick), slots=2)
    >>> time_left(plan, {}, [], 0.0)  # the plan: 50 s and 10 s of tasks, 2 at once
    30.0
    >>> half = [{"stage": "slow", "ended_at": 5.0 * i, "seconds": 5.0} for i in range(1, 6)]  # 5 in 25 s
    >>> time_left(plan, {"slow": 5}, half, 25.0)  # slow's 5 chunks left (25 s) and quick's 100 (10 s)
    35.0
    >>> time_left(Plan((Stage("a", slow.tasks), quick)), {"a": 5}, half, 25.0)  # chunks alike: 105 at 0.2/s
    525.0
    """
    records = list(session)
    left = {s.name: max(len(s.tasks) - done_by_stage.get(s.name, 0), 0) for s in plan.stages}
    if not sum(left.values()):
        return 0.0
    involved = {name for name, n in left.items() if n} | {str(r.get("stage")) for r in records}
    estimates = {s.name: s.task_seconds for s in plan.stages if s.name in involved}
    weighed = all(w is not None and w > 0 for w in estimates.values()) and len(estimates) == len(involved)

    def weight(name: str) -> float:
        return float(estimates[name] or 0.0) if weighed else 1.0

    work_left = sum(n * weight(name) for name, n in left.items() if n)
    planned = work_left / plan.slots if weighed and plan.slots else None
    if not records:
        return planned
    began = min(float(r["ended_at"]) - float(r["seconds"]) for r in records)
    done_work = sum(weight(str(r.get("stage"))) for r in records)
    if now <= began or done_work <= 0:
        return planned
    measured = work_left / (done_work / (now - began))
    if planned is None:
        return measured
    trust = min(1.0, done_work / (SETTLING * (done_work + work_left)))
    return trust * measured + (1 - trust) * planned


def length(records: Iterable[Mapping[str, Any]], starts: Mapping[int, float], current: int | None,
           now: float) -> float:
    """The run's length in seconds: its parts added up (see :mod:`epcg.runtime.parts`); ``current`` is the epoch
    of a session under way at ``now`` (None: none is)."""
    return round(sum(part["seconds"] for part in computed_parts(records, starts, current, now)), 3)


def outputs_written(run: RunDir) -> bool:
    """The run's results, summary and report.html are written: what a finished run has (``finish`` writes them
    in that order, so a run whose last output failed, a full disk for one, is stopped until ``epcg report``)."""
    return run.has(RESULTS) and run.has(SUMMARY) and run.has(REPORT)


def state(locked: bool, done: int, total: int, finished_outputs: bool, waiting: bool, damaged: bool = False) -> str:
    """A run's state, from whether a client holds its lock, its chunks done of ``total``, whether its results
    are written (and ``damaged``: not readable as its kind's results), and whether a batch submission waits for
    its next allocation."""
    if locked:
        return RUNNING
    if done == total and finished_outputs:
        return DAMAGED if damaged else FINISHED
    if waiting:
        return WAITING
    return STOPPED if done else NEW


@dataclass(frozen=True)
class StageReadout:
    """One stage as a person reads it."""

    name: str
    label: str
    done: int
    total: int
    items_done: int
    """Items (puzzles, boards) in its finished chunks."""
    items_total: int
    compute_seconds: float
    """CPU seconds of its finished chunks (:func:`compute_seconds`)."""


@dataclass(frozen=True)
class Readout:
    """A run at one moment: every figure a view shows, computed once."""

    state: str
    done: int
    total: int
    compute_seconds: float
    """CPU seconds of every finished chunk's task."""
    length_seconds: float
    """The run's length so far (:func:`length`)."""
    seconds_left: float | None
    """Time left while the run computes (:func:`time_left`); None when it does not, or cannot be told yet."""
    stages: tuple[StageReadout, ...]
    at: float
    """When (epoch seconds) the figures were taken."""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data."""
        data = asdict(self)
        data["stages"] = [asdict(s) for s in self.stages]
        return data


def read(plan: Plan, done: Mapping[str, Mapping[str, Any]], starts: Mapping[int, float], locked: bool,
         finished_outputs: bool, waiting: bool, damaged: bool = False, now: float | None = None) -> Readout:
    """The readout of a run whose ``plan`` (with its plan.json figures) has finished chunks ``done`` (records by
    task id), epochs begun at ``starts``, lock held or not."""
    now = time.time() if now is None else now
    by_stage: dict[str, list[Mapping[str, Any]]] = {s.name: [] for s in plan.stages}
    stage_of = {t.id: t.stage for t in plan.tasks()}
    for task_id, record in done.items():
        if task_id in stage_of:
            by_stage[stage_of[task_id]].append(record)
    current = max(starts, default=None) if locked else None
    session = [{**r, "stage": stage_of[i]} for i, r in done.items()
               if current is not None and i in stage_of and epoch_of(r.get("fence")) == current]
    stages = []
    for stage in plan.stages:
        span = sum(t.size for t in stage.tasks) or 1
        per = (stage.size or span) / span
        finished_ids = {t.id for t in stage.tasks if t.id in done}
        items = sum(t.size for t in stage.tasks if t.id in finished_ids) * per
        stages.append(StageReadout(stage.name, stage.label or stage.name, len(finished_ids), len(stage.tasks),
                                   round(items), stage.size or span,
                                   round(compute_seconds(by_stage[stage.name]), 3)))
    total = plan.num_tasks
    run_state = state(locked, len(done), total, finished_outputs, waiting, damaged)
    left = time_left(plan, {s.name: s.done for s in stages}, session, now) if run_state == RUNNING else None
    return Readout(run_state, len(done), total, round(sum(s.compute_seconds for s in stages), 3),
                   length(done.values(), starts, current, now), None if left is None else round(left, 1),
                   tuple(stages), round(now, 3))
