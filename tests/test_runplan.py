"""A plan the user can act on: one fitted plan (runtime/runplan.py) for `epcg plan` and every run, and when it is
too long for its allocations or a day, the alternative it names fits when planned again."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner, Result

from epcg.cli import main
from epcg.runtime.estimate import duration
from epcg.runtime.runplan import DAY, Budget

from .conftest import epcg

ROOT = Path(__file__).resolve().parents[1]
FLING_12 = [str(ROOT / "jobs" / "fling.toml"), "--set", "max_pieces=12"]


def _seconds(text: str) -> float:
    number, unit = text.split()
    return float(number) * {"s": 1, "min": 60, "h": 3600, "d": 86400}[unit]


def _plan(*args: str) -> Result:
    """``epcg plan ARGS`` in this process: every plan of a test uses the kernels' speed measured once, as the
    plans ``epcg plan`` makes of one job's alternatives do (a second process would time them anew on a machine
    whose load moves them)."""
    result = CliRunner().invoke(main, ["plan", *args])
    assert result.exit_code == 0, result.output
    return result


def _total_wall(stdout: str) -> float:
    return _seconds(" ".join(next(line for line in stdout.splitlines() if line.startswith("total")).split()[-2:]))


def test_a_plan_too_long_for_its_allocations_names_what_fits_and_that_fits(tmp_path: Path) -> None:
    """The shipped SLURM file (8 GiB nodes, 1 h allocations, 10 requeues) cannot finish 12 pieces: plan says
    so and names bigger nodes; a cluster file with those nodes plans within the allocations."""
    result = _plan(*FLING_12, "--cluster", str(ROOT / "cluster" / "slurm.toml"))
    lines = result.stdout.splitlines()
    too = next(line for line in lines if line.startswith("too long:"))
    assert "11 allocations of 60.0 min (--max-requeues 10) cannot finish it" in too, too
    assert _total_wall(result.stdout) > 11 * 3600
    fits = next(line for line in lines if line.startswith("would fit:"))
    nodes, memory = re.search(r'nodes = (\d+), memory = "([\d.]+ GiB)" per node', fits).groups()
    promised = _seconds(re.search(r"about ([\d.]+ (?:s|min|h|d)) of work", fits).group(1))
    assert promised <= 11 * 3600

    text = (ROOT / "cluster" / "slurm.toml").read_text()
    text = re.sub(r'(?m)^memory = .*$', f'memory = "{memory.replace(" ", "")}"', text)
    text = re.sub(r'(?m)^nodes = .*$', f"nodes = {nodes}", text)
    bigger = tmp_path / "bigger.toml"
    bigger.write_text(text)
    again = _plan(*FLING_12, "--cluster", str(bigger))
    assert "too long:" not in again.stdout, again.stdout
    refusal = next((line for line in again.stdout.splitlines() if line.startswith("run would refuse:")), None)
    assert refusal is None or re.fullmatch(r"run would refuse: the run needs about .* of disk, only .* is free .*",
                                           refusal), refusal  # this machine's free disk is not the plan's to fix
    assert duration(_total_wall(again.stdout)) == duration(promised)


def test_a_plan_within_its_budget_says_nothing_more() -> None:
    result = epcg("plan", str(ROOT / "jobs" / "fling.toml"), "--set", "max_pieces=8", "--workers", "2")
    assert result.returncode == 0, result.stderr
    assert "too long" not in result.stdout and "would fit" not in result.stdout


def test_a_budget_is_a_day_or_its_allocations() -> None:
    assert Budget().seconds == DAY
    assert Budget(3600, 10).seconds == 11 * 3600
