"""Real processes: `dask scheduler` and `dask worker` started by hand, a worker SIGKILLed mid-run,
the client killed and the run resumed on a fresh cluster, TLS, and two clients on one run directory."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import JOBS, epcg, load_results

DASK = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
WORKER = [sys.executable, "-m", "distributed.cli.dask_worker"]


class Cluster:
    """A scheduler and workers as separate processes on 127.0.0.1."""

    def __init__(self, tmp: Path, workers: int = 2, extra: list[str] = ()) -> None:
        self.tmp, self.extra = tmp, list(extra)
        self.file = tmp / f"scheduler-{time.monotonic_ns()}.json"
        self.scheduler = self._spawn([*DASK, "--host", "127.0.0.1", "--port", "0", "--dashboard-address", ":0",
                                      "--scheduler-file", str(self.file), *self.extra], "scheduler")
        deadline = time.monotonic() + 60
        while not self.file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        import json

        while time.monotonic() < deadline:
            try:
                self.address = json.loads(self.file.read_text())["address"]
                break
            except (ValueError, KeyError, FileNotFoundError):
                time.sleep(0.1)
        self.workers = [self.add_worker(i) for i in range(workers)]

    def _spawn(self, args: list[str], name: str) -> subprocess.Popen:
        log = open(self.tmp / f"{name}-{time.monotonic_ns()}.log", "w")
        env = {**os.environ, "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)

    def add_worker(self, i: int) -> subprocess.Popen:
        return self._spawn([*WORKER, "--scheduler-file", str(self.file), "--nthreads", "1", "--nworkers", "1",
                            "--no-nanny", "--host", "127.0.0.1", "--no-dashboard", *self.extra], f"worker{i}")

    def wait_for_workers(self, n: int) -> None:
        from distributed import Client

        with Client(scheduler_file=str(self.file), timeout="30s", **self.client_kwargs()) as client:
            client.wait_for_workers(n, timeout=60)

    def client_kwargs(self) -> dict:
        return {}

    def close(self) -> None:
        for proc in [*self.workers, self.scheduler]:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def small_jobs(tmp: Path) -> list[tuple[str, list[str]]]:
    witness = tmp / "witness.toml"
    witness.write_text('name = "w"\ndomain = "witness"\nkind = "must-cross"\n'
                       'rows = ["3x4:3", "3x4:4", "4x4:3"]\nchunk_size = 3000\nfigures_per_row = 1\n')
    return [(str(witness), []), (str(JOBS / "fling.toml"),
             ["--set", "max_pieces=6", "--set", "chunk_words=8192", "--set", "top_puzzles=0"])]


@pytest.fixture
def cluster(tmp_path: Path):
    c = Cluster(tmp_path)
    c.wait_for_workers(2)
    yield c
    c.close()


@pytest.mark.slow
def test_scheduler_with_worker_killed_mid_run(cluster: Cluster, tmp_path: Path) -> None:
    for i, (job, sets) in enumerate(small_jobs(tmp_path)):
        reference = tmp_path / f"ref{i}"
        assert epcg("run", job, "--out", str(reference), "--serial", *sets).returncode == 0
        out = tmp_path / f"dist{i}"
        proc = subprocess.Popen([sys.executable, "-m", "epcg", "run", job, "--out", str(out),
                                 "--scheduler", cluster.address, *sets],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        manifest = out / "manifest"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(list(manifest.rglob("0*.json")) if manifest.exists() else []) < 4:
            time.sleep(0.01)
        victim = cluster.workers[0]
        os.killpg(victim.pid, signal.SIGKILL)
        victim.wait()
        cluster.workers[0] = cluster.add_worker(10 + i)
        stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr
        assert load_results(out) == load_results(reference)


def _same_layers(a: Path, b: Path) -> bool:
    return load_results(a)["rows"] == load_results(b)["rows"]


@pytest.mark.slow
def test_client_killed_then_resumed_on_fresh_cluster(tmp_path: Path) -> None:
    job, sets = small_jobs(tmp_path)[1]
    reference = tmp_path / "ref"
    assert epcg("run", job, "--out", str(reference), "--serial", *sets).returncode == 0
    total = sum(1 for _ in (reference / "manifest").rglob("0*.json"))

    first = Cluster(tmp_path)
    first.wait_for_workers(2)
    out = tmp_path / "run"
    try:
        proc = subprocess.Popen([sys.executable, "-m", "epcg", "run", job, "--out", str(out),
                                 "--scheduler", first.address, *sets],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        layer = out / "manifest" / "k06"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (layer.exists() and len(list(layer.glob("*.json"))) >= 4):
            time.sleep(0.01)
        proc.kill()
        proc.wait()
    finally:
        first.close()
    finished = {p: p.stat().st_mtime_ns for p in out.rglob("manifest/**/0*.json")}
    assert 4 <= len(finished) < total

    second = Cluster(tmp_path)
    second.wait_for_workers(2)
    try:
        resumed = epcg("resume", str(out), "--scheduler", second.address)
    finally:
        second.close()
    assert resumed.returncode == 0, resumed.stderr
    assert f"{total - len(finished)} of {total} chunks to do" in resumed.stdout
    assert all(p.stat().st_mtime_ns == t for p, t in finished.items())
    assert _same_layers(out, reference)


def test_second_client_on_same_run_is_refused(tmp_path: Path) -> None:
    job, sets = small_jobs(tmp_path)[1]
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "epcg", "run", job, "--out", str(out), "--serial",
                             "--set", "max_pieces=7", *sets[2:]],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (out / "job.toml").exists():
            time.sleep(0.01)
        second = epcg("resume", str(out), "--serial")
        assert second.returncode == 75 and "in use by another epcg client" in second.stderr
        status = epcg("status", str(out))
        assert status.returncode == 0 and "running" in status.stdout
    finally:
        proc.kill()
        proc.wait()
