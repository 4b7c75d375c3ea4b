"""What ``epcg submit``'s options ask for, as a :class:`~epcg.runtime.batch.Submission` the engine submits
(:meth:`~epcg.runtime.engine.Engine.submit`): a batch system's cluster file with the command line's limits, or a
detached driver on the cluster the options name. Each refusal is one line, before anything is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from epcg.runtime.batch import KINDS, Submission, check_submittable
from epcg.runtime.cluster import JobqueueSpec, SchedulerSpec, load_cluster, parse_walltime
from epcg.runtime.engine import target
from epcg.runtime.errors import UserError
from epcg.runtime.schemas import Connect, DetachedBatch, SystemBatch


def batch_submission(cluster_file: Path | None, walltime: str | None, max_requeues: int | None,
                     scheduler: str | None, scheduler_file: Path | None, workers: int | None,
                     threads_per_worker: int | None) -> Submission:
    """The SLURM/PBS cluster file with the command line's limits applied; UserError if it cannot be submitted."""
    if scheduler or scheduler_file or workers or threads_per_worker:
        raise UserError("--scheduler, --scheduler-file, --workers and --threads-per-worker need --detach; "
                        "a batch run's workers are its allocation's cores")
    if cluster_file is None:
        raise UserError("epcg submit needs --cluster FILE (cluster/slurm.toml or pbs.toml), "
                        "or --detach to run here without a batch system")
    spec = load_cluster(cluster_file)
    if not isinstance(spec, JobqueueSpec):
        raise UserError(f"cluster file {cluster_file} is kind = {spec.kind!r}; epcg submit needs kind = 'slurm' "
                        "or 'pbs' (or --detach to run here without a batch system)")
    update: dict[str, Any] = {}
    if walltime is not None:
        try:
            parse_walltime(walltime)
        except ValueError as exc:
            raise UserError(f"--walltime: {exc}") from None
        update["walltime"] = walltime
    if max_requeues is not None:
        update["max_requeues"] = max_requeues
    spec = spec.model_copy(update=update)
    source = f"cluster file {cluster_file}" + (f" with --walltime {walltime}" if walltime else "")
    kind = check_submittable(spec, spec.walltime_seconds, source)
    info = SystemBatch(kind=kind.name, script=kind.script_name, walltime_seconds=spec.walltime_seconds,
                       signal_lead=spec.signal_lead, max_requeues=spec.max_requeues,
                       cluster=spec.model_dump(mode="json"))
    return Submission(kind, spec, info)


def detached_submission(cluster_file: Path | None, walltime: str | None, max_requeues: int | None,
                        scheduler: str | None, scheduler_file: Path | None, workers: int | None,
                        threads_per_worker: int | None) -> Submission:
    """A driver on this machine (``--detach``) on the cluster the options name; UserError for a batch system's
    cluster file or its limits."""
    if walltime is not None or max_requeues is not None:
        raise UserError("--walltime and --max-requeues are for batch allocations, not --detach")
    spec = target(cluster_file, scheduler, scheduler_file, workers, threads_per_worker).spec
    if isinstance(spec, JobqueueSpec):
        raise UserError(f"cluster file {cluster_file} is kind = {spec.kind!r}: submit it without --detach")
    info = DetachedBatch(kind="detached", connect=Connect(
        cluster_file=str(Path(cluster_file).absolute()) if cluster_file else None,
        scheduler=scheduler, workers=workers, threads_per_worker=threads_per_worker,
        scheduler_file=str(Path(scheduler_file).absolute()) if scheduler_file else None))
    return Submission(KINDS["detached"], None if isinstance(spec, SchedulerSpec) else spec, info)
