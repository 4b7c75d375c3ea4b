"""A persistent scheduler shared by runs: workers started by hand elsewhere, run ids instead of paths,
stragglers of a killed client, and the ways Dask users name a scheduler."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import epcg
from .test_real_cluster import Cluster


class ElsewhereCluster(Cluster):
    """Workers whose working directory is not the client's."""

    def __init__(self, tmp: Path, cwd: Path, workers: int = 1) -> None:
        self.cwd = cwd
        super().__init__(tmp, workers)

    def _spawn(self, args: list[str], name: str) -> subprocess.Popen:
        log = open(self.tmp / f"{name}-{time.monotonic_ns()}.log", "w")
        env = {**os.environ, "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
                                cwd=self.cwd)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cluster")
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    c = ElsewhereCluster(tmp, elsewhere, workers=1)
    c.wait_for_workers(1)
    yield c
    c.close()


def fling(tmp: Path, name: str, width: int, height: int, pieces: int) -> Path:
    path = tmp / f"{name}.toml"
    path.write_text(f'name = "{name}"\ndomain = "fling"\nwidth = {width}\nheight = {height}\n'
                    f"max_pieces = {pieces}\nchunk_words = 512\ntop_puzzles = 0\n")
    return path


def rows(run: Path) -> list:
    return [(r["pieces"], r["solvable"], r["unique"], r["checksum"])
            for r in json.loads((run / "results.json").read_text())["rows"]]


@pytest.mark.slow  # a third cluster of this file; the others keep the external scheduler in the default run
def test_relative_run_directory_and_a_worker_elsewhere(cluster: Cluster, tmp_path: Path) -> None:
    job = fling(tmp_path, "rel", 5, 5, 4)
    reference = tmp_path / "ref"
    assert epcg("run", str(job), "--out", str(reference), "--serial").returncode == 0
    result = epcg("run", str(job), "--out", "runs/rel", "--scheduler", cluster.address, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert rows(tmp_path / "runs" / "rel") == rows(reference)
    assert not (cluster.cwd / "runs").exists()


@pytest.mark.slow
def test_scheduler_file_and_environment(cluster: Cluster, tmp_path: Path) -> None:
    job = fling(tmp_path, "env", 4, 4, 3)
    by_file = epcg("run", str(job), "--out", str(tmp_path / "a"), "--scheduler-file", str(cluster.file))
    assert by_file.returncode == 0, by_file.stderr
    env = {**os.environ, "DASK_SCHEDULER_ADDRESS": cluster.address}
    by_env = subprocess.run([sys.executable, "-m", "epcg", "run", str(job), "--out", str(tmp_path / "b")],
                            capture_output=True, text=True, env=env, timeout=300)
    assert by_env.returncode == 0, by_env.stderr
    assert "DASK_SCHEDULER_ADDRESS" in by_env.stdout
    assert rows(tmp_path / "a") == rows(tmp_path / "b")


@pytest.mark.slow
def test_new_run_at_same_path_never_reads_the_old_runs_cache(cluster: Cluster, tmp_path: Path) -> None:
    out = tmp_path / "same"
    first = fling(tmp_path, "first", 6, 6, 2)
    second = fling(tmp_path, "second", 5, 6, 3)
    reference = tmp_path / "ref"
    assert epcg("run", str(second), "--out", str(reference), "--serial").returncode == 0
    assert epcg("run", str(first), "--out", str(out), "--scheduler", cluster.address).returncode == 0
    shutil.rmtree(out)
    again = epcg("run", str(second), "--out", str(out), "--scheduler", cluster.address)
    assert again.returncode == 0, again.stderr
    assert rows(out) == rows(reference)


@pytest.mark.slow
def test_killed_client_stragglers_do_not_write_into_the_resumed_run(cluster: Cluster, tmp_path: Path) -> None:
    job = fling(tmp_path, "strag", 6, 6, 6)
    reference = tmp_path / "ref"
    assert epcg("run", str(job), "--out", str(reference), "--serial").returncode == 0
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "epcg", "run", str(job), "--out", str(out),
                             "--scheduler", cluster.address], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(out.glob("manifest/k06/*.json"))) < 3:
        time.sleep(0.005)
    proc.kill()
    proc.wait()
    resumed = epcg("resume", str(out), "--scheduler", cluster.address)
    assert resumed.returncode == 0, resumed.stderr
    fence = "{run_id}/{epoch}".format(**json.loads((out / "run.json").read_text()))
    time.sleep(1)  # let any straggler finish
    stale = []
    for path in out.glob("manifest/k*/*.json"):
        record = json.loads(path.read_text())["record"]
        if record["fence"] != fence and record["ended_at"] > json.loads((out / "run.json").read_text())["started_at"]:
            stale.append(record["task"])
    assert not stale
    assert rows(out) == rows(reference)
    verify = epcg("verify", str(out))
    assert verify.returncode == 0 and "all intact" in verify.stdout


@pytest.mark.slow
def test_worker_killed_in_the_middle_of_branch_and_bound(tmp_path: Path) -> None:
    from .conftest import JOBS, load_results

    reference = tmp_path / "ref"
    sets = ["--set", "tasks=24"]
    assert epcg("run", str(JOBS / "witness-triple.toml"), "--out", str(reference), "--serial", *sets).returncode == 0
    cluster = Cluster(tmp_path, workers=2)
    try:
        cluster.wait_for_workers(2)
        out = tmp_path / "run"
        proc = subprocess.Popen([sys.executable, "-m", "epcg", "run", str(JOBS / "witness-triple.toml"), "--out",
                                 str(out), "--scheduler", cluster.address, *sets],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(list(out.glob("manifest/plain/*.json"))) < 2:
            time.sleep(0.005)
        victim = cluster.workers[0]
        os.killpg(victim.pid, 9)
        victim.wait()
        cluster.workers[0] = cluster.add_worker(7)
        _stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr
    finally:
        cluster.close()
    strip = lambda rows: [(r["variant"], r["score"], r["optimal_triples"]) for r in rows]  # noqa: E731
    assert strip(load_results(out)["rows"]) == strip(load_results(reference)["rows"])


@pytest.mark.slow
def test_verify_runs_its_checks_on_the_schedulers_workers(cluster: Cluster, tmp_path: Path) -> None:
    from distributed import Client

    job = fling(tmp_path, "ver", 5, 5, 4)
    out = tmp_path / "run"
    assert epcg("run", str(job), "--out", str(out), "--scheduler", cluster.address).returncode == 0
    done = sorted(out.glob("manifest/*/*.json"))
    chunk = out / "store.zarr" / "orbits" / "solvable" / "4" / "c" / "0"
    chunk.write_bytes(b"garbage")
    result = epcg("verify", str(out), "--scheduler-file", str(cluster.file))
    assert result.returncode == 1 and "k04/00000" in result.stdout, result.stdout + result.stderr
    assert f"1 of {len(done)} chunks checked on 1 Dask worker ({cluster.address})" in result.stdout
    with Client(cluster.address, timeout="30s") as client:
        keys = client.run_on_scheduler(lambda dask_scheduler: {entry[0] for entry in dask_scheduler.transition_log
                                                               if str(entry[0]).startswith("epcg-verify-")})
    assert keys and len(keys) < len(done)  # in batches, each reading several chunks
    assert not (out / "manifest" / "k04" / "00000.json").exists()
    assert len(list(out.glob("manifest/*/*.json"))) == len(done) - 1
