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


def damage(run: Path, where: float = 0.5) -> str:
    """Flip a byte in the middle of a stored chunk of layer 5, ``where`` along the layer; return the task that
    wrote it."""
    chunks = sorted((run / "store.zarr" / "orbits" / "solvable" / "5" / "c").iterdir(), key=lambda p: int(p.name))
    victim = chunks[min(int(where * len(chunks)), len(chunks) - 1)]
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


@pytest.mark.parametrize("where", ["--serial", "--workers"])
def test_chunks_are_checked_in_batches_each_damaged_one_found_and_progress_said(reference: Path, tmp_path: Path,
                                                                                 where: str, monkeypatch) -> None:
    """Damage in the first, a middle and the last batch is found chunk by chunk, in this process and on Dask,
    a chunk that cannot be decoded too (its neighbours, read with it, are not condemned); the check says first
    what it reads and then how far it got."""
    out = tmp_path / "run"
    shutil.copytree(reference, out)
    every = records(out)
    victims = {damage(out, at) for at in (0.0, 1.0)}
    chunks = sorted((out / "store.zarr" / "orbits" / "solvable" / "5" / "c").iterdir(), key=lambda p: int(p.name))
    chunks[len(chunks) // 2].write_bytes(b"garbage")  # cannot be decoded: the read of its neighbours fails with it
    victims.add(f"k05/{int(chunks[len(chunks) // 2].name):05d}")
    assert len(victims) == 3
    monkeypatch.setenv("EPCG_PROGRESS_INTERVAL", "0.001")
    result = epcg("verify", str(out), "--all", *([where, "1"] if where == "--workers" else [where]))
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"checking {len(every):,} chunks against their records (all written so far)" in result.stdout
    assert f"3 of {len(every)} chunks checked" in result.stdout and ", ".join(sorted(victims)) in result.stdout
    counted = [line for line in result.stdout.splitlines() if " checked: " in line and f"of {len(every):,}" in line]
    assert counted, result.stdout
    assert records(out) == every - victims
