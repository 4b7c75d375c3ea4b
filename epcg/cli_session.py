"""The command line's side of the run engine: the options that say where tasks run, progress on the terminal,
what is printed when a run ends or is stopped.

``epcg run``/``resume``/``verify``/``report`` (:mod:`epcg.cli`) and ``submit``/``drive``
(:mod:`epcg.cli_batch`) build their :class:`~epcg.runtime.engine.Engine` here; the engine does the rest.
"""

from __future__ import annotations

import sys

import click

from epcg.runtime.engine import Engine, Options, Target
from epcg.runtime.runplan import RunPlan
from epcg.runtime.shell import command
from epcg.runtime.stopping import exit_status
from epcg.runtime.text import shown


def echo(message: str = "", err: bool = False) -> None:
    """Print a line of the command line's: every one passes here, so what it holds of a run directory, a job
    file or a URL reaches the terminal without control sequences or secrets (:func:`epcg.runtime.text.shown`)."""
    click.echo(shown(str(message)), err=err)


def cli_engine() -> Engine:
    """The engine as the command line uses it: lines to stdout, progress to stderr (a bar on a terminal, plain
    status lines in a log), report.html and the dashboard page."""
    from epcg.api.runs import engine
    from epcg.runtime.progress import for_output, interval

    runner = engine(say=echo)
    runner.progress = lambda done: for_output(sys.stderr, done)
    runner.progress_every = interval()
    runner.exits_after = True
    return runner


def run_session(runner: Engine, planned: RunPlan, new: bool, target: Target, options: Options) -> None:
    """Run ``planned`` to the end and print its outputs; Ctrl-C, SIGTERM and SIGHUP stop it with the resume
    command and the signal's exit status."""
    try:
        outcome = runner.run(planned, new, target, options)
    except KeyboardInterrupt as exc:
        if new and not planned.run.exists():
            echo("\ninterrupted before the run directory was created; nothing was written", err=True)
        else:
            echo(f"\ninterrupted; {command('resume', planned.run.path)} continues where this stopped", err=True)
        sys.exit(exit_status(exc))
    print_outputs(outcome.run, outcome.report)


def print_outputs(run, report: str) -> None:
    """Say where the outputs are (only once all of them are written)."""
    from epcg.runtime.outputs import FIGURES, SUMMARY

    echo(run.read_text(SUMMARY))
    echo(f"results: {run.outputs.results_path}\nsummary: {run.outputs.summary_path}\nfigures: {run.describe(FIGURES)}/")
    echo(f"report:  {report} (open it in any browser)")
