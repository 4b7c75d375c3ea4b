"""What a job will cost before it runs: tasks, bytes, memory per worker, disk, wall time; and the refusals.

A job kind may provide ``estimate(config) -> {stage name: StageCost}``: its own
arithmetic for bytes and memory, and compute from :func:`calibrated`, a short
timing of a slice of its kernel on this machine at plan time; the runtime adds what every task costs
(a manifest record, the scheduler's overhead, a worker's base memory) and
checks the figures against the workers and the disk before anything is
written. A stage a job kind does not estimate shows its task count only.

>>> fig = StageFigures("k01", "layer 1", 3, 1 << 20, 1 << 19, 1 << 30, 12.5)
>>> "1.0 GiB" in table([fig], Limits(workers=2))
True
>>> size(3 * 2**30), size(1536)
('3.0 GiB', '1.5 KiB')
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from epcg.runtime.errors import UserError

WORKER_BASE = 270 * 2**20
"""Peak resident memory of a Dask worker process with numpy, numba, zarr and a job kind imported, before any data.

It includes compiling the kind's kernels on the worker's first task, as on a fresh install (numba's cache cold);
with the cache warm a worker peaks about 60 MiB lower."""
TASK_OVERHEAD = 0.01
"""Seconds a core idles per task: scheduling, the Zarr write, fsyncing its chunks and its record (measured 4–14 ms)."""
RECORD_BYTES = 2048
"""Disk taken by one manifest record."""
MAX_TASKS = 100_000
"""Default bound on a run's task count: beyond it chunks are coarsened (or the run refused). A bound, not a size:
chunks are sized by their estimated compute (:func:`too_fine`), which needs a plan it can build."""
TARGET_TASK_SECONDS = 1.0
"""Compute a task should have at least, when its chunks can be coarsened: 100 times ``TASK_OVERHEAD``, so that
scheduling costs about 1 % (Dask's own guidance is tasks of 100 ms or more)."""
OVERHEAD_SHARE = 0.05
"""Share of a job's compute its tasks' overhead may reach before its chunks are coarsened..."""
MIN_OVERHEAD = 10.0
"""...and core-seconds of overhead it may reach anyway: a small job split finely on purpose (to watch it, or to
test resume) is left as it is."""


_RATES: dict[Any, float] = {}


def calibrated(key: Any, measure: Callable[[], tuple[float, float]], budget: float = 0.05) -> float:
    """Seconds per item of ``measure`` on this machine now, measured once per process and ``key``.

    ``measure()`` runs a tiny representative slice of a job kind's kernel and
    returns ``(items, seconds)``. It is called once to compile or load the
    kernel (not counted), then again until ``budget`` seconds have passed (at
    least twice); the fastest rate counts, so a moment of load on the client
    inflates the estimate less. Estimates from the machine's own speed stay
    right when the code, the hardware or the load changes, where constants
    measured once drift.

    >>> calibrated("doctest", lambda: (10.0, 0.5))
    0.05
    """
    if key not in _RATES:
        measure()
        best, spent, runs = float("inf"), 0.0, 0
        while runs < 2 or spent < budget:
            items, seconds = measure()
            best = min(best, seconds / max(items, 1.0))
            spent += seconds
            runs += 1
        _RATES[key] = best
    return _RATES[key]


@dataclass(frozen=True)
class StageCost:
    """A job kind's estimate of one stage."""

    bytes_written: int = 0
    """Uncompressed bytes of the arrays the stage's tasks store."""
    disk_bytes: int | None = None
    """Bytes on disk after compression (default: ``bytes_written``, an upper bound)."""
    peak_memory: int = 0
    """Memory one worker process needs for the stage's data, beyond ``WORKER_BASE``."""
    shared_memory: int = 0
    """Of ``peak_memory``, the bytes a machine holds once for all its worker processes (a mapped file in the page
    cache, e.g. Fling!'s ``shared_previous``): a machine of ``w`` workers needs ``shared_memory + w · (peak_memory
    - shared_memory)``."""
    cpu_seconds: float | None = None
    """Compute of the whole stage on one core (None: unknown)."""
    setup_seconds: float = 0.0
    """Compute every worker spends once before its first task of the stage (e.g. building tables it keeps), all
    workers at the same time: it adds to the wall time once, not divided among them."""
    read_bytes: int | None = None
    """Stored (compressed) bytes of earlier stages a reader loads (a retrograde layer reads the layer before);
    None: not estimated."""
    read_objects: int = 0
    """Chunk objects those bytes are stored in."""
    read_per_task: bool = False
    """True if every task reads ``read_bytes`` itself (solving in parts); else once per worker process."""
    read_whole: bool = False
    """True if ``read_bytes`` is what the whole stage reads, however many workers share it (tasks reading only
    their group's part of a layer, once per group)."""
    objects_per_task: int = 1
    """Chunk objects each task writes (one per array it stores a slice of)."""


PRICE_PUT = 0.005 / 1000
"""Dollars per PUT or LIST request: S3 Standard's list price in us-east-1 (other stores and regions differ)."""
PRICE_GET = 0.0004 / 1000
"""Dollars per GET request, S3 Standard in us-east-1."""
TASK_GETS = 4
"""GETs every task makes besides its arrays': run.json twice (the fence, at start and before the record), the
group's zarr.json twice (present? open)."""
GETS_PER_ARRAY = 1
"""GETs of each array a task writes: its metadata, read once per task (:meth:`~epcg.runtime.arrays.Arrays.array`)."""


@dataclass(frozen=True)
class StageIO:
    """Requests and bytes one stage sends to an object store, and their price at :data:`PRICE_PUT`/:data:`PRICE_GET`.

    >>> StageIO(puts=2000, gets=1000, bytes_written=0, bytes_read=0).dollars
    0.0104
    """

    puts: int
    gets: int
    bytes_written: int
    bytes_read: int | None
    """None where the job kind does not estimate what the stage reads (its GETs are then a lower bound)."""

    @property
    def dollars(self) -> float:
        return round(self.puts * PRICE_PUT + self.gets * PRICE_GET, 6)


def stage_io(cost: StageCost, tasks: int, workers: int, disk: int) -> StageIO:
    """Requests and bytes of a stage of ``tasks`` tasks run by ``workers`` worker processes.

    Each task writes its chunk objects and its record; reads its arrays' metadata and the fence; the layer
    before is read once per worker process that runs a task of the stage, or by every task when it reads in parts.
    """
    readers = 1 if cost.read_whole else tasks if cost.read_per_task else max(1, min(workers, tasks))
    return StageIO(puts=tasks * (cost.objects_per_task + 1),
                   gets=tasks * (TASK_GETS + GETS_PER_ARRAY * cost.objects_per_task) + readers * cost.read_objects,
                   bytes_written=disk + tasks * RECORD_BYTES // 2,
                   bytes_read=None if cost.read_bytes is None else readers * cost.read_bytes)


@dataclass(frozen=True)
class StageFigures:
    """One row of ``epcg plan``: a stage's figures with the runtime's costs added."""

    name: str
    label: str
    tasks: int
    bytes_written: int | None
    disk_bytes: int | None
    peak_memory: int | None
    wall_seconds: float | None
    cpu_seconds: float | None = None
    """Compute of the whole stage on one core, without the tasks' overhead (None: unknown)."""
    io: StageIO | None = None
    """What the stage asks of an object store (None where the job kind does not estimate the stage)."""

    @property
    def task_seconds(self) -> float | None:
        """Expected compute of one task of the stage."""
        return None if self.cpu_seconds is None or not self.tasks else self.cpu_seconds / self.tasks

    @property
    def overhead_share(self) -> float | None:
        """Share of the stage's core time spent on its tasks' overhead rather than on compute."""
        if self.cpu_seconds is None or not self.tasks:
            return None
        return self.tasks * TASK_OVERHEAD / (self.cpu_seconds + self.tasks * TASK_OVERHEAD)


@dataclass(frozen=True)
class Limits:
    """What the run may use: workers, memory per worker process, free disk, tasks."""

    workers: int
    memory_per_worker: int | None = None
    free_disk: int | None = None
    max_tasks: int = MAX_TASKS
    threads: int = 1
    """Threads per worker process (the processes' memory is shared by their threads)."""


def figures(kind: Any, config: Any, plan: Any, workers: int,
            done: set[str] | frozenset[str] = frozenset()) -> list[StageFigures]:
    """Per stage: tasks, bytes, memory per worker and wall time (stages run one after another)."""
    costs: dict[str, StageCost] = kind.estimate(config) or {}
    out = []
    for stage in plan.stages:
        cost = costs.get(stage.name)
        tasks = len(stage.tasks)
        left = sum(1 for t in stage.tasks if t.id not in done) / tasks if tasks else 0.0
        if cost is None:
            out.append(StageFigures(stage.name, stage.label, tasks, None, None, None, None))
            continue
        disk = cost.bytes_written if cost.disk_bytes is None else cost.disk_bytes
        wall = None
        if cost.cpu_seconds is not None:
            parallel = max(1, min(workers, tasks))
            wall = (cost.setup_seconds * (left > 0) + (cost.cpu_seconds + tasks * TASK_OVERHEAD) / parallel * left)
        out.append(StageFigures(stage.name, stage.label, tasks, cost.bytes_written,
                                round((disk + tasks * RECORD_BYTES) * left),
                                WORKER_BASE + cost.peak_memory, wall, cost.cpu_seconds,
                                stage_io(cost, tasks, workers, disk)))
    return out


def overhead_share(figs: Sequence[StageFigures]) -> float | None:
    """Share of the job's core time its tasks' overhead takes, over the stages whose compute is estimated.

    >>> overhead_share([StageFigures("a", "", 100, 0, 0, 0, 1.0, 19.0)])
    0.05
    """
    known = [f for f in figs if f.cpu_seconds is not None and f.tasks]
    if not known:
        return None
    spent = sum(f.tasks for f in known) * TASK_OVERHEAD
    return spent / (spent + sum(f.cpu_seconds or 0.0 for f in known))


def too_fine(figs: Sequence[StageFigures]) -> bool:
    """Whether the job's tasks are so small that scheduling them is not a small share of its compute.

    True when their overhead is more than ``OVERHEAD_SHARE`` of the job's core time and more than
    ``MIN_OVERHEAD`` core-seconds.

    >>> too_fine([StageFigures("a", "", 80_000, 0, 0, 0, 1.0, 12.0)])
    True
    >>> too_fine([StageFigures("a", "", 300, 0, 0, 0, 1.0, 0.1)])  # 3 s of overhead: left alone
    False
    """
    share = overhead_share(figs)
    spent = sum(f.tasks for f in figs if f.cpu_seconds is not None) * TASK_OVERHEAD
    return share is not None and share > OVERHEAD_SHARE and spent > MIN_OVERHEAD


def finer_than_target(fig: StageFigures) -> float:
    """How many times bigger the stage's tasks should be to take ``TARGET_TASK_SECONDS`` each (1: big enough; at
    most its task count, which makes it one task).

    >>> finer_than_target(StageFigures("a", "", 1000, 0, 0, 0, 1.0, 12.5))
    80.0
    >>> finer_than_target(StageFigures("b", "", 4, 0, 0, 0, 1.0, 0.0))
    4
    """
    seconds = fig.task_seconds
    if seconds is None or fig.tasks <= 1 or seconds >= TARGET_TASK_SECONDS:
        return 1
    return min(TARGET_TASK_SECONDS / seconds, fig.tasks) if seconds > 0 else fig.tasks


def check(figs: Sequence[StageFigures], limits: Limits, force: bool = False) -> None:
    """Refuse, in one line naming the figure and the override, what cannot finish."""
    tasks = sum(f.tasks for f in figs)
    if tasks > limits.max_tasks:
        raise UserError(f"the job has {tasks:,} tasks, more than --max-tasks {limits.max_tasks:,}: "
                        "use bigger chunks (--set on the job's chunk key) or raise --max-tasks")
    if force:
        return
    known = [f for f in figs if f.peak_memory is not None]
    if known and limits.memory_per_worker:
        worst = max(known, key=lambda f: f.peak_memory or 0)
        usable = usable_memory(limits.memory_per_worker)
        if (worst.peak_memory or 0) > usable:
            raise UserError(
                f"stage {worst.name} ({worst.label}) needs about {size(worst.peak_memory)} per worker process, "
                f"more than the {size(usable)} at which Dask pauses a worker "
                f"with the memory limit {size(limits.memory_per_worker)}: use workers with more memory (fewer "
                "processes per node), a smaller job, or --force")
    disk = sum(f.disk_bytes or 0 for f in figs)
    if limits.free_disk is not None and disk > limits.free_disk:
        raise UserError(f"the run needs about {size(disk)} of disk, only {size(limits.free_disk)} is free there: "
                        "free space, choose another --out, or --force")


def usable_memory(limit: int) -> int:
    """What a stage may take of a worker's memory ``limit``: Dask pauses a worker at the fraction
    ``distributed.worker.memory.pause`` (0.8 by default) and a paused worker starts no task until its memory
    falls, so a stage estimated above it could wait for ever. The client's Dask configuration stands for the
    workers'; with pausing turned off, the fraction at which the nanny restarts the worker counts instead.

    >>> usable_memory(1000)
    800
    """
    import dask

    for key, default in (("pause", 0.8), ("terminate", 0.95)):  # distributed's defaults, whether or not imported
        fraction = dask.config.get(f"distributed.worker.memory.{key}", default)
        if fraction not in (False, None):
            return int(limit * float(fraction))
    return limit


def machine_memory() -> int:
    """Physical memory of this machine."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def size(n: float | None) -> str:
    """Bytes for people: '3.0 GiB'."""
    if n is None:
        return "?"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError


def duration(seconds: float | None) -> str:
    """Seconds for people: '42 s', '3.5 min', '7.3 h', '2.1 d'."""
    if seconds is None:
        return "?"
    for limit, unit, div in ((120, "s", 1), (7200, "min", 60), (172800, "h", 3600)):
        if seconds < limit:
            return f"{seconds / div:.0f} {unit}" if unit == "s" else f"{seconds / div:.1f} {unit}"
    return f"{seconds / 86400:.1f} d"


def brief(seconds: float | None) -> str:
    """A task's seconds for people, below a second too: '3 ms', '0.4 s', '12 s'."""
    if seconds is None or seconds >= 10:
        return duration(seconds)
    return f"{seconds * 1000:.0f} ms" if seconds < 0.1 else f"{seconds:.1f} s"


def share(fraction: float | None) -> str:
    """A share for people: '0.3 %', '<0.1 %'."""
    if fraction is None:
        return "?"
    return "<0.1 %" if fraction < 0.001 else f"{100 * fraction:.1f} %"


def table(figs: Sequence[StageFigures], limits: Limits | None) -> str:
    """The plan as a text table, with a total row and the limits it was checked against (if any)."""
    head = (f"{'stage':<22} {'tasks':>9} {'per task':>9} {'overhead':>9} {'written':>10} {'disk':>10} "
            f"{'peak/worker':>12} {'wall':>9}")
    lines = [head, "-" * len(head)]
    for f in figs:
        lines.append(f"{f.name:<22} {f.tasks:>9,} {brief(f.task_seconds):>9} {share(f.overhead_share):>9} "
                     f"{size(f.bytes_written):>10} {size(f.disk_bytes):>10} "
                     f"{size(f.peak_memory):>12} {duration(f.wall_seconds):>9}")
    def known(values: Sequence[float | None]) -> float | None:
        return None if any(v is None for v in values) else sum(v for v in values if v is not None)

    peaks = [f.peak_memory for f in figs if f.peak_memory is not None]
    lines.append(f"{'total':<22} {sum(f.tasks for f in figs):>9,} {'':>9} {share(overhead_share(figs)):>9} "
                 f"{size(known([f.bytes_written for f in figs])):>10} "
                 f"{size(known([f.disk_bytes for f in figs])):>10} {size(max(peaks) if peaks else None):>12} "
                 f"{duration(known([f.wall_seconds for f in figs])):>9}")
    if limits is None:
        return "\n".join(lines)
    threads = f" x {limits.threads} threads" if limits.threads > 1 else ""
    usable = f" ({size(usable_memory(limits.memory_per_worker))} before Dask pauses it)" \
        if limits.memory_per_worker else ""
    lines.append(f"checked against: {limits.workers} workers{threads}, "
                 f"{size(limits.memory_per_worker)} per worker{usable}, "
                 f"{'no disk (object store)' if limits.free_disk is None else size(limits.free_disk) + ' free disk'}, "
                 f"at most {limits.max_tasks:,} tasks")
    return "\n".join(lines)


def io_table(figs: Sequence[StageFigures], workers: int) -> str:
    """What a run on an object store reads and writes there, stage by stage, and what the requests cost."""
    head = f"{'stage':<22} {'PUTs':>9} {'GETs':>9} {'written':>10} {'read':>10} {'requests $':>11}"
    lines = [head, "-" * len(head)]
    known = [f for f in figs if f.io is not None]
    for f in known:
        io = f.io
        assert io is not None
        lines.append(f"{f.name:<22} {io.puts:>9,} {io.gets:>9,} {size(io.bytes_written):>10} "
                     f"{size(io.bytes_read):>10} {io.dollars:>11.4f}")
    total = StageIO(*(sum(getattr(f.io, k) or 0 for f in known) for k in ("puts", "gets", "bytes_written",
                                                                          "bytes_read")))
    lines.append(f"{'total':<22} {total.puts:>9,} {total.gets:>9,} {size(total.bytes_written):>10} "
                 f"{size(total.bytes_read):>10} {total.dollars:>11.4f}")
    unknown = [f.name for f in figs if f.io is None or f.io.bytes_read is None]
    lines.append(f"reads: the layer before, once per worker process ({workers}), or per task when read in parts; "
                 f"requests at S3 Standard list prices (${PRICE_PUT * 1000:g} per 1,000 PUTs, "
                 f"${PRICE_GET * 1000:g} per 1,000 GETs; transfer inside the region free)"
                 + (f"; reads not estimated (totals are lower bounds): {', '.join(unknown)}" if unknown else ""))
    return "\n".join(lines)


def coarsen_factor(tasks: int, max_tasks: int) -> int:
    """How much bigger chunks must get for ``tasks`` to fit under ``max_tasks`` (with room for rounding).

    >>> coarsen_factor(82_598_880, 100_000)
    1033
    """
    return max(2, math.ceil(tasks * 1.25 / max_tasks))
