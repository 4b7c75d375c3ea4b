"""The level-map study as a job: same results on any workers, resume of a partly finished study, bad input."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import JOBS, epcg, load_results

STUDY = str(JOBS / "dwp-study.toml")
SMALL = ["--set", "runs=4", "--set", "mating_events_cap=150", "--set", "only=[2, 16, 17]"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dwp") / "reference"
    result = epcg("run", STUDY, "--out", str(out), "--serial", *SMALL)
    assert result.returncode == 0, result.stderr
    return out


def test_study_outputs(reference: Path) -> None:
    results = load_results(reference)
    assert [r["experiment"] for r in results["rows"]] == [2, 16, 17]
    assert all(r["runs"] == 4 and len(r["fitness"]) == 4 for r in results["rows"])
    assert [f["claim"][:20] for f in results["findings"]] == ["the recent-room hack"]  # 18-21 not in this job
    figures = {p.name for p in (reference / "figures").iterdir()}
    assert {"box-states.png", "map-exp16-0.png", "map-exp16-0.svg"} <= figures
    assert "## The paper's findings" in (reference / "summary.md").read_text()


@pytest.mark.slow
def test_same_results_on_two_workers(reference: Path, tmp_path: Path) -> None:
    out = tmp_path / "two"
    result = epcg("run", STUDY, "--out", str(out), "--workers", "2", *SMALL)
    assert result.returncode == 0, result.stderr
    assert load_results(out) == load_results(reference)


@pytest.mark.slow
def test_resume_partly_finished_study(reference: Path, tmp_path: Path) -> None:
    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "epcg", "run", STUDY, "--out", str(out), "--serial", *SMALL],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    manifest = out / "manifest"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(manifest.rglob("0*.json")) if manifest.exists() else []) < 3:
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = {p: p.stat().st_mtime_ns for p in manifest.rglob("0*.json")}
    assert 3 <= len(finished) < 12
    resumed = epcg("resume", str(out), "--serial")
    assert resumed.returncode == 0, resumed.stderr
    assert f"{12 - len(finished)} of 12 chunks to do" in resumed.stdout
    assert all(p.stat().st_mtime_ns == t for p, t in finished.items())
    assert load_results(out) == load_results(reference)


@pytest.mark.parametrize(
    "override, message",
    [
        ("experiments=[{id=1, population=32, mnm=1, states=12, grid=[3, 3]}]", "grid"),
        ("experiments=[{id=1, population=32, mnm=1, states=300}]", "states must be in 1..256"),
        ("runs=-1", "runs"),
        ("experiments=[{id=1, population=32, mnm=-2, states=12}]", "mnm"),
        ("only=[99]", "unknown experiments [99]"),
    ],
)
def test_bad_parameters(tmp_path: Path, override: str, message: str) -> None:
    out = tmp_path / "bad"
    result = epcg("run", STUDY, "--out", str(out), "--set", override)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert not out.exists()
