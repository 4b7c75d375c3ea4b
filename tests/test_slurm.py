"""SLURM for real (tests/slurm_harness.py starts it): workers as SLURM jobs via cluster files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .conftest import JOBS, epcg, load_results


def test_jobs_on_slurm_workers(slurm, tmp_path: Path, small_job: Path) -> None:
    env, tmp = slurm
    cluster = tmp_path / "slurm.toml"
    cluster.write_text(
        'kind = "slurm"\ncores = 1\nmemory = "2GiB"\nprocesses = 1\nwalltime = "00:20:00"\n'
        f'local_directory = "{tmp}"\nlog_directory = "{tmp_path}"\n'
        f'python = "{sys.executable}"\n[adapt]\nminimum = 2\nmaximum = 2\n'
    )
    fling = ["--set", "max_pieces=5", "--set", "chunk_words=4096", "--set", "top_puzzles=2"]
    for name, job, sets in (("witness", str(small_job), []), ("fling", str(JOBS / "fling.toml"), fling)):
        reference = tmp_path / f"{name}-reference"
        assert epcg("run", job, "--out", str(reference), "--serial", *sets).returncode == 0
        out = tmp_path / name
        result = subprocess.run([sys.executable, "-m", "epcg", "run", job, "--out", str(out),
                                 "--cluster", str(cluster), *sets],
                                env=env, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stderr
        assert load_results(out) == load_results(reference)
    logs = list(tmp_path.glob("*.out")) + list(tmp_path.glob("*.err"))
    assert logs, "the workers did not run as SLURM jobs (no job logs)"
