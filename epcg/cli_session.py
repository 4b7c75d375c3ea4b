"""What the commands that run chunks share: the cluster a run uses, the checks before it starts, the session
loop with its signals, progress and live.json, and the outputs printed at the end.

``epcg run``/``resume`` (:mod:`epcg.cli`) and ``submit``/``drive`` (:mod:`epcg.cli_batch`) call :func:`go`.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from pathlib import Path

import click

from epcg.runtime.errors import Interrupted, UserError


def go(prepared, new: bool, max_tasks: int, everything: bool, workers, threads_per_worker, scheduler,
       scheduler_file, cluster_file, performance_report, serial, force, check) -> None:
    """Run ``prepared``'s unfinished chunks on the cluster the options name, with progress and live.json, then
    write and print its outputs; SIGINT, SIGTERM and SIGHUP stop it with the resume command."""
    from epcg.runtime.logs import kept, to_run_directory
    from epcg.runtime.progress import for_output
    from epcg.runtime.session import claimed, refuse_in_use, run_plan

    plan, run = prepared.plan, prepared.run
    if not new:
        run.group  # noqa: B018 - a missing store ends here, before the lock or any write
        refuse_in_use(run)
        run.identity()  # a damaged run.json ends here, before the cluster starts
    if serial and performance_report:
        raise UserError("--performance-report is Dask's report, and --serial runs without Dask: leave out one")
    spec = cluster_spec(cluster_file, scheduler, scheduler_file, workers, threads_per_worker, serial)
    spec = _logs_in_run(spec, run)
    done = run.done(plan.tasks()) if run.exists() else {}
    if check:
        import json

        from epcg.runtime.checked import check_first_slices

        check_first_slices(prepared.job.domain, json.dumps(prepared.job.to_dict(), sort_keys=True))
    progress = for_output(sys.stderr, done)
    with signals() as stop, kept(restore=False) as log:
        try:
            if serial:
                prepared = check_plan(prepared, None, None, done, max_tasks, force)
                _announce(prepared, done)
                with claimed(prepared, new), to_run_directory(log, None, run.logs_dir()):
                    if not new:
                        verify_chunks(prepared, None, everything, before_resume=True)
                    run_plan(prepared, None, [progress])
            else:
                from epcg.runtime.cluster import (
                    JobqueueSpec,
                    LocalSpec,
                    connect,
                    dashboard_url,
                )
                from epcg.runtime.dask_executor import PATIENCE, DaskExecutor

                if isinstance(spec, LocalSpec):
                    prepared = check_plan(prepared, spec, None, done, max_tasks, force)
                with connect(spec) as client:
                    if not isinstance(spec, LocalSpec):
                        prepared = check_plan(prepared, spec, client, done, max_tasks, force)
                    if not (scheduler or scheduler_file or cluster_file or isinstance(spec, LocalSpec)):
                        click.echo(f"using the scheduler at {spec.address} (DASK_SCHEDULER_ADDRESS)")
                    _announce(prepared, done)
                    dashboard = dashboard_url(client, spec)
                    click.echo(f"Dask dashboard: {dashboard}")
                    executor = DaskExecutor(client, patience=None if isinstance(spec, JobqueueSpec) else PATIENCE)
                    with claimed(prepared, new), to_run_directory(log, client, run.logs_dir()), \
                            _live(run, client, dashboard), _report(run, performance_report):
                        from epcg.report.dashboard import register

                        click.echo(f"epcg progress: {register(client, run.path) or 'not on this scheduler'}")
                        if not new:
                            verify_chunks(prepared, executor, everything, before_resume=True)
                        run_plan(prepared, executor, [progress])
        except KeyboardInterrupt:
            progress.on_run_end()
            click.echo(f"\ninterrupted; 'epcg resume {run.path}' continues where this stopped", err=True)
            sys.exit(EXIT_STATUS.get(stop.get("signal"), 130))
        except UserError:
            raise
        except Exception:
            if log.errors and log.path:
                click.echo(f"Dask logged {log.errors} errors: {log.path}", err=True)
            raise
    print_outputs(run)


def checked_when_serial(serial: bool, job_data) -> None:
    """A serial run of a user's space compiles the user's kernels with bounds checks (:mod:`epcg.runtime.checked`):
    in this process an index out of bounds would corrupt memory silently rather than crash a worker.
    ``job_data()`` reads the job's TOML as plain data (only for a serial run)."""
    from epcg.runtime.checked import enable, names_space

    if serial and names_space(job_data()):
        enable()


def stored_job(run_dir: str) -> dict:
    """A run's job.toml as plain data, wherever the run is stored ({} if it has none: resume says so)."""
    from epcg.runtime.jobs import loads_toml
    from epcg.runtime.store import JOB_FILE, RunDir

    run = RunDir(run_dir)
    text = run.read_text(JOB_FILE)
    return {} if text is None else loads_toml(text, run.job_path)


def _announce(prepared, done) -> None:
    for note in prepared.notes:
        click.echo(f"note: {note}")
    plan = prepared.plan
    click.echo(f"{prepared.job.name}: {plan.num_tasks - len(done)} of {plan.num_tasks} chunks to do "
               f"in {len(plan.stages)} stages -> {prepared.run.path}")


def check_plan(prepared, spec, client, done, max_tasks: int, force: bool):
    """The prepared job, fitted to the workers' memory if it is new (:func:`~epcg.runtime.session.fit_memory`);
    refuse (one line) a job whose memory, disk or task count the workers cannot take."""
    from epcg.runtime.cluster import (
        LocalSpec,
        default_workers,
        local_memory,
        worker_memory,
    )
    from epcg.runtime.estimate import Limits, check, figures, machine_memory
    from epcg.runtime.registry import job_kind
    from epcg.runtime.session import fit_memory

    run = prepared.run
    if spec is None:
        workers, memory = 1, machine_memory()
    elif isinstance(spec, LocalSpec):
        workers, memory = spec.workers or default_workers(), local_memory(spec)
    else:
        workers = max(1, len(client.scheduler_info(n_workers=-1)["workers"]))
        memory = worker_memory(client, spec)
    if not run.exists():
        prepared = fit_memory(prepared, memory, workers)
    job, plan, _ = prepared
    limits = Limits(workers=workers, memory_per_worker=memory, free_disk=run.location.free_bytes(), max_tasks=max_tasks)
    check(figures(job_kind(job.domain), job.config, plan, workers, set(done)), limits, force)
    return prepared


EXIT_STATUS = {signal.SIGTERM: 143, signal.SIGHUP: 129}
"""Exit status after a stop by signal (128 + its number, as a shell reports it); Ctrl-C is 130."""


@contextlib.contextmanager
def signals():
    """SIGTERM and SIGHUP (the terminal closed) end the client like Ctrl-C: futures cancelled, whole
    chunks kept, resume command printed."""
    seen: dict[str, int] = {}

    def on_term(signum, _frame):
        seen["signal"] = signum
        raise Interrupted()

    previous = {signum: signal.signal(signum, on_term) for signum in EXIT_STATUS}
    try:
        yield seen
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def verify_chunks(prepared, executor, everything: bool, before_resume: bool) -> list[str]:
    """Check chunks recorded since the last check (all with ``everything``) where the executor runs tasks; say what
    was found. Damaged chunks lose their records, so resume recomputes exactly those. Returns their task ids."""
    from epcg.runtime.session import checkable, verify

    run, plan = prepared.run, prepared.plan
    checked, bad = verify(prepared, executor, everything)
    where = "in this process" if executor is None else f"on {workers_text(executor)}"
    if not bad:
        if not before_resume and not checked:
            click.echo(f"{run.path}: nothing to check, every finished chunk was verified since it was recorded "
                       "(--all reads them again)")
        elif not before_resume:
            skipped = len(checkable(run, plan)) - checked
            click.echo(f"{run.path}: {checked} chunks checked {where}, all intact"
                       + (f" ({skipped} verified earlier, not read again; --all reads them too)" if skipped else ""))
        return bad
    if before_resume:
        click.echo(f"{len(bad)} of {checked} checked chunks were damaged on disk and will be recomputed: "
                   f"{', '.join(bad)}")
        click.echo(f"now {plan.num_tasks - len(run.done(plan.tasks()))} of {plan.num_tasks} chunks to do")
    else:
        click.echo(f"{run.path}: {len(bad)} of {checked} chunks checked {where} are damaged on disk: {', '.join(bad)}")
        click.echo(f"their records were removed; 'epcg resume {run.path}' recomputes them")
    return bad


def workers_text(executor) -> str:
    count = len(executor.client.scheduler_info(n_workers=-1)["workers"])
    return f"{count} Dask worker{'s' if count != 1 else ''} ({executor.client.scheduler.address})"


@contextlib.contextmanager
def connected_executor(spec):
    """A Dask executor on the cluster ``spec`` names (connected for the block), or None for this process."""
    if spec is None:
        yield None
        return
    from epcg.runtime.cluster import connect
    from epcg.runtime.dask_executor import DaskExecutor

    with connect(spec) as client:
        yield DaskExecutor(client)


def cluster_spec(cluster_file, scheduler, scheduler_file, workers, threads_per_worker, serial=False):
    """The cluster: --scheduler, --scheduler-file or --cluster FILE, else $DASK_SCHEDULER_ADDRESS, else embedded;
    None with --serial (which takes none of the others)."""
    import dask

    from epcg.runtime.cluster import LocalSpec, SchedulerSpec, load_cluster

    given = [name for name, value in (("--scheduler", scheduler), ("--scheduler-file", scheduler_file),
                                      ("--cluster", cluster_file)) if value]
    if serial:
        given += [name for name, value in (("--workers", workers), ("--threads-per-worker", threads_per_worker))
                  if value]
        if given:
            raise UserError(f"--serial runs in this process, without Dask: leave out {', '.join(given)}")
        return None
    if len(given) > 1:
        raise UserError(f"give one of {', '.join(given)}, not several")
    if scheduler:
        return SchedulerSpec(kind="scheduler", address=scheduler)
    if scheduler_file:
        return SchedulerSpec(kind="scheduler", scheduler_file=Path(scheduler_file).absolute())
    overrides = {k: v for k, v in (("workers", workers), ("threads_per_worker", threads_per_worker)) if v}
    from_env = dask.config.get("scheduler-address", None)
    if not cluster_file and from_env and not overrides:
        return SchedulerSpec(kind="scheduler", address=from_env)
    spec = load_cluster(cluster_file) if cluster_file else LocalSpec()
    if overrides and not isinstance(spec, LocalSpec):
        raise UserError("--workers and --threads-per-worker apply to the local cluster only")
    return spec.model_copy(update=overrides)


LIVE_REFRESH = 5.0
"""Seconds between updates of DIR/live.json's worker count (adaptive clusters grow and shrink)."""


@contextlib.contextmanager
def _live(run, client, dashboard):
    """While a run is live, DIR/live.json tells `epcg status` where its dashboard is and how many workers it has."""
    import json
    import os
    import socket
    import threading

    from epcg.runtime.dask_executor import hosts
    from epcg.runtime.store import LIVE

    info = {"pid": os.getpid(), "host": socket.gethostname(), "dashboard": dashboard,
            "scheduler": client.scheduler.address}

    def write() -> None:
        info["hosts"] = hosts(client)
        info["workers"] = sum(info["hosts"].values())
        run.write_text(LIVE, json.dumps(info))

    def refresh() -> None:
        while not stopped.wait(LIVE_REFRESH):
            with contextlib.suppress(Exception):  # a scheduler going away ends the run, not this thread's job
                write()

    write()
    stopped = threading.Event()
    thread = threading.Thread(target=refresh, name="epcg-live", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stopped.set()
        thread.join()
        run.delete(LIVE)


def _logs_in_run(spec, run):
    """Worker jobs of a SLURM or PBS cluster write their logs into DIR/logs/ unless the cluster file says where (a
    run on an object store has no directory the nodes share: there the batch system's default stays)."""
    from epcg.runtime.cluster import JobqueueSpec

    if isinstance(spec, JobqueueSpec) and spec.log_directory is None and run.location.is_local:
        return spec.model_copy(update={"log_directory": str(run.path / "logs")})
    return spec


def _report(run, enabled: bool):
    """Dask's performance report into DIR/performance-report.html, when asked for."""
    if not enabled:
        return contextlib.nullcontext()
    from distributed import performance_report

    return run.published(performance_report, "performance-report.html")


def print_outputs(run) -> None:
    """Write report.html, then say where the outputs are (only once all of them are written)."""
    from epcg.api.runs import Run
    from epcg.report.html import write_report
    from epcg.runtime.session import writing_outputs
    from epcg.runtime.store import FIGURES, SUMMARY

    with writing_outputs(run):
        report = write_report(Run(run.location.where))
    click.echo(run.read_text(SUMMARY))
    click.echo(f"results: {run.results_path}\nsummary: {run.summary_path}\nfigures: {run.describe(FIGURES)}/")
    click.echo(f"report:  {report} (open it in any browser)")
