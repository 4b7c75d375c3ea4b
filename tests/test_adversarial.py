"""What a hostile but realistic user tried, as real processes on real files: damage verify must find, values of
the wrong type, addresses and paths that are not what they seem, a full disk, a run directory that lost its
identity, a run in use, filters that match nothing, options that would be ignored."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import JOBS, ROOT, epcg

JOB = 'name = "adv"\ndomain = "witness"\nkind = "must-cross"\nrows = ["3x3:3"]\nchunk_size = 2000\nfigures_per_row = 1\n'


def epcg_all(*commands: list[str]) -> list[subprocess.CompletedProcess]:
    """Run several ``epcg`` commands at once (each a real process), in order of the arguments."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    procs = [subprocess.Popen([sys.executable, "-m", "epcg", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env) for args in commands]
    done = []
    for args, proc in zip(commands, procs):
        out, err = proc.communicate(timeout=300)
        done.append(subprocess.CompletedProcess(args, proc.returncode, out, err))
    return done


def one_line(result: subprocess.CompletedProcess) -> str:
    """The error line of a refused command; asserts it is the only thing on stderr."""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("epcg: error: "), result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("adv") / "adv.toml"
    path.write_text(JOB)
    return path


@pytest.fixture(scope="module")
def finished(job: Path) -> Path:
    out = job.parent / "finished"
    result = epcg("run", str(job), "--out", str(out), "--serial")
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture
def copy(finished: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    shutil.copytree(finished, out)
    return out


def flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.slow
def test_verify_finds_damage_to_the_arrays_the_reduction_wrote(copy: Path) -> None:
    import epcg as api

    expected = [p.rank for p in api.open(copy).puzzles()]
    (chunk,) = [p for p in (copy / "store.zarr" / "3x3-k3" / "at_min" / "ranks").rglob("*")
                if p.is_file() and p.name != "zarr.json"]
    flip_byte(chunk)
    found = epcg("verify", str(copy), "--all", "--serial")
    assert found.returncode == 1 and "damaged on disk: reduce" in found.stdout, found.stdout + found.stderr
    assert not (copy / "results.json").exists()
    resumed = epcg("resume", str(copy), "--serial")
    assert resumed.returncode == 0 and "0 of " in resumed.stdout, resumed.stderr
    assert [p.rank for p in api.open(copy).puzzles()] == expected


@pytest.mark.parametrize("override, key", [("width=true", "width"), ('height="8"', "height"),
                                           ('symmetry="yes"', "symmetry"), ("symmetry=1", "symmetry"),
                                           ("chunk_words=true", "chunk_words")])
def test_job_values_are_checked_by_type(override: str, key: str, tmp_path: Path) -> None:
    from epcg.runtime.errors import UserError
    from epcg.runtime.jobs import load_job

    with pytest.raises(UserError, match=rf"fling.toml: {key}: expected (an integer|true or false), got "):
        load_job(JOBS / "fling.toml", [override])
    if override == "width=true":
        result = epcg("run", str(JOBS / "fling.toml"), "--set", override, "--out", str(tmp_path / "r"), "--serial")
        assert result.returncode == 2 and "width: expected an integer, got true" in one_line(result)
        assert not (tmp_path / "r").exists()


def test_run_takes_a_scheduler_address_and_refuses_what_is_not_a_client(job: Path, tmp_path: Path) -> None:
    import epcg as api
    from epcg.runtime.errors import UserError

    with pytest.raises(UserError, match="cannot reach scheduler tcp://127.0.0.1:1"):
        api.run(job, out=tmp_path / "r", client="tcp://127.0.0.1:1", progress=False)
    with pytest.raises(ValueError, match="client must be a distributed.Client or a scheduler address"):
        api.run(job, out=tmp_path / "r", client=42, progress=False)
    assert not (tmp_path / "r").exists()


def test_export_onto_an_existing_file(finished: Path, tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.write_text("mine")
    result = epcg("export", str(finished), "--out", str(target))
    assert result.returncode == 2 and "is a file, not a directory" in one_line(result)
    assert target.read_text() == "mine"


def in_small_filesystem(script: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run a shell script with $MNT a 2 MiB tmpfs (a user and mount namespace of its own); skip if not allowed."""
    if not shutil.which("unshare") or subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode:
        pytest.skip("no user and mount namespaces here")
    body = (f'MNT={tmp_path / "mnt"}; mkdir -p "$MNT"; mount -t tmpfs -o size=2m tmpfs "$MNT" || exit 99\n'
            f'epcg() {{ "{sys.executable}" -m epcg "$@"; }}\n'
            'fill() { dd if=/dev/zero of="$MNT/fill" bs=4k 2>/dev/null; truncate -s "-$1" "$MNT/fill"; }\n'
            + script)
    result = subprocess.run(["unshare", "-rm", "bash", "-c", body], capture_output=True, text=True, timeout=300,
                            cwd=ROOT)
    if result.returncode == 99:
        pytest.skip("cannot mount a tmpfs here")
    return result


@pytest.mark.slow
def test_full_disk_while_chunks_are_written_shows_no_worker_tracebacks(job: Path, tmp_path: Path) -> None:
    result = in_small_filesystem(
        f'fill 60K; epcg run {job} --out "$MNT/run" --workers 1 --set chunk_size=100 --force; echo "rc=$?"',
        tmp_path)
    assert "Traceback" not in result.stderr and "Compute Failed" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("epcg: error: ")]
    assert len(errors) == 1 and "No space left on device" in errors[0] and "epcg resume" in errors[0]
    assert "rc=1" in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("free, failing", [("40K", ""), pytest.param("250K", "report.html", marks=pytest.mark.slow)])
def test_full_disk_while_the_report_is_written(finished: Path, free: str, failing: str, tmp_path: Path) -> None:
    result = in_small_filesystem(
        f'cp -a {finished} "$MNT/run"; cd "$MNT/run" && rm -rf results.json summary.md report.html figures\n'
        f'fill {free}; epcg resume "$MNT/run" --serial; echo "rc=$?"; epcg status "$MNT/run"', tmp_path)
    error = [line for line in result.stderr.splitlines() if line.startswith("epcg: error: ")]
    assert "rc=1" in result.stdout and len(error) == 1, result.stdout + result.stderr
    assert f"cannot write {'' if failing else 'the outputs in '}{tmp_path / 'mnt' / 'run' / failing}".rstrip("/") \
        + ": No space left on device" in error[0]
    assert f"'epcg report {tmp_path / 'mnt' / 'run'}'" in error[0] and "Traceback" not in result.stderr
    assert "results:" not in result.stdout and "report:" not in result.stdout
    assert "finished" not in result.stdout and "stopped" in result.stdout


@pytest.mark.slow
def test_a_run_that_lost_its_identity_says_so_and_is_repaired(copy: Path) -> None:
    (copy / "manifest" / "job.sha256").unlink()
    for result in epcg_all(["status", str(copy)], ["resume", str(copy), "--serial"]):
        line = one_line(result)
        assert result.returncode == 2 and "job.sha256 is missing" in line and "has changed" not in line
        assert f"epcg verify --repair {copy}" in line
    (copy / "run.json").write_text("{damaged")
    repaired = epcg("verify", str(copy), "--repair", "--serial")
    assert repaired.returncode == 0, repaired.stderr
    assert "rebuilt manifest/job.sha256" in repaired.stdout and "rebuilt run.json" in repaired.stdout
    assert "all intact" in repaired.stdout
    assert json.loads((copy / "run.json").read_text())["epoch"] >= 1
    resumed = epcg("resume", str(copy), "--serial")
    assert resumed.returncode == 0 and "0 of " in resumed.stdout, resumed.stderr


def test_impossible_memory_sizes() -> None:
    sizes = ["-5GB", "1e30"]
    for size, result in zip(sizes, epcg_all(*[["plan", str(JOBS / "fling.toml"), "--memory-limit", s] for s in sizes])):
        assert result.returncode == 2 and f"--memory-limit '{size}' is not a size" in one_line(result)


def test_resume_of_a_run_in_use_refuses_before_any_cluster(copy: Path) -> None:
    from epcg.runtime.store import RunDir

    with RunDir(copy).lock():
        result = epcg("resume", str(copy), "--workers", "1")
    assert result.returncode == 75 and "is in use by another epcg client" in one_line(result)
    assert result.stdout == ""


def test_filters_that_would_match_nothing(finished: Path, tmp_path: Path) -> None:
    import epcg as api

    run = api.open(finished)
    assert len(list(run.puzzles("3x3:3", length="longest"))) > 0
    for call, valid in [(lambda: run.puzzles("3x3:3", length="long"), "'longest'"),
                        (lambda: run.puzzles(solutions=-1), "a count >= 0"),
                        (lambda: run.puzzles(3), r"rows 0\.\.0 \(3x3:3\), not row 3")]:
        with pytest.raises(ValueError, match=valid):
            call()
    fling = tmp_path / "fling"
    fling.mkdir()
    (fling / "job.toml").write_text('name = "f"\ndomain = "fling"\nwidth = 4\nheight = 4\nmax_pieces = 4\n')
    for kwargs, valid in [({"pieces": "6"}, "1..4"), ({"min_ratio": math.nan}, "min_ratio must be a number")]:
        with pytest.raises(ValueError, match=valid):
            api.open(fling).boards(**kwargs)
    refused = epcg("export", str(finished), "--where", 'length="long"', "--out", str(tmp_path / "x"))
    assert refused.returncode == 2 and "'longest'" in one_line(refused)
    assert not (tmp_path / "x").exists()
    bare = epcg("export", str(finished), "--where", "length=longest", "--out", str(tmp_path / "y"),
                "--pictures", "none")
    assert bare.returncode == 0 and (tmp_path / "y" / "found.jsonl").stat().st_size > 0, bare.stderr


def test_messages_name_what_is_wrong(job: Path, finished: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('kind = "local"\nworkers = "2"\n')
    missing, invalid, kind, directory, proc, caps = epcg_all(
        ["run", str(job), "--out", str(tmp_path / "r"), "--cluster", str(tmp_path / "none.toml")],
        ["run", str(job), "--out", str(tmp_path / "r"), "--cluster", str(bad)],
        ["plan", str(job), "--set", 'kind="nope"'],
        ["run", str(finished), "--serial"],
        ["run", str(job), "--out", "/proc/epcg-run", "--serial"],
        ["plan", str(job), "--set", 'solution_counts="ALL"'],
    )
    for result in (missing, invalid):
        assert result.returncode == 2 and "cluster file" in one_line(result) and "job file" not in one_line(result)
    assert "workers: expected an integer, got '2'" in one_line(invalid)
    assert kind.returncode == 2 and "'unique-cover' or 'rules'" in one_line(kind)
    assert directory.returncode == 2 and f"a run directory: 'epcg resume {finished}'" in one_line(directory)
    assert proc.returncode == 2 and "holds no files" in one_line(proc) and "free" not in one_line(proc)
    assert caps.returncode == 2 and "solution_counts: expected an integer, 'all' or a table" in one_line(caps)
    assert ".int" not in one_line(caps)


def test_options_that_would_be_ignored(job: Path, copy: Path, tmp_path: Path) -> None:
    big = tmp_path / "triple.toml"
    big.write_text('name = "t"\ndomain = "witness"\nkind = "triple"\nwidth = 3\nheight = 3\npieces = 1\n'
                   'library = ["#####/#####/#####/#####/#####"]\n')
    both, fewer, stray, refused = epcg_all(
        ["run", str(job), "--out", str(tmp_path / "r"), "--serial", "--scheduler", "tcp://127.0.0.1:9"],
        ["resume", str(copy), "--max-tasks", "1", "--serial"],
        ["plan", str(job), "--set", 'solution_counts={"5x5" = 10}'],
        ["plan", str(big)],
    )
    assert both.returncode == 2 and "--serial" in one_line(both) and "--scheduler" in one_line(both)
    assert fewer.returncode == 2 and "--max-tasks 1: this run has" in one_line(fewer)
    assert stray.returncode == 0 and "solution_counts" not in stray.stdout  # a cap for a board of no row is
    # said only when it looks like a slip (the row's board with width and height swapped)
    assert refused.returncode == 2 and "no piece of the library fits a 3x3 panel" in one_line(refused)
