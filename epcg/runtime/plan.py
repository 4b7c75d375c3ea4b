"""Plans: a job cut into stages of tasks, each task a range of ranks (or words, or runs).

A plan is built before anything runs, so ``epcg status`` can print it and resume
can compare it with the manifest.

>>> tasks = split_range("3x3:3", 10, 4)
>>> [(t.start, t.stop) for t in tasks], tasks[1].id
([(0, 4), (4, 8), (8, 10)], '3x3:3/00001')
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_STAGE_TASKS = 1_000_000
"""Most tasks one stage may have: a plan is built in memory, so a finer split is refused before it is built."""


class TooManyTasks(ValueError):
    """A split would give more than ``MAX_STAGE_TASKS`` tasks (the runtime coarsens chunks or refuses)."""

    def __init__(self, stage: str, tasks: int) -> None:
        super().__init__(f"stage {stage} would have {tasks:,} tasks, more than {MAX_STAGE_TASKS:,}: use bigger chunks")
        self.stage, self.tasks = stage, tasks


@dataclass(frozen=True)
class Task:
    """One unit of work: ``[start, stop)`` of a stage's index space."""

    stage: str
    index: int
    start: int
    stop: int
    group: int | None = None
    """The tasks of a stage with the same ``group`` share what they read (a job kind's choice, e.g. the ranges of a
    sliced layer that meet the same read groups): a cluster runs them one after another in one call on one worker,
    so it reads that once. None: the task runs alone."""

    @property
    def id(self) -> str:
        """Stable name of the task, also its manifest record's name."""
        return f"{self.stage}/{self.index:05d}"

    @property
    def size(self) -> int:
        return self.stop - self.start


@dataclass(frozen=True)
class Stage:
    """A group of independent tasks; it starts once every stage in ``after`` is done."""

    name: str
    tasks: tuple[Task, ...]
    after: tuple[str, ...] = ()
    label: str = ""
    """What a person calls the stage, e.g. 'must-cross 4x4 k=6'."""
    size: int = 0
    """Items in the stage (puzzles, boards, runs), for throughput figures."""
    read_bytes: int | None = field(default=None, compare=False)
    """Bytes (uncompressed) its tasks are planned to read from the store in all, the same on any number of workers
    (tasks of one ``group`` share a read); None: not planned (e.g. a stage whose workers each read all of
    ``source_bytes``)."""
    source_bytes: int = field(default=0, compare=False)
    """Bytes (uncompressed) of the earlier stages' data its tasks read from: read amplification is what they read
    over this."""
    task_seconds: float | None = field(default=None, compare=False)
    """Compute one of its tasks is expected to take (``epcg plan``'s estimate, set when a run is fitted to its
    workers), so the time left weighs a slow stage's chunks above a quick one's; None: not estimated."""


@dataclass(frozen=True)
class Plan:
    """Every stage of a job, in an order that respects ``after``."""

    stages: tuple[Stage, ...]
    slots: int | None = field(default=None, compare=False)
    """Tasks computing at once on the workers the run was fitted to (None: not fitted), for the time left."""
    by_name: dict[str, Stage] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = [stage.name for stage in self.stages]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate stage names in plan: {names}")
        seen: set[str] = set()
        for stage in self.stages:
            missing = set(stage.after) - seen
            if missing:
                raise ValueError(f"stage {stage.name} runs after unknown or later stages {missing}")
            seen.add(stage.name)
        object.__setattr__(self, "by_name", {stage.name: stage for stage in self.stages})

    @property
    def num_tasks(self) -> int:
        return sum(len(stage.tasks) for stage in self.stages)

    def tasks(self) -> list[Task]:
        return [task for stage in self.stages for task in stage.tasks]


def split_range(stage: str, total: int, chunk: int, align: int = 1) -> tuple[Task, ...]:
    """Cut ``[0, total)`` into tasks of ``chunk`` items, boundaries multiples of ``align``."""
    if total < 0 or chunk < 1 or align < 1:
        raise ValueError(f"bad range split: total={total}, chunk={chunk}, align={align}")
    step = max(align, (chunk // align) * align)
    if -(-total // step) > MAX_STAGE_TASKS:
        raise TooManyTasks(stage, -(-total // step))
    bounds = list(range(0, total, step)) + [total]
    if total == 0:
        bounds = [0, 0]
    return tuple(
        Task(stage, i, start, stop) for i, (start, stop) in enumerate(zip(bounds, bounds[1:]))
    )
