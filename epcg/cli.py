"""``epcg run | resume | status | report``: the command line over :mod:`epcg.runtime.session`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from epcg.runtime.errors import UserError

CLUSTER_OPTIONS = [
    click.option("--workers", type=click.IntRange(min=1), help="Local worker processes (default: one per core)."),
    click.option("--threads-per-worker", type=click.IntRange(min=1), help="Threads per local worker (default 1)."),
    click.option("--scheduler", metavar="ADDRESS", help="Use a running Dask scheduler, e.g. tcp://host:8786."),
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
    """Say what is done in a run directory (read-only)."""
    from epcg.runtime.session import prepare_resume

    job, plan, run = prepare_resume(run_dir)
    done = run.done(plan.tasks())
    state = "running" if run.is_locked() else ("finished" if run.results_path.exists() else "stopped")
    click.echo(f"{run.path}: job {job.name} ({job.domain}), {state}")
    click.echo(f"{'stage':<28} {'chunks':>15}  seconds")
    for stage in plan.stages:
        finished = [done[t.id] for t in stage.tasks if t.id in done]
        seconds = sum(r["seconds"] for r in finished)
        click.echo(f"{stage.name:<28} {len(finished):>7}/{len(stage.tasks):<7}  {seconds:8.2f}")
    click.echo(f"{'total':<28} {len(done):>7}/{plan.num_tasks:<7}")


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
def report(run_dir: Path) -> None:
    """Rebuild results.json, summary.md and figures of a finished run."""
    from epcg.runtime.session import claimed, finish, prepare_resume

    prepared = prepare_resume(run_dir)
    with claimed(prepared, new=False):
        finish(prepared)
    _print_outputs(prepared.run)


def _go(prepared, new: bool, workers, threads_per_worker, scheduler, serial) -> None:
    from epcg.runtime.progress import TqdmProgress
    from epcg.runtime.session import claimed, run_plan

    plan, run = prepared.plan, prepared.run
    todo = plan.num_tasks - (len(run.done(plan.tasks())) if run.exists() else 0)
    click.echo(
        f"{prepared.job.name}: {todo} of {plan.num_tasks} chunks to do "
        f"in {len(plan.stages)} stages -> {run.path}"
    )
    progress = TqdmProgress(file=sys.stderr, dynamic_ncols=True)
    try:
        if serial:
            with claimed(prepared, new):
                run_plan(prepared, None, [progress])
        else:
            from epcg.runtime.cluster import connect
            from epcg.runtime.dask_executor import DaskExecutor

            with connect(scheduler, workers, threads_per_worker) as client:
                click.echo(f"Dask dashboard: {client.dashboard_link}")
                with claimed(prepared, new):
                    run_plan(prepared, DaskExecutor(client), [progress])
    except KeyboardInterrupt:
        click.echo(f"\ninterrupted; 'epcg resume {run.path}' continues where this stopped", err=True)
        sys.exit(130)
    _print_outputs(run)


def _print_outputs(run) -> None:
    click.echo(run.summary_path.read_text())
    click.echo(f"results: {run.results_path}\nsummary: {run.summary_path}\nfigures: {run.figures_dir}/")


if __name__ == "__main__":
    main()
