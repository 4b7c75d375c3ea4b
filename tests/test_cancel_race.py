"""`epcg cancel` raced against the start of an allocation, in real processes, many times: the cancel is never lost.

Two spawned processes share one run directory laid out by a real `epcg submit`. In each round both wait at a
barrier, sleep a random moment, and then one starts an allocation (:class:`epcg.runtime.driver.Driver`, its
chunk step a sleep that only a drain ends early) while the other cancels the run (what `epcg cancel` calls).
Whichever comes first, the round must end with ``cancel`` set, the allocation ended by the cancel (before
computing, or drained by the signal) and no continuation left waiting. A batch-kind round runs against
`sbatch`/`squeue`/`scancel` stand-ins that record what is submitted and cancelled and deliver the drain signal.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

import pytest

from epcg.runtime.history import HISTORY_FILE, History, load

from .conftest import JOBS

ROUNDS = 40
SPREAD = 0.05
"""Seconds each side may wait after the barrier: wider than an allocation's start, so both orders occur."""
COMPUTE = 3.0
"""Seconds the chunk step takes unless a drain stops it (a round that lost the cancel ends "finished")."""

FAKE_SLURM = {
    "sbatch": 'id=9$$; echo $id >> "{bin}/submitted"; echo $id\n',
    "squeue": 'case "$*" in *%e*) exit 0;; esac\nfor a; do last=$a; done\n'
              'echo "$last" | tr , "\\n" | while read id; do echo "$id RUNNING None"; done\n',
    "scancel": 'if [ "$1" = "--batch" ]; then kill -USR1 "$3"; else echo "$1" >> "{bin}/cancelled"; fi\n',
}
"""Stand-ins: a job id per submission; every job running; a drain is SIGUSR1 to the job id, which the driver
side sets to its own pid; other cancels are recorded."""


@pytest.fixture(scope="module")
def submitted(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A run directory as `epcg submit --cluster slurm.toml` leaves it, and the environment of the stand-ins."""
    folder = tmp_path_factory.mktemp("race")
    fake = folder / "bin"
    fake.mkdir()
    for name, body in FAKE_SLURM.items():
        (fake / name).write_text("#!/bin/sh\n" + body.replace("{bin}", str(fake)))
        (fake / name).chmod(0o755)
    cluster = folder / "slurm.toml"
    cluster.write_text('kind = "slurm"\ncores = 2\nmemory = "4GiB"\nwalltime = "00:01:00"\nsignal_lead = 40\n'
                       f'max_requeues = 40\npython = "{sys.executable}"\n')
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}
    run = folder / "run"
    done = subprocess.run([sys.executable, "-m", "epcg", "submit", str(JOBS / "fling.toml"), "--set", "max_pieces=6",
                           "--cluster", str(cluster), "--out", str(run)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    (fake / "submitted").unlink()  # the first allocation's job: the rounds start from a history without it
    return run, env


@pytest.mark.parametrize("kind", ["detached", "slurm"])
def test_cancel_is_never_lost(submitted, tmp_path: Path, kind: str, monkeypatch) -> None:
    import multiprocessing

    source, env = submitted
    run = tmp_path / "run"
    shutil.copytree(source, run, ignore=shutil.ignore_patterns(".lock", ".cas"))
    if kind == "detached":
        (run / "batch.json").write_text(json.dumps({"kind": "detached", "connect": {}}))
    monkeypatch.setenv("PATH", env["PATH"])  # the spawned processes inherit it
    fake = Path(env["PATH"].split(":")[0])
    context = multiprocessing.get_context("spawn")
    start, end = context.Barrier(3, timeout=60), context.Barrier(3, timeout=60)
    sides = [context.Process(target=side, args=(str(run), start, end, seed))
             for seed, side in enumerate((_drive_side, _cancel_side))]
    for process in sides:
        process.start()
    began = time.monotonic()
    orders = {"before": 0, "after": 0}
    try:
        for n in range(ROUNDS):
            (run / HISTORY_FILE).write_bytes(History().to_json())
            start.wait()
            end.wait()
            history = load(_rundir(run))
            mine = history.allocations
            assert history.cancel and history.next is None, (n, history)
            assert len(mine) == 1 and "cancelled by epcg cancel" in mine[0].get("why", ""), (n, history)
            orders["before" if mine[0]["why"].startswith("did not compute") else "after"] += 1
            if kind == "slurm":
                lines = {name: set(_lines(fake / name)) for name in ("submitted", "cancelled")}
                assert lines["submitted"] <= lines["cancelled"], (n, lines, history)
    except BaseException:
        for barrier in (start, end):
            barrier.abort()
        raise
    finally:
        for process in sides:
            process.join(30)
    wall = time.monotonic() - began
    print(f"{kind}: {ROUNDS} rounds in {wall:.1f} s; cancel before the allocation was recorded: {orders['before']}, "
          f"after: {orders['after']}")
    assert [p.exitcode for p in sides] == [0, 0]
    assert orders["before"] and orders["after"], orders  # both orders happened: the race was run


def _lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def _rundir(path: Path | str):
    from epcg.runtime.store import RunDir

    return RunDir(path)


def _rounds(start, end, seed: int, act) -> None:
    """``act()`` once per round, after the barrier and a random pause; any failure breaks the barriers."""
    rng = random.Random(seed)
    try:
        for _ in range(ROUNDS):
            start.wait()
            time.sleep(rng.uniform(0, SPREAD))
            act()
            end.wait()
    except Exception:
        traceback.print_exc()
        start.abort()
        end.abort()
        raise


def _compute(scheduler_file) -> None:
    time.sleep(COMPUTE)


def _drive_side(path: str, start, end, seed: int) -> None:
    """One allocation per round, as `epcg drive` runs it (its job id is this process's pid)."""
    from epcg.runtime.batch import read_batch
    from epcg.runtime.driver import Driver
    from epcg.runtime.engine import prepare_resume

    signal.signal(signal.SIGUSR1, signal.SIG_IGN)  # a drain that comes after a round ended is dropped
    os.environ["SLURM_JOB_ID"] = str(os.getpid())
    planned = prepare_resume(path)
    run, tasks = planned.run, planned.plan.tasks()
    info = read_batch(run)

    def act() -> None:
        Driver(run, tasks, info, _compute, say=lambda line: None, cluster=lambda: contextlib.nullcontext()).drive()

    _rounds(start, end, seed, act)


def _cancel_side(path: str, start, end, seed: int) -> None:
    """`epcg cancel` once per round (without its wait for the allocation to stop)."""
    from epcg.runtime.batch import read_batch
    from epcg.runtime.driver import cancel

    run = _rundir(path)
    info = read_batch(run)
    _rounds(start, end, seed, lambda: cancel(run, info))


WRITES = 25


@pytest.mark.parametrize("where", ["posix", "s3"])
def test_concurrent_updates_lose_no_write(tmp_path: Path, where: str, request) -> None:
    """Two processes append to one history at once, on each backend's compare-and-swap: every entry stays."""
    import multiprocessing

    path = str(tmp_path / "run") if where == "posix" else f"{request.getfixturevalue('bucket')}/run"
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(2, timeout=60)
    writers = [context.Process(target=_append, args=(path, name, start)) for name in ("a", "b")]
    for process in writers:
        process.start()
    for process in writers:
        process.join(120)
    assert [p.exitcode for p in writers] == [0, 0]
    written = [a["node"] for a in load(_rundir(path)).allocations]
    assert sorted(written) == sorted(f"{name}{i}" for name in "ab" for i in range(WRITES))
    for name in "ab":  # each writer's entries in its own order
        assert [w for w in written if w.startswith(name)] == [f"{name}{i}" for i in range(WRITES)]


def _append(path: str, name: str, start) -> None:
    from epcg.runtime.history import update

    run = _rundir(path)
    start.wait()
    for i in range(WRITES):
        update(run, lambda history, i=i: history.allocations.append({"node": f"{name}{i}", "started_at": 0.0}))
