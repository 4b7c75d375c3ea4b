"""Faults injected into real runs: SIGTERM, SIGKILL at random moments, a full disk, torn records,
a missing store, two clients at once, stragglers of an earlier session. Nothing may be lost."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from epcg.runtime.records import Records
from epcg.runtime.store import RunDir

from .conftest import epcg

FLING_6X6 = 'name = "f66"\ndomain = "fling"\nwidth = 6\nheight = 6\nmax_pieces = 6\nchunk_words = 1024\ntop_puzzles = 0\n'


@pytest.fixture(scope="module")
def fling_job(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("job") / "f66.toml"
    path.write_text(FLING_6X6)
    return path


@pytest.fixture(scope="module")
def reference(fling_job: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ref") / "run"
    result = epcg("run", str(fling_job), "--out", str(out), "--serial")
    assert result.returncode == 0, result.stderr
    return out


def checksums(run: Path) -> list:
    return [(r["pieces"], r["solvable"], r["unique"], r["checksum"])
            for r in json.loads((run / "results.json").read_text())["rows"]]


def records(run: Path) -> list[Path]:
    return sorted((run / "manifest").glob("*/*.json"))


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "epcg", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def wait_for_records(run: Path, n: int, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if (run / "manifest").exists() and len(records(run)) >= n:
            return
        time.sleep(0.005)


def one_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("epcg: error:"), result.stderr
    return lines[0]


@pytest.mark.parametrize("mode", [["--serial"], pytest.param(["--workers", "2"], marks=pytest.mark.slow)])
def test_sigterm_then_resume(fling_job: Path, reference: Path, tmp_path: Path, mode: list[str]) -> None:
    out = tmp_path / "run"
    proc = start("run", str(fling_job), "--out", str(out), *mode)
    wait_for_records(out, 8, proc)
    proc.send_signal(signal.SIGTERM)
    _stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    assert f"'epcg resume {out}'" in stderr and "Traceback" not in stderr
    kept = len(records(out))
    assert 8 <= kept < len(records(reference))
    resumed = epcg("resume", str(out), *mode)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(records(reference)) - kept} of {len(records(reference))} chunks to do" in resumed.stdout
    assert checksums(out) == checksums(reference)


def test_a_run_killed_and_resumed_says_each_part(fling_job: Path, reference: Path, tmp_path: Path) -> None:
    """results.json and report.html give the wall time of each session that computed chunks, the killed one too,
    and the run's length is theirs added up."""
    out = tmp_path / "run"
    proc = start("run", str(fling_job), "--out", str(out), "--serial")
    wait_for_records(out, 8, proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    kept = len(records(out))
    resumed = epcg("resume", str(out), "--serial")
    assert resumed.returncode == 0, resumed.stderr
    assert f"checking {kept:,} chunks against their records (those written since the last check)" \
        in resumed.stdout and f"checked {kept:,} chunks in " in resumed.stdout, resumed.stdout
    results = json.loads((out / "results.json").read_text())
    first, second = results["parts"]
    assert (first["chunks"], second["chunks"]) == (kept, len(records(reference)) - kept)
    assert first["started_at"] < first["ended_at"] <= second["started_at"] < second["ended_at"]
    assert first["seconds"] == pytest.approx(first["ended_at"] - first["started_at"], abs=0.01)
    assert results["wall_seconds"] == pytest.approx(first["seconds"] + second["seconds"], abs=0.01)  # its length
    assert "computed in 2 parts" in (out / "report.html").read_text()
    assert epcg("report", str(out)).returncode == 0
    assert json.loads((out / "results.json").read_text())["parts"] == results["parts"]
    assert "parts" not in json.loads((reference / "results.json").read_text())  # a run of one part has none


def soak(fling_job: Path, reference: Path, out: Path, kills: int, seed: int, pause: float = 1.5) -> dict[str, int]:
    """SIGKILL (or SIGTERM) the client at random moments, resuming each time; return the tally."""
    rng = random.Random(seed)
    total = len(records(reference))
    tally = {"kills": 0, "sessions": 0, "in_flight_lost": 0}
    args = ["run", str(fling_job), "--out", str(out), "--serial"]
    while tally["kills"] < kills:
        proc = start(*args)
        tally["sessions"] += 1
        wait_for_records(out, len(records(out)) + 1 if out.exists() else 1, proc)
        time.sleep(rng.uniform(0.0, pause))
        if proc.poll() is not None:
            break
        before = len(records(out))
        proc.send_signal(rng.choice([signal.SIGKILL, signal.SIGKILL, signal.SIGTERM]))
        proc.communicate(timeout=60)
        tally["kills"] += 1
        tally["in_flight_lost"] += int(before < total)
        args = ["resume", str(out), "--serial"]
    final = epcg(*args) if args[0] == "resume" else None
    if final is not None:
        assert final.returncode == 0, final.stderr
    tally["sessions"] += final is not None
    assert checksums(out) == checksums(reference)
    assert len(records(out)) == total
    return tally


@pytest.mark.slow  # 18 s; the single-kill resume tests run by default, 20 kills with -m slow
def test_soak_short(fling_job: Path, reference: Path, tmp_path: Path) -> None:
    tally = soak(fling_job, reference, tmp_path / "run", kills=3, seed=1, pause=0.3)
    assert tally["kills"] >= 2
    print(f"soak: {tally}; chunks recomputed at most {tally['in_flight_lost']} (one in flight per kill); "
          "results lost: 0")


@pytest.mark.slow
def test_soak_20_kills(tmp_path: Path) -> None:
    """20 kills at random moments of a run of 860 chunks (a session does about ten before its kill), each resumed."""
    job = tmp_path / "f66-8.toml"
    job.write_text(FLING_6X6.replace("max_pieces = 6", "max_pieces = 8"))
    reference = tmp_path / "ref"
    assert epcg("run", str(job), "--out", str(reference), "--serial").returncode == 0
    tally = soak(job, reference, tmp_path / "run", kills=20, seed=20, pause=0.5)
    assert tally["kills"] == 20
    print(f"soak: {tally}; results lost: 0")


def test_torn_and_corrupt_records_are_redone(reference: Path, tmp_path: Path) -> None:
    import shutil

    out = tmp_path / "run"
    shutil.copytree(reference, out)
    victims = records(out)[3:6]
    victims[0].write_text(victims[0].read_text()[:25])          # torn mid-write
    victims[1].write_bytes(b"")                                   # empty
    victims[2].write_text(victims[2].read_text().replace('"seconds": ', '"seconds": 1'))  # edited
    status = epcg("status", str(out))
    assert status.returncode == 0, status.stderr
    assert "3 damaged records" in status.stdout and "Traceback" not in status.stderr
    resumed = epcg("resume", str(out), "--serial")
    assert resumed.returncode == 0, resumed.stderr
    total = len(records(reference))
    assert f"3 of {total} chunks to do" in resumed.stdout
    assert checksums(out) == checksums(reference)


def test_missing_store_is_an_error_not_a_restart(reference: Path, tmp_path: Path) -> None:
    import shutil

    out = tmp_path / "run"
    shutil.copytree(reference, out)
    (out / "results.json").unlink()
    shutil.move(out / "store.zarr", tmp_path / "moved.zarr")
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    for args in (["resume", str(out), "--serial"], ["verify", str(out)], ["resume", str(out), "--serial", "--verify"]):
        result = epcg(*args)
        assert result.returncode == 2 and "missing or unreadable" in one_line(result), result.stderr
    after = sorted(p.relative_to(out) for p in out.rglob("*"))
    assert not (out / "store.zarr").exists()
    assert after == before


def test_status_is_read_only(reference: Path, tmp_path: Path) -> None:
    import shutil

    out = tmp_path / "run"
    shutil.copytree(reference, out)
    snapshot = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    with RunDir(out).lock():
        result = epcg("status", str(out))
        assert result.returncode == 0 and "running" in result.stdout
        assert RunDir(out).is_locked()
    assert epcg("status", str(out)).stdout.count("finished") == 1
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.name != ".lock"} == \
        {p: t for p, t in snapshot.items() if p.name != ".lock"}


def test_two_runs_on_one_new_directory(fling_job: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    procs = [start("run", str(fling_job), "--out", str(out), "--serial", "--set", "max_pieces=4") for _ in range(2)]
    codes = sorted(p.wait(timeout=120) for p in procs)
    errors = [p.stderr.read() for p in procs]
    assert codes == [0, 75], errors  # the second is refused as a conflict (EX_TEMPFAIL)
    assert any("in use" in e or "already holds a run" in e for e in errors)


def test_straggler_of_an_older_session_writes_nothing(reference: Path, tmp_path: Path) -> None:
    import shutil

    from epcg.runtime.errors import StaleTask
    from epcg.runtime.execute import run_task
    from epcg.runtime.plan import Task

    out = tmp_path / "run"
    shutil.copytree(reference, out)
    ident = RunDir(out).identity()
    old = f"{ident['run_id']}/{ident['epoch']}"
    with RunDir(out).lock():
        RunDir(out).new_epoch()
    task = Task("k06", 0, 0, 1024)
    record = out / Records.key(task)
    record.unlink()
    job = json.dumps({"name": "f66", "domain": "fling", "width": 6, "height": 6, "max_pieces": 6,
                      "chunk_words": 1024, "top_puzzles": 0}, sort_keys=True)
    with pytest.raises(StaleTask):
        run_task("fling", job, str(out), old, task)
    assert not record.exists()
    with pytest.raises(StaleTask):
        run_task("fling", job, str(out), "another-run/1", task)
    assert not record.exists()


def test_a_group_run_again_runs_only_its_unrecorded_tasks(reference: Path, tmp_path: Path) -> None:
    """The call that runs a read group's tasks together, run again after its worker died, recomputes only the
    tasks without a record and hands back the others' records as they are."""
    import shutil

    from epcg.runtime.execute import run_tasks_quietly
    from epcg.runtime.plan import Task

    out = tmp_path / "run"
    shutil.copytree(reference, out)
    ident = RunDir(out).identity()
    tasks = [Task("k06", 0, 0, 1024), Task("k06", 1, 1024, 2048)]
    first, second = (out / Records.key(t) for t in tasks)
    before = json.loads(first.read_text())["record"]
    first.unlink()
    mtime = second.stat().st_mtime_ns
    job = json.dumps({"name": "f66", "domain": "fling", "width": 6, "height": 6, "max_pieces": 6,
                      "chunk_words": 1024, "top_puzzles": 0}, sort_keys=True)
    records = run_tasks_quietly("fling", job, str(out), f"{ident['run_id']}/{ident['epoch']}", tasks)
    assert [r["task"] for r in records] == [t.id for t in tasks]
    assert records[0]["result"] == before["result"] and first.exists()
    assert records[1] == json.loads(second.read_text())["record"] and second.stat().st_mtime_ns == mtime


@pytest.mark.slow
def test_full_disk_then_resume(fling_job: Path, reference: Path, tmp_path: Path) -> None:
    mnt = tmp_path / "small"
    mnt.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(mnt)],
                             capture_output=True).returncode == 0
    if not mounted:
        pytest.skip("cannot mount a tmpfs here")
    try:
        out = mnt / "run"
        refused = epcg("run", str(fling_job), "--out", str(out), "--serial")
        assert refused.returncode == 2 and "of disk" in one_line(refused)
        assert not out.exists()
        full = epcg("run", str(fling_job), "--out", str(out), "--serial", "--force")
        assert full.returncode == 1, full.stderr
        last = full.stderr.strip().splitlines()[-1]
        assert "No space left on device" in last and f"epcg resume {out}" in last and "Traceback" not in full.stderr
        kept = len(records(out))
        assert 0 < kept < len(records(reference))
        subprocess.run(["mount", "-o", "remount,size=20m", str(mnt)], check=True)
        resumed = epcg("resume", str(out), "--serial")
        assert resumed.returncode == 0, resumed.stderr
        assert checksums(out) == checksums(reference)
    finally:
        subprocess.run(["umount", "-l", str(mnt)])
