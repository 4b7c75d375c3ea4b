"""One job's plan for one run, from tuning to the workers it runs on: what ``epcg plan`` prints, what the engine
checks and executes, what ``epcg status`` reads back, and what a plan too long for its workers would need instead.

A :class:`RunPlan` is made by :func:`~epcg.runtime.tuning.plan_job` (chunk keys tuned, nothing fitted yet) and
fitted by :func:`~epcg.runtime.tuning.fitted` (``epcg plan``, ``epcg run``, ``epcg.run()``, ``epcg submit`` and
each allocation): memory parts chosen for the memory per worker, the figures of every stage, the limits they are
checked against, and each stage's seconds per task kept on the plan for the time left.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from epcg.runtime.estimate import Limits, StageFigures, duration, size
from epcg.runtime.jobs import Job
from epcg.runtime.plan import Plan
from epcg.runtime.registry import job_kind

if TYPE_CHECKING:
    from epcg.runtime.store import RunDir

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
    """A job planned for one run directory: the tuned job, its stages and tasks and the notes for the user; once
    fitted to its workers, also every stage's figures, the limits they were checked against and, where the run
    would refuse it, why. Nothing is written while a run is planned."""

    run: RunDir
    """Where it runs (it may not exist yet)."""
    job: Job
    plan: Plan
    notes: tuple[str, ...] = ()
    """What tuning and fitting changed and why (chunks coarsened, memory parts), to print before the run."""
    placement: Placement | None = None
    """The workers it is fitted to (None: not fitted yet)."""
    figures: tuple[StageFigures, ...] = ()
    limits: Limits | None = None
    refusal: str | None = None
    """The one line ``epcg run`` would refuse it with (None: it accepts, or it is not fitted yet)."""

    @property
    def wall_seconds(self) -> float | None:
        """Estimated seconds of work on the workers, stage after stage (None where a stage has no estimate, or
        the plan is not fitted yet)."""
        walls = [f.wall_seconds for f in self.figures]
        return sum(w for w in walls if w is not None) if walls and None not in walls else None


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
    ``most_memory`` each would, or the plan is not fitted to any workers."""
    placement = run_plan.placement
    if placement is None:
        return None
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
