"""Whole Witness runs through the CLI: determinism across workers and chunkings, resume after SIGKILL."""

from __future__ import annotations

import pytest

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from epcg.games.witness.domain.frontier import count_paths

from tests.conftest import JOBS, epcg, load_results


@pytest.mark.slow
def test_same_results_any_workers_or_chunks(tmp_path: Path, small_job: Path) -> None:
    serial = tmp_path / "serial"
    assert epcg("run", str(small_job), "--out", str(serial), "--serial").returncode == 0
    reference = load_results(serial)
    rows = reference["rows"]
    assert [r["min_solutions"] for r in rows] == [1, 4, 1]
    for name, extra in [
        ("one", ["--workers", "1"]),
        ("two", ["--workers", "2"]),
        ("rechunked", ["--workers", "2", "--set", "chunk_size=1999"]),
    ]:
        out = tmp_path / name
        result = epcg("run", str(small_job), "--out", str(out), *extra)
        assert result.returncode == 0, result.stderr
        assert "Dask dashboard: http://127.0.0.1:" in result.stdout
        assert load_results(out) == reference
    figures = sorted(p.name for p in (serial / "figures").iterdir())
    assert "must-cross-3x3-k3.png" in figures and "must-cross-3x3-k3.svg" in figures


@pytest.mark.slow
def test_resume_after_sigkill(tmp_path: Path) -> None:
    job = tmp_path / "job.toml"
    job.write_text(
        'name = "killed"\ndomain = "witness"\nkind = "must-cross"\n'
        'rows = ["3x4:3", "3x4:4", "4x4:3"]\nchunk_size = 1500\nfigures_per_row = 1\n'
    )
    reference = tmp_path / "reference"
    assert epcg("run", str(job), "--out", str(reference), "--serial").returncode == 0

    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "epcg", "run", str(job), "--out", str(out), "--workers", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    manifest = out / "manifest"
    deadline = time.monotonic() + 120
    total = sum(1 for _ in reference.joinpath("manifest").rglob("0*.json"))
    while time.monotonic() < deadline:
        done = len(list(manifest.rglob("0*.json"))) if manifest.exists() else 0
        if done >= 3:
            break
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = {p: p.stat().st_mtime_ns for p in manifest.rglob("0*.json")}
    done_before = len(finished)
    assert 3 <= done_before < total, (done_before, total)
    assert not (out / "results.json").exists()

    status = epcg("status", str(out))
    assert status.returncode == 0 and "stopped" in status.stdout

    resumed = epcg("resume", str(out), "--serial")
    assert resumed.returncode == 0, resumed.stderr
    assert load_results(out) == load_results(reference)
    assert len(list(manifest.rglob("0*.json"))) == total
    assert f"{total - done_before} of {total} chunks to do" in resumed.stdout
    assert all(p.stat().st_mtime_ns == mtime for p, mtime in finished.items())  # not recomputed
    assert json.loads((out / "results.json").read_text())["rows"][0]["min_solutions"] == 16


@pytest.mark.slow
def test_performance_report_and_live_status(tmp_path: Path, small_job: Path) -> None:
    out = tmp_path / "reported"
    result = epcg("run", str(small_job), "--out", str(out), "--workers", "1", "--performance-report")
    assert result.returncode == 0, result.stderr
    report = out / "performance-report.html"
    assert report.is_file() and "Dask Performance Report" in report.read_text()
    assert not (out / "live.json").exists()  # only while the run is live
    status = epcg("status", str(out))
    assert "finished" in status.stdout and "total" in status.stdout


def test_solution_count_caps_by_board(tmp_path: Path) -> None:
    """A table of caps applies to the boards it names; the other rows tally every count exactly."""
    job = tmp_path / "caps.toml"
    job.write_text('name = "caps"\ndomain = "witness"\nkind = "must-cross"\nrows = ["3x3:3", "3x4:3"]\n'
                   'figures_per_row = 0\nsolution_counts = {"3x4" = 20}\n')
    out = tmp_path / "run"
    result = epcg("run", str(job), "--out", str(out), "--serial")
    assert result.returncode == 0, result.stderr
    whole, capped = load_results(out)["rows"]
    assert whole["solution_counts_cap"] is None and whole["solution_counts_above"] == 0
    assert sum(whole["solution_counts"].values()) == whole["examined"]
    assert capped["solution_counts_cap"] == 20 and max(map(int, capped["solution_counts"])) <= 20
    assert sum(capped["solution_counts"].values()) + capped["solution_counts_above"] == capped["examined"]
    assert capped["solution_counts_above"] > 0


def test_paths_rows_past_listing_are_counted_exactly(tmp_path: Path) -> None:
    """The paths job lists small boards and counts larger ones (counts past 2^64 exact in results.json)."""
    out = tmp_path / "run"
    result = epcg("run", str(JOBS / "witness-paths.toml"), "--out", str(out), "--serial",
                  "--set", 'rows=["3x3", "8x8", "9x9", "20x2"]')
    assert result.returncode == 0, result.stderr
    rows = {(r["width"], r["height"]): r for r in json.loads((out / "results.json").read_text())["rows"]}
    assert rows[3, 3]["paths"] == 184 and rows[3, 3]["listed"]
    assert rows[8, 8]["paths"] == 3_266_598_486_981_642 and not rows[8, 8]["listed"]
    assert rows[9, 9]["paths"] == 41_044_208_702_632_496_804  # OEIS A007764, past 2^64
    assert rows[20, 2]["paths"] == count_paths(20, 2)
    summary = (out / "summary.md").read_text()
    assert "Counted, not listed" in summary and "8x8, 9x9, 20x2" in summary
    bad = epcg("run", str(JOBS / "witness-paths.toml"), "--out", str(tmp_path / "bad"), "--serial",
               "--set", 'rows=["15x15"]')
    assert bad.returncode == 2 and "14 cells on the shorter side" in bad.stderr
    assert not (tmp_path / "bad").exists()
