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
from epcg.runtime.errors import UserError
from epcg.runtime.shell import command as shell_command


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
    from epcg.runtime.submission import batch_submission, detached_submission
    from epcg.runtime.engine import Engine, Options
    from epcg.runtime.estimate import MAX_TASKS

    if (job_file is None) == (resume_dir is None):
        raise UserError("give a job file or --resume DIR (one of them)")
    _local_only(out if resume_dir is None else resume_dir, "submit")
    options = Options(max_tasks=max_tasks or MAX_TASKS, force=force)
    runner = Engine(say=echo)
    submission = (detached_submission if detach else batch_submission)(
        cluster_file, walltime, max_requeues, scheduler, scheduler_file, workers, threads_per_worker)
    if resume_dir is not None:
        runner.submit(runner.reopen(resume_dir), False, submission, options)
    else:
        runner.submit(runner.start(runner.load(job_file, overrides), out, options), True, submission, options)


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
        done = len(run.records.done(prepare_resume(run_dir).plan.tasks()))
    echo(f"{done} chunks kept; {batch.continue_command(run, info)} or {shell_command('resume', run.path)} "
         "continues later")


@click.command(hidden=True)
@click.argument("run_dir")
def drive(run_dir: str) -> None:
    """One allocation of a submitted run: what the batch script (or --detach) runs."""
    _local_only(run_dir, "drive")
    from epcg.cli_session import cli_engine, run_session

    sys.exit(cli_engine().drive(run_dir, run_session))
