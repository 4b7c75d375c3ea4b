"""Signals only reach processes proven ours, and one live driver holds a run: real processes, real signals.

A recorded pid is trusted only with the host and the start token recorded beside it (`runtime/processes.py`):
a driver killed outright whose pid now belongs to an unrelated process, or a driver recorded on another host,
is never signalled, and `status` and `cancel` say it is gone (or out of sight) instead of "running".
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from epcg.runtime import processes
from epcg.runtime.history import History
from epcg.runtime.schemas import DetachedBatch

from .conftest import epcg


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A small run, finished in this process (the template every test copies)."""
    folder = tmp_path_factory.mktemp("signals")
    job = folder / "small.toml"
    job.write_text('name = "small"\ndomain = "witness"\nkind = "must-cross"\nrows = ["2x2:2", "3x3:3"]\n'
                   "chunk_size = 700\nfigures_per_row = 1\n")
    run = folder / "run"
    done = epcg("run", str(job), "--out", str(run), "--serial")
    assert done.returncode == 0, done.stderr
    return run


def _as_detached(template: Path, where: Path, allocations: list[dict]) -> Path:
    """A copy of the run as `submit --detach` leaves it, with these allocations recorded and none ended."""
    import shutil

    shutil.copytree(template, where, ignore=shutil.ignore_patterns(".lock", ".cas"))
    (where / "batch.json").write_text(json.dumps({"kind": "detached", "connect": {}}))
    history = History(allocations=[{"job": None, "started_at": time.time() - 5, **a} for a in allocations])
    (where / "allocations.json").write_bytes(history.to_json())
    return where


@pytest.fixture
def bystander():
    """An unrelated live process (as a `sleep` that got a killed driver's pid); killed at the end."""
    process = subprocess.Popen(["sleep", "300"])
    yield process
    process.kill()
    process.wait()


def _alive(process: subprocess.Popen) -> bool:
    time.sleep(0.3)
    return process.poll() is None


def test_token_tells_a_process_from_a_later_one_of_the_same_pid(bystander) -> None:
    mine = processes.identity()
    assert processes.state(mine) == "alive"
    theirs = processes.identity(bystander.pid)
    assert theirs["token"] and theirs["token"] != mine["token"]
    assert processes.state({**theirs, "token": theirs["token"] + "1"}) == "gone"  # same pid, another start
    assert processes.state({**theirs, "node": socket.gethostname() + "-elsewhere"}) == "elsewhere"
    for broken in ({}, {"pid": True}, {"pid": "1"}, {"pid": -1}, {"pid": 0}, {**theirs, "token": None},
                   {**theirs, "token": 5}, {"pid": 2**70, "node": socket.gethostname(), "token": "x"}):
        assert processes.state({"node": socket.gethostname(), **broken}) == "gone", broken
    assert processes.token(2**22 + 12345) is None  # beyond pid_max: no such process


@pytest.mark.parametrize("case", ["reused pid", "other host", "no token (older record)"])
def test_a_driver_not_proven_ours_is_never_signalled(finished_run, tmp_path: Path, bystander, case: str) -> None:
    """The pid of a killed driver now held by an unrelated process, a pid recorded on another host, a record
    with no start token: `cancel` signals nothing and says so, `status` says the driver is gone or elsewhere."""
    theirs = processes.identity(bystander.pid)
    alloc = {"reused pid": {**theirs, "token": "another-boot/1"},
             "other host": {**theirs, "node": "node-17.cluster"},
             "no token (older record)": {"pid": bystander.pid, "node": theirs["node"]}}[case]
    run = _as_detached(finished_run, tmp_path / "run", [alloc])
    status = epcg("status", str(run))
    assert status.returncode == 0, status.stderr
    line = next(x for x in status.stdout.splitlines() if "allocation 1:" in x)
    if case == "other host":
        assert "node-17.cluster, which this host cannot see into" in line, line
    else:
        assert f"its driver (pid {bystander.pid}) is gone" in line and "running" not in line, line
    cancelled = epcg("cancel", str(run), "--wait", "1")
    assert cancelled.returncode == 0, cancelled.stderr
    assert "cancelled nothing was queued or running" in cancelled.stdout
    said = "on node-17.cluster was not signalled" if case == "other host" else f"driver pid {bystander.pid} is gone"
    assert said in cancelled.stdout, cancelled.stdout
    assert _alive(bystander)


def test_a_driver_proven_ours_is_signalled(finished_run, tmp_path: Path, bystander) -> None:
    """The control: with its real token the same process is the driver, and `cancel` sends it SIGUSR1."""
    run = _as_detached(finished_run, tmp_path / "run", [processes.identity(bystander.pid)])
    cancelled = epcg("cancel", str(run), "--wait", "5")
    assert f"cancelled driver pid {bystander.pid}" in cancelled.stdout, cancelled.stdout
    assert bystander.wait(10) == -signal.SIGUSR1


def test_a_second_driver_of_a_live_run_is_refused(finished_run, tmp_path: Path) -> None:
    """While a process holds the run (as a live driver does for its whole life), `submit --resume --detach` and
    `epcg drive` are one line each, exit status 75, and the live allocation's record is untouched."""
    run = _as_detached(finished_run, tmp_path / "run", [])
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\nfrom epcg.runtime.store import RunDir\n"
        f"with RunDir({str(run)!r}).lock():\n    print('held', flush=True)\n    time.sleep(120)\n")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        before = (run / "allocations.json").read_bytes()
        for args in (["submit", "--resume", str(run), "--detach"], ["drive", str(run)]):
            refused = epcg(*args)
            assert refused.returncode == 75, (args, refused.stdout, refused.stderr)
            lines = refused.stderr.strip().splitlines()
            assert len(lines) == 1 and "in use by" in lines[0] and str(run) in lines[0], refused.stderr
        assert (run / "allocations.json").read_bytes() == before
        assert not (run / "driver.log").exists()
    finally:
        holder.kill()
        holder.wait()


def test_a_driver_holds_the_run_for_its_whole_life(finished_run, tmp_path: Path) -> None:
    """Finding 4 as it happened: while a detached driver computes, `submit --resume --detach` from another shell
    is refused (exit status 75) and the live allocation stays unended; after the driver ends the run is free."""
    from epcg.runtime.driver import Driver
    from epcg.runtime.engine import prepare_resume
    from epcg.runtime.history import load

    run = _as_detached(finished_run, tmp_path / "run", [])
    (run / "results.json").unlink()  # a run that still has work, so the driver computes
    planned = prepare_resume(run)
    seen: list = []

    def compute(_scheduler_file) -> None:
        seen.append(epcg("submit", "--resume", str(run), "--detach"))
        seen.append(load(planned.run).allocations)

    driver = Driver(planned.run, planned.plan.tasks(), DetachedBatch(kind="detached"), compute,
                    say=lambda line: None)
    assert driver.drive() == 0
    refused, allocations = seen
    assert refused.returncode == 75 and "in use by a live epcg process" in refused.stderr, refused.stderr
    assert len(allocations) == 1 and "ended_at" not in allocations[0], allocations
    assert not planned.run.is_locked()


@pytest.mark.slow  # a real detached run on the embedded cluster: about a minute
def test_finding_4_a_second_detached_submit_at_once_is_refused(tmp_path: Path) -> None:
    """`submit --detach`, then at once `submit --resume --detach`: the second is refused (75) while the first
    driver lives, and the first runs to "finished" alone."""
    from .conftest import JOBS

    run = tmp_path / "detached"
    first = epcg("submit", str(JOBS / "fling.toml"), "--detach", "--workers", "1", "--out", str(run),
                 "--set", "max_pieces=7", "--set", "chunk_words=16384")
    assert first.returncode == 0, first.stderr
    second = epcg("submit", "--resume", str(run), "--detach", "--workers", "1")
    assert second.returncode == 75 and len(second.stderr.strip().splitlines()) == 1, second.stderr
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        allocations = json.loads((run / "allocations.json").read_text())["allocations"]
        if allocations and allocations[-1].get("why") == "finished":
            break
        time.sleep(1)
    assert [a.get("why") for a in allocations] == ["finished"], allocations
