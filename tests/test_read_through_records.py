"""Every reader of a run (export, report, status, the Python API) reads only what the run's records vouch for:
real runs in real directories damaged the way a hostile but realistic user (or a failing disk) would, each
answered with the right result or one line naming the chunk and the way out, never a short answer or a
traceback (issue 34, findings 1, 2, 4 and 6)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import epcg, load_results

FLING = ('name = "f"\ndomain = "fling"\nwidth = 4\nheight = 4\nmax_pieces = 5\nchunk_words = 8\n'
         'top_puzzles = 0\n')
WITNESS = 'name = "w"\ndomain = "witness"\nkind = "must-cross"\nrows = ["3x3:3"]\nchunk_size = 1000\n'
DAMAGED = 65
"""Exit status of damaged data (Damaged: EX_DATAERR)."""


def one_line(result: subprocess.CompletedProcess) -> str:
    """The error line of a refused command; asserts it is the only thing on stderr."""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("epcg: error: "), result.stderr
    return lines[0]


def run_job(text: str, out: Path, *sets: str) -> Path:
    job = out.parent / f"{out.name}.toml"
    job.write_text(text)
    result = epcg("run", str(job), "--out", str(out), "--serial", *[a for s in sets for a in ("--set", s)])
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def fling(tmp_path_factory) -> Path:
    return run_job(FLING, tmp_path_factory.mktemp("fling") / "run")


@pytest.fixture(scope="module")
def fling_other(tmp_path_factory) -> Path:
    """Another run of another job (no symmetry): its records are foreign to :func:`fling`."""
    return run_job(FLING, tmp_path_factory.mktemp("other") / "run", "symmetry=false")


@pytest.fixture(scope="module")
def witness(tmp_path_factory) -> Path:
    return run_job(WITNESS, tmp_path_factory.mktemp("witness") / "run")


@pytest.fixture
def copy(fling: Path, tmp_path: Path) -> Path:
    out = tmp_path / "copy"
    shutil.copytree(fling, out)
    return out


def chunk_files(run: Path, array: str) -> list[Path]:
    return sorted(p for p in (run / "store.zarr" / array).rglob("*") if p.is_file() and p.name != "zarr.json")


def exported(run: Path, *where: str, out: Path | None = None) -> subprocess.CompletedProcess:
    args = ["export", str(run), "--pictures", "none", "--limit", "100000"]
    args += [a for w in where for a in ("--where", w)]
    return epcg(*args, *(["--out", str(out)] if out else []))


def count(result: subprocess.CompletedProcess) -> int:
    assert result.returncode == 0, result.stderr
    return int(result.stdout.split()[0].replace(",", ""))


@pytest.mark.slow
def test_a_deleted_chunk_file_is_damage_not_fewer_boards(fling: Path, copy: Path) -> None:
    whole = count(exported(fling, "pieces=4", "unique=false"))
    chunk_files(copy, "solvable/4")[1].unlink()
    result = exported(copy, "pieces=4", "unique=false")
    line = one_line(result)
    assert result.returncode == DAMAGED and "solvable/4" in line and "is damaged" in line, line
    assert f"'epcg resume --verify {copy}'" in line and whole > 0
    assert not (copy / "export").exists()
    resumed = epcg("resume", str(copy), "--verify", "--serial")
    assert resumed.returncode == 0, resumed.stderr
    assert count(exported(copy, "pieces=4", "unique=false")) == whole


def test_a_deleted_layer_metadata_is_damage(copy: Path) -> None:
    (copy / "store.zarr" / "unique" / "3" / "zarr.json").unlink()
    result = exported(copy, "pieces=3")
    line = one_line(result)
    assert result.returncode == DAMAGED and "unique/3" in line and "metadata" in line, line


@pytest.mark.parametrize("command", ["export", "report"])
def test_random_bytes_over_a_chunk_are_one_line_and_no_partial_output(fling: Path, copy: Path, command: str) -> None:
    before = exported(copy, "pieces=4")
    assert before.returncode == 0
    previous = (copy / "export" / "found.jsonl").read_text()
    target = chunk_files(copy, "unique/4")[0]
    target.write_bytes(os.urandom(target.stat().st_size))
    result = epcg(command, str(copy), *(["--where", "pieces=4", "--pictures", "none"] if command == "export" else []))
    line = one_line(result)
    assert result.returncode == DAMAGED and "unique/4" in line and "resume --verify" in line, line
    assert "Traceback" not in result.stderr and "Zstd" not in result.stderr
    assert (copy / "export" / "found.jsonl").read_text() == previous  # the previous export, whole


@pytest.mark.slow
def test_a_foreign_record_is_not_done_and_resume_replaces_it(fling: Path, fling_other: Path, copy: Path) -> None:
    shutil.copy(fling_other / "manifest" / "k05" / "00003.json", copy / "manifest" / "k05" / "00003.json")
    status = epcg("status", str(copy))
    assert status.returncode == 0 and "1 damaged records" in status.stdout and "k05/00003" in status.stdout
    assert "total" in status.stdout and " 31/32" in status.stdout.replace("  ", " "), status.stdout
    report = epcg("report", str(copy))
    assert report.returncode == 2 and "1 unfinished tasks" in one_line(report)
    resumed = epcg("resume", str(copy), "--serial")
    assert resumed.returncode == 0 and "1 of 32 chunks to do" in resumed.stdout, resumed.stdout + resumed.stderr
    assert load_results(copy) == load_results(fling)


def test_an_unfinished_layer_is_refused_not_short(fling: Path, copy: Path) -> None:
    import epcg as api
    from epcg.runtime.errors import Unfinished

    for name in ("00001.json", "00002.json"):
        (copy / "manifest" / "f04" / name).unlink()  # the fill stage writes the whole layer
    (copy / "results.json").unlink()
    result = exported(copy, "pieces=4")
    line = one_line(result)
    assert result.returncode == 2 and "is not finished" in line and f"'epcg resume {copy}'" in line, line
    with pytest.raises(Unfinished, match="not finished"):
        list(api.open(copy).boards(4))
    assert len(list(api.open(copy).boards(3))) == len(list(api.open(fling).boards(3)))


def test_status_of_a_run_whose_store_is_a_plain_file(copy: Path) -> None:
    shutil.rmtree(copy / "store.zarr")
    (copy / "store.zarr").write_text("not a store")
    result = epcg("status", str(copy))
    assert result.returncode == 2 and "store.zarr is missing or unreadable" in one_line(result)


@pytest.mark.slow
def test_witness_truncated_and_misplaced_records_are_redone(witness: Path, tmp_path: Path) -> None:
    copy = tmp_path / "w"
    shutil.copytree(witness, copy)
    records = sorted((copy / "manifest").rglob("0000*.json"))
    assert len(records) >= 3
    records[0].write_text(records[0].read_text()[:40])  # truncated
    shutil.copy(records[2], records[1])  # another chunk's record under this one's name
    status = epcg("status", str(copy))
    assert "2 damaged records" in status.stdout, status.stdout
    resumed = epcg("resume", str(copy), "--serial")
    assert resumed.returncode == 0 and "2 of " in resumed.stdout, resumed.stdout + resumed.stderr
    assert load_results(copy) == load_results(witness)


def test_export_again_replaces_the_previous_export_whole(fling: Path, tmp_path: Path) -> None:
    out = tmp_path / "exp"
    assert epcg("export", str(fling), "--out", str(out), "--where", "pieces=4", "--limit", "7").returncode == 0
    assert len(list((out / "pictures").iterdir())) == 7
    again = epcg("export", str(fling), "--out", str(out), "--where", "pieces=2", "--limit", "2")
    assert again.returncode == 0, again.stderr
    lines = (out / "found.jsonl").read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["pieces"] == 2 for line in lines)
    assert sorted(p.name for p in (out / "pictures").iterdir()) == sorted(f"{json.loads(x)['id']}.png" for x in lines)
    assert [p.name for p in tmp_path.iterdir()] == ["exp"]  # no staging directory left beside it


def test_export_refuses_a_directory_holding_other_files(fling: Path, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    result = epcg("export", str(fling), "--out", str(out))
    assert result.returncode == 2 and "holds files that are not an export (notes.txt)" in one_line(result)
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_an_interrupted_export_leaves_the_previous_one(fling: Path, tmp_path: Path) -> None:
    out = tmp_path / "exp"
    assert epcg("export", str(fling), "--out", str(out), "--where", "pieces=2").returncode == 0
    previous = (out / "found.jsonl").read_text()
    proc = subprocess.Popen([sys.executable, "-m", "epcg", "export", str(fling), "--out", str(out),
                             "--where", "unique=false", "--limit", "100000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    staging = tmp_path / f".exp.epcg-export-{proc.pid}"
    deadline = time.monotonic() + 120
    while not (staging / "pictures").is_dir() or len(list((staging / "pictures").iterdir())) < 3:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert (out / "found.jsonl").read_text() == previous
    assert not staging.exists()


def test_api_defaults_are_bounded_and_typed(fling: Path, tmp_path: Path) -> None:
    import epcg as api
    from epcg.runtime.errors import UserError

    with pytest.raises(UserError, match="a run directory is a path or a URL"):
        api.open(5)
    run = api.open(fling)
    with pytest.raises(UserError, match="limit must be a number of objects >= 1"):
        run.export(tmp_path / "d", limit=-1)
    assert not (tmp_path / "d").exists()
    total = sum(1 for _ in run.boards(unique=None))
    assert total > 30
    with pytest.warns(UserWarning, match="these are the first 30"):
        out = run.export(tmp_path / "e", limit=30, pictures=None, unique=None)
    assert len(out.read_text().splitlines()) == 30
    from epcg.api.runs import Run

    import inspect

    assert inspect.signature(Run.export).parameters["limit"].default == 1000


@pytest.mark.parametrize("arguments, words", [
    ({"out": 5}, "a run directory is a path or a URL"),
    ({"out": b"runs/x"}, "a run directory is a path or a URL"),
    ({"workers": "2"}, "--workers must be a whole number >= 1, got '2'"),
    ({"workers": 0}, "--workers must be a whole number >= 1, got 0"),
    ({"workers": True}, "--workers must be a whole number >= 1, got True"),
    ({"workers": 2.5}, "--workers must be a whole number >= 1"),
    ({"serial": "yes"}, "--serial must be True or False"),
    ({"serial": 1}, "--serial must be True or False"),
    ({"cluster": 5}, "--cluster must be a file's path, got 5"),
    ({"client": 5}, "client must be a distributed.Client or a scheduler address"),
    ({"progress": "no"}, "progress must be True or False"),
])
def test_api_run_refuses_a_wrongly_typed_argument_in_the_cli_words(tmp_path: Path, monkeypatch,
                                                                  arguments: dict, words: str) -> None:
    """Every keyword of ``epcg.run`` has the CLI's rule (click types the CLI's): one UserError, nothing written."""
    import epcg as api
    from epcg.runtime.errors import UserError

    from .conftest import JOBS

    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError, match=re.escape(words)):
        api.run(JOBS / "witness-paths.toml", **{"progress": False, **arguments})
    assert list(tmp_path.iterdir()) == []


def test_an_export_that_cannot_be_written_names_the_destination_not_its_staging(fling: Path) -> None:
    result = epcg("export", str(fling), "--out", "/proc/epcg-export", "--where", "pieces=2")
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == "epcg: error: cannot write /proc/epcg-export: No such file or directory"
