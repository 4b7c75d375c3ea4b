"""``epcg plan | run | resume | status | verify | report | export``: the command line over the run engine
(:mod:`epcg.runtime.engine`): the commands parse options and print; the engine does the work.

``submit``, ``cancel`` and ``drive`` (runs as batch jobs) are in :mod:`epcg.cli_batch`, registered here; what
running commands share (the engine as the command line builds it, what a run prints) is in :mod:`epcg.cli_session`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from epcg import cli_batch
from epcg.cli_session import cli_engine, print_outputs, run_session
from epcg.runtime.errors import (
    InvalidValue,
    OutputFailed,
    StaleTask,
    TaskFailed,
    UserError,
)
from epcg.runtime.stopping import caught_signals, exit_status

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
    """Turn an error anywhere into one line: bad input exits 2, a failed chunk or a fault during a run 1 (the
    engine has already named an OSError of a run for what it is: input before the run, a fault during it)."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except UserError as exc:
            _fail(str(exc), getattr(exc, "exit_status", 2))
        except click.UsageError as exc:
            _fail(exc.format_message(), 2)
        except (TaskFailed, OutputFailed) as exc:
            _fail(str(exc), 1)
        except StaleTask as exc:
            _fail(f"this client no longer owns the run: {exc}", 2)
        except BrokenPipeError:  # the reader went away (`epcg status | head`): stop quietly, as `cat` does
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
            sys.exit(1)
        except OSError as exc:  # a path the user gave, read outside the engine (status, export): the input
            from epcg.runtime.engine import describe_os_error

            _fail(describe_os_error(exc), 2)
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
@click.option("--threads-per-worker", type=click.IntRange(min=1),
              help="Threads per worker process: they share its memory and each runs tasks (default: 1; for "
                   "Fling! without --workers, one process with a thread per core and one more, as run starts "
                   "it).")
@click.option("--memory-limit", metavar="SIZE", help="Memory per worker process to check against, e.g. 64GiB.")
@click.option("--out", help="Where the run would go: a path or a URL such as s3://bucket/prefix.")
@click.option("--max-tasks", type=click.IntRange(min=1), default=None, help="Most tasks a run may have.")
@click.option("--cluster", "cluster_file", type=click.Path(path_type=Path),
              help="Plan for this cluster file's workers (slurm/pbs: one allocation of `epcg submit`).")
def plan(job_file: Path, overrides: tuple[str, ...], workers, threads_per_worker, memory_limit, out,
         max_tasks, cluster_file) -> None:
    """Print what JOB_FILE would cost, stage by stage, and whether `run` would accept it (nothing is written)."""
    from epcg.runtime.cluster import LocalSpec, computing, default_shape, default_workers, local_memory, parse_size
    from epcg.runtime.engine import Engine, small_job
    from epcg.runtime.estimate import MAX_TASKS, Limits, check, figures, io_table, table
    from epcg.runtime.outdir import run_directory
    from epcg.runtime.registry import job_kind
    from epcg.runtime.store import RunDir
    from epcg.runtime.tuning import fit_memory, plan_job

    job = Engine().load(job_file, overrides)
    where = run_directory(out if out is not None else Path("runs") / job.name)
    if cluster_file is not None:
        n, memory, threads_per_worker = _planned_workers(cluster_file, workers, memory_limit)
        parallel = n * threads_per_worker
    else:
        if workers or threads_per_worker:
            n, threads_per_worker = workers or default_workers(), threads_per_worker or 1
            parallel = n * threads_per_worker
        else:
            n, threads_per_worker = default_shape(job_kind(job.domain))
            parallel = computing(n, threads_per_worker)
        memory = parse_size(memory_limit, "--memory-limit") if memory_limit else local_memory(LocalSpec(workers=n))
    tuned = fit_memory(plan_job(job, max_tasks or MAX_TASKS), memory, n)
    job, job_plan, location = tuned.job, tuned.plan, RunDir(where).location
    limits = Limits(workers=n, memory_per_worker=memory, free_disk=location.free_bytes(),
                    max_tasks=max_tasks or MAX_TASKS, threads=threads_per_worker)
    kind = job_kind(job.domain)
    figs = figures(kind, job.config, job_plan, parallel)
    for note in tuned.notes:
        click.echo(f"note: {note}")
    click.echo(f"{job.name} ({job.domain}) -> {where}")
    click.echo(table(figs, limits))
    basis = kind.estimate_basis(job.config)
    if basis is not None:
        click.echo(f"estimated: {basis}")
    for line in kind.plan_notes(job.config):
        click.echo(line)
    if not location.is_local:
        click.echo(f"\non the object store {where}:\n{io_table(figs, parallel)}")
    seconds = small_job(job, job_plan) if cluster_file is None and not workers else None
    if seconds is not None:
        click.echo(f"epcg run would run it in this process, without Dask: a small job (about {seconds:.1f} s of "
                   "compute; --workers N or a cluster runs it on Dask)")
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
    runner, where, options = _session(cluster, max_tasks)
    prepared = runner.start(runner.load(job_file, overrides, where), out, options)
    run_session(runner, prepared, True, where, options)


def _session(cluster: dict, max_tasks: int | None, everything: bool = False):
    """The engine, the target the options name and the run's options."""
    from epcg.runtime.engine import Options, target
    from epcg.runtime.estimate import MAX_TASKS

    runner = cli_engine()
    where = target(cluster["cluster_file"], cluster["scheduler"], cluster["scheduler_file"], cluster["workers"],
                   cluster["threads_per_worker"], cluster["serial"])
    options = Options(max_tasks=max_tasks or MAX_TASKS, force=cluster["force"], check=cluster["check"],
                      verify_all=everything, performance_report=cluster["performance_report"])
    return runner, where, options


@main.command()
@click.argument("run_dir")
@click.option("--verify", "everything", is_flag=True,
              help="Re-check every finished chunk first (default: only chunks recorded since the last check).")
@cluster_options
def resume(run_dir: str, max_tasks, everything: bool, **cluster) -> None:
    """Finish an interrupted run: only its unfinished chunks are computed."""
    runner, where, options = _session(cluster, max_tasks, everything)
    if where.in_process and where.named:
        from epcg.runtime.checked import enable, names_space

        if names_space(_stored_job(run_dir)):
            enable()  # before the user's space is imported: its kernels compile with bounds checks
    prepared = runner.reopen(run_dir)
    tasks = prepared.plan.num_tasks
    if max_tasks is not None and max_tasks < tasks:
        raise UserError(f"--max-tasks {max_tasks}: this run has {tasks:,} tasks, fixed when it started; "
                        f"resume finishes them (leave --max-tasks out, or start a new run with 'epcg run')")
    run_session(runner, prepared, False, where, options)


def _stored_job(run_dir: str) -> dict:
    """A run's job.toml as plain data, wherever the run is stored ({} if it has none: resume says so)."""
    from epcg.runtime.jobs import loads_toml
    from epcg.runtime.store import JOB_FILE, RunDir

    run = RunDir(run_dir)
    text = run.read_text(JOB_FILE)
    return {} if text is None else loads_toml(text, run.job_path)


@main.command()
@click.argument("run_dir")
def status(run_dir: str) -> None:
    """Say what is done in a run directory: chunks per stage, throughput, ETA, dashboard (read-only, no lock)."""
    import json

    from epcg.runtime.batch import continue_command, describe, read_batch, tunnel
    from epcg.runtime.history import load
    from epcg.runtime.engine import prepare_resume
    from epcg.runtime.store import LIVE, REPORT, RESULTS, SUMMARY

    job, plan, run = prepare_resume(run_dir)
    tasks = plan.tasks()
    done = run.done(tasks)
    live = run.is_locked()
    written = all(run.has(key) for key in (RESULTS, SUMMARY, REPORT))
    state = "running" if live else ("finished" if written else "stopped")
    submitted = read_batch(run)
    if submitted and state == "stopped" and load(run).next:
        state = "waiting for its next allocation"
    click.echo(f"{run.path}: job {job.name} ({job.domain}), {state}")
    for line in describe(run, submitted, done, written) if submitted else []:
        click.echo(line)
    try:
        info = json.loads(run.read_text(LIVE) or "{}") if live else {}
    except (OSError, ValueError):
        info = {}
    if info:
        by_host = ", ".join(f"{host}: {n}" for host, n in (info.get("hosts") or {}).items())
        click.echo(f"dashboard: {info.get('dashboard')}  scheduler: {info.get('scheduler')}  "
                   f"workers: {info.get('workers')}" + (f" ({by_host})" if by_host else ""))
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
        if live or state.startswith("waiting"):
            eta = f"ETA {left / rate / 60:.1f} min of computing at that rate"
        else:
            eta = f"continue with {continue_command(run, submitted) if submitted else repr(f'epcg resume {run.path}')}"
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
    from epcg.runtime.engine import target

    where = target(cluster_file, scheduler, scheduler_file, workers, threads_per_worker, serial)
    if cli_engine().verify(run_dir, where, everything, repair):
        sys.exit(1)


@main.command()
@click.argument("run_dir")
def report(run_dir: str) -> None:
    """Rebuild results.json, summary.md, figures and report.html of a finished run."""
    outcome = cli_engine().report(run_dir)
    print_outputs(outcome.run, outcome.report)


@main.command()
@click.argument("run_dir")
@click.option("--out", type=click.Path(path_type=Path),
              help="Where to write (default RUN_DIR/export; for a run at a URL ./<job name>-export).")
@click.option("--limit", type=click.IntRange(min=1), default=1000, show_default=True, help="Objects at most.")
@click.option("--pictures", type=click.Choice(["png", "svg", "none"]), default="png", show_default=True)
@click.option("--where", multiple=True, metavar="KEY=VALUE",
              help="A filter of Run.puzzles/boards/triples/maps/designs/states, e.g. --where pieces=8 --where "
                   "min_ratio=50, --where role=max, --where row=r001. Fling! boards count mirror images; "
                   "--where orbits=true gives one board per symmetry orbit.")
def export(run_dir: str, out: Path | None, limit: int, pictures: str, where: tuple[str, ...]) -> None:
    """Write what a run found as JSON lines (found.jsonl) and pictures; fields: docs/cli.md, "What an export holds"."""
    import epcg
    from epcg.api.export import export as write

    pairs = [_filter(text) for text in where]
    filters = dict(pairs)
    if len(filters) < len(pairs):
        twice = next(key for i, (key, _) in enumerate(pairs) if key in dict(pairs[:i]))
        raise UserError(f"--where {twice} is given twice: a filter takes one value (run export once per value)")
    try:
        with caught_signals():  # the staging directory is removed, the previous export kept
            opened = epcg.open(run_dir)
            done = write(opened, out or opened.default_export(), limit=limit,
                         pictures=None if pictures == "none" else pictures, **filters)
    except (TypeError, InvalidValue) as exc:
        raise UserError(f"--where: {exc}") from None
    except KeyboardInterrupt as exc:
        click.echo("epcg: export stopped; the previous export (if any) is kept", err=True)
        sys.exit(exit_status(exc))
    click.echo(f"{done.count:,} objects: {done.path}")
    if done.cut:
        click.echo(f"note: the run found more than {limit:,} that match; these are the first {limit:,} "
                   "(--limit N for more, --where KEY=VALUE to choose)")


@main.command()
@click.argument("run_dir")
@click.argument("puzzle")
@click.option("--out", type=click.Path(path_type=Path), help="Also draw the puzzle and its solution into this PNG.")
@click.option("--json", "as_json", is_flag=True, help="Print the facts as one JSON object instead.")
def probe(run_dir: str, puzzle: str, out: Path | None, as_json: bool) -> None:
    """What a run knows of one puzzle you give: solvable?, solutions, score, rank, kept?, its solutions drawn.

    PUZZLE is written as the run prints it (docs/notation.md): a Fling! board's cells (\"a1 f2 c3\") or its
    picture (rows of o and . by newlines or /), a Witness panel, a user space's rank; - reads it from stdin."""
    import json

    import epcg

    text = sys.stdin.read() if puzzle == "-" else puzzle
    found = epcg.open(run_dir).probe(text)
    if out is not None:  # drawn first: a picture that cannot be written is one line and nothing printed
        from epcg.report.pictures import png_bytes

        out.write_bytes(png_bytes(found.figure()))
    click.echo(json.dumps(found.to_dict()) if as_json else str(found))
    if out is not None:
        click.echo(f"picture: {out}", err=as_json)


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


for command in (cli_batch.submit, cli_batch.cancel, cli_batch.drive):
    main.add_command(command)

if __name__ == "__main__":
    main()
