"""``epcg submit | cancel`` and the hidden ``epcg drive``: runs that belong to the cluster, not to a terminal.

``submit`` checks and plans a job exactly as ``run`` does, lays out the run
directory, writes the batch script into it and submits it (or, with
``--detach``, starts the driver as a daemon here). ``drive`` is what each
allocation runs: it records the allocation, submits the continuation, runs the
unfinished chunks as ``resume`` would, and on the early signal stops handing
out chunks so the allocation ends with every whole chunk kept. The mechanics
are in :mod:`epcg.runtime.batch`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import click

from epcg.runtime.errors import Drain, TaskFailed, UserError
from epcg.runtime.store import RESULTS


def _local_only(where: str | None, command: str) -> None:
    """Batch runs keep their script, scheduler file and logs beside the run: a URL is refused in one line."""
    from epcg.runtime.rundir import is_url

    if where is not None and is_url(where):
        raise UserError(f"epcg {command} needs a run directory on a filesystem the nodes share, not {where}: "
                        f"run it with 'epcg run --out {where}' (or 'epcg resume {where}') on a cluster instead")


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

    if (job_file is None) == (resume_dir is None):
        raise UserError("give a job file or --resume DIR (one of them)")
    _local_only(out if resume_dir is None else resume_dir, "submit")
    options = Options(max_tasks=max_tasks or MAX_TASKS, force=force)
    runner = Engine(say=click.echo)
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
        _check_idle(prepared.run, batch)
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
    history = batch.read_history(run)
    history.update(cancel=False, base=len(history["allocations"]), next=None)
    try:
        if kind is None:
            batch.write_batch(run, info, None)
            batch.write_history(run, history)
            pid = batch.spawn_detached(run)
            click.echo(f"{prepared.job.name}: driver started in the background (pid {pid}) -> {run.path}")
            click.echo(f"its output: {batch.driver_log(run)}")
        else:
            python = spec.python or sys.executable
            text = batch.script(kind, spec, info["walltime_seconds"], run.path, prepared.job.name, python)
            batch.logs_dir(run)
            batch.write_batch(run, info, text)
            job_id = batch.submit(kind, run.path / kind.script_name)
            history["next"] = job_id
            batch.write_history(run, history)
            click.echo(f"{prepared.job.name}: submitted batch job {job_id} -> {run.path}")
            click.echo(f"batch script: {run.path / kind.script_name} (walltime {info['walltime_seconds']} s, "
                       f"signal {spec.signal_lead} s before it, at most {spec.max_requeues} requeues)")
    except BaseException:
        if new:
            _remove_new(run)
        raise
    click.echo(f"watch it:  epcg status {run.path}")
    click.echo(f"stop it:   epcg cancel {run.path}")


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


def _check_idle(run, batch) -> None:
    """Refuse to submit a run that is live or already has an allocation waiting."""
    if run.is_locked():
        raise UserError(f"run directory {run.path} is in use by a running epcg process; 'epcg cancel {run.path}' "
                        "stops a submitted one")
    pending = batch.read_history(run)["next"]
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
    from epcg.runtime.engine import prepare_resume

    run = prepare_resume(run_dir).run
    info = batch.read_batch(run)
    if info is None:
        raise UserError(f"{run.path} was not submitted (epcg run): stop its client with Ctrl-C or kill")
    history = batch.read_history(run)
    waiting = history["next"]
    history.update(cancel=True, next=None)
    batch.write_history(run, history)
    kind = batch.KINDS.get(info["kind"])
    stopped = []
    if kind is not None:
        if waiting:
            _call(kind.cancel_args(waiting, drain=False))
            stopped.append(f"job {waiting} (waiting)")
        for alloc in history["allocations"]:
            if alloc.get("job") and not alloc.get("ended_at") and kind.states([alloc["job"]]):
                _call(kind.cancel_args(alloc["job"], drain=True))
                stopped.append(f"job {alloc['job']} (running: stops handing out chunks)")
    else:
        for alloc in history["allocations"]:
            if alloc.get("pid") and not alloc.get("ended_at"):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(alloc["pid"], signal.SIGUSR1)
                    stopped.append(f"driver pid {alloc['pid']}")
    click.echo(f"{run.path}: cancelled {', '.join(stopped) or 'nothing was queued or running'}")
    live = {a["pid"] for a in history["allocations"] if not a.get("ended_at")}
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and (run.is_locked() or _still_running(batch.read_history(run), live)):
        time.sleep(0.5)
    if run.is_locked() or _still_running(batch.read_history(run), live):
        click.echo(f"the running allocation has not stopped yet; 'epcg status {run.path}' shows when it has")
    done = len(run.done(prepare_resume(run_dir).plan.tasks()))
    click.echo(f"{done} chunks kept; 'epcg submit --resume {run.path} --cluster FILE' or "
               f"'epcg resume {run.path}' continues later")


def _still_running(history: dict, pids: set[int]) -> bool:
    """True while one of these allocations has not recorded its end and its driver (on this node) lives."""
    for alloc in history["allocations"]:
        if alloc.get("pid") in pids and not alloc.get("ended_at"):
            if alloc.get("node") != socket.gethostname():
                return True
            try:
                os.kill(alloc["pid"], 0)
                return True
            except ProcessLookupError:
                pass
            except PermissionError:
                return True
    return False


def _call(args: list[str]) -> None:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(args, capture_output=True, timeout=30)


@click.command(hidden=True)
@click.argument("run_dir")
def drive(run_dir: str) -> None:
    """One allocation of a submitted run: what the batch script (or --detach) runs."""
    _local_only(run_dir, "drive")
    from epcg.runtime import batch
    from epcg.runtime.cluster import JobqueueSpec
    from epcg.runtime.engine import prepare_resume

    began = time.time()
    prepared = prepare_resume(run_dir)
    run = prepared.run
    info = batch.read_batch(run)
    if info is None:
        raise UserError(f"{run.path} was not submitted: use 'epcg resume {run.path}'")
    kind = batch.KINDS.get(info["kind"])
    spec = JobqueueSpec.model_validate(info["cluster"]) if kind is not None else None
    grace = max(1, spec.signal_lead - batch.DRAIN_MARGIN) if spec is not None else 30
    caught: dict = {}
    job_id = batch.allocation_id(kind)
    end = (batch.allocation_end(kind, job_id) or began + info["walltime_seconds"]) if kind is not None else None
    drain_at = end - spec.signal_lead if end is not None else None
    tasks = prepared.plan.tasks()

    def on_early(signum, frame):
        if "signal" in caught:
            if signum == signal.SIGUSR1:
                os.write(2, f"epcg: SIGUSR1 at {time.strftime('%H:%M:%S')}: already stopping\n".encode())
            return
        signum = caught.pop("deferred", signum)
        if _in_finalizer(frame):  # an exception raised there would be swallowed: try again in a moment
            caught["deferred"] = signum
            signal.setitimer(signal.ITIMER_REAL, 0.5)
            return
        now = time.time()
        if not batch.read_history(run)["cancel"] and len(run.done(tasks)) == len(tasks):
            os.write(2, f"epcg: {signal.Signals(signum).name} at {time.strftime('%H:%M:%S')}: every chunk is done, "
                        "finishing the results\n".encode())
            return
        if signum == signal.SIGUSR1 and drain_at is not None and now < drain_at - 5 \
                and not batch.read_history(run)["cancel"]:
            # the batch system checks time limits every so often and signals up to a minute early
            os.write(2, f"epcg: SIGUSR1 from {kind.name} at {time.strftime('%H:%M:%S')}, {end - now:.0f} s before "
                        f"the time limit: stopping at {time.strftime('%H:%M:%S', time.localtime(drain_at))} "
                        "(walltime - signal_lead)\n".encode())
            return
        caught.update(signal=signum, at=now, drain=Drain(signum, grace))
        raise caught["drain"]

    signal.signal(signal.SIGUSR1, on_early)
    signal.signal(signal.SIGALRM, on_early)
    if drain_at is not None:
        signal.alarm(max(1, round(drain_at - time.time())))
    history = batch.read_history(run)
    done = run.done(prepared.plan.tasks())
    batch.settle(history, done, starting=round(began, 3))
    stop = "finished: nothing was left to compute" if run.has(RESULTS) else batch.decide(
        history, None if kind is None else info["max_requeues"] + history.get("base", 0),
        prepared.plan.num_tasks - len(done))
    alloc = {"job": job_id, "pid": os.getpid(), "node": socket.gethostname(), "started_at": round(began, 3)}
    history["allocations"].append(alloc)
    if history["next"] == job_id:
        history["next"] = None
    number = len(history["allocations"]) - history.get("base", 0)
    click.echo(f"epcg: allocation {number} of {run.path} ({f'job {job_id}' if job_id else f'pid {os.getpid()}'} "
               f"on {alloc['node']}), {len(done)} of {prepared.plan.num_tasks} chunks done before it")
    if stop is not None:
        done_already = stop.startswith("finished")
        alloc.update(ended_at=round(time.time(), 3), why=stop if done_already else f"did not compute: {stop}")
        batch.write_history(run, history)
        click.echo(f"epcg: stopping: {stop}")
        sys.exit(0 if done_already or stop.startswith("cancelled") else 1)
    if kind is not None and number - 1 < info["max_requeues"]:
        history["next"] = batch.submit(kind, run.path / info["script"], after=job_id)
        click.echo(f"epcg: continuation: job {history['next']} submitted, starts after job {job_id} ends "
                   f"(requeue {number} of {info['max_requeues']})")
    elif kind is not None:
        click.echo(f"epcg: no continuation: all {info['max_requeues']} requeues are spent")
    batch.write_history(run, history)
    why, status = _drive(prepared, info, spec, kind, run, caught)
    _end_allocation(run, kind, began, why, caught)
    sys.exit(status)


def _in_finalizer(frame) -> bool:
    """True if the signal interrupted an object's ``__del__`` (garbage collection), which swallows exceptions."""
    while frame is not None:
        if frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False


def _drive(prepared, info, spec, kind, run, caught) -> tuple[str, int]:
    """Run the unfinished chunks in this allocation; return why it ended and the exit status."""
    from epcg.cli_session import cli_engine, run_session
    from epcg.runtime import batch
    from epcg.runtime.engine import Options, target

    connect = info.get("connect") or {}
    try:
        with (batch.allocation_cluster(run, spec, kind) if kind is not None else contextlib.nullcontext()) as file:
            where = target(connect.get("cluster_file"), connect.get("scheduler"),
                           file if file is not None else connect.get("scheduler_file"), connect.get("workers"),
                           connect.get("threads_per_worker"))
            run_session(cli_engine(), prepared, False, where,
                        Options(max_tasks=max(prepared.plan.num_tasks, 1), force=True))
        return "finished", 0
    except Drain:
        return _drained(run, caught), 0
    except SystemExit as exc:
        if "signal" in caught:
            return _drained(run, caught), 0
        return f"stopped by a signal (exit status {exc.code}): the time limit or scancel", int(exc.code or 1)
    except (UserError, TaskFailed) as exc:
        why = f"failed: {' '.join(str(exc).split())}"
        _cancel_next(run, kind, why)
        raise


def _drained(run, caught) -> str:
    """The allocation's end after the early signal, and what happened to the chunks in flight."""
    from epcg.runtime.batch import read_history

    exc = caught["drain"]
    name = signal.Signals(caught["signal"]).name
    if read_history(run)["cancel"]:
        why = "cancelled by epcg cancel"
    elif caught["signal"] == signal.SIGALRM:
        why = "signal_lead before the time limit (the driver's timer)"
    else:
        why = f"{name} before the time limit"
    if exc.in_flight is not None:
        why += (f"; {exc.in_flight} chunks were in flight, {exc.in_flight - (exc.unfinished or 0)} finished "
                f"in {exc.waited:.0f} s, {exc.unfinished or 0} left for the next allocation")
    click.echo(f"epcg: {name} at {time.strftime('%H:%M:%S', time.localtime(caught['at']))}: {why}")
    return why


def _end_allocation(run, kind, began: float, why: str, caught) -> None:
    """Record how this allocation ended; if it computed nothing or the run is done, cancel the continuation."""
    from epcg.runtime import batch

    history = batch.read_history(run)
    mine = next(a for a in reversed(history["allocations"]) if a.get("pid") == os.getpid())
    mine.update(ended_at=round(time.time(), 3), why=why)
    if "signal" in caught:
        mine["signal_at"] = round(caught["at"], 3)
    tasks = _tasks(run)
    records = run.done(tasks)
    done = batch.chunks_between(records, began, None)
    batch.write_history(run, history)
    batch.settle(history, records)
    stop = "the run is finished" if why == "finished" else batch.decide(history, None, len(tasks) - len(records))
    if stop:
        _cancel_next(run, kind, stop)
    if why == "finished":
        _refresh_outputs(run)
    click.echo(f"epcg: allocation ended: {why}; {len(done)} chunks done in it")


def _refresh_outputs(run) -> None:
    """results.json and report.html with the last allocation's end (they were written just before it)."""
    import json

    from epcg.api.runs import Run
    from epcg.report.html import write_report
    from epcg.runtime import batch

    results = json.loads(run.read_text(RESULTS))
    results["allocations"] = batch.history_for_results(run, run.done(_tasks(run)))
    run.write_results(results)
    write_report(Run(run.path))


def _tasks(run):
    from epcg.runtime.engine import prepare_resume

    return prepare_resume(run.path).plan.tasks()


def _cancel_next(run, kind, why: str) -> None:
    from epcg.runtime import batch

    history = batch.read_history(run)
    if kind is None or not history["next"]:
        return
    _call(kind.cancel_args(history["next"], drain=False))
    click.echo(f"epcg: continuation job {history['next']} cancelled: {why}")
    history["next"] = None
    batch.write_history(run, history)
