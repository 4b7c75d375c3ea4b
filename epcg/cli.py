"""``epcg run | resume | status | report``: the command line over :mod:`epcg.runtime.session`."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import click

from epcg.runtime.errors import UserError

CLUSTER_OPTIONS = [
    click.option("--workers", type=click.IntRange(min=1), help="Local worker processes (default: one per core)."),
    click.option("--threads-per-worker", type=click.IntRange(min=1), help="Threads per local worker (default 1)."),
    click.option("--scheduler", metavar="ADDRESS", help="Use a running Dask scheduler, e.g. tcp://host:8786."),
    click.option("--cluster", "cluster_file", type=click.Path(path_type=Path),
                 help="A cluster file: cluster/local.toml, scheduler.toml, slurm.toml, pbs.toml."),
    click.option("--performance-report", is_flag=True,
                 help="Save Dask's HTML performance report in the run directory."),
    click.option("--serial", is_flag=True, help="Run in this process, without Dask (debugging)."),
]


def cluster_options(func):
    for option in reversed(CLUSTER_OPTIONS):
        func = option(func)
    return func


class EpcgGroup(click.Group):
    """Turn a UserError anywhere into one line and exit status 2."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except UserError as exc:
            click.echo(f"epcg: error: {exc}", err=True)
            sys.exit(2)


@click.group(cls=EpcgGroup)
@click.version_option(package_name="epcg")
def main() -> None:
    """Exhaustive procedural content generation as distributed batch jobs."""


@main.command()
@click.argument("job_file", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), help="Run directory (default runs/<job name>).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a job key with a TOML value.")
@cluster_options
def run(job_file: Path, out: Path | None, overrides: tuple[str, ...], **cluster) -> None:
    """Run JOB_FILE in a new run directory."""
    from epcg.runtime.jobs import load_job
    from epcg.runtime.session import prepare_new

    prepared = prepare_new(load_job(job_file, list(overrides)), out)
    _go(prepared, new=True, **cluster)


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@cluster_options
def resume(run_dir: Path, **cluster) -> None:
    """Finish an interrupted run: only its unfinished chunks are computed."""
    from epcg.runtime.session import prepare_resume

    _go(prepare_resume(run_dir), new=False, **cluster)


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
def status(run_dir: Path) -> None:
    """Say what is done in a run directory: chunks per stage, throughput, ETA, dashboard (read-only)."""
    import json

    from epcg.runtime.session import prepare_resume

    job, plan, run = prepare_resume(run_dir)
    done = run.done(plan.tasks())
    live = run.is_locked()
    state = "running" if live else ("finished" if run.results_path.exists() else "stopped")
    click.echo(f"{run.path}: job {job.name} ({job.domain}), {state}")
    info_path = run.path / "live.json"
    info = json.loads(info_path.read_text()) if live and info_path.is_file() else {}
    if info:
        click.echo(f"dashboard: {info['dashboard']}  scheduler: {info['scheduler']}  workers: {info['workers']}")
    click.echo(f"{'stage':<28} {'chunks':>15} {'compute s':>10}")
    for stage in plan.stages:
        finished = [done[t.id] for t in stage.tasks if t.id in done]
        seconds = sum(r["seconds"] for r in finished)
        click.echo(f"{stage.name:<28} {len(finished):>7}/{len(stage.tasks):<7} {seconds:>10.2f}")
    click.echo(f"{'total':<28} {len(done):>7}/{plan.num_tasks:<7}")
    records = list(done.values())
    if records and len(done) < plan.num_tasks:
        first = min(r["ended_at"] - r["seconds"] for r in records)
        rate = len(records) / max(max(r["ended_at"] for r in records) - first, 1e-9)
        left = plan.num_tasks - len(done)
        eta = f"ETA {left / rate / 60:.1f} min at that rate" if live else "resume with 'epcg resume'"
        click.echo(f"throughput {rate:.2f} chunks/s over the run so far; {left} chunks left; {eta}")


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
def verify(run_dir: Path) -> None:
    """Check every finished chunk's stored bytes; damaged chunks are forgotten so resume redoes them."""
    from epcg.runtime.session import claimed, prepare_resume
    from epcg.runtime.session import verify as verify_run

    prepared = prepare_resume(run_dir)
    with claimed(prepared, new=False):
        checked, bad = verify_run(prepared)
    if not bad:
        click.echo(f"{run_dir}: {checked} chunks checked, all intact")
        return
    click.echo(f"{run_dir}: {len(bad)} of {checked} chunks damaged on disk: {', '.join(bad)}")
    click.echo(f"their records were removed; 'epcg resume {run_dir}' recomputes them")
    sys.exit(1)


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
def report(run_dir: Path) -> None:
    """Rebuild results.json, summary.md, figures and report.html of a finished run."""
    from epcg.runtime.session import claimed, finish, prepare_resume

    prepared = prepare_resume(run_dir)
    with claimed(prepared, new=False):
        finish(prepared)
    _print_outputs(prepared.run)


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), help="Where to write (default RUN_DIR/export).")
@click.option("--limit", type=click.IntRange(min=1), default=1000, show_default=True, help="Objects at most.")
@click.option("--pictures", type=click.Choice(["png", "svg", "none"]), default="png", show_default=True)
@click.option("--where", multiple=True, metavar="KEY=VALUE",
              help="A filter of Run.puzzles/boards/triples/maps, e.g. --where pieces=8 --where min_ratio=50.")
def export(run_dir: Path, out: Path | None, limit: int, pictures: str, where: tuple[str, ...]) -> None:
    """Write what a run found as JSON lines (found.jsonl) and pictures; schema: epcg/api/export.py."""
    import epcg
    from epcg.runtime.jobs import parse_override

    filters = dict(parse_override(text) for text in where)
    try:
        path = epcg.open(run_dir).export(out or run_dir / "export", limit=limit,
                                         pictures=None if pictures == "none" else pictures, **filters)
    except TypeError as exc:
        raise UserError(f"--where: {exc}") from None
    click.echo(f"{sum(1 for _ in path.open())} objects: {path}")


def _go(prepared, new: bool, workers, threads_per_worker, scheduler, cluster_file,
        performance_report, serial) -> None:
    from epcg.runtime.progress import TqdmProgress
    from epcg.runtime.session import claimed, run_plan

    plan, run = prepared.plan, prepared.run
    spec = None if serial else _cluster_spec(cluster_file, scheduler, workers, threads_per_worker)
    todo = plan.num_tasks - (len(run.done(plan.tasks())) if run.exists() else 0)
    click.echo(
        f"{prepared.job.name}: {todo} of {plan.num_tasks} chunks to do "
        f"in {len(plan.stages)} stages -> {run.path}"
    )
    progress = TqdmProgress(file=sys.stderr, dynamic_ncols=True)
    try:
        if serial:
            with claimed(prepared, new):
                _verify_before_resume(prepared, new)
                run_plan(prepared, None, [progress])
        else:
            from epcg.runtime.cluster import connect
            from epcg.runtime.dask_executor import DaskExecutor

            with connect(spec) as client:
                click.echo(f"Dask dashboard: {client.dashboard_link}")
                with claimed(prepared, new), _live(run, client), _report(run, performance_report):
                    from epcg.dashboard import register

                    click.echo(f"epcg progress: {register(client, run.path) or 'not on this scheduler'}")
                    _verify_before_resume(prepared, new)
                    run_plan(prepared, DaskExecutor(client), [progress])
    except KeyboardInterrupt:
        click.echo(f"\ninterrupted; 'epcg resume {run.path}' continues where this stopped", err=True)
        sys.exit(130)
    _print_outputs(run)


def _verify_before_resume(prepared, new: bool) -> None:
    """On resume, chunks whose bytes were damaged on disk are found and recomputed."""
    if new:
        return
    from epcg.runtime.session import verify

    checked, bad = verify(prepared)
    if bad:
        click.echo(f"{len(bad)} of {checked} finished chunks were damaged on disk and will be recomputed: "
                   f"{', '.join(bad)}")
        todo = prepared.plan.num_tasks - checked + len(bad)
        click.echo(f"now {todo} of {prepared.plan.num_tasks} chunks to do")


def _cluster_spec(cluster_file, scheduler, workers, threads_per_worker):
    """The cluster to use: --scheduler, else --cluster FILE, else the embedded default."""
    from epcg.runtime.cluster import LocalSpec, SchedulerSpec, load_cluster

    if scheduler and cluster_file:
        raise UserError("give --scheduler or --cluster, not both")
    if scheduler:
        return SchedulerSpec(kind="scheduler", address=scheduler)
    spec = load_cluster(cluster_file) if cluster_file else LocalSpec()
    overrides = {k: v for k, v in (("workers", workers), ("threads_per_worker", threads_per_worker)) if v}
    if overrides and not isinstance(spec, LocalSpec):
        raise UserError("--workers and --threads-per-worker apply to the local cluster only")
    return spec.model_copy(update=overrides)


@contextlib.contextmanager
def _live(run, client):
    """While a run is live, DIR/live.json tells `epcg status` where its dashboard is."""
    import json
    import os

    from epcg.runtime.store import write_atomic

    path = run.path / "live.json"
    info = {"pid": os.getpid(), "dashboard": client.dashboard_link,
            "scheduler": client.scheduler.address, "workers": len(client.scheduler_info()["workers"])}
    write_atomic(path, json.dumps(info))
    try:
        yield
    finally:
        path.unlink(missing_ok=True)


def _report(run, enabled: bool):
    """Dask's performance report into DIR/performance-report.html, when asked for."""
    if not enabled:
        return contextlib.nullcontext()
    from distributed import performance_report

    return performance_report(filename=str(run.path / "performance-report.html"))


def _print_outputs(run) -> None:
    from epcg.report_html import write_report

    click.echo(run.summary_path.read_text())
    click.echo(f"results: {run.results_path}\nsummary: {run.summary_path}\nfigures: {run.figures_dir}/")
    click.echo(f"report:  {write_report(run.path)} (open it in any browser)")


if __name__ == "__main__":
    main()
