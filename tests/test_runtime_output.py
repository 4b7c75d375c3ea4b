"""What a run prints and where its sizes come from: chunks coarsened by calibrated cost, plain progress in a log
file, Dask's logs in the run directory, no traceback on SIGTERM, exact Fling! answers by default."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import epcg

ROOT = Path(__file__).resolve().parent.parent
FLING = str(ROOT / "jobs" / "fling.toml")


def test_plan_coarsens_tiny_chunks_by_their_calibrated_cost() -> None:
    """chunk_size=1 on 4x4 k=6 is 82.6 million tasks of microseconds: the plan takes chunks of about a second."""
    result = epcg("plan", str(ROOT / "jobs" / "witness-must-cross.toml"), "--set", "chunk_size=1",
                  "--set", 'rows=["4x4:6"]', "--workers", "2")
    assert result.returncode == 0, result.stderr
    notes = [line for line in result.stdout.splitlines() if line.startswith("note: chunk_size")]
    assert len(notes) == 1 and "82,598,880 tasks" in notes[0] and "1 s a task" in notes[0], notes
    chunk, tasks = (int(x.replace(",", "")) for x in re.search(r"using chunk_size=(\d+) \(([\d,]+) tasks", notes[0]).groups())
    assert tasks == math.ceil(82_598_880 / chunk) and 1 < tasks < 1000  # not the 79,961 of the task cap
    row = next(line for line in result.stdout.splitlines() if line.startswith("4x4-k6")).split()
    assert int(row[1].replace(",", "")) == tasks
    per_task = float(row[2]) * (1e-3 if row[3] == "ms" else 1)
    assert per_task >= 0.5, row  # about the 1 s target (powers of two, estimate redone at the new size)
    lines = result.stdout.splitlines()
    header = lines[next(i for i, line in enumerate(lines) if " -> " in line) + 1]
    assert "overhead" in header and "run would accept" in result.stdout


def test_plan_leaves_jobs_whose_tasks_are_big_enough() -> None:
    result = epcg("plan", FLING, "--workers", "2")
    assert result.returncode == 0 and "note:" not in result.stdout, result.stdout
    total = next(line for line in result.stdout.splitlines() if line.startswith("total")).split()
    assert total[2].endswith("%") or total[3] == "%"


def _occupied_port() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


@pytest.mark.slow
def test_a_run_into_a_file_prints_status_lines_and_keeps_daskes_logs(tmp_path: Path) -> None:
    """Output to a file: no bar redraws, a status line per interval, a summary; Dask's warnings (here its
    dashboard port taken) in DIR/logs/, not in the output."""
    taken = _occupied_port()
    cluster = tmp_path / "local.toml"
    cluster.write_text(f'kind = "local"\nworkers = 2\ndashboard_address = "127.0.0.1:{taken.getsockname()[1]}"\n')
    out, log = tmp_path / "run", tmp_path / "output.txt"
    began = time.monotonic()
    with log.open("w") as sink:
        done = subprocess.run([sys.executable, "-m", "epcg", "run", FLING, "--set", "max_pieces=5", "--out", str(out),
                               "--cluster", str(cluster)], stdout=sink, stderr=subprocess.STDOUT, cwd=tmp_path,
                              env={**os.environ, "EPCG_PROGRESS_INTERVAL": "1"}, timeout=900)
    seconds = time.monotonic() - began
    taken.close()
    text = log.read_text()
    assert done.returncode == 0, text
    assert "\r" not in text and "Traceback" not in text and "ERROR" not in text and "Warning" not in text, text
    status = [line for line in text.splitlines() if re.match(r"\d\d:\d\d:\d\d progress: ", line)]
    assert status and status[-1].endswith(" progress: finished 16 of 16 chunks"), status  # its length: "computed in"
    assert all(re.search(r"\d+ of \d+ chunks .*; stage \w+ .* \d+ of \d+; [\d.]+ chunks/s", s) for s in status[:-1])
    assert len(status) <= seconds / 1 + 2
    assert re.search(r"^computed in \d", text, re.M), text
    assert "already in use" in (out / "logs" / "client.log").read_text()
    assert list((out / "logs").glob("worker-*.log"))
    results = json.loads((out / "results.json").read_text())
    assert results["exact"] and all(h["exact"] for h in results["ratio_histograms"])


@pytest.mark.parametrize("sig, status", [pytest.param(signal.SIGTERM, 143, marks=pytest.mark.slow),
                                         pytest.param(signal.SIGINT, 130, marks=pytest.mark.slow)])
def test_a_stopped_run_prints_no_traceback(tmp_path: Path, sig: int, status: int) -> None:
    """A real run stopped by a real signal while its tasks run: the resume hint, nothing from Dask."""
    out, log = tmp_path / "run", tmp_path / "output.txt"
    with log.open("w") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "epcg", "run", FLING, "--out", str(out)],
                                stdout=sink, stderr=subprocess.STDOUT, cwd=tmp_path)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and len(list((out / "manifest").rglob("0*.json"))) < 3:
            time.sleep(0.1)
        proc.send_signal(sig)
        assert proc.wait(timeout=120) == status
    text = log.read_text()
    assert f"'epcg resume {out}' continues" in text, text
    assert "Traceback" not in text and "ERROR" not in text and "Error" not in text, text
    assert (out / "logs" / "client.log").exists()


def test_fling_evaluates_every_unique_board_unless_a_sample_is_asked_for() -> None:
    """The default 11-piece job evaluates all of layer 11 (not the 2.9 % sample of 2^32 boards); plan says what a
    sample would save, and a job that sets ratio_sample gets its sample."""
    from epcg.games.fling import evaluation as fling_evaluate
    from epcg.games.fling import kind as fling
    from epcg.runtime.jobs import load_job

    config = load_job(Path(FLING), ["max_pieces=11"]).config
    assert config.ratio_sample is None and fling_evaluate.fraction(config, 11) == 1
    top = next(s for s in fling.plan(config).stages if s.name == fling_evaluate.EVALUATE)
    assert "sample" not in top.label
    (line,) = fling.plan_notes(config)
    assert line.startswith("expert evaluation: exact") and "2.9% of layer 11" in line and "saving" in line
    sampled = load_job(Path(FLING), ["max_pieces=11", "ratio_sample=4294967296"]).config
    assert 0.028 < fling_evaluate.fraction(sampled, 11) < 0.03
    assert fling.plan_notes(sampled)[0].startswith("expert evaluation: a sample")


@pytest.mark.slow
@pytest.mark.parametrize("args, limit", [
    (["jobs/witness-must-cross.toml", "--set", "chunk_size=1", "--set", 'rows=["4x4:6"]'], 120),
    (["jobs/fling.toml", "--set", "chunk_words=1", "--set", "max_pieces=6"], 90),
])
def test_tiny_chunks_finish_in_time(tmp_path: Path, args: list[str], limit: float) -> None:
    """The issue's acceptance: one-puzzle (one-word) chunks run as tasks of about a second, within the limit."""
    began = time.monotonic()
    result = epcg("run", *args, "--out", str(tmp_path / "run"), cwd=ROOT)
    seconds = time.monotonic() - began
    assert result.returncode == 0, result.stderr
    assert sum(line.startswith("note:") for line in result.stdout.splitlines()) == 1
    if "witness" in args[0]:
        (row,) = json.loads((tmp_path / "run" / "results.json").read_text())["rows"]
        assert (row["min_solutions"], row["puzzles_at_min"]) == (1, 738), row
    assert seconds < limit, seconds
