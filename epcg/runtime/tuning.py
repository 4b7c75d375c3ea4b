"""Tuning a job's plan before it runs, without changing its results: chunk keys scaled so tasks are neither
too many nor too small (``COARSEN``, :func:`plan_job`), memory-splitting keys set so every stage fits the workers
(``SPLIT_FOR_MEMORY``, :func:`fitted`). Each change is said in one note; both return a
:class:`~epcg.runtime.runplan.RunPlan`."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from epcg.runtime.errors import UserError
from epcg.runtime.estimate import (
    MAX_TASKS,
    TARGET_TASK_SECONDS,
    TASK_OVERHEAD,
    WORKER_BASE,
    Limits,
    StageFigures,
    check,
    coarsen_factor,
    figures,
    finer_than_target,
    overhead_share,
    share,
    size,
    too_fine,
    usable_memory,
)
from epcg.runtime.jobs import Job, validate
from epcg.runtime.plan import Plan, TooManyTasks
from epcg.runtime.registry import job_kind
from epcg.runtime.runplan import Placement, RunPlan

if TYPE_CHECKING:
    from epcg.runtime.store import RunDir

COARSEN_ROUNDS = 4
"""Times a job over ``--max-tasks`` is coarsened again before it is refused (each round multiplies its keys by
the factor the task count asks for, so one or two rounds suffice unless the schema caps a key)."""
COST_ROUNDS = 6
"""Times chunk keys are scaled again while their stages' tasks are still shorter than the target time (each
round's estimate is of the plan the previous round made)."""


def plan_of(job: Job) -> Plan:
    """The job's plan as it stands (a resumed run's: its job is never tuned again); UserError if it is empty or
    the kind refuses it."""
    try:
        plan = job_kind(job.domain).plan(job.config)
    except ValueError as exc:
        raise UserError(f"job {job.name}: {exc}") from None
    return _nonempty(job, plan)


def plan_of_run(run: RunDir, job: Job) -> Plan:
    """The plan of a run's job: computed, or, for a job naming a user's space while :func:`~epcg.runtime.registry.reading` the run,
    the plan its last session kept (no code of the space runs)."""
    from epcg.runtime.checked import names_space
    from epcg.runtime.registry import may_import
    from epcg.runtime.shell import command

    if may_import() or not names_space(job.to_dict()):
        return plan_of(job)
    plan = run.read_plan()
    if plan is None:
        raise UserError(f"run {run.path} keeps no plan of its space's job (an earlier epcg made it) and reading a "
                        f"run never runs the space's code: {command('resume', run.path)} imports it and keeps the plan")
    return plan


def _nonempty(job: Job, plan: Plan) -> Plan:
    if plan.num_tasks == 0:
        raise UserError(f"job {job.name} has nothing to compute: its plan has no tasks")
    return plan


def plan_job(job: Job, run: RunDir, max_tasks: int = MAX_TASKS) -> RunPlan:
    """The job's plan for a run in ``run``, its chunk keys scaled up where its tasks would be too small (results
    are identical); not yet fitted to any workers (:func:`fitted`).

    A job kind names in ``COARSEN`` the keys it may scale without changing any
    result (chunk sizes). The kind's own notes (``notes(config)``: what the job
    asks for that does nothing) come first. A job of more than ``max_tasks`` tasks is first
    coarsened until it has fewer (a plan of millions of tasks is not even
    built; without keys such a job is refused). Then, where the job kind
    estimates compute, each key whose stages spend more than a small share of
    their time on per-task overhead (:func:`~epcg.runtime.estimate.too_fine`)
    is scaled by a power of two until those stages' tasks are expected to take
    ``TARGET_TASK_SECONDS`` or are one task each (:func:`_fit_cost`). One note
    says what changed and why.
    """
    kind = job_kind(job.domain)
    keys = tuple(key for key in kind.COARSEN if key in type(job.config).model_fields)
    said = tuple(kind.notes(job.config))
    original = job
    job, plan, first = _bounded(job, keys, max_tasks)
    fitted = _fit_cost(job, plan, keys)
    if fitted is None and job is original:
        return RunPlan(run, job, plan, said)
    old, new = original.to_dict(), (fitted or (job,))[0].to_dict()
    changed = [k for k in keys if old[k] != new[k]]
    given, using = (", ".join(f"{k}={d[k]}" for k in changed) for d in (old, new))
    if fitted is None:
        note = (f"{given} would give {first:,} tasks, more than {max_tasks:,}; using {using} "
                f"({plan.num_tasks:,} tasks, identical results; --max-tasks raises the bound)")
        return RunPlan(run, job, plan, (*said, note))
    job, plan, before, after = fitted
    counts = {f.name: f.tasks for f in after}
    moved = [f for f in before if counts.get(f.name) != f.tasks]
    capped = first > sum(f.tasks for f in before)  # the cap coarsened first: the stages' own counts are unknown
    tasks = first if capped else sum(f.tasks for f in moved)
    if capped:
        spent = first * TASK_OVERHEAD
        was = spent / (spent + sum(f.cpu_seconds or 0.0 for f in before))
    else:
        was = overhead_share(moved) or 0.0
    stages = f"{len(moved)} stage{'s' if len(moved) != 1 else ''}"
    cut = f"would give {first:,} tasks" if capped else f"would cut {stages} into {tasks:,} tasks"
    note = (f"{given} {cut}, most far shorter than the {TARGET_TASK_SECONDS:g} s "
            f"a task should take here (scheduling them about {share(was)} of the work); using {using} "
            f"({sum(counts[f.name] for f in moved):,} tasks there, scheduling {share(overhead_share(after))} of "
            "the job, identical results)")
    return RunPlan(run, job, plan, (*said, note))


def _bounded(job: Job, keys: tuple[str, ...], max_tasks: int) -> tuple[Job, Plan, int]:
    """The job (its chunk keys scaled if needed), its plan of at most ``max_tasks`` tasks, and the task count the
    job as given would have had; UserError if no scaling brings it under the bound."""
    kind = job_kind(job.domain)
    original, first = job, None
    for _round in range(COARSEN_ROUNDS):
        try:
            plan = kind.plan(job.config)
            tasks = plan.num_tasks
        except TooManyTasks as exc:
            plan, tasks = None, exc.tasks
        except ValueError as exc:
            raise UserError(f"job {job.name}: {exc}") from None
        first = tasks if first is None else first
        if plan is not None and tasks <= max_tasks:
            return job, _nonempty(job, plan), first
        if not keys:
            break
        coarser = _coarsened(job, keys, coarsen_factor(tasks, max_tasks), max_tasks)
        if coarser is None:
            break
        job = coarser
    raise UserError(
        f"job {original.name} has {first:,} tasks, more than --max-tasks {max_tasks:,}"
        + (f", even with bigger chunks ({', '.join(keys)})" if keys else "")
        + ": make the job smaller or raise --max-tasks"
    )


def _fit_cost(job: Job, plan: Plan, keys: tuple[str, ...]
              ) -> tuple[Job, Plan, list[StageFigures], list[StageFigures]] | None:
    """The job with each chunk key whose stages are too fine together (:func:`~epcg.runtime.estimate.too_fine`)
    scaled until they reach the target task time, with its plan and the figures before and after; None when no
    key's stages are too fine (or none can be coarsened)."""
    kind = job_kind(job.domain)
    if not keys or kind.estimate(job.config) is None:
        return None
    before = figs = figures(kind, job.config, plan, 1)
    cuts = {key: _stages_cut_by(job, plan, key) for key in keys}
    cuts = {key: stages for key, stages in cuts.items() if too_fine([f for f in figs if f.name in stages])}
    if not cuts:
        return None
    changed = False
    for _round in range(COST_ROUNDS):
        factors = {}
        for key, stages in cuts.items():
            need = max((finer_than_target(f) for f in figs if f.name in stages), default=1)
            if need > 1:
                factors[key] = 1 << math.ceil(math.log2(need))
        scaled = _scaled(job, factors)
        if scaled is None:
            break
        job, plan, changed = scaled, kind.plan(scaled.config), True
        figs = figures(kind, job.config, plan, 1)
    return (job, _nonempty(job, plan), before, figs) if changed else None


def _stages_cut_by(job: Job, plan: Plan, key: str) -> set[str]:
    """The stages whose task count falls when ``key`` doubles (those it cuts into tasks)."""
    doubled = _scaled(job, {key: 2})
    if doubled is None:
        return set()
    tasks = {stage.name: len(stage.tasks) for stage in job_kind(job.domain).plan(doubled.config).stages}
    return {stage.name for stage in plan.stages if tasks.get(stage.name, 0) < len(stage.tasks)}


def _scaled(job: Job, factors: dict[str, int]) -> Job | None:
    """The job with each key multiplied by its factor, halved while the job's schema refuses it (None: no change)."""
    data = job.to_dict()
    factors = dict(factors)
    while factors:
        try:
            return validate({**data, **{k: data[k] * f for k, f in factors.items()}}, source=f"job {job.name}")
        except UserError:
            factors = {k: f // 2 for k, f in factors.items() if f > 2}
    return None


def _coarsened(job: Job, keys: tuple[str, ...], factor: int, max_tasks: int) -> Job | None:
    """The job with its chunk keys scaled by ``factor``: one key alone if that suffices (the fewest changes), else all."""
    data = job.to_dict()
    candidates = [(key,) for key in keys] + [keys] if len(keys) > 1 else [keys]
    for chosen in candidates:
        try:
            scaled = validate({**data, **{k: data[k] * factor for k in chosen}}, source=f"job {job.name}")
            if chosen == keys or job_kind(job.domain).plan(scaled.config).num_tasks <= max_tasks:
                return scaled
        except (UserError, ValueError):
            continue
    return None


MAX_SPLIT = 1 << 16
"""Largest value :func:`fit_memory` gives a job's ``SPLIT_FOR_MEMORY`` keys."""


def fit_memory(tuned: RunPlan, memory_per_worker: int | None, workers: int) -> RunPlan:
    """``tuned`` with its unset memory-splitting keys chosen so that every stage fits ``memory_per_worker``
    (below the fraction at which Dask pauses a worker, :func:`~epcg.runtime.estimate.usable_memory`).

    A job kind names in ``SPLIT_FOR_MEMORY`` the keys that lower the memory a
    worker needs without changing any result (Fling!'s ``partitions``: a task
    reads the layer it needs in that many parts). Those the job leaves unset
    (None) stay so if the job fits; otherwise they are set to 2, 4, 8, …
    while the worst stage's estimated peak still falls, and the first value
    that fits is taken and said in a note. A key the job sets is its own
    choice, and a job that fits no value is returned as it was: the memory
    check refuses it in its words.
    """
    job, plan = tuned.job, tuned.plan
    kind = job_kind(job.domain)
    data = job.to_dict()
    keys = tuple(key for key in kind.SPLIT_FOR_MEMORY
                 if key in type(job.config).model_fields and data.get(key) is None)
    if not keys or not memory_per_worker:
        return tuned

    stages = {stage.name for stage in plan.stages}

    def peak(candidate: Job) -> int:
        """The largest stage's memory per worker (a split changes what a task holds, not the stages)."""
        costs = kind.estimate(candidate.config) or {}
        return max((WORKER_BASE + c.peak_memory for name, c in costs.items() if name in stages), default=0)

    usable = usable_memory(memory_per_worker)
    first = last = peak(job)
    value = 2
    while last > usable and value <= MAX_SPLIT:
        try:
            scaled = validate({**data, **{k: value for k in keys}}, source=f"job {job.name}")
        except UserError:
            break
        now = peak(scaled)
        if now >= last:
            break
        if now <= usable:
            note = (f"the whole layers need about {size(first)} per worker process, more than the "
                    f"{size(usable)} at which Dask pauses a worker with the memory limit {size(memory_per_worker)}; "
                    f"using {', '.join(f'{k}={value}' for k in keys)} "
                    f"({size(now)}, identical results)")
            return replace(tuned, job=scaled, plan=plan_of(scaled), notes=tuned.notes + (note,))
        last, value = now, value * 2
    return tuned


def fitted(planned: RunPlan, placement: Placement, free_disk: int | None, max_tasks: int, new: bool = True,
           done: frozenset[str] = frozenset(), force: bool = False) -> RunPlan:
    """``planned`` fitted to ``placement``: a new run's memory parts chosen for its memory per worker, the
    figures of every stage (those of ``done`` tasks left out), checked against the limits (``refusal`` says why
    ``epcg run`` would refuse it), and each stage's seconds per task kept on the plan for the time left."""
    if new:
        planned = fit_memory(planned, placement.memory_per_worker, placement.workers)
    job, plan = planned.job, planned.plan
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
    return replace(planned, plan=plan, placement=placement, figures=tuple(figs), limits=limits, refusal=refusal)
