"""Faults at every storage call (issue 34, item 7), and storage faults named for their cause (item 3).

A small Witness run and a small Fling! run are made with call N of their Location failing, for every N, with
each fault class of the storage interface in turn (:mod:`tests.faulty`), and SIGKILLed at call N; every outcome
is the correct result or one error naming the cause (the words the CLI prints as one line), and a later run of
the same job (which resumes it) gives results identical to an uninterrupted run.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from epcg.runtime.errors import OutputFailed, TaskFailed, UserError

from .conftest import ROOT, epcg, without_timings
from .faulty import KINDS, injected

JOBS = {
    "witness": {"name": "w", "domain": "witness", "kind": "must-cross", "rows": ["3x3:2"], "chunk_size": 300,
                "figures_per_row": 1},
    "fling": {"name": "f", "domain": "fling", "width": 3, "height": 3, "max_pieces": 3, "chunk_words": 1,
              "top_puzzles": 0, "distributions": False},
}
ONE_LINE = (UserError, TaskFailed, OutputFailed, OSError)
"""What the CLI prints as one line (``EpcgGroup``; an OSError only of a full disk); anything else would be a
traceback."""


def results(out: Path | str) -> Any:
    from epcg.runtime.rundir import open_location

    return without_timings(json.loads(open_location(out).read("results.json")))


def run(job: dict, out: Path) -> None:
    import epcg as api

    api.run(job, out, progress=False)


@pytest.fixture(scope="module", params=[pytest.param(name, marks=[pytest.mark.slow] if name == "fling" else [])
                                        for name in JOBS])
def reference(request, tmp_path_factory) -> tuple[str, Any, int]:
    """The job's name, its uninterrupted results and how many storage calls it makes."""
    out = tmp_path_factory.mktemp("reference") / "run"
    run(JOBS[request.param], out)  # compiles, outside the count
    out = tmp_path_factory.mktemp("reference") / "run"
    with injected(0, "") as counted:
        run(JOBS[request.param], out)
    return request.param, results(out), counted.calls


@pytest.mark.parametrize("store", ["posix", pytest.param("s3", marks=[pytest.mark.slow, pytest.mark.timeout(1800)])])
def test_a_fault_at_every_storage_call(reference, store: str, tmp_path: Path, request, capsys) -> None:
    """On a POSIX directory and on the S3 server (whose calls are fewer or more: the count is per store)."""
    name, expected, calls = reference
    where: Path | str = tmp_path
    if store == "s3":
        where = request.getfixturevalue("bucket")
        with injected(0, "") as counted:
            run(JOBS[name], f"{where}/count")
        calls = counted.calls
    wrong = []
    for n in range(1, calls + 1):
        kind = KINDS[n % len(KINDS)]
        out = tmp_path / f"{n}" if store == "posix" else f"{where}/{n}"
        with injected(n, kind) as state:
            try:
                run(JOBS[name], out)
                error = None
            except ONE_LINE as exc:
                error = exc
                if isinstance(exc, OSError) and exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                    wrong.append(f"call {n} ({kind}, {state.log}): a traceback: {type(exc).__name__}: {exc}")
                    continue
            except Exception as exc:  # noqa: BLE001 - what the test looks for: an error that is not one line
                wrong.append(f"call {n} ({kind}, {state.log}): a traceback: {type(exc).__name__}: {exc}")
                continue
        if error is not None and "INJECTED" not in str(error) and not _named(error, kind):
            wrong.append(f"call {n} ({kind}, {state.log}): the cause is not named: {type(error).__name__}: {error}")
        if error is None and results(out) != expected:
            wrong.append(f"call {n} ({kind}, {state.log}): finished with other results")
        try:
            run(JOBS[name], out)
        except Exception as exc:  # noqa: BLE001 - the later resume must finish
            wrong.append(f"call {n} ({kind}, {state.log}): the later run failed: {type(exc).__name__}: {exc}")
            continue
        if results(out) != expected:
            wrong.append(f"call {n} ({kind}, {state.log}): the later run gave other results")
    with capsys.disabled():
        print(f"\n{name} on {store}: a fault at each of {calls} storage calls ({', '.join(KINDS)} in turn)")
    assert not wrong, "\n".join(wrong)


def _named(error: BaseException, kind: str) -> bool:
    """An error that names a full disk by its own words."""
    return kind == "full" and os.strerror(errno.ENOSPC) in str(error)


KILLED_AT = 2
"""SIGKILLs per job in the default run, at a third and two thirds of its storage calls (every call with -m slow:
each kill is two processes, a few seconds each)."""


@pytest.mark.parametrize("every", [pytest.param(False), pytest.param(True, marks=pytest.mark.slow)])
def test_sigkill_at_a_storage_call_then_resume(reference, tmp_path: Path, every: bool, capsys) -> None:
    name, expected, calls = reference
    job = tmp_path / "job.json"
    points = range(1, calls + 1) if every else [calls * (i + 1) // (KILLED_AT + 1) for i in range(KILLED_AT)]
    wrong = []
    for n in points:
        out = tmp_path / f"{n}"
        code = ("import json, sys, epcg\nfrom tests.faulty import injected\n"
                f"with injected({n}, 'kill'):\n    epcg.run(json.loads(sys.argv[1]), sys.argv[2], progress=False)\n")
        killed = subprocess.run([sys.executable, "-c", code, json.dumps(JOBS[name]), str(out)], cwd=ROOT,
                                capture_output=True, text=True, timeout=300)
        if killed.returncode != -9:
            wrong.append(f"call {n}: not killed there ({killed.returncode}): {killed.stderr[-300:]}")
            continue
        if (out / "job.toml").exists():
            again = epcg("resume", str(out), "--serial")
        else:
            job.write_text(_toml(JOBS[name]))
            again = epcg("run", str(job), "--out", str(out), "--serial")
        if again.returncode != 0 or results(out) != expected:
            wrong.append(f"call {n}: the later run: {again.returncode} {again.stderr.strip()[-300:]}")
    with capsys.disabled():
        print(f"\n{name}: SIGKILL at {len(points)} of {calls} storage calls, then resume")
    assert not wrong, "\n".join(wrong)


def _toml(job: dict) -> str:
    def value(v: Any) -> str:
        return json.dumps(v) if not isinstance(v, bool) else str(v).lower()

    return "".join(f"{k} = {value(v)}\n" for k, v in job.items())
