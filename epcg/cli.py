"""``epcg plan | run | resume | status | verify | report``: the command line over :mod:`epcg.runtime.session`.

``submit`` and ``cancel`` (runs as batch jobs) are in :mod:`epcg.cli_batch`.
"""

from __future__ import annotations

import contextlib
import errno
import signal
import sys
from pathlib import Path

import click

from epcg.runtime.errors import (
    Interrupted,
    InvalidValue,
    OutputFailed,
    StaleTask,
    TaskFailed,
    UserError,
)

CONNECT_OPTIONS = [
    click.option("--workers", type=click.IntRange(min=1), help="Local worker processes (default: one per core)."),
    click.option("--threads-per-worker", type=click.IntRange(min=1), help="Threads per local worker (default 1)."),
    click.option("--scheduler", metavar="ADDRESS",
                 help="Use a running Dask scheduler, e.g. tcp://host:8786 (default: $DASK_SCHEDULER_ADDRESS)."),
    click.option("--scheduler-file", type=click.Path(path_type=Path),
                 help="Use the running Dask scheduler described by this file (dask scheduler --scheduler-file)."),
    click.option("--cluster", "cluster_file", type=click.Path(path_type=Path),
                 help="A cluster file: cluster/local.toml, scheduler.toml, slurm.toml, pbs.toml."),
    click.option("--serial", is_flag=True, help="Run in this process, without Dask (debugging)."),
]
"""Where tasks run: the embedded cluster (default), a running scheduler, a cluster file, or this process."""
CLUSTER_OPTIONS = CONNECT_OPTIONS + [
    click.option("--performance-report", is_flag=True,
                 help="Save Dask's HTML performance report in the run directory."),
    click.option("--max-tasks", type=click.IntRange(min=1), default=None,
                 help="Most tasks a run may have; beyond it chunks are coarsened (default 100,000)."),
    click.option("--force", is_flag=True,
                 help="Run even if the plan says the workers' memory or the free disk is too small."),
    click.option("--check", is_flag=True,
                 help="First run a slice of each stage of a user's space with numba bounds checks (one line if an "
                      "index is out of bounds)."),
]


def cluster_options(func):
    for option in reversed(CLUSTER_OPTIONS):
        func = option(func)
    return func


def connect_options(func):
    for option in reversed(CONNECT_OPTIONS):
        func = option(func)
    return func


class EpcgGroup(click.Group):
    """Turn an error anywhere into one line: bad input exits 2, a failed chunk 1."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except UserError as exc:
            _fail(str(exc), 2)
        except click.UsageError as exc:
            _fail(exc.format_message(), 2)
        except (TaskFailed, OutputFailed) as exc:
            _fail(str(exc), 1)
        except StaleTask as exc:
            _fail(f"this client no longer owns the run: {exc}", 2)
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES):
                raise
            _fail(f"{exc.strerror}: {exc.filename or ''}".rstrip(": "),
                  1 if exc.errno in (errno.ENOSPC, errno.EDQUOT) else 2)
        except MemoryError:
            _fail("out of memory in the epcg client; the job is too large for this machine", 2)


def _fail(message: str, status: int) -> None:
    click.echo(f"epcg: error: {' '.join(message.split())}", err=True)
    sys.exit(status)


@click.group(cls=EpcgGroup)
@click.version_option(package_name="epcg")
def main() -> None:
    """Exhaustive procedural content generation as distributed batch jobs."""


@main.command()
@click.argument("job_file", type=click.Path(path_type=Path))
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a job key with a TOML value.")
@click.option("--workers", type=click.IntRange(min=1), help="Worker processes to plan for (default: one per core).")
@click.option("--threads-per-worker", type=click.IntRange(min=1), default=1, show_default=True,
              help="Threads per worker process: they share its memory and each runs tasks.")
@click.option("--memory-limit", metavar="SIZE", help="Memory per worker process to check against, e.g. 64GiB.")
@click.option("--out", help="Where the run would go: a path or a URL such as s3://bucket/prefix.")
@click.option("--max-tasks", type=click.IntRange(min=1), default=None, help="Most tasks a run may have.")
@click.option("--cluster", "cluster_file", type=click.Path(path_type=Path),
              help="Plan for this cluster file's workers (slurm/pbs: one allocation of `epcg submit`).")
def plan(job_file: Path, overrides: tuple[str, ...], workers, threads_per_worker, memory_limit, out,
         max_tasks, cluster_file) -> None:
    """Print what JOB_FILE would cost, stage by stage, and whether `run` would accept it (nothing is written)."""
    from epcg.runtime.cluster import (
        LocalSpec,
        default_workers,
        local_memory,
        parse_size,
    )
    from epcg.runtime.estimate import MAX_TASKS, Limits, check, figures, io_table, table
    from epcg.runtime.jobs import load_job
    from epcg.runtime.registry import job_kind
    from epcg.runtime.session import Prepared, fit_memory, plan_job, run_directory
    from epcg.runtime.store import RunDir

    job = load_job(job_file, list(overrides))
    where = run_directory(out if out is not None else Path("runs") / job.name)
    if cluster_file is not None:
        n, memory, threads_per_worker = _planned_workers(cluster_file, workers, memory_limit)
    else:
        n = workers or default_workers()
        memory = parse_size(memory_limit, "--memory-limit") if memory_limit else local_memory(LocalSpec(workers=n))
    job, job_plan, notes = plan_job(job, max_tasks or MAX_TASKS)
    fitted = fit_memory(Prepared(job, job_plan, RunDir(where), notes), memory, n)
    job, job_plan, notes = fitted.job, fitted.plan, fitted.notes
    limits = Limits(workers=n, memory_per_worker=memory, free_disk=fitted.run.location.free_bytes(),
                    max_tasks=max_tasks or MAX_TASKS,
                    threads=threads_per_worker)
    figs = figures(job_kind(job.domain), job.config, job_plan, n * threads_per_worker)
    for note in notes:
        click.echo(f"note: {note}")
    click.echo(f"{job.name} ({job.domain}) -> {where}")
    click.echo(table(figs, limits))
    basis = getattr(job_kind(job.domain), "estimate_basis", None)
    if basis is not None:
        click.echo(f"estimated: {basis(job.config)}")
    for line in getattr(job_kind(job.domain), "plan_notes", lambda config: [])(job.config):
        click.echo(line)
    if not fitted.run.location.is_local:
        click.echo(f"\non the object store {where}:\n{io_table(figs, n * threads_per_worker)}")
    try:
        check(figs, limits)
    except UserError as exc:
        click.echo(f"run would refuse: {exc}")
        return
    click.echo("run would accept this job")


def _planned_workers(cluster_file: Path, workers, memory_limit) -> tuple[int, int, int]:
    """Workers, memory per worker and threads per worker that the cluster file gives a run."""
    from epcg.runtime.batch import worker_memory_limit, workers_per_node
    from epcg.runtime.cluster import (
        JobqueueSpec,
        LocalSpec,
        default_workers,
        load_cluster,
        local_memory,
    )

    if workers or memory_limit:
        raise UserError("--cluster gives the workers and their memory: drop --workers and --memory-limit")
    spec = load_cluster(cluster_file)
    if isinstance(spec, LocalSpec):
        n = spec.workers or default_workers()
        return n, local_memory(spec.model_copy(update={"workers": n})), spec.threads_per_worker
    if isinstance(spec, JobqueueSpec):
        n = spec.nodes * workers_per_node(spec)
        click.echo(f"note: planned as `epcg submit` runs it: {spec.nodes} node(s) x {workers_per_node(spec)} "
                   f"single-threaded workers, {spec.memory} per node, walltime {spec.walltime}")
        return n, worker_memory_limit(spec), 1
    raise UserError(f"cluster file {cluster_file}: kind = 'scheduler' does not say how many workers it has; "
                    "plan with --workers and --memory-limit instead")


@main.command()
@click.argument("job_file", type=click.Path(path_type=Path))
@click.option("--out", help="Run directory: a path or a URL such as s3://bucket/prefix (default runs/<job name>).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a job key with a TOML value.")
@cluster_options
def run(job_file: Path, out: str | None, overrides: tuple[str, ...], max_tasks, **cluster) -> None:
    """Run JOB_FILE in a new run directory."""
    from epcg.runtime.estimate import MAX_TASKS
    from epcg.runtime.jobs import load_job, read_toml
    from epcg.runtime.session import prepare_new

    _checked_when_serial(cluster["serial"], lambda: read_toml(job_file) if job_file.is_file() else {})
    prepared = prepare_new(load_job(job_file, list(overrides)), out, max_tasks or MAX_TASKS)
    _go(prepared, new=True, max_tasks=max_tasks or MAX_TASKS, everything=False, **cluster)


@main.command()
@click.argument("run_dir")
@click.option("--verify", "everything", is_flag=True,
              help="Re-check every finished chunk first (default: only chunks recorded since the last check).")
@cluster_options
def resume(run_dir: str, max_tasks, everything: bool, **cluster) -> None:
    """Finish an interrupted run: only its unfinished chunks are computed."""
    from epcg.runtime.estimate import MAX_TASKS
    from epcg.runtime.session import prepare_resume

    _checked_when_serial(cluster["serial"], lambda: _stored_job(run_dir))
    prepared = prepare_resume(run_dir)
    tasks = prepared.plan.num_tasks
    if max_tasks is not None and max_tasks < tasks:
        raise UserError(f"--max-tasks {max_tasks}: this run has {tasks:,} tasks, fixed when it started; "
                        f"resume finishes them (leave --max-tasks out, or start a new run with 'epcg run')")
    _go(prepared, new=False, max_tasks=max(max_tasks or MAX_TASKS, tasks), everything=everything, **cluster)


@main.command()
@click.argument("run_dir")
def status(run_dir: str) -> None:
    """Say what is done in a run directory: chunks per stage, throughput, ETA, dashboard (read-only, no lock)."""
    import json

    from epcg.runtime.batch import describe, read_batch, read_history, tunnel
    from epcg.runtime.session import prepare_resume
    from epcg.runtime.store import LIVE, REPORT, RESULTS, SUMMARY

    job, plan, run = prepare_resume(run_dir)
    tasks = plan.tasks()
    done = run.done(tasks)
    live = run.is_locked()
    written = all(run.has(key) for key in (RESULTS, SUMMARY, REPORT))
    state = "running" if live else ("finished" if written else "stopped")
    submitted = read_batch(run)
    if submitted and state == "stopped" and read_history(run)["next"]:
        state = "waiting for its next allocation"
    click.echo(f"{run.path}: job {job.name} ({job.domain}), {state}")
    for line in describe(run, submitted, done, written) if submitted else []:
        click.echo(line)
    try:
        info = json.loads(run.read_text(LIVE) or "{}") if live else {}
    except (OSError, ValueError):
        info = {}
    if info:
        click.echo(f"dashboard: {info.get('dashboard')}  scheduler: {info.get('scheduler')}  "
                   f"workers: {info.get('workers')}")
        ssh = tunnel(info.get("dashboard") or "", info.get("host"))
        if ssh:
            click.echo(f"from your machine: {ssh}")
    click.echo(f"{'stage':<28} {'chunks':>15} {'compute s':>10}")
    for stage in plan.stages:
        finished = [done[t.id] for t in stage.tasks if t.id in done]
        seconds = sum(r.get("seconds", 0) for r in finished)
        click.echo(f"{stage.name:<28} {len(finished):>7}/{len(stage.tasks):<7} {seconds:>10.2f}")
    click.echo(f"{'total':<28} {len(done):>7}/{plan.num_tasks:<7}")
    if not live and not written and len(done) == plan.num_tasks:
        click.echo(f"every chunk is done, but results, summary or report.html are missing: "
                   f"'epcg report {run.path}' writes them")
    torn = run.torn(tasks)
    if torn:
        click.echo(f"{len(torn)} damaged records (those chunks will be recomputed): {', '.join(torn[:10])}")
    records = list(done.values())
    if records and len(done) < plan.num_tasks:
        first = min(r["ended_at"] - r["seconds"] for r in records)
        rate = len(records) / max(max(r["ended_at"] for r in records) - first, 1e-9)
        left = plan.num_tasks - len(done)
        eta = (f"ETA {left / rate / 60:.1f} min of computing at that rate" if live or submitted
               else f"resume with 'epcg resume {run.path}'")
        click.echo(f"throughput {rate:.2f} chunks/s over the run so far; {left} chunks left; {eta}")


@main.command()
@click.argument("run_dir")
@click.option("--all", "everything", is_flag=True,
              help="Check every finished chunk (default: only chunks not verified since they were recorded).")
@click.option("--repair", is_flag=True,
              help="First rebuild a lost manifest/job.sha256 (from job.toml) or run.json (from the records); "
                   "then check every chunk.")
@connect_options
def verify(run_dir: str, everything: bool, repair: bool, workers, threads_per_worker, scheduler, scheduler_file,
           cluster_file, serial) -> None:
    """Check finished chunks' stored bytes on the cluster; damaged chunks are forgotten so resume redoes them.

    Exit status 0 if every checked chunk is intact, 1 if some were damaged (their
    records are removed), 2 if the store is missing or unreadable (nothing removed).
    """
    from epcg.runtime.logs import kept, to_run_directory
    from epcg.runtime.session import claimed, prepare_resume, unverified
    from epcg.runtime.session import repair as rebuild
    from epcg.runtime.store import RunDir

    if repair:
        with RunDir(run_dir).lock():
            for what in rebuild(run_dir):
                click.echo(f"{RunDir(run_dir).path}: rebuilt {what}")
        everything = True
    prepared = prepare_resume(run_dir)
    prepared.run.group  # noqa: B018 - a missing store ends here, before the cluster, the lock or any write
    spec = _cluster_spec(cluster_file, scheduler, scheduler_file, workers, threads_per_worker, serial)
    with kept(restore=False) as log, claimed(prepared, new=False), to_run_directory(log, None, prepared.run.logs_dir()):
        if not everything and not unverified(prepared):
            spec = None  # nothing to read: no cluster to start
        with _executor(spec) as executor:
            bad = _verify(prepared, executor, everything, before_resume=False)
    if bad:
        sys.exit(1)


@main.command()
@click.argument("run_dir")
def report(run_dir: str) -> None:
    """Rebuild results.json, summary.md, figures and report.html of a finished run."""
    from epcg.runtime.session import claimed, finish, prepare_resume

    prepared = prepare_resume(run_dir)
    with claimed(prepared, new=False):
        finish(prepared)
    _print_outputs(prepared.run)


@main.command()
@click.argument("run_dir")
@click.option("--out", type=click.Path(path_type=Path),
              help="Where to write (default RUN_DIR/export; for a run at a URL ./<job name>-export).")
@click.option("--limit", type=click.IntRange(min=1), default=1000, show_default=True, help="Objects at most.")
@click.option("--pictures", type=click.Choice(["png", "svg", "none"]), default="png", show_default=True)
@click.option("--where", multiple=True, metavar="KEY=VALUE",
              help="A filter of Run.puzzles/boards/triples/maps/designs/states, e.g. --where pieces=8 --where "
                   "min_ratio=50, --where role=max, --where row=r001.")
def export(run_dir: str, out: Path | None, limit: int, pictures: str, where: tuple[str, ...]) -> None:
    """Write what a run found as JSON lines (found.jsonl) and pictures; schema: epcg/api/export.py."""
    import epcg
    from epcg.api.export import export as write

    if out is not None and out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file, not a directory")
    pairs = [_filter(text) for text in where]
    filters = dict(pairs)
    if len(filters) < len(pairs):
        twice = next(key for i, (key, _) in enumerate(pairs) if key in dict(pairs[:i]))
        raise UserError(f"--where {twice} is given twice: a filter takes one value (run export once per value)")
    try:
        opened = epcg.open(run_dir)
        done = write(opened, out or opened.default_export(), limit=limit,
                     pictures=None if pictures == "none" else pictures, **filters)
    except (TypeError, InvalidValue) as exc:
        raise UserError(f"--where: {exc}") from None
    click.echo(f"{done.count:,} objects: {done.path}")
    if done.cut:
        click.echo(f"note: the run found more than {limit:,} that match; these are the first {limit:,} "
                   "(--limit N for more, --where KEY=VALUE to choose)")


def _filter(text: str) -> tuple[str, object]:
    """``--where KEY=VALUE``: VALUE as a TOML value, or as plain text when it is not one (``length=longest``)."""
    import tomllib

    key, sep, value = text.partition("=")
    if not sep or not key.strip().isidentifier():
        raise UserError(f"malformed --where {text!r}: expected KEY=VALUE, e.g. --where pieces=8")
    try:
        return key.strip(), tomllib.loads(f"v = {value.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        return key.strip(), value.strip()


def _go(prepared, new: bool, max_tasks: int, everything: bool, workers, threads_per_worker, scheduler,
        scheduler_file, cluster_file, performance_report, serial, force, check) -> None:
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
    spec = _cluster_spec(cluster_file, scheduler, scheduler_file, workers, threads_per_worker, serial)
    spec = _logs_in_run(spec, run)
    done = run.done(plan.tasks()) if run.exists() else {}
    if check:
        import json

        from epcg.runtime.checked import check_first_slices

        check_first_slices(prepared.job.domain, json.dumps(prepared.job.to_dict(), sort_keys=True))
    progress = for_output(sys.stderr, done)
    with _signals() as stop, kept(restore=False) as log:
        try:
            if serial:
                prepared = _check_plan(prepared, None, None, done, max_tasks, force)
                _announce(prepared, done)
                with claimed(prepared, new), to_run_directory(log, None, run.logs_dir()):
                    if not new:
                        _verify(prepared, None, everything, before_resume=True)
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
                    prepared = _check_plan(prepared, spec, None, done, max_tasks, force)
                with connect(spec) as client:
                    if not isinstance(spec, LocalSpec):
                        prepared = _check_plan(prepared, spec, client, done, max_tasks, force)
                    if not (scheduler or scheduler_file or cluster_file or isinstance(spec, LocalSpec)):
                        click.echo(f"using the scheduler at {spec.address} (DASK_SCHEDULER_ADDRESS)")
                    _announce(prepared, done)
                    dashboard = dashboard_url(client, spec)
                    click.echo(f"Dask dashboard: {dashboard}")
                    executor = DaskExecutor(client, patience=None if isinstance(spec, JobqueueSpec) else PATIENCE)
                    with claimed(prepared, new), to_run_directory(log, client, run.logs_dir()), \
                            _live(run, client, dashboard), _report(run, performance_report):
                        from epcg.dashboard import register

                        click.echo(f"epcg progress: {register(client, run.path) or 'not on this scheduler'}")
                        if not new:
                            _verify(prepared, executor, everything, before_resume=True)
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
    _print_outputs(run)


def _checked_when_serial(serial: bool, job_data) -> None:
    """A serial run of a user's space compiles the user's kernels with bounds checks (:mod:`epcg.runtime.checked`):
    in this process an index out of bounds would corrupt memory silently rather than crash a worker.
    ``job_data()`` reads the job's TOML as plain data (only for a serial run)."""
    from epcg.runtime.checked import enable, names_space

    if serial and names_space(job_data()):
        enable()


def _stored_job(run_dir: str) -> dict:
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


def _check_plan(prepared, spec, client, done, max_tasks: int, force: bool):
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
def _signals():
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


def _verify(prepared, executor, everything: bool, before_resume: bool) -> list[str]:
    """Check chunks recorded since the last check (all with ``everything``) where the executor runs tasks; say what
    was found. Damaged chunks lose their records, so resume recomputes exactly those. Returns their task ids."""
    from epcg.runtime.session import checkable, verify

    run, plan = prepared.run, prepared.plan
    checked, bad = verify(prepared, executor, everything)
    where = "in this process" if executor is None else f"on {_workers(executor)}"
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


def _workers(executor) -> str:
    count = len(executor.client.scheduler_info(n_workers=-1)["workers"])
    return f"{count} Dask worker{'s' if count != 1 else ''} ({executor.client.scheduler.address})"


@contextlib.contextmanager
def _executor(spec):
    """A Dask executor on the cluster ``spec`` names (connected for the block), or None for this process."""
    if spec is None:
        yield None
        return
    from epcg.runtime.cluster import connect
    from epcg.runtime.dask_executor import DaskExecutor

    with connect(spec) as client:
        yield DaskExecutor(client)


def _cluster_spec(cluster_file, scheduler, scheduler_file, workers, threads_per_worker, serial=False):
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

    from epcg.runtime.store import LIVE

    info = {"pid": os.getpid(), "host": socket.gethostname(), "dashboard": dashboard,
            "scheduler": client.scheduler.address}

    def write() -> None:
        info["workers"] = len(client.scheduler_info(n_workers=-1)["workers"])
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


def _print_outputs(run) -> None:
    """Write report.html, then say where the outputs are (only once all of them are written)."""
    from epcg.report_html import write_report
    from epcg.runtime.session import writing_outputs
    from epcg.runtime.store import FIGURES, SUMMARY

    with writing_outputs(run):
        report = write_report(run.location.where)
    click.echo(run.read_text(SUMMARY))
    click.echo(f"results: {run.results_path}\nsummary: {run.summary_path}\nfigures: {run.describe(FIGURES)}/")
    click.echo(f"report:  {report} (open it in any browser)")


from epcg import cli_batch  # noqa: E402, F401 - registers submit, cancel and drive on `main`

if __name__ == "__main__":
    main()
