"""Ctrl-C and SIGTERM to a whole process group, as a terminal and a batch system send them, during a run: the
client, its embedded cluster's workers, or a scheduler and `dask worker` started by hand beside it all get the
signal. The terminal shows the one stop line with the resume command (no worker traceback, no lost workers),
and the resumed run equals one never stopped."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import JOBS, epcg, load_results

SETS = ["--set", "max_pieces=7", "--set", "chunk_words=512", "--set", "top_puzzles=0"]
"""A Fling! job long enough to be stopped while its chunks run, on an idle machine too (its chunks are
coarsened to about a second of work each)."""

ALLOWED = (r"fling: \d+ of \d+ chunks to do .*", r"note: .*", r"epcg plan's estimate: .*", r"Dask dashboard: .*",
           r"epcg progress: .*", r"\d\d:\d\d:\d\d progress: stopped with \d+ of \d+ chunks( .*)?",
           r"interrupted; 'epcg resume .*' continues where this stopped")
"""Every line a stopped run may print."""

GROUP = """\
dask scheduler --host 127.0.0.1 --port 0 --dashboard-address 127.0.0.1:0 --scheduler-file sched.json \
  > scheduler.log 2>&1 &
while [ ! -s sched.json ]; do sleep 0.1; done
dask worker --scheduler-file sched.json --nworkers 2 --nthreads 1 --host 127.0.0.1 --dashboard-address :0 \
  > workers.log 2>&1 &
exec "$@"
"""
"""A terminal's session by hand: a scheduler, workers with their nannies and the run, in one process group."""


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reference") / "run"
    assert epcg("run", str(JOBS / "fling.toml"), "--out", str(out), "--serial", *SETS).returncode == 0
    return out


def stopped(args: list[str], out: Path, sig: int, cwd: Path) -> tuple[int, str]:
    """Start ``args`` in a process group of its own, send ``sig`` to the whole group once 3 chunks are recorded;
    its exit status and output (everything left in the group is killed afterwards)."""
    log = cwd / "output.txt"
    with log.open("w") as sink:
        proc = subprocess.Popen(args, stdout=sink, stderr=subprocess.STDOUT, cwd=cwd, start_new_session=True,
                                env={**os.environ, "EPCG_PROGRESS_INTERVAL": "60"})
        try:
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline and len(list((out / "manifest").rglob("0*.json"))) < 3:
                assert proc.poll() is None, log.read_text()
                time.sleep(0.02)
            os.killpg(proc.pid, sig)
            status = proc.wait(timeout=120)
        finally:
            time.sleep(0.5)  # let a nanny see its worker go, then clear the group
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return status, log.read_text()


def assert_quiet(text: str, out: Path) -> None:
    lines = [line for line in text.splitlines() if line.strip()]
    assert all(any(re.fullmatch(p, line) for p in ALLOWED) for line in lines), text
    assert lines[-1] == f"interrupted; 'epcg resume {out}' continues where this stopped", text
    assert "Traceback" not in text and "lost" not in text, text


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_embedded_cluster(tmp_path: Path, reference: Path, sig: int) -> None:
    out = tmp_path / "run"
    status, text = stopped([sys.executable, "-m", "epcg", "run", str(JOBS / "fling.toml"), "--out", str(out),
                            "--workers", "2", *SETS], out, sig, tmp_path)
    assert status == 128 + sig, text
    assert_quiet(text, out)
    resumed = epcg("resume", str(out), "--workers", "2")
    assert resumed.returncode == 0, resumed.stderr
    assert load_results(out) == load_results(reference)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_scheduler_and_workers_started_by_hand(tmp_path: Path, reference: Path, sig: int) -> None:
    out = tmp_path / "run"
    bin_dir = Path(sys.executable).parent
    run = [sys.executable, "-m", "epcg", "run", str(JOBS / "fling.toml"), "--out", str(out),
           "--scheduler-file", "sched.json", *SETS]
    status, text = stopped(["bash", "-c", f'PATH="{bin_dir}:$PATH"\n{GROUP}', "group", *run], out, sig, tmp_path)
    assert status == 128 + sig, text
    assert_quiet(text, out)
    workers = (tmp_path / "workers.log").read_text()
    assert "Worker plugin epcg-stops-to-client" in workers and "Traceback" not in workers, workers
    resumed = epcg("resume", str(out), "--workers", "2")
    assert resumed.returncode == 0, resumed.stderr
    assert load_results(out) == load_results(reference)
