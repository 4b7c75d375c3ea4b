"""`epcg verify` as a real process: checks on the cluster, only what is unverified (``--all``: everything);
a damaged chunk loses its record and resume recomputes exactly it; a missing or unreadable store is exit 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .conftest import epcg, load_results

JOB = 'name = "v"\ndomain = "fling"\nwidth = 5\nheight = 6\nmax_pieces = 5\nchunk_words = 64\ntop_puzzles = 0\n'


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("verify")
    (tmp / "job.toml").write_text(JOB)
    out = tmp / "ref"
    result = epcg("run", str(tmp / "job.toml"), "--out", str(out), "--serial")
    assert result.returncode == 0, result.stderr
    return out


def records(run: Path) -> set[str]:
    return {str(p.relative_to(run / "manifest").with_suffix("")) for p in (run / "manifest").glob("*/*.json")}


def tree(run: Path) -> dict[str, int]:
    return {str(p.relative_to(run)): p.stat().st_mtime_ns for p in run.rglob("*") if p.name != ".lock"}


def damage(run: Path) -> str:
    """Flip a byte in the middle of a stored chunk of layer 5; return the task that wrote it."""
    chunks = sorted((run / "store.zarr" / "orbits" / "solvable" / "5" / "c").iterdir(), key=lambda p: int(p.name))
    victim = chunks[len(chunks) // 2]
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))
    return f"k05/{int(victim.name):05d}"


@pytest.mark.slow
def test_verify_on_the_cluster_then_resume_recomputes_only_the_damage(reference: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    shutil.copytree(reference, out)
    every = records(out)
    assert len(every) > 10
    victim = damage(out)

    found = epcg("verify", str(out), "--workers", "1")
    assert found.returncode == 1, found.stderr
    assert f"1 of {len(every)} chunks checked on 1 Dask worker" in found.stdout and victim in found.stdout
    assert records(out) == every - {victim}
    assert not (out / "results.json").exists()

    # nothing left to read: no cluster is contacted (this scheduler address does not answer)
    again = epcg("verify", str(out), "--scheduler", "tcp://127.0.0.1:9")
    assert again.returncode == 0, again.stderr
    assert "nothing to check" in again.stdout, again.stdout
    everything = epcg("verify", str(out), "--all", "--serial")
    assert everything.returncode == 0 and f"{len(every) - 1} chunks checked in this process, all intact" in \
        everything.stdout, everything.stdout + everything.stderr

    before = {name: (out / "manifest" / f"{name}.json").read_text() for name in every - {victim}}
    resumed = epcg("resume", str(out), "--serial")
    assert resumed.returncode == 0, resumed.stderr
    assert f"1 of {len(every)} chunks to do" in resumed.stdout
    assert records(out) == every
    assert all((out / "manifest" / f"{name}.json").read_text() == text for name, text in before.items())
    assert load_results(out)["rows"] == load_results(reference)["rows"]

    recorded = epcg("verify", str(out), "--serial")
    assert recorded.returncode == 0 and "1 chunks checked" in recorded.stdout, recorded.stdout


@pytest.mark.parametrize("harm", ["moved", "unreadable"])
def test_missing_or_unreadable_store_is_exit_2_and_nothing_deleted(reference: Path, tmp_path: Path,
                                                                   harm: str) -> None:
    out = tmp_path / "run"
    shutil.copytree(reference, out)
    if harm == "moved":
        shutil.move(out / "store.zarr", tmp_path / "elsewhere.zarr")
    else:
        (out / "store.zarr" / "zarr.json").write_text("{ not json")
    before = tree(out)
    for args in (["verify", str(out), "--workers", "1"], ["verify", str(out), "--all", "--serial"]):
        result = epcg(*args)
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and len(lines) == 1, result.stderr
        assert lines[0].startswith("epcg: error:") and "missing or unreadable" in lines[0]
    assert tree(out) == before


def test_a_chunk_file_gone_is_damage_of_that_chunk_only(reference: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    shutil.copytree(reference, out)
    every = records(out)
    (out / "store.zarr" / "orbits" / "unique" / "5" / "c" / "0").unlink()
    result = epcg("verify", str(out), "--serial")
    assert result.returncode == 1 and "k05/00000" in result.stdout, result.stdout + result.stderr
    assert records(out) == every - {"k05/00000"}
    assert json.loads((out / "manifest" / "verified.json").read_text())
