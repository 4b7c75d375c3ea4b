"""``epcg plan | run | resume | status | verify | report | export``: the command line over the run engine
(:mod:`epcg.runtime.engine`): the commands parse options and print; the engine does the work.

``submit``, ``cancel`` and ``drive`` (runs as batch jobs) are in :mod:`epcg.cli_batch`, registered here; what
running commands share (the engine as the command line builds it, what a run prints) is in :mod:`epcg.cli_session`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from epcg import cli_batch
from epcg.cli_session import cli_engine, echo, print_outputs, run_session
from epcg.runtime.errors import (
    InvalidValue,
    OutputFailed,
    StaleTask,
    TaskFailed,
    UserError,
    one_line,
)
from epcg.runtime.registry import reading
from epcg.runtime.shell import command as shell_command
from epcg.runtime.stopping import caught_signals, exit_status

if TYPE_CHECKING:
    from epcg.runtime.runplan import Placement, RunPlan

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
            from epcg.runtime.daskconfig import check

            _bytes_as_given()
            check()
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
            _fail(one_line(exc), 2)
        except MemoryError:
            _fail("out of memory in the epcg client; the job is too large for this machine", 2)


def _bytes_as_given() -> None:
    """In a locale whose encoding is ASCII (``LC_ALL=C`` without Python's UTF-8 mode) print UTF-8, and a path's
    bytes as they were given (surrogate escapes), not ``?``: what is printed can be pasted back."""
    import codecs

    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None)
        if encoding and codecs.lookup(encoding).name == "ascii" and hasattr(stream, "reconfigure"):
            stream.reconfigure(encoding="utf-8", errors="surrogateescape")


def _fail(message: str, status: int) -> None:
    echo(f"epcg: error: {one_line(message)}", err=True)
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
    from epcg.runtime.cluster import JobqueueSpec, computing, default_shape, default_workers, load_cluster
    from epcg.runtime.engine import Engine, small_job
    from epcg.runtime.estimate import MAX_TASKS, io_table, size, table
    from epcg.runtime.registry import job_kind
    from epcg.runtime.engine import Options
    from epcg.runtime.runplan import Budget, Placement, advice
    from epcg.runtime.tuning import fitted

    engine = Engine()
    job = engine.load(job_file, overrides)
    spec = load_cluster(cluster_file) if cluster_file is not None else None
    if spec is not None:
        placement = _planned_workers(spec, cluster_file, workers, memory_limit)
    elif workers or threads_per_worker:
        n, threads = workers or default_workers(), threads_per_worker or 1
        placement = Placement(n, _memory(memory_limit, n), threads)
    else:
        n, threads = default_shape(job_kind(job.domain))
        placement = Placement(n, _memory(memory_limit, n), threads, computing(n, threads))
    options = Options(max_tasks=max_tasks or MAX_TASKS)
    tuned = engine.plan(job, out, options)
    location = tuned.run.location
    planned = fitted(tuned, placement, location.free_bytes(), options.max_tasks)

    def refit(n: int, memory: int | None) -> RunPlan:
        """The job on other workers (their disk unknown)."""
        return fitted(tuned, Placement(n, memory, placement.threads), None, options.max_tasks)

    for note in planned.notes:
        echo(f"note: {note}")
    echo(f"{planned.job.name} ({planned.job.domain}) -> {planned.run.path}")
    echo(table(planned.figures, planned.limits))
    kind = job_kind(planned.job.domain)
    basis = kind.estimate_basis(planned.job.config)
    if basis is not None:
        echo(f"estimated: {basis}")
    for line in kind.plan_notes(planned.job.config):
        echo(line)
    if location.metered:
        echo(f"\non the object store {planned.run.path}:\n{io_table(planned.figures, placement.slots)}")
    seconds = small_job(planned.job, planned.plan) if cluster_file is None and not workers else None
    if seconds is not None:
        echo(f"epcg run would run it in this process, without Dask: a small job (about {seconds:.1f} s of "
             "compute; --workers N or a cluster runs it on Dask)")
    if isinstance(spec, JobqueueSpec):
        budget = Budget(spec.walltime_seconds, spec.max_requeues)
        lines = advice(planned, budget, refit, lambda n, memory: _nodes(spec, n, memory))
    else:
        lines = advice(planned, Budget(), refit, lambda n, memory: f"{n} worker{'s' if n != 1 else ''} of {size(memory)}")
    for line in lines:
        echo(line)
    echo(f"run would refuse: {planned.refusal}" if planned.refusal else "run would accept this job")


def _memory(memory_limit: str | None, workers: int) -> int:
    """Memory per worker to plan for: ``--memory-limit``, else this machine's share for ``workers``."""
    from epcg.runtime.cluster import LocalSpec, local_memory, parse_size

    return parse_size(memory_limit, "--memory-limit") if memory_limit else local_memory(LocalSpec(workers=workers))


def _nodes(spec, workers: int, memory: int | None) -> str:
    """``workers`` of ``memory`` each as allocations of the cluster file's nodes would give them."""
    from epcg.runtime.batch import workers_per_node
    from epcg.runtime.estimate import size

    per_node = workers_per_node(spec)
    nodes = -(-workers // per_node)
    node_memory = size(memory * per_node) if memory is not None else spec.memory
    return f"nodes = {nodes}, memory = \"{node_memory}\" per node ({workers} workers of {size(memory)})"


def _planned_workers(spec, cluster_file: Path, workers, memory_limit) -> Placement:
    """The workers, their memory and threads that the cluster file gives a run."""
    from epcg.runtime.batch import worker_memory_limit, workers_per_node
    from epcg.runtime.cluster import JobqueueSpec, LocalSpec, default_workers, local_memory
    from epcg.runtime.runplan import Placement

    if workers or memory_limit:
        raise UserError("--cluster gives the workers and their memory: drop --workers and --memory-limit")
    if isinstance(spec, LocalSpec):
        n = spec.workers or default_workers()
        return Placement(n, local_memory(spec.model_copy(update={"workers": n})), spec.threads_per_worker)
    if isinstance(spec, JobqueueSpec):
        n = spec.nodes * workers_per_node(spec)
        echo(f"note: planned as `epcg submit` runs it: {spec.nodes} node(s) x {workers_per_node(spec)} "
             f"single-threaded workers, {spec.memory} per node, walltime {spec.walltime}")
        return Placement(n, worker_memory_limit(spec), 1)
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
    planned = runner.start(runner.load(job_file, overrides, where), out, options)
    run_session(runner, planned, True, where, options)


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
    planned = runner.reopen(run_dir, where)
    tasks = planned.plan.num_tasks
    if max_tasks is not None and max_tasks < tasks:
        raise UserError(f"--max-tasks {max_tasks}: this run has {tasks:,} tasks, fixed when it started; "
                        f"resume finishes them (leave --max-tasks out, or start a new run with 'epcg run')")
    run_session(runner, planned, False, where, options)


@main.command()
@click.argument("run_dir")
def status(run_dir: str) -> None:
    """Say what is done in a run directory: chunks per stage, throughput, ETA, dashboard (read-only, no lock)."""
    with reading():
        _status(run_dir)


def _status(run_dir: str) -> None:
    """``epcg status``, reading the run as data (no code its job names is imported)."""
    from epcg.runtime.batch import continue_command, describe, tunnel
    from epcg.runtime.estimate import duration
    from epcg.runtime.readout import DAMAGED, FINISHED, RUNNING, WAITING
    from epcg.runtime.reads import read_line, stage_reads
    from epcg.runtime.status import run_status

    status = run_status(run_dir)
    job, plan, run = status.planned.job, status.planned.plan, status.run
    figures = status.readout
    echo(f"{run.path}: job {job.name} ({job.domain}), {figures.state}")
    for line in describe(run, status.batch, status.done, figures.state == FINISHED) if status.batch else []:
        echo(line)
    info = status.live
    if info:
        by_host = ", ".join(f"{host}: {n}" for host, n in (info.get("hosts") or {}).items())
        echo(f"dashboard: {info.get('dashboard')}  scheduler: {info.get('scheduler')}  "
             f"workers: {info.get('workers')}" + (f" ({by_host})" if by_host else ""))
        ssh = tunnel(info.get("dashboard") or "", info.get("host"))
        if ssh:
            echo(f"from your machine: {ssh}")
    echo(f"{'stage':<28} {'chunks':>15} {'CPU s':>10}")
    for stage in figures.stages:
        echo(f"{stage.name:<28} {stage.done:>7}/{stage.total:<7} {stage.compute_seconds:>10.2f}")
        reads = stage_reads(plan.by_name[stage.name], status.done)
        if reads.read or (stage.done and reads.planned):
            echo(f"{'':<28} {read_line(reads)}")
    echo(f"{'total':<28} {figures.done:>7}/{figures.total:<7} {figures.compute_seconds:>10.2f}")
    echo(f"length {duration(figures.length_seconds)} ({figures.length_seconds:.1f} s)"
         + (f"; about {duration(figures.seconds_left)} left" if figures.seconds_left is not None else ""))
    if figures.state == DAMAGED:
        echo(status.damaged or "")
    elif figures.state != RUNNING and figures.done == figures.total and figures.state != FINISHED:
        echo(f"every chunk is done, but results or summary are missing: {shell_command('report', run.path)} writes them")
    unsound = run.records.unsound(plan.tasks())
    torn = [task for task, why in unsound.items() if why != "stale"]
    stale = [task for task, why in unsound.items() if why == "stale"]
    if torn:
        echo(f"{len(torn)} damaged records (those chunks will be recomputed): {', '.join(torn[:10])}")
    if stale:
        echo(f"{len(stale)} chunks were made under other job parameters than job.toml's (they will be recomputed): "
             f"{', '.join(stale[:10])}")
    if figures.done < figures.total and figures.state not in (RUNNING, WAITING):
        how = continue_command(run, status.batch) if status.batch else shell_command("resume", run.path)
        echo(f"{figures.total - figures.done} chunks left; continue with {how}")


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
    with reading():
        bad = cli_engine().verify(run_dir, where, everything, repair)
    if bad:
        sys.exit(1)


TRUST_SPACE = click.option(
    "--trust-space", is_flag=True,
    help="Import the space the run's job names (as 'epcg run' does: from an installed package or PYTHONPATH, "
         "never the current directory), to decode and draw what it found; without it the run is read as data.")


@main.command()
@click.argument("run_dir")
@TRUST_SPACE
def report(run_dir: str, trust_space: bool) -> None:
    """Rebuild results.json, summary.md, figures and report.html of a finished run."""
    with reading(trust_space):
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
                   "min_ratio=50, --where row=4x4:6 --where length=longest, --where role=max. Fling! boards count "
                   "mirror images; --where orbits=true gives one board per symmetry orbit. Every key: "
                   "docs/filters.md.")
@TRUST_SPACE
def export(run_dir: str, out: Path | None, limit: int, pictures: str, where: tuple[str, ...],
           trust_space: bool) -> None:
    """Write what a run found as JSON lines (found.jsonl) and pictures; fields: docs/cli.md, "What an export holds"."""
    import epcg
    from epcg.api.export import export as write

    pairs = [_filter(text) for text in where]
    filters = dict(pairs)
    if len(filters) < len(pairs):
        twice = next(key for i, (key, _) in enumerate(pairs) if key in dict(pairs[:i]))
        raise UserError(f"--where {twice} is given twice: a filter takes one value (run export once per value)")
    try:
        with caught_signals(), reading(trust_space):  # the staging directory is removed, the previous export kept
            opened = epcg.open(run_dir, trust_space=trust_space)
            done = write(opened, out or opened.default_export(), limit=limit,
                         pictures=None if pictures == "none" else pictures, **filters)
    except (TypeError, InvalidValue) as exc:
        raise UserError(f"--where: {exc}") from None
    except KeyboardInterrupt as exc:
        echo("epcg: export stopped; the previous export (if any) is kept", err=True)
        sys.exit(exit_status(exc))
    echo(f"{done.count:,} objects: {done.path}")
    if done.cut:
        echo(f"note: the run found more than {limit:,} that match; these are the first {limit:,} "
             "(--limit N for more, --where KEY=VALUE to choose)")
    if done.undrawn:
        echo("note: these are listed by rank, without text, their pictures naming them only: the space is the job's code, and reading a "
             "run never imports it; --trust-space draws them")


@main.command()
@click.argument("run_dir")
@click.argument("puzzle")
@click.option("--out", type=click.Path(path_type=Path), help="Also draw the puzzle and its solution into this PNG.")
@click.option("--json", "as_json", is_flag=True, help="Print the facts as one JSON object instead.")
@TRUST_SPACE
def probe(run_dir: str, puzzle: str, out: Path | None, as_json: bool, trust_space: bool) -> None:
    """What a run knows of one puzzle you give: solvable?, solutions, score, rank, kept?, its solutions drawn.

    PUZZLE is written as the run prints it (docs/notation.md): a Fling! board's cells (\"a1 f2 c3\") or its
    picture (rows of o and . by newlines or /), a Witness panel, a user scan space's rank, a user retrograde
    space's state as "LAYER RANK" or in the space's own notation (a user's space runs only with --trust-space);
    - reads it from stdin."""
    import json

    import epcg

    text = sys.stdin.read() if puzzle == "-" else puzzle
    found = epcg.open(run_dir, trust_space=trust_space).probe(text)
    if out is not None:  # drawn first: a picture that cannot be written is one line and nothing printed
        from epcg.report.pictures import png_bytes

        out.write_bytes(png_bytes(found.figure()))
    echo(json.dumps(found.to_dict()) if as_json else str(found))
    if out is not None:
        echo(f"picture: {out}", err=as_json)


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
