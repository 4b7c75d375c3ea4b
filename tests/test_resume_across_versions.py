"""A run started by an earlier epcg resumes under a later one that added job keys with defaults: the resolved job
(and its digest) then holds keys the run's job.toml never had, yet job.toml is the one the run started with. An
edited job.toml is still refused."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import epcg

from .conftest import epcg as cli

JOB = {"name": "old", "domain": "witness", "kind": "must-cross", "rows": ["3x3:3"], "chunk_size": 2000}


def _as_written_before_keep(run: Path) -> None:
    """Rewrite job.toml as a version without the ``keep`` keys wrote it, and its digest as that version did."""
    text = "".join(line for line in (run / "job.toml").read_text().splitlines(keepends=True)
                   if not line.startswith(("keep ", "keep_cap ")))
    (run / "job.toml").write_text(text)
    (run / "manifest" / "job.sha256").write_text(hashlib.sha256(text.encode()).hexdigest() + "\n")


def test_a_run_from_before_a_new_key_resumes_and_reports_the_same(tmp_path: Path) -> None:
    run = tmp_path / "run"
    done = epcg.run(JOB, run, progress=False)
    expected = json.loads((run / "results.json").read_text())["rows"][0]["min_solutions"]
    _as_written_before_keep(run)
    for record in sorted((run / "manifest").glob("*/*.json"))[-2:]:
        record.unlink()  # two chunks to do again
    resumed = cli("resume", str(run), "--serial")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((run / "results.json").read_text())["rows"][0]["min_solutions"] == expected
    assert epcg.run(JOB, run, progress=False).results == done.results  # the API takes it as the same job


@pytest.mark.slow  # about 8 s; the default run refuses an edited job.toml in tests/test_cli_errors.py
def test_an_edited_job_file_is_still_refused(tmp_path: Path) -> None:
    run = tmp_path / "run"
    epcg.run(JOB, run, progress=False)
    _as_written_before_keep(run)
    (run / "job.toml").write_text((run / "job.toml").read_text().replace("chunk_size = 2000", "chunk_size = 3000"))
    resumed = cli("resume", str(run), "--serial")
    assert resumed.returncode == 2 and "has changed since the run started" in resumed.stderr
