"""Every view of a run shows the same figures: the terminal's status lines, ``epcg status``, the progress page's
status.json and ``Run.readout()`` read the state, CPU seconds, time left and length through
:mod:`epcg.runtime.readout`, while the run runs and after it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import epcg
from epcg.report.dashboard import snapshot
from epcg.runtime.estimate import duration
from epcg.runtime.readout import time_left
from epcg.runtime.status import run_status

from .conftest import epcg as epcg_command

ROOT = Path(__file__).resolve().parents[1]
JOB = [str(ROOT / "jobs" / "witness-must-cross.toml"), "--set", 'rows=["4x4:6", "5x5:4", "5x5:5"]',
       "--set", "chunk_size=400000", "--workers", "2"]
"""Three stages of 207, 9 and 153 chunks: about 25 s of chunks on two workers."""


def _seconds(text: str) -> float:
    """A duration as :func:`duration` prints it, back in seconds."""
    number, unit = text.split()
    return float(number) * {"s": 1, "min": 60, "h": 3600, "d": 86400}[unit]


def _left(line: str) -> float | None:
    found = re.search(r"about ([\d.]+ (?:s|min|h|d)) left", line)
    return _seconds(found.group(1)) if found else None


def _status(out: Path) -> tuple[float, str]:
    began = time.time()
    result = epcg_command("status", str(out))
    assert result.returncode == 0, result.stderr
    return (began + time.time()) / 2, result.stdout


def _replayed(out: Path) -> Callable[[int, float], float]:
    """The time left as :func:`~epcg.runtime.readout.time_left` gives it from a finished run's records: with the
    first ``done`` chunks (in the order they ended) finished, at ``now``."""
    status = run_status(out)
    plan = status.planned.plan
    stage_of = {t.id: t.stage for t in plan.tasks()}
    records = sorted(({**r, "stage": stage_of[i]} for i, r in status.done.items()), key=lambda r: r["ended_at"])

    def left(done: int, now: float) -> float:
        counts: dict[str, int] = {}
        for r in records[:done]:
            counts[r["stage"]] = counts.get(r["stage"], 0) + 1
        found = time_left(plan, counts, records[:done], now)
        assert found is not None
        return found

    return left


def test_views_agree_while_a_run_runs_and_after(tmp_path: Path) -> None:
    out = tmp_path / "run"
    stdout, stderr = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    env = {**os.environ, "EPCG_PROGRESS_INTERVAL": "1"}
    with open(stdout, "w") as so, open(stderr, "w") as se:
        proc = subprocess.Popen([sys.executable, "-m", "epcg", "run", *JOB, "--out", str(out)], stdout=so,
                                stderr=se, env=env, cwd=tmp_path)
    try:
        deadline = time.time() + 240
        page = None
        while time.time() < deadline and proc.poll() is None:
            found = re.search(r"epcg progress: (http://\S+)", stdout.read_text())
            terminal = [line for line in stderr.read_text().splitlines() if _left(line) is not None]
            if found and terminal:
                page = found.group(1) + "/status.json"
                data = json.loads(urllib.request.urlopen(page, timeout=30).read())
                if data["state"] == "running" and data["seconds_left"] and 0.1 < data["done"] / data["total"] < 0.6:
                    break
            time.sleep(0.5)
        assert page is not None and proc.poll() is None, "the run ended before it could be read while running"

        seen: list[tuple[str, int, float, float, float, float]] = []
        """Each view's reading: its chunks done, when it read (at the earliest, at the latest), the time left it
        showed and how far printing may round it."""
        lines = [line for line in stderr.read_text().splitlines() if _left(line) is not None]
        for line in lines[-3:]:
            clock = time.strptime(line.split()[0], "%H:%M:%S")
            at = time.mktime(time.localtime()[:3] + clock[3:6] + time.localtime()[6:])
            done = int(re.search(r"progress: ([\d,]+) of", line).group(1).replace(",", ""))
            shown = _left(line)
            seen.append(("terminal", done, at, at + 1, shown, 0.5 if shown < 120 else 3.0))
        data = json.loads(urllib.request.urlopen(page, timeout=30).read())
        seen.append(("page", data["done"], data["at"], data["at"], data["seconds_left"], 0.05))
        readout = epcg.open(out).readout()
        seen.append(("api", readout.done, readout.at, readout.at, readout.seconds_left, 0.05))
        began = time.time()
        at, text = _status(out)
        done = int(next(line for line in text.splitlines() if line.startswith("total")).split()[1].split("/")[0])
        shown = _left(text)
        seen.append(("status", done, began, time.time(), shown, 0.5 if shown < 120 else 3.0))
        data = json.loads(urllib.request.urlopen(page, timeout=30).read())  # read in this order: CPU only grows
        readout = epcg.open(out).readout()
        at, text = _status(out)
        assert "running" in text.splitlines()[0] and readout.state == data["state"] == "running"
        total_cpu = float(next(line for line in text.splitlines() if line.startswith("total")).split()[-1])
        assert data["compute_seconds"] <= readout.compute_seconds + 0.01 <= total_cpu + 0.02, \
            (data["compute_seconds"], readout.compute_seconds, total_cpu)
        assert proc.wait(timeout=600) == 0, stderr.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()

    left = _replayed(out)
    for view, done, earliest, latest, shown, rounding in seen:
        low, high = left(done, earliest), left(done, latest)
        assert low - rounding - 0.02 * low <= shown <= high + rounding + 0.02 * high, (view, done, shown, low, high)

    results = json.loads((out / "results.json").read_text())
    at, text = _status(out)
    readout, page = epcg.open(out).readout(), snapshot(out)
    length = results["wall_seconds"]
    assert readout.state == page["state"] == "finished" and "finished" in text.splitlines()[0]
    assert readout.length_seconds == page["length_seconds"] == length, (readout.length_seconds, page, length)
    assert f"length {duration(length)} ({length:.1f} s)" in text
    assert f"computed in {duration(length)}" in stdout.read_text()
    assert f"wall time {length:.1f} s" in (out / "report.html").read_text()
    assert readout.seconds_left is None and page["seconds_left"] is None
    total_cpu = float(next(line for line in text.splitlines() if line.startswith("total")).split()[-1])
    rows = sum(row["seconds"] for row in results["rows"])
    assert abs(readout.compute_seconds - page["compute_seconds"]) < 1e-6
    assert abs(readout.compute_seconds - total_cpu) < 0.01 and abs(readout.compute_seconds - rows) < 0.01
