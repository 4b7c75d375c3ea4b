"""A job planned for the workers it will run on, in one place: what ``epcg plan`` prints, what the engine checks
and executes, and what a plan too long for them would need instead.

:func:`fitted` is the one way a plan meets its workers (``epcg plan``, ``epcg run``, ``epcg.run()``, ``epcg
submit`` and each allocation): memory parts chosen for the memory per worker, the figures of every stage, the
limits they are checked against, and each stage's seconds per task kept on the plan for the time left.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from epcg.runtime.errors import UserError
from epcg.runtime.estimate import TASK_OVERHEAD, Limits, StageFigures, check, duration, figures, size
from epcg.runtime.jobs import Job
from epcg.runtime.plan import Plan
from epcg.runtime.registry import job_kind
from epcg.runtime.tuning import Tuned, fit_memory

DAY = 86400.0
"""A plan longer than this says what would make it shorter."""


@dataclass(frozen=True)
class Placement:
    """The workers a plan is fitted to."""

    workers: int
    memory_per_worker: int | None
    threads: int = 1
    parallel: int | None = None
    """Tasks computing at once (default: every thread of every worker)."""

    @property
    def slots(self) -> int:
        return self.parallel or self.workers * self.threads


@dataclass(frozen=True)
class RunPlan:
    """A job's plan fitted to its workers: stages and tasks, every stage's figures, the limits they were checked
    against, the notes for the user and, where the run would refuse it, why."""

    job: Job
    plan: Plan
    notes: tuple[str, ...]
    figures: tuple[StageFigures, ...]
    limits: Limits
    placement: Placement
    refusal: str | None
    """The one line ``epcg run`` would refuse it with (None: it accepts)."""

    @property
    def wall_seconds(self) -> float | None:
        """Estimated seconds of work on the workers, stage after stage (None where a stage has no estimate)."""
        walls = [f.wall_seconds for f in self.figures]
        return sum(w for w in walls if w is not None) if walls and None not in walls else None


def fitted(job: Job, plan: Plan, notes: Sequence[str], placement: Placement, free_disk: int | None,
           max_tasks: int, new: bool = True, done: frozenset[str] = frozenset(), force: bool = False) -> RunPlan:
    """``job``'s ``plan`` fitted to ``placement``: a new run's memory parts chosen for its memory per worker, the
    figures of every stage (those of ``done`` tasks left out), checked against the limits."""
    if new:
        tuned = fit_memory(Tuned(job, plan, tuple(notes)), placement.memory_per_worker, placement.workers)
        job, plan, notes = tuned.job, tuned.plan, tuned.notes
    limits = Limits(workers=placement.workers, memory_per_worker=placement.memory_per_worker, free_disk=free_disk,
                    max_tasks=max(max_tasks, plan.num_tasks if not new else 0), threads=placement.threads)
    figs = figures(job_kind(job.domain), job.config, plan, placement.slots, set(done))
    try:
        check(figs, limits, force)
        refusal = None
    except UserError as exc:
        refusal = str(exc)
    seconds = {f.name: None if f.task_seconds is None else f.task_seconds + TASK_OVERHEAD for f in figs}
    plan = Plan(tuple(replace(stage, task_seconds=seconds.get(stage.name)) for stage in plan.stages),
                slots=placement.slots)
    return RunPlan(job, plan, tuple(notes), tuple(figs), limits, placement, refusal)


@dataclass(frozen=True)
class Budget:
    """What one submission may use: allocations of ``walltime`` seconds, ``requeues`` continuations after the
    first (None: a run that is not submitted, bounded by :data:`DAY` alone)."""

    walltime: float | None = None
    requeues: int | None = None

    @property
    def seconds(self) -> float:
        if self.walltime is None or self.requeues is None:
            return DAY
        return self.walltime * (self.requeues + 1)


@dataclass(frozen=True)
class Alternative:
    """Bigger workers that would bring a plan within its budget."""

    workers: int
    memory_per_worker: int | None
    plan: RunPlan


def too_long(run_plan: RunPlan, budget: Budget) -> str | None:
    """Why ``run_plan`` does not fit ``budget`` (a day, or its allocations), or None."""
    wall = run_plan.wall_seconds
    if wall is None:
        return None
    if budget.walltime is not None and budget.requeues is not None and wall > budget.seconds:
        needed = math.ceil(wall / budget.walltime) - 1
        return (f"about {duration(wall)} of work: {budget.requeues + 1} allocations of {duration(budget.walltime)} "
                f"(--max-requeues {budget.requeues}) cannot finish it; it needs --max-requeues {needed} or more")
    if wall > DAY:
        return f"about {duration(wall)} of work, more than a day"
    return None


def alternative(run_plan: RunPlan, budget: Budget, refit: Callable[[int, int | None], RunPlan],
                most_workers: int = 1024, most_memory: int = 2 ** 40) -> Alternative | None:
    """The smallest change of workers that brings ``run_plan`` within ``budget``: memory per worker doubled
    first (a job split into memory parts does each part's work again), then workers doubled, then both;
    ``refit(workers, memory)`` plans the same job for them. None when nothing up to ``most_workers`` workers of
    ``most_memory`` each would."""
    placement = run_plan.placement
    memory = placement.memory_per_worker
    tried = []
    for memory_steps in range(0, 8):
        grown = None if memory is None else memory * 2 ** memory_steps
        if grown is not None and grown > most_memory:
            break
        for worker_steps in range(0, 11):
            workers = placement.workers * 2 ** worker_steps
            if workers > most_workers or (memory_steps, worker_steps) == (0, 0):
                continue
            tried.append((memory_steps + worker_steps, memory_steps, workers, grown))
    for _, _, workers, grown in sorted(tried):
        candidate = refit(workers, grown)
        if candidate.refusal is None and too_long(candidate, budget) is None:
            return Alternative(workers, grown, candidate)
    return None


def advice(run_plan: RunPlan, budget: Budget, refit: Callable[[int, int | None], RunPlan],
           describe: Callable[[int, int | None], str]) -> list[str]:
    """Lines saying that ``run_plan`` does not fit ``budget`` and what would, with that alternative's figures;
    none when it fits. ``describe(workers, memory)`` names workers as the user would ask for them."""
    why = too_long(run_plan, budget)
    if why is None:
        return []
    lines = [f"too long: {why}"]
    found = alternative(run_plan, budget, refit)
    if found is None:
        lines.append("no cluster of up to 1,024 workers of up to 1 TiB each would finish it within that: "
                     "a smaller job (fewer pieces, a sample)")
        return lines
    other = found.plan
    data = other.job.to_dict()
    split = [f"{key}={data[key]}" for key in job_kind(other.job.domain).SPLIT_FOR_MEMORY
             if data.get(key) not in (None, 1)]
    lines.append(f"would fit: {describe(found.workers, found.memory_per_worker)}: about "
                 f"{duration(other.wall_seconds)} of work, {size(max_peak(other))} per worker at most"
                 + (f", with {', '.join(split)}" if split else ""))
    if budget.walltime is not None and other.wall_seconds is not None:
        lines.append(f"  with allocations of {duration(budget.walltime)}: "
                     f"{math.ceil(other.wall_seconds / budget.walltime)} of them "
                     f"(--max-requeues {max(math.ceil(other.wall_seconds / budget.walltime) - 1, 0)})")
    return lines


def max_peak(run_plan: RunPlan) -> int | None:
    """The largest memory a stage's task needs on a worker (None: no stage estimates it)."""
    peaks = [f.peak_memory for f in run_plan.figures if f.peak_memory is not None]
    return max(peaks) if peaks else None
