"""``epcg submit | cancel`` and the hidden ``epcg drive``: runs that belong to the cluster, not to a terminal.

``submit`` checks and plans a job exactly as ``run`` does, lays out the run
directory, writes the batch script into it and submits it (or, with
``--detach``, starts the driver as a daemon here). ``drive`` is what each
allocation runs: :class:`epcg.runtime.driver.Driver`, with the engine's run
(``cli_session.run_session``) as the step that runs the unfinished chunks.
The mechanics are in
:mod:`epcg.runtime.batch`, :mod:`epcg.runtime.driver` and
:mod:`epcg.runtime.history`; this module parses options and prints.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from epcg.cli_session import echo
from epcg.runtime.errors import Conflict, UserError
from epcg.runtime.shell import command as shell_command
from epcg.runtime.store import RESULTS


def _local_only(where: str | None, command: str) -> None:
    """Batch runs keep their script, scheduler file and logs beside the run: a URL is refused in one line."""
    from epcg.runtime.rundir import is_url

    if where is not None and is_url(where):
        raise UserError(f"epcg {command} needs a run directory on a filesystem the nodes share, not {where}: "
                        f"run it with {shell_command('run --out', where)} (or {shell_command('resume', where)}) "
                        "on a cluster instead")


@click.command()
@click.argument("job_file", type=click.Path(path_type=Path), required=False)
@click.option("--cluster", "cluster_file", type=click.Path(path_type=Path),
              help="cluster/slurm.toml or pbs.toml: the allocations to run in (with --detach: local or scheduler).")
@click.option("--out", help="Run directory on a filesystem the nodes share (default runs/<job name>).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a job key with a TOML value.")
@click.option("--walltime", metavar="HH:MM:SS", help="Walltime of each allocation (default: the cluster file's).")
@click.option("--max-requeues", type=click.IntRange(min=0), help="Continuation jobs at most (default: the cluster "
              "file's max_requeues).")
@click.option("--resume", "resume_dir",
              help="Submit the unfinished chunks of this run directory instead of a new job.")
@click.option("--detach", is_flag=True, help="No batch system: run the driver here as a daemon that outlives "
              "the terminal (output in DIR/driver.log).")
@click.option("--scheduler", metavar="ADDRESS", help="With --detach: use a running Dask scheduler.")
@click.option("--scheduler-file", type=click.Path(path_type=Path), help="With --detach: a running scheduler's file.")
@click.option("--workers", type=click.IntRange(min=1), help="With --detach: local worker processes.")
@click.option("--threads-per-worker", type=click.IntRange(min=1), help="With --detach: threads per local worker.")
@click.option("--max-tasks", type=click.IntRange(min=1), default=None, help="Most tasks a run may have.")
@click.option("--force", is_flag=True, help="Submit even if the plan says the workers' memory or disk is too small.")
def submit(job_file, cluster_file, out, overrides, walltime, max_requeues, resume_dir, detach, scheduler,
           scheduler_file, workers, threads_per_worker, max_tasks, force) -> None:
    """Submit JOB_FILE as batch jobs that requeue themselves until it is finished, and return at once."""
    from epcg.runtime import batch
    from epcg.runtime.engine import Engine, Options, claimed
    from epcg.runtime.estimate import MAX_TASKS
    from epcg.runtime.history import History, update

    if (job_file is None) == (resume_dir is None):
        raise UserError("give a job file or --resume DIR (one of them)")
    _local_only(out if resume_dir is None else resume_dir, "submit")
    options = Options(max_tasks=max_tasks or MAX_TASKS, force=force)
    runner = Engine(say=echo)
    if detach:
        spec = _detached_spec(cluster_file, scheduler, scheduler_file, workers, threads_per_worker, walltime,
                              max_requeues)
        kind, info = None, {"kind": "detached", "connect": {
            "cluster_file": str(Path(cluster_file).absolute()) if cluster_file else None,
            "scheduler": scheduler, "workers": workers, "threads_per_worker": threads_per_worker,
            "scheduler_file": str(Path(scheduler_file).absolute()) if scheduler_file else None}}
    else:
        spec, kind, seconds = _batch_spec(cluster_file, walltime, max_requeues, scheduler, scheduler_file, workers,
                                          threads_per_worker)
        info = {"kind": kind.name, "script": kind.script_name, "walltime_seconds": seconds,
                "signal_lead": spec.signal_lead, "max_requeues": spec.max_requeues,
                "cluster": spec.model_dump(mode="json")}
    if resume_dir is not None:
        prepared = runner.reopen(resume_dir)
        prepared.run.group  # noqa: B018 - a missing store ends here, before anything is written
        _check_idle(prepared.run)
        new = False
    else:
        prepared = runner.start(runner.load(job_file, overrides), out, options)
        new = True
    if kind is not None or spec is not None:
        done = prepared.run.done(prepared.plan.tasks()) if not new else {}
        prepared = runner.fit(prepared, new, *_workers(spec, kind), done, options)
    run = prepared.run
    if new:
        with claimed(prepared, new=True):
            pass
    try:
        text = None if kind is None else batch.script(kind, spec, info["walltime_seconds"], run.path,
                                                      prepared.job.name, spec.python or sys.executable)
        with run.lock():  # a run another process took since _check_idle is one line, exit status 75
            batch.write_batch(run, info, text)
            update(run, History.resubmit)
        if kind is None:
            pid = batch.spawn_detached(run)
            echo(f"{prepared.job.name}: driver started in the background (pid {pid}) -> {run.path}")
            echo(f"its output: {batch.driver_log(run)}")
        else:
            batch.logs_dir(run)
            job_id = batch.submit(kind, run.path / kind.script_name)
            update(run, lambda history: history.waiting(job_id))
            echo(f"{prepared.job.name}: submitted batch job {job_id} -> {run.path}")
            echo(f"batch script: {run.path / kind.script_name} (walltime {info['walltime_seconds']} s, "
                 f"signal {spec.signal_lead} s before it, at most {spec.max_requeues} requeues)")
    except BaseException as exc:
        if new and not isinstance(exc, Conflict):  # a new run another process took at once is theirs now
            _remove_new(run)
        raise
    echo(f"watch it:  epcg status {run.path}")
    echo(f"stop it:   epcg cancel {run.path}")


def _batch_spec(cluster_file, walltime, max_requeues, scheduler, scheduler_file, workers, threads_per_worker):
    """The SLURM/PBS cluster file with the command line's limits applied; UserError if it cannot be submitted."""
    from epcg.runtime import batch
    from epcg.runtime.cluster import JobqueueSpec, load_cluster, parse_walltime

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
    update = {}
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
    kind = batch.check_submittable(spec, spec.walltime_seconds, source)
    return spec, kind, spec.walltime_seconds


def _detached_spec(cluster_file, scheduler, scheduler_file, workers, threads_per_worker, walltime, max_requeues):
    from epcg.runtime.cluster import JobqueueSpec, SchedulerSpec

    if walltime is not None or max_requeues is not None:
        raise UserError("--walltime and --max-requeues are for batch allocations, not --detach")
    from epcg.runtime.engine import target

    spec = target(cluster_file, scheduler, scheduler_file, workers, threads_per_worker).spec
    if isinstance(spec, JobqueueSpec):
        raise UserError(f"cluster file {cluster_file} is kind = {spec.kind!r}: submit it without --detach")
    return None if isinstance(spec, SchedulerSpec) else spec


def _workers(spec, kind) -> tuple[int, int | None]:
    """Workers and memory per worker of one allocation (``kind`` given) or of the detached local cluster."""
    from epcg.runtime.batch import worker_memory_limit, workers_per_node
    from epcg.runtime.cluster import default_workers, local_memory

    if kind is not None:
        return spec.nodes * workers_per_node(spec), worker_memory_limit(spec)
    return spec.workers or default_workers(), local_memory(spec)


def _check_idle(run) -> None:
    """Refuse to submit a run that is live (its lock held: a driver, run or resume) or already has an allocation
    waiting."""
    from epcg.runtime import batch
    from epcg.runtime.history import load

    if run.is_locked():
        raise Conflict(f"run directory {run.path} is in use by a live epcg process (a driver, run or resume); "
                       f"{shell_command('status', run.path)} says which, {shell_command('cancel', run.path)} stops "
                       "a submitted one")
    pending = load(run).next
    info = batch.read_batch(run)
    if pending and info and info["kind"] in batch.KINDS and batch.KINDS[info["kind"]].states([pending]):
        raise UserError(f"run directory {run.path} already has batch job {pending} waiting to continue it")


def _remove_new(run) -> None:
    """Undo a new run directory whose submission failed (nothing is left behind)."""
    import shutil

    shutil.rmtree(run.path, ignore_errors=True)


@click.command()
@click.argument("run_dir")
@click.option("--wait", type=click.FloatRange(min=0), default=120, show_default=True,
              help="Seconds to wait for the running allocation to stop.")
def cancel(run_dir: str, wait: float) -> None:
    """Stop a submitted run: no further allocations; the running one finishes its chunks in flight and ends."""
    _local_only(run_dir, "cancel")
    from epcg.runtime import batch
    from epcg.runtime.driver import cancel as request_cancel
    from epcg.runtime.driver import still_running
    from epcg.runtime.engine import prepare_resume
    from epcg.runtime.history import load
    from epcg.runtime.registry import reading

    with reading():
        run = prepare_resume(run_dir).run
    info = batch.read_batch(run)
    if info is None:
        raise UserError(f"{run.path} was not submitted (epcg run): stop its client with Ctrl-C or kill")
    history, stopped, left = request_cancel(run, info)
    echo(f"{run.path}: cancelled {', '.join(stopped) or 'nothing was queued or running'}")
    for line in left:
        echo(line)
    live = {a["pid"] for a in history.allocations if not a.get("ended_at")}
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and (run.is_locked() or still_running(load(run), live)):
        time.sleep(0.5)
    if run.is_locked() or still_running(load(run), live):
        echo(f"the running allocation has not stopped yet; {shell_command('status', run.path)} shows when it has")
    with reading():
        done = len(run.done(prepare_resume(run_dir).plan.tasks()))
    echo(f"{done} chunks kept; {batch.continue_command(run, info)} or {shell_command('resume', run.path)} "
         "continues later")


@click.command(hidden=True)
@click.argument("run_dir")
def drive(run_dir: str) -> None:
    """One allocation of a submitted run: what the batch script (or --detach) runs."""
    _local_only(run_dir, "drive")
    from epcg.cli_session import cli_engine, run_session
    from epcg.runtime.batch import read_batch
    from epcg.runtime.driver import Driver
    from epcg.runtime.engine import Options, prepare_resume, target

    prepared = prepare_resume(run_dir)
    run = prepared.run
    info = read_batch(run)
    if info is None:
        raise UserError(f"{run.path} was not submitted: use {shell_command('resume', run.path)}")
    connect = info.get("connect") or {}
    tasks = prepared.plan.tasks()

    def run_chunks(scheduler_file) -> None:
        where = target(connect.get("cluster_file"), connect.get("scheduler"), scheduler_file, connect.get("workers"),
                       connect.get("threads_per_worker"))
        run_session(cli_engine(), prepared, False, where, Options(max_tasks=max(prepared.plan.num_tasks, 1), force=True))

    def finished() -> None:
        """results.json and report.html with the last allocation's end (they were written just before it)."""
        from epcg.api.runs import Run
        from epcg.report.html import write_report
        from epcg.runtime.batch import history_for_results
        from epcg.runtime.schemas import Results

        results = run.read_json(RESULTS, Results, f"{shell_command('report', run.path)} writes it again")
        results["allocations"] = history_for_results(run, run.done(tasks))
        run.write_results(results)
        write_report(Run(run.path, trust_space=True))

    sys.exit(Driver(run, tasks, info, run_chunks, say=echo, finished=finished).drive())
