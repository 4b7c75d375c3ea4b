"""Every mistake a user can make ends in one line on stderr, exit status 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from epcg.runtime.store import RunDir

from .conftest import JOBS, epcg

MUST_CROSS = str(JOBS / "witness-must-cross.toml")


def assert_refused(result, message: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("epcg: error:"), result.stderr
    assert message in lines[0]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--set", "colour=1"], "unknown key 'colour'"),
        (["--set", "chunk_size='big'"], "chunk_size"),
        (["--set", 'rows=["4x4:70"]'], "k=70 must be 1..65"),
        (["--set", 'rows=["6x6:3"]'], "up to 5x5"),
        (["--set", "rows"], "malformed --set"),
        (["--set", "rows=[4x4]"], "malformed --set"),
    ],
)
def test_bad_job_input(tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "run"
    result = epcg("run", MUST_CROSS, "--out", str(out), "--serial", *args)
    assert_refused(result, message)
    assert not out.exists()


def test_missing_job_file(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert_refused(epcg("run", str(tmp_path / "none.toml"), "--out", str(out)), "does not exist")
    assert not out.exists()


def test_resume_of_nothing(tmp_path: Path) -> None:
    assert_refused(epcg("resume", str(tmp_path)), "not an epcg run directory")


def test_run_dir_in_use_and_changed_job(tmp_path: Path, small_job: Path) -> None:
    out = tmp_path / "run"
    done = epcg("run", str(small_job), "--out", str(out), "--serial")
    assert done.returncode == 0, done.stderr
    before = sorted(p.relative_to(out) for p in out.rglob("*"))

    with RunDir(out).lock():  # a conflict: exit status 75 (EX_TEMPFAIL), the holder named
        for args in (("resume", str(out), "--serial"), ("run", str(small_job), "--out", str(out), "--serial")):
            busy = epcg(*args)
            assert busy.returncode == 75 and busy.stderr.count("\n") == 1, busy.stderr
            assert "in use by another epcg client (pid" in busy.stderr
    assert_refused(epcg("run", str(small_job), "--out", str(out), "--serial"), "already holds a run")

    job = out / "job.toml"
    job.write_text(job.read_text().replace("chunk_size = 700", "chunk_size = 701"))
    assert_refused(epcg("resume", str(out), "--serial"), "has changed since the run started")
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before


def test_unreachable_scheduler(tmp_path: Path, small_job: Path) -> None:
    out = tmp_path / "run"
    result = epcg("run", str(small_job), "--out", str(out), "--scheduler", "tcp://127.0.0.1:9")
    assert_refused(result, "cannot reach scheduler")
    assert not out.exists()


def test_a_reader_that_goes_away_ends_the_output_quietly(tmp_path: Path) -> None:
    """`epcg status RUN | head`: the pipe closes before the command has printed; no error line, no traceback."""
    import os
    import subprocess
    import sys

    job = tmp_path / "tiny.toml"
    job.write_text('name = "tiny"\ndomain = "witness"\nkind = "must-cross"\nrows = ["2x2:2"]\nfigures_per_row = 0\n')
    out = tmp_path / "run"
    assert epcg("run", str(job), "--out", str(out), "--serial").returncode == 0
    for args in (["status", str(out)], ["plan", str(job)]):
        read, write = os.pipe()
        os.close(read)  # the reader is gone before the first line
        with os.fdopen(write, "w") as closed:
            result = subprocess.run([sys.executable, "-m", "epcg", *args], stdout=closed, stderr=subprocess.PIPE,
                                    text=True, timeout=120)
        assert result.returncode == 1 and result.stderr == "", (args, result.stderr)
