"""Shared test helpers: run the CLI in a subprocess, strip timings from results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .slurm_harness import slurm  # noqa: F401 - one SLURM for every test file that needs it

ROOT = Path(__file__).resolve().parents[1]
JOBS = ROOT / "jobs"


def epcg(*args: str, cwd: Path | None = None, timeout: float = 600, **popen) -> subprocess.CompletedProcess:
    """Run ``python -m epcg ARGS`` and capture its output."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run(
        [sys.executable, "-m", "epcg", *args],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env, **popen,
    )


LAYOUT = ("tasks", "allocations", "parts", "reads")
"""results.json keys that depend on the cluster and the plan it gave (its tasks, what they read), not on the answer."""


def without_timings(data: Any) -> Any:
    """results.json minus every timing field and what follows from how the run was laid out (its tasks, a
    submitted run's allocations, a resumed run's parts), for comparing runs on different clusters."""
    if isinstance(data, dict):
        return {k: without_timings(v) for k, v in data.items() if "second" not in k and k not in LAYOUT}
    if isinstance(data, list):
        return [without_timings(v) for v in data]
    return data


def load_results(run_dir: Path) -> Any:
    return without_timings(json.loads((run_dir / "results.json").read_text()))


@pytest.fixture
def small_job(tmp_path: Path) -> Path:
    """A must-cross job of three small rows, several chunks each."""
    path = tmp_path / "small.toml"
    path.write_text(
        'name = "small"\ndomain = "witness"\nkind = "must-cross"\n'
        'rows = ["2x2:2", "3x3:3", "3x3:4"]\nchunk_size = 700\nfigures_per_row = 2\n'
    )
    return path


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """moto's S3 server in its own process on a free port of 127.0.0.1 (skipped where moto is not installed)."""
    pytest.importorskip("moto")
    pytest.importorskip("obstore")
    from tests.s3server import S3Server

    server = S3Server(tmp_path_factory.mktemp("moto") / "moto.log")
    yield server
    server.stop()


@pytest.fixture
def s3_env(s3_server, monkeypatch):
    """This process and every epcg subprocess (and its workers) reach the test server the standard AWS way."""
    for key, value in s3_server.env.items():
        monkeypatch.setenv(key, value)
    return s3_server


@pytest.fixture
def bucket(s3_env) -> str:
    """``s3://<a new bucket>`` on the test server."""
    return f"s3://{s3_env.create_bucket()}"
