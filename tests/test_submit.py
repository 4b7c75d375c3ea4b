"""`epcg submit`, `cancel`, `status` of submitted runs: real SLURM (tests/slurm_harness.py), real daemons, real signals.

The batch scripts are checked as text (PBS has no server here); SLURM runs them for real.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from epcg.runtime import batch
from epcg.runtime.cluster import JobqueueSpec
from epcg.runtime.history import History, decide, settle
from epcg.runtime.records import unseal

from .conftest import JOBS, epcg, load_results

WALLTIME = "00:01:00"
LEAD = 40
"""The driver stops handing out chunks 40 s before each 1-minute allocation ends: about 10 s of each computes."""
SLOW_MACHINE = 45
"""Seconds of the 7-piece reference run beyond which the machine is busy enough that 7 pieces already need
3 allocations (the 8-piece job would need dozens); below it the test submits the 8-piece job."""


def _cluster_file(path: Path, **extra) -> Path:
    keys = {"kind": '"slurm"', "cores": "2", "memory": '"4GiB"', "walltime": f'"{WALLTIME}"',
            "signal_lead": str(LEAD), "max_requeues": "40", "python": f'"{sys.executable}"', **extra}
    path.write_text("".join(f"{k} = {v}\n" for k, v in keys.items()))
    return path


def _slurm(env, *args: str) -> str:
    return subprocess.run(list(args), env=env, capture_output=True, text=True, timeout=60).stdout


def _epcg(env, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "epcg", *args], env={**env, "PYTHONUNBUFFERED": "1"},
                          capture_output=True, text=True, timeout=timeout)


def _queue_empty(env, timeout: float = 60) -> bool:
    """True once SLURM's queue is empty (a job that just ended may be completing for a moment)."""
    deadline = time.monotonic() + timeout
    while _slurm(env, "squeue", "-h").strip():
        if time.monotonic() > deadline:
            return False
        time.sleep(1)
    return True


def _history(run: Path) -> dict:
    return json.loads((run / "allocations.json").read_text())


def _wait_finished(env, run: Path, timeout: float, watch: list[str] | None = None) -> dict:
    """Poll (as a person would, with `epcg status`) until the last allocation says the run is finished."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = _epcg(env, "status", str(run))
        if watch is not None:
            watch.append(status.stdout)
        history = _history(run)
        last = history["allocations"][-1] if history["allocations"] else {}
        if last.get("why", "").startswith("finished"):
            return history
        assert "did not compute" not in last.get("why", ""), status.stdout
        time.sleep(3)
    raise AssertionError(f"not finished in {timeout} s:\n{_epcg(env, 'status', str(run)).stdout}")


def _wait_chunks(run: Path, allocation: int, at_least: int, timeout: float) -> None:
    """Until the given allocation (1-based) is running and has recorded chunks of its own."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        history = _history(run)
        if len(history["allocations"]) >= allocation:
            began = history["allocations"][allocation - 1]["started_at"]
            mine = [p for p in (run / "manifest").glob("*/*.json") if p.stat().st_mtime >= began]
            if len(mine) >= at_least:
                return
        time.sleep(0.5)
    raise AssertionError(f"allocation {allocation} recorded fewer than {at_least} chunks in {timeout} s")


@pytest.mark.slow  # 3-6 min of one-minute allocations: over the default run's budget
@pytest.mark.parametrize("sized", [False, True])
def test_submit_requeues_until_finished(slurm, tmp_path: Path, sized: bool) -> None:
    """One `epcg submit`, no further command: 1-minute allocations, each signalled, each followed by the next.

    One worker per allocation: the 7-piece job without symmetry needs at least 2 of them (about 2.7 minutes), the
    job :func:`_sized_job` picks at least 3 on a quiet machine too (-m slow, about 6 minutes)."""
    env, _ = slurm
    job, reference = _sized_job(tmp_path) if sized else _seven_pieces(tmp_path)
    at_least = 3 if sized else 2
    run = tmp_path / "submitted"
    began = time.monotonic()
    cluster = _cluster_file(tmp_path / "s.toml", tasks_per_node="1")
    submitted = _epcg(env, "submit", str(JOBS / "fling.toml"), "--cluster", str(cluster), "--out", str(run), *job)
    assert submitted.returncode == 0, submitted.stderr
    assert time.monotonic() - began < 30  # returns at once
    assert "submitted batch job" in submitted.stdout and f"epcg cancel {run}" in submitted.stdout
    seen: list[str] = []
    history = _wait_finished(env, run, timeout=2400, watch=seen)
    allocations = history["allocations"]
    assert len(allocations) >= at_least, allocations
    assert load_results(run) == load_results(reference)
    assert all(a["chunks"] > 0 for a in json.loads((run / "results.json").read_text())["allocations"])
    assert history["next"] is None and _queue_empty(env)  # the spare continuation is gone
    logs = "".join(p.read_text() for p in sorted((run / "logs").glob("slurm-*.out")))
    assert "epcg: SIGUSR1 " in logs  # SLURM's own signal reached the driver
    assert sum("before the time limit" in a["why"] for a in allocations) >= at_least - 1
    assert logs.count("before the time limit") >= at_least - 1
    assert logs.count("epcg: continuation: job") >= at_least - 1
    status = _epcg(env, "status", str(run)).stdout
    for n in range(1, len(allocations) + 1):
        assert f"allocation {n}: job {allocations[n - 1]['job']}" in status
    assert f"requeued {len(allocations) - 1} of 40" in status
    live = [s for s in seen if "dashboard: http" in s]
    assert live and any("workers: 1" in s and "ssh -N -L" in s for s in live), seen[-1]
    assert "Allocations" in (run / "report.html").read_text()
    records = {f"{p.parent.name}/{p.stem}": unseal(p.read_text()) for p in (run / "manifest").glob("*/*.json")}
    settle(History(allocations=allocations), records)
    lost = [allocations[i + 1]["first_chunk_at"] - allocations[i]["signal_at"]
            for i in range(len(allocations) - 1) if "signal_at" in allocations[i] and allocations[i + 1]["chunks"]]
    print(f"{len(allocations)} allocations; seconds from signal to the next allocation's first chunk: "
          f"{[round(x, 1) for x in lost]}; chunks: {[a['chunks'] for a in allocations]}; "
          f"ended: {[a['why'] for a in allocations]}")


def _seven_pieces(tmp_path: Path) -> tuple[list[str], Path]:
    """The 7-piece Fling! job without symmetry (about 30 s of compute, more than the 10-15 s an allocation
    computes here), and its uninterrupted run."""
    job = ["--set", "max_pieces=7", "--set", "symmetry=false"]
    reference = tmp_path / "reference-7"
    assert epcg("run", str(JOBS / "fling.toml"), "--out", str(reference), *job).returncode == 0
    return job, reference


def _sized_job(tmp_path: Path) -> tuple[list[str], Path]:
    """A Fling! job that needs at least 3 one-minute allocations on this machine, and its uninterrupted run."""
    for pieces in (7, 8):
        job = ["--set", f"max_pieces={pieces}"]
        reference = tmp_path / f"reference-{pieces}"
        began = time.monotonic()
        assert epcg("run", str(JOBS / "fling.toml"), "--out", str(reference), *job).returncode == 0
        if time.monotonic() - began > SLOW_MACHINE:
            break
    return job, reference


@pytest.mark.slow
def test_cancel_resume_and_killed_driver(slurm, tmp_path: Path) -> None:
    """`epcg cancel` mid-run, `submit --resume`, then SIGKILL of the driver's job: the next allocation continues."""
    env, _ = slurm
    job = ["--set", "max_pieces=7", "--set", "chunk_words=16384"]
    reference = tmp_path / "reference"
    assert epcg("run", str(JOBS / "fling.toml"), "--out", str(reference), *job).returncode == 0
    cluster = _cluster_file(tmp_path / "s.toml", walltime='"00:05:00"', signal_lead="60")
    run = tmp_path / "submitted"
    assert _epcg(env, "submit", str(JOBS / "fling.toml"), "--cluster", str(cluster), "--out", str(run),
                 *job).returncode == 0
    _wait_chunks(run, 1, 20, timeout=300)
    cancelled = _epcg(env, "cancel", str(run), timeout=200)
    assert cancelled.returncode == 0, cancelled.stderr
    assert _queue_empty(env)
    history = _history(run)
    assert history["allocations"][-1]["why"].startswith("cancelled by epcg cancel")
    assert "cancelled" in _epcg(env, "status", str(run)).stdout
    kept = len(list((run / "manifest").glob("*/*.json")))
    resumed = _epcg(env, "submit", "--resume", str(run), "--cluster", str(cluster))
    assert resumed.returncode == 0, resumed.stderr
    _wait_chunks(run, 2, 10, timeout=300)
    job = _history(run)["allocations"][1]["job"]
    subprocess.run(["scancel", "--batch", "--signal=KILL", job], env=env, check=True)  # the driver itself
    history = _wait_finished(env, run, timeout=900)
    assert history["allocations"][1]["why"].startswith("killed")
    assert history["allocations"][2]["job"] != job
    assert kept > 0 and load_results(run) == load_results(reference)


def _detach(tmp_path: Path, run: Path, job: list[str]) -> None:
    """`epcg submit --detach` from a shell that gets SIGHUP (its terminal closes) as soon as submit returns."""
    command = " ".join([sys.executable, "-m", "epcg", "submit", str(JOBS / "fling.toml"), "--detach", "--workers",
                        "2", "--out", str(run), *job])
    shell = subprocess.Popen(["bash", "-c", f"{command}; sleep 600"], stdout=subprocess.PIPE, text=True,
                             start_new_session=True)
    assert any("driver started in the background" in shell.stdout.readline() for _ in range(3))
    os.killpg(shell.pid, signal.SIGHUP)
    assert shell.wait(10) == -signal.SIGHUP


def _wait_detached(run: Path, timeout: float) -> None:
    """Until the last allocation says the run is finished and its driver process has exited."""
    deadline = time.monotonic() + timeout
    while True:
        assert time.monotonic() < deadline, epcg("status", str(run)).stdout
        last = json.loads((run / "allocations.json").read_text())["allocations"][-1:]
        if last and last[0].get("why") == "finished":
            try:
                os.kill(last[0]["pid"], 0)
            except ProcessLookupError:
                return
        time.sleep(0.5)


SMALL = ["--set", "max_pieces=6", "--set", "chunk_words=8192"]
"""A Fling! job of many small chunks: a few seconds of work."""


@pytest.fixture(scope="module")
def small_reference(tmp_path_factory) -> Path:
    """SMALL run uninterrupted, in this process."""
    reference = tmp_path_factory.mktemp("small") / "reference"
    assert epcg("run", str(JOBS / "fling.toml"), "--out", str(reference), "--serial", *SMALL).returncode == 0
    return reference


@pytest.mark.slow  # a minute; the default run keeps the SIGHUP test of epcg run
def test_detach_survives_hangup(tmp_path: Path, small_reference: Path) -> None:
    """--detach: the submitting shell gets SIGHUP at once; the daemon runs on and finishes; status from elsewhere."""
    job = SMALL
    run = tmp_path / "detached"
    _detach(tmp_path, run, job)
    _wait_detached(run, timeout=180)
    status = epcg("status", str(run)).stdout
    assert "finished" in status.splitlines()[0] and "allocation 1: pid" in status
    assert "epcg: allocation ended: finished" in (run / "driver.log").read_text()
    assert load_results(run) == load_results(small_reference)


@pytest.mark.slow
def test_detach_cancel_and_resume(tmp_path: Path) -> None:
    """A detached run cancelled from another shell keeps its whole chunks; `submit --resume --detach` finishes it."""
    job = ["--set", "max_pieces=7", "--set", "chunk_words=16384"]
    run = tmp_path / "detached"
    _detach(tmp_path, run, job)
    _wait_chunks(run, 1, 5, timeout=120)
    cancelled = epcg("cancel", str(run), timeout=120)
    assert cancelled.returncode == 0, cancelled.stderr
    assert "chunks kept" in cancelled.stdout
    history = json.loads((run / "allocations.json").read_text())
    assert history["allocations"][0]["why"].startswith("cancelled by epcg cancel"), history
    status = epcg("status", str(run)).stdout
    assert "stopped" in status.splitlines()[0] and "allocation 1: pid" in status
    assert epcg("submit", "--resume", str(run), "--detach", "--workers", "2").returncode == 0
    _wait_detached(run, timeout=300)
    assert len(json.loads((run / "allocations.json").read_text())["allocations"]) == 2
    reference = tmp_path / "reference"
    assert epcg("run", str(JOBS / "fling.toml"), "--out", str(reference), "--serial", *job).returncode == 0
    assert load_results(run) == load_results(reference)


@pytest.mark.slow
def test_a_killed_detached_driver_is_said_gone_and_the_printed_command_continues(tmp_path: Path) -> None:
    """The driver SIGKILLed (as the OOM killer would): status says it is gone and prints the command that
    continues; that command, run as printed, finishes the run with the uninterrupted run's results."""
    import re
    import shlex

    job = ["--set", "max_pieces=7", "--set", "chunk_words=16384"]
    run = tmp_path / "detached"
    _detach(tmp_path, run, job)
    _wait_chunks(run, 1, 5, timeout=120)
    driver = json.loads((run / "allocations.json").read_text())["allocations"][0]["pid"]
    assert os.getpgid(driver) != os.getpgid(0)  # a daemon in a session of its own, not this test's group
    os.killpg(os.getpgid(driver), signal.SIGKILL)  # the driver and its embedded cluster, at once
    deadline = time.monotonic() + 30
    while Path(f"/proc/{driver}").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    status = epcg("status", str(run)).stdout
    gone = [line for line in status.splitlines() if f"its driver (pid {driver}) is gone" in line]
    assert gone and "running" not in gone[0] and "ETA" not in status, status
    command = shlex.split(re.search(r"'(epcg submit [^']+)'", gone[0]).group(1))
    assert command == ["epcg", "submit", "--resume", str(run), "--detach"], gone[0]
    assert epcg(*command[1:]).returncode == 0
    _wait_detached(run, timeout=300)
    reference = tmp_path / "reference"
    assert epcg("run", str(JOBS / "fling.toml"), "--out", str(reference), "--serial", *job).returncode == 0
    assert load_results(run) == load_results(reference)


@pytest.mark.slow  # 34 s in CI: SIGHUP takes SIGTERM's path (engine.EXIT_STATUS), which
# tests/test_runtime_faults.py::test_sigterm_then_resume runs by default
def test_run_treats_sighup_like_sigterm(tmp_path: Path, small_reference: Path) -> None:
    """`epcg run` whose terminal closes: whole chunks kept, the resume command printed, exit status 129."""
    job = SMALL
    run = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "epcg", "run", str(JOBS / "fling.toml"), "--out", str(run),
                             "--workers", "2", *job], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    deadline = time.monotonic() + 120
    while len(list((run / "manifest").glob("*/*.json"))) < 3:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.2)
    proc.send_signal(signal.SIGHUP)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 129, err
    assert f"'epcg resume {run}' continues" in err
    assert epcg("resume", str(run), "--serial").returncode == 0
    assert load_results(run) == load_results(small_reference)


SLURM_SCRIPT = """#!/usr/bin/env bash
# One allocation of the epcg run in /shared/runs/f. `epcg submit` wrote and submitted this script;
# each allocation submits the next one (afterany) until the run is finished.
# Submit it again by hand with: sbatch /shared/runs/f/batch.sh
#SBATCH --job-name=epcg-fling
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=16
#SBATCH --cpus-per-task=1
#SBATCH --mem=65536M
#SBATCH --time=12:00:00
#SBATCH --signal=B:USR1@300
#SBATCH --output=/shared/runs/f/logs/slurm-%j.out
#SBATCH --open-mode=append
#SBATCH --chdir=/shared/runs/f
#SBATCH --partition=long
#SBATCH --account=pcg
#SBATCH --qos=big
export NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1
module load python
exec /opt/venv/bin/python -m epcg drive /shared/runs/f
"""

PBS_SCRIPT = """#!/usr/bin/env bash
# One allocation of the epcg run in /shared/runs/f. `epcg submit` wrote and submitted this script;
# each allocation submits the next one (afterany) until the run is finished.
# Submit it again by hand with: qsub /shared/runs/f/batch.pbs
#PBS -N epcg-fling
#PBS -l select=2:ncpus=16:mpiprocs=16:mem=65536mb
#PBS -l walltime=12:00:00
#PBS -j oe
#PBS -o /shared/runs/f/logs/
#PBS -q long
#PBS -A pcg
#SBATCH --qos=big
cd /shared/runs/f
export NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1
module load python
exec /opt/venv/bin/python -m epcg drive /shared/runs/f
"""


@pytest.mark.parametrize("kind, expected", [("slurm", SLURM_SCRIPT), ("pbs", PBS_SCRIPT)])
def test_batch_scripts_as_recorded(kind: str, expected: str) -> None:
    spec = JobqueueSpec(kind=kind, cores=16, memory="64GiB", walltime="12:00:00", nodes=2, signal_lead=300,
                        queue="long", account="pcg", prologue=["module load python"], directives=["#SBATCH --qos=big"])
    text = batch.script(batch.KINDS[kind], spec, spec.walltime_seconds, Path("/shared/runs/f"), "fling",
                        "/opt/venv/bin/python")
    assert text == expected
    assert batch.KINDS[kind].launcher(spec, Path("/r"))[0] == {"slurm": "srun", "pbs": "pbsdsh"}[kind]
    assert batch.KINDS["slurm"].launcher(spec, Path("/r"))[1] == "--ntasks=32"


def test_requeue_decision() -> None:
    """Stop on cancel, on an allocation without progress (while chunks are left), or with requeues spent."""
    ran = History(allocations=[{"started_at": 0, "ended_at": 10, "chunks": 4}])
    assert decide(ran, 3, left=5) is None
    assert decide(History(allocations=ran.allocations, cancel=True), 3, left=5) == "cancelled by epcg cancel"
    slow = History(allocations=[{"started_at": 0, "ended_at": 10, "chunks": 0, "job": "6"}])
    assert decide(slow, 3, left=5) is None  # one slow start is forgiven
    idle = History(allocations=[*ran.allocations, {"started_at": 11, "ended_at": 20, "chunks": 0, "job": "6"},
                                {"started_at": 21, "ended_at": 30, "chunks": 0, "job": "7"}])
    assert "2 allocations in a row (the last job 7) made no progress" in decide(idle, 3, left=5)
    assert decide(idle, 3, left=0) is None  # only the reduction was left: finish it
    assert decide(ran, 0, left=5) == "all 0 requeues are spent"
    killed = History(allocations=[{"started_at": 0}, {"started_at": 100}])
    settle(killed, {"a": {"ended_at": 50, "seconds": 2}, "b": {"ended_at": 120, "seconds": 1}})
    assert killed.allocations[0]["chunks"] == 1 and killed.allocations[0]["why"].startswith("killed")
    assert killed.allocations[1]["chunks"] == 1 and "why" not in killed.allocations[1]
    settle(killed, {}, starting=200)  # a new allocation starts: the one before it was killed too
    assert killed.allocations[1]["why"].startswith("killed") and killed.allocations[1]["ended_at"] == 100


def _fake_sbatch(folder: Path) -> Path:
    """An `sbatch` that only records that it was called."""
    folder.mkdir()
    fake = folder / "sbatch"
    fake.write_text(f"#!/bin/sh\necho called >> {folder}/calls\necho 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return folder


@pytest.mark.parametrize("case", ["no sbatch", "lead beyond walltime", "local kind", "detach slurm",
                                  "bad walltime"])
def test_bad_submit_is_one_line_and_writes_nothing(tmp_path: Path, case: str) -> None:
    fake = _fake_sbatch(tmp_path / "bin")
    path = f"{fake}:{os.environ['PATH']}"
    cluster = _cluster_file(tmp_path / "s.toml")
    args = ["--cluster", str(cluster)]
    if case == "no sbatch":
        path = str(Path(sys.executable).parent) + ":/nonexistent"
    elif case == "lead beyond walltime":
        args += ["--walltime", "00:00:30"]
    elif case == "local kind":
        (tmp_path / "local.toml").write_text('kind = "local"\n')
        args = ["--cluster", str(tmp_path / "local.toml")]
    elif case == "detach slurm":
        args += ["--detach"]
    else:
        args += ["--walltime", "ten minutes"]
    out = tmp_path / "run"
    result = subprocess.run([sys.executable, "-m", "epcg", "submit", str(JOBS / "fling.toml"), "--out", str(out),
                             *args], capture_output=True, text=True, env={**os.environ, "PATH": path}, timeout=120)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("epcg: error: "), result.stderr
    assert {"no sbatch": "not on PATH", "lead beyond walltime": "not shorter than the walltime",
            "local kind": "kind = 'local'", "detach slurm": "submit it without --detach",
            "bad walltime": "is not [D-]HH:MM:SS"}[case] in lines[0]
    assert not out.exists() and not (fake / "calls").exists()


def test_plan_against_a_cluster_file(tmp_path: Path) -> None:
    cluster = _cluster_file(tmp_path / "s.toml", nodes="3", tasks_per_node="4", memory='"8GiB"')
    result = epcg("plan", str(JOBS / "fling.toml"), "--set", "max_pieces=6", "--cluster", str(cluster))
    assert result.returncode == 0, result.stderr
    assert "3 node(s) x 4 single-threaded workers" in result.stdout
    assert "checked against: 12 workers, 2.0 GiB per worker" in result.stdout


@pytest.mark.parametrize("name", ["slurm", "pbs"])
def test_every_cluster_key_is_in_the_example_file(name: str) -> None:
    text = (Path(__file__).resolve().parents[1] / "cluster" / f"{name}.toml").read_text()
    keys = set(JobqueueSpec.model_fields) | {"minimum", "maximum", "ca_file", "cert", "key"}
    missing = [key for key in keys if f"{key} =" not in text and f"[{key}]" not in text]
    assert not missing, f"cluster/{name}.toml does not mention {missing}"


def test_worker_jobs_retire_at_staggered_times() -> None:
    """Worker jobs of `epcg run` retire between 65 % and 95 % of their walltime, each at its own moment."""
    spec = JobqueueSpec(kind="slurm", cores=2, memory="4GiB", walltime="01:00:00")
    assert spec.job_kwargs()["worker_extra_args"] == ["--lifetime", "2880s", "--lifetime-stagger", "540s"]


class _Client:
    dashboard_link = "http://10.0.0.5:40123/status"

    def scheduler_info(self):
        return {"services": {"dashboard": 40123}}


def test_dashboard_address_is_where_it_listens() -> None:
    from epcg.runtime.cluster import LocalSpec, dashboard_url

    spec = JobqueueSpec(kind="slurm", cores=2, memory="4GiB")  # dashboard_address = "127.0.0.1:8787"
    assert dashboard_url(_Client(), spec) == "http://127.0.0.1:40123/status"  # the port it got, the host it named
    assert dashboard_url(_Client(), LocalSpec(dashboard_address=":8787")) == _Client.dashboard_link
    assert batch.tunnel("http://127.0.0.1:40123/status", "node7").startswith("ssh -N -L 40123:localhost:40123 -J ")
    assert batch.tunnel("http://node7:40123/status", "node7").startswith("ssh -N -L 40123:node7:40123 ")
