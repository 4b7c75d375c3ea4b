"""The generic ``scan`` job kind through ``epcg run``: a plugin space by import path, and the
mistakes a plugin author makes, each one line on stderr, exit status 2, no results."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .conftest import epcg

PLUGIN = '''
import numpy as np
from numba import njit

from epcg.search import ScanSpace, scan_family


@njit(cache=True)
def digit_sum(rank, base):
    total = 0
    while rank:
        total += rank % base
        rank //= base
    return total


@njit
def broken(rank):
    return "x" + rank


@njit
def cursed(rank):
    if rank == 37:
        raise ValueError("rank 37 has no score")
    return rank


@scan_family
def digits(base, size=200):
    return ScanSpace(max_rank=size, evaluate=digit_sum, data=(base,), name=f"digit sums base {base}",
                     render=lambda rank: f"<svg><text>{rank}</text></svg>")


def not_marked(base):
    return digits(base)


TEN = digits(10)
BROKEN = ScanSpace(max_rank=10, evaluate=broken, name="broken")
CURSED = ScanSpace(max_rank=100, evaluate=cursed, name="cursed")
NOT_A_SPACE = 42
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A plugin module ``scanplugin`` importable by the epcg subprocesses (and their workers)."""
    (tmp_path / "scanplugin.py").write_text(PLUGIN)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    return tmp_path


def job(where: Path, text: str) -> str:
    path = where / "job.toml"
    path.write_text('name = "plugin"\n' + text)
    return str(path)


def digit_sums(base: int, size: int) -> list[int]:
    out = []
    for rank in range(size):
        total = 0
        while rank:
            total, rank = total + rank % base, rank // base
        out.append(total)
    return out


def test_plugin_rows_on_the_embedded_cluster(plugin: Path) -> None:
    path = job(plugin, 'space = "scanplugin:digits"\nrows = [{base = 10}, {base = 7, size = 300}]\n'
                       "chunk_size = 37\nignore = 0\ntop = 3\nfigures_per_row = 2\n")
    out = plugin / "run"
    result = epcg("run", path, "--out", str(out), "--workers", "1")
    assert result.returncode == 0, result.stderr
    rows = json.loads((out / "results.json").read_text())["rows"]
    for row, (base, size) in zip(rows, [(10, 200), (7, 300)]):
        scores = digit_sums(base, size)
        low = min(s for s in scores if s)
        assert (row["count"], row["ignored"], row["min"]) == (size, 1, low)
        assert row["first_at_min"] == [r for r, s in enumerate(scores) if s == low]
        assert [(t["rank"], t["score"]) for t in row["top"]] == \
            sorted(enumerate(scores), key=lambda rs: (-rs[1], rs[0]))[:3]
        assert row["histogram"] == {str(s): scores.count(s) for s in sorted(set(scores))}
    assert (out / "figures" / "row-000-rank-1.svg").read_text() == "<svg><text>1</text></svg>"
    assert "| row-001 | base=7, size=300 | 300 |" in (out / "summary.md").read_text()


@pytest.mark.parametrize(("space", "message"), [
    ("no_such_module_xyz:SPACE", "cannot import 'no_such_module_xyz'"),
    ("scanplugin:NOT_A_SPACE", "is not an epcg space"),
    ("scanplugin:not_marked", "is a plain function, not an epcg space: a function of the job's rows must be marked, @scan_family"),
    ("scanplugin:BROKEN", "evaluator scanplugin.broken of broken does not compile with numba: "
                          "No implementation of function Function(<built-in function add>) found for signature: "
                          "add(Literal[str](x), int64) ("),
])
def test_plugin_mistakes_stop_before_anything_is_written(plugin: Path, space: str, message: str) -> None:
    out = plugin / "run"
    result = epcg("run", job(plugin, f'space = "{space}"\n'), "--out", str(out), "--serial")
    assert result.returncode == 2
    assert result.stderr.startswith("epcg: error: ") and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_an_evaluator_that_raises_in_a_task(plugin: Path) -> None:
    out = plugin / "run"
    result = epcg("run", job(plugin, 'space = "scanplugin:CURSED"\nchunk_size = 20\n'), "--out", str(out),
                  "--workers", "1")
    assert result.returncode == 2
    error = [line for line in result.stderr.splitlines() if line.startswith("epcg: error:")]
    assert error == ["epcg: error: evaluator of cursed failed at rank 37: ValueError: rank 37 has no score"]
    assert not (out / "results.json").exists()


@pytest.mark.slow
def test_rows_of_a_plain_space_take_no_parameters(plugin: Path) -> None:
    result = epcg("run", job(plugin, 'space = "scanplugin:TEN"\nrows = [{base = 3}]\n'), "--serial",
                  "--out", str(plugin / "run"))
    assert result.returncode == 2 and "is a ScanSpace, not a function" in result.stderr
