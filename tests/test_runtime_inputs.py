"""Bad input of every kind, each through a real `epcg` process: one stderr line, exit 2, nothing written."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from .conftest import JOBS

DEEP = "[" * 5000 + "]" * 5000

# (arguments, extra environment, words the one line must contain)
CASES: list[tuple[list[str], dict[str, str], str]] = [
    (["run", "jobs/witness-paths.toml", "--out", "README.md"], {}, "is a file, not a directory"),
    (["run", "jobs/witness-paths.toml", "--out", "README.md/x"], {}, "is a file, not a directory"),
    (["run", "jobs/witness-paths.toml", "--out", "dangling"], {}, "symbolic link"),
    (["run", "jobs/witness-paths.toml", "--out", "dangling/x"], {}, "symbolic link"),
    (["run", "jobs/witness-must-cross.toml", "--set", f"rows={DEEP}"], {}, "more than 16 deep"),
    (["run", "jobs/witness-triple-4x4.toml", "--set", "pieces=6"], {}, "memory limit"),
    (["run", "jobs/fling.toml", "--set", "max_pieces=13", "--set", "partitions=1"], {},
     "GiB per worker process, more than"),
    (["run", "jobs/dwp-study.toml", "--set", "only=[]"], {}, "only"),
    (["run", "jobs/dwp-study.toml", "--set", "experiments=[{id=1,population=32,mnm=1,states=12,grid=[1000000,1000000]}]"],
     {}, "grid sides"),
    (["run", "jobs/dwp-study.toml", "--set", "experiments=[{id=1,population=1000000000,mnm=1,states=12}]"],
     {}, "population must be at most"),
    (["run", "jobs/dwp-study.toml", "--max-tasks", "10"], {}, "--max-tasks"),
    (["run", "jobs/witness-paths.toml", "--scheduler", "tls://127.0.0.1:9"], {}, "no certificates"),
    (["run", "jobs/witness-paths.toml", "--scheduler-file", "none.json"], {}, "does not exist"),
    (["run", "jobs/witness-paths.toml", "--scheduler", "tcp://127.0.0.1:9", "--scheduler-file", "x.json"], {},
     "not several"),
    (["run", "jobs/witness-paths.toml"], {"DASK_SCHEDULER_ADDRESS": "tls://127.0.0.1:9"}, "no certificates were"),
]
"""The inputs the issue lists, and the options and paths next to them.

A 13-piece layer in one part needs about 66 GiB per worker, so its refusal names memory on any machine with less
than about 82 GiB per worker, whatever its free disk (a 12-piece one fits 24 GiB and is refused only for disk).
"""

MORE_CASES: list[tuple[list[str], dict[str, str], str]] = [
    (["run", "jobs/fling.toml", "--set", "max_pieces=13", "--set", "partitions=1", "--serial"], {},
     "GiB per worker process, more than"),
    (["run", "jobs/witness-paths.toml", "--workers", "0"], {}, "--workers"),
    (["run", "jobs/witness-paths.toml", "--bogus"], {}, "No such option"),
    (["run", "jobs"], {}, "is a directory, not a TOML file"),
    (["run", "README.md"], {}, "missing key 'domain'"),
    (["run", "jobs/witness-paths.toml", "--set", "name='../x'"], {}, "name"),
    (["run", "jobs/fling.toml", "--set", "max_pieces=40"], {}, "at most 2^43"),
    (["run", "jobs/fling.toml", "--set", "kernel='slow'"], {}, "kernel"),
    (["run", "jobs/fling.toml", "--set", "ratio_sample=0"], {}, "ratio_sample"),
    (["run", "jobs/fling.toml", "--set", "kernel='block'", "--set", "width=17", "--set", "height=2"], {},
     "at most 16 cells"),
    (["plan", "jobs/fling.toml", "--memory-limit", "lots"], {}, "not a size"),
    (["resume", "README.md"], {}, "is a file, not a run directory"),
    (["status", "nowhere"], {}, "not an epcg run directory"),
    (["verify", "jobs"], {}, "not an epcg run directory"),
    (["frobnicate"], {}, "No such command"),
]


def tree(root: Path) -> dict[str, tuple]:
    """Every path under ``root`` with its type, size and mtime (symlinks not followed)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            out[str(path.relative_to(root))] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project directory as a new user has it: the jobs, a README, a dangling symlink."""
    root = tmp_path / "project"
    root.mkdir()
    shutil.copytree(JOBS, root / "jobs")
    (root / "README.md").write_text("# not a run directory\n")
    (root / "dangling").symlink_to(tmp_path / "missing-target")
    return root


def run_cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "epcg", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **env, "PYTHONUNBUFFERED": "1"}, timeout=120)


def check_refused(project: Path, cases: list) -> None:
    before = tree(project)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda case: run_cli(case[0], case[1], project), cases))
    failures = []
    for (args, _env, words), result in zip(cases, results):
        lines = result.stderr.strip().splitlines()
        ok = (result.returncode == 2 and len(lines) == 1 and lines[0].startswith("epcg: error:")
              and words in lines[0] and result.stdout == "")
        if not ok:
            failures.append(f"{' '.join(a[:60] for a in args)}: rc={result.returncode} {result.stderr[-400:]!r}")
    assert not failures, "\n".join(failures)
    assert tree(project) == before
    print(f"bad inputs tried: {len(cases)}")


@pytest.mark.slow  # 27 s; the class of each of its inputs is tested in the default run
def test_the_issues_bad_inputs(project: Path) -> None:
    check_refused(project, CASES)


@pytest.mark.slow
def test_more_bad_inputs(project: Path) -> None:
    check_refused(project, MORE_CASES)


@pytest.mark.slow  # the plan of a refused 12-piece job; tests/test_runtime_plan.py checks plan against run by default
@pytest.mark.parametrize("pieces", [12, 13, 14])
def test_plan_estimates_what_run_refuses(project: Path, pieces: int) -> None:
    limit = ["--memory-limit", "12GiB"]  # the refusal is the plan's for this memory, not this machine's
    whole = run_cli(["plan", "jobs/fling.toml", "--set", f"max_pieces={pieces}", "--set", "partitions=1", *limit],
                    {}, project)
    assert whole.returncode == 0, whole.stderr
    assert f"k{pieces}" in whole.stdout and "run would refuse" in whole.stdout
    assert "GiB per worker process, more than" in whole.stdout
    if pieces != 12:
        return
    parts = run_cli(["plan", "jobs/fling.toml", "--set", "max_pieces=12", *limit], {}, project)  # 9.2 GiB in 2 parts
    assert parts.returncode == 0 and "using partitions=2" in parts.stdout, parts.stdout + parts.stderr
    big = run_cli(["plan", "jobs/witness-must-cross.toml", "--set", "chunk_size=1", "--set", 'rows=["4x4:6"]'],
                  {}, project)
    assert big.returncode == 0 and "82,598,880 tasks" in big.stdout and "run would accept" in big.stdout
    assert not (project / "runs").exists()
