"""Whole Fling! runs: layers identical across workers and chunkings, after SIGKILL, after a lost worker."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from epcg.runtime.jobs import load_job
from epcg.runtime.engine import claimed, prepare_new, run_plan

from tests.conftest import JOBS, epcg, load_results

FLING = str(JOBS / "fling.toml")


def checksums(run_dir: Path) -> list[tuple[int, int, int, str]]:
    rows = json.loads((run_dir / "results.json").read_text())["rows"]
    return [(r["pieces"], r["solvable"], r["unique"], r["checksum"]) for r in rows]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """7x8 to 6 pieces, in process, one chunk size."""
    out = tmp_path_factory.mktemp("fling") / "reference"
    result = epcg("run", FLING, "--out", str(out), "--serial", "--set", "max_pieces=6",
                  "--set", "chunk_words=65536", "--set", "top_puzzles=3")
    assert result.returncode == 0, result.stderr
    return out


def test_published_counts(reference: Path) -> None:
    counts = {pieces: (s, u) for pieces, s, u, _ in checksums(reference)}
    assert counts[2] == (267, 267)
    assert counts[3] == (2_720, 2_110)
    assert counts[4] == (35_518, 15_724)
    assert counts[5] == (481_048, 103_324)


def test_each_layers_seconds_are_its_tasks_cpu_seconds(reference: Path) -> None:
    """A row's compute is its tasks' CPU seconds (a task's wall time may also count waiting for a core): the
    layer's and the fill before it, which its lookups need."""
    cpu: dict[str, float] = {}
    for path in (reference / "manifest").rglob("*.json"):
        record = json.loads(path.read_text()).get("record", {})
        if "cpu_seconds" in record:
            stage = record["task"].rsplit("/", 1)[0]
            cpu[stage] = cpu.get(stage, 0.0) + record["cpu_seconds"]
    rows = json.loads((reference / "results.json").read_text())["rows"]
    for row in rows:
        fill = cpu.get(f"f{row['pieces'] - 1:02d}", 0.0)
        assert row["fill_seconds"] == pytest.approx(fill, abs=1e-4)
        assert row["seconds"] == pytest.approx(cpu[f"k{row['pieces']:02d}"] + fill, abs=1e-4)
    assert any(row["fill_seconds"] > 0 for row in rows)


@pytest.mark.slow  # 33 s; the 8-part and fault tests run shared and multi-worker layers by default
def test_two_workers_other_chunks_same_layers(reference: Path, tmp_path: Path) -> None:
    """Two workers mapping one shared copy of the previous layer, other chunks: the same layers."""
    out = tmp_path / "two"
    result = epcg("run", FLING, "--out", str(out), "--workers", "2", "--set", "max_pieces=6",
                  "--set", "chunk_words=20000", "--set", "top_puzzles=3", "--set", "evaluate_chunk_words=5000",
                  "--set", "shared_previous=true")
    assert result.returncode == 0, result.stderr
    assert checksums(out) == checksums(reference)
    assert load_results(out) == load_results(reference)  # layers and the best puzzles


def test_unreduced_run_same_counts_and_layers(reference: Path, tmp_path: Path) -> None:
    """symmetry = false solves every board: same counts, and its layers are the filled ones bit for bit
    (to 5 pieces: the reference fills layers 2..5)."""
    out = tmp_path / "unreduced"
    result = epcg("run", FLING, "--out", str(out), "--serial", "--set", "max_pieces=5", "--set", "chunk_words=30000",
                  "--set", "top_puzzles=0", "--set", "symmetry=false")
    assert result.returncode == 0, result.stderr
    unreduced = json.loads((out / "results.json").read_text())["rows"]
    symmetric = json.loads((reference / "results.json").read_text())["rows"]
    assert [(r["solvable"], r["unique"]) for r in unreduced] == [(r["solvable"], r["unique"]) for r in symmetric[:5]]
    assert [r["checksum"] for r in unreduced[1:5]] == [r["full_checksum"] for r in symmetric[1:5]]
    assert unreduced[0]["checksum"] == symmetric[0]["checksum"]


def test_best_puzzles_match_one_pass_over_the_layer(reference: Path) -> None:
    import zarr

    from epcg.games.fling.domain.evaluate import top_puzzles
    from epcg.games.fling.domain.rules import Board

    from epcg.games.fling.domain.patterns import copies, pattern

    words = zarr.open_array(reference / "store.zarr" / "orbits" / "unique" / "6", mode="r")[:]
    results = json.loads((reference / "results.json").read_text())
    assert results["best_orbits"] == [rank for rank, _, _ in top_puzzles(7, 8, 6, words, limit=3)]
    firsts: dict = {}  # the best board of each pattern, in the one pass's order (ratio desc, rank asc)
    for rank, ratio, _ in top_puzzles(7, 8, 6, words, limit=200):
        firsts.setdefault(pattern(Board.from_rank(7, 8, 6, rank)), (rank, ratio))
    puzzles = results["puzzles"]
    assert [(p["rank"], p["ratio"]) for p in puzzles] == list(firsts.values())[:3]
    assert [p["copies"] for p in puzzles] == [copies(p, 7, 8) for p in list(firsts)[:3]]
    board = Board.from_rank(7, 8, 6, puzzles[0]["rank"])
    assert puzzles[0]["board"] == str(board).splitlines()
    assert (reference / "figures" / "puzzle-01.png").is_file()


def test_distributions_count_boards_not_orbits(reference: Path) -> None:
    """7x8 to 6 pieces with symmetry: each layer's ratio histogram holds its unique boards, each exact
    solution-count tally its solvable boards (1 solution: the unique ones); layer 6 (32 M boards) is a sample."""
    results = json.loads((reference / "results.json").read_text())
    rows = {r["pieces"]: r for r in results["rows"]}
    assert [h["pieces"] for h in results["ratio_histograms"]] == [2, 3, 4, 5, 6]
    for h in results["ratio_histograms"]:
        assert h["boards"] == sum(h["counts"].values()) == rows[h["pieces"]]["unique"]
    for c in results["solution_counts"]:
        if c["pieces"] <= 5:
            assert c["exact"] and c["boards"] == rows[c["pieces"]]["solvable"]
            assert c["counts"]["1"] == rows[c["pieces"]]["unique"]
        else:
            assert not c["exact"] and c["boards"] == sum(c["counts"].values()) < c["drawn"] == 50_000


@pytest.mark.slow
def test_resume_after_sigkill_mid_layer(reference: Path, tmp_path: Path) -> None:
    out = tmp_path / "killed"
    args = [sys.executable, "-m", "epcg", "run", FLING, "--out", str(out), "--workers", "1",
            "--set", "max_pieces=6", "--set", "chunk_words=4096", "--set", "top_puzzles=0"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    layer6 = out / "manifest" / "k06"
    deadline = time.monotonic() + 600  # a loaded machine takes minutes to reach layer 6
    while time.monotonic() < deadline and not (layer6.exists() and len(list(layer6.glob("*.json"))) >= 5):
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = {p: p.stat().st_mtime_ns for p in (out / "manifest").rglob("0*.json")}
    total_k6 = -(-507_320 // 4096)
    assert 5 <= len(list(layer6.glob("*.json"))) < total_k6

    resumed = epcg("resume", str(out), "--serial")
    assert resumed.returncode == 0, resumed.stderr
    assert checksums(out) == checksums(reference)
    assert all(p.stat().st_mtime_ns == t for p, t in finished.items())


def test_worker_killed_mid_layer(reference: Path, tmp_path: Path) -> None:
    from epcg.runtime.cluster import LocalSpec, connect
    from epcg.runtime.dask_executor import DaskExecutor
    from epcg.runtime.progress import Callback

    job = load_job(JOBS / "fling.toml", ["max_pieces=6", "chunk_words=4096", "top_puzzles=0"])
    planned = prepare_new(job, tmp_path / "lost-worker")

    class KillOneWorker(Callback):
        """SIGKILL one worker process once a few layer-6 tasks are done."""

        def __init__(self, client) -> None:
            self.client, self.seen, self.killed = client, 0, None

        def on_task_end(self, event) -> None:
            if event.task.stage == "k06":
                self.seen += 1
                if self.seen == 3 and self.killed is None:
                    pids = self.client.run(os.getpid)
                    self.killed = sorted(pids.values())[0]
                    threading.Thread(target=os.kill, args=(self.killed, signal.SIGKILL)).start()

    with connect(LocalSpec(workers=2, dashboard_address=None)) as client:
        killer = KillOneWorker(client)
        with claimed(planned, new=True):
            run_plan(planned, DaskExecutor(client), [killer])
        assert killer.killed is not None
    assert checksums(planned.run.path) == checksums(reference)


@pytest.mark.parametrize(
    "override, message",
    [
        ("width=9", "at most 64 cells"),
        ("max_pieces=0", "max_pieces"),
        ("max_pieces=57", "max_pieces must be 1..56"),
        ("max_pieces=20", "at most 2^43"),
        ("chunk_words=0", "chunk_words"),
    ],
)
def test_bad_parameters(tmp_path: Path, override: str, message: str) -> None:
    out = tmp_path / "bad"
    result = epcg("run", FLING, "--out", str(out), "--set", override)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert not out.exists()


@pytest.mark.slow
def test_corrupted_chunk_detected_and_recomputed(reference: Path, tmp_path: Path) -> None:
    out = tmp_path / "damaged"
    shutil.copytree(reference, out)
    chunks = sorted((out / "store.zarr" / "orbits" / "unique" / "6" / "c").iterdir())
    victim = chunks[len(chunks) // 2]
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))
    (out / "store.zarr" / "orbits" / "solvable" / "5" / "c" / "0").write_bytes(b"garbage")
    (out / "store.zarr" / "unique" / "4" / "c" / "0").write_bytes(b"garbage")

    verify = epcg("verify", str(out))
    assert verify.returncode == 1
    assert "3 of" in verify.stdout and "k06/" in verify.stdout and "k05/00000" in verify.stdout
    assert "f04/00000" in verify.stdout
    assert epcg("status", str(out)).stdout.count("stopped") == 1

    resumed = epcg("resume", str(out), "--serial")
    assert resumed.returncode == 0, resumed.stderr
    assert checksums(out) == checksums(reference)
    again = epcg("verify", str(out))
    assert again.returncode == 0 and "all intact" in again.stdout
