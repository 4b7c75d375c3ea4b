"""examples/must-cross: the movingai page's question as a user's scan space gives the rows of the
built-in Table 2 job, on the embedded cluster and through a scheduler address."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from epcg.runtime.store import RunDir

from .conftest import JOBS, ROOT, epcg

EXAMPLE = ROOT / "examples" / "must-cross"
SMALL = [(3, 3, 3), (3, 3, 5), (3, 4, 3)]


@pytest.fixture
def example_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(EXAMPLE), os.environ.get("PYTHONPATH", "")]))


def example_rows(rows: list[tuple[int, int, int]]) -> str:
    return "rows=[" + ",".join(f"{{width={w},height={h},k={k}}}" for w, h, k in rows) + "]"


def builtin_rows(rows: list[tuple[int, int, int]]) -> str:
    return "rows=[" + ",".join(f'"{w}x{h}:{k}"' for w, h, k in rows) + "]"


def assert_same_rows(example: Path, builtin: Path, rows: list[tuple[int, int, int]]) -> None:
    """Same minimum, same number of puzzles at it, and the very same puzzles (stored ranks)."""
    ours = json.loads((example / "results.json").read_text())["rows"]
    theirs = json.loads((builtin / "results.json").read_text())["rows"]
    assert [(r["min"], r["at_min"]) for r in ours] == [(r["min_solutions"], r["puzzles_at_min"]) for r in theirs]
    for i, (w, h, k) in enumerate(rows):
        a = RunDir(example).arrays.read_array(f"row-{i:03d}/at_min/ranks")
        b = RunDir(builtin).arrays.read_array(f"{w}x{h}-k{k}/at_min/ranks")
        assert np.array_equal(a, b)


@pytest.fixture(scope="module")
def builtin_small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("builtin") / "run"
    result = epcg("run", str(JOBS / "witness-must-cross.toml"), "--out", str(out), "--serial",
                  "--set", builtin_rows(SMALL), "--set", "figures_per_row=0")
    assert result.returncode == 0, result.stderr
    return out


@pytest.mark.slow
def test_example_rows_on_the_embedded_cluster(example_on_path: None, builtin_small: Path, tmp_path: Path) -> None:
    out = tmp_path / "example"
    result = epcg("run", str(EXAMPLE / "job.toml"), "--out", str(out), "--workers", "2",
                  "--set", example_rows(SMALL), "--set", "chunk_size=100000")
    assert result.returncode == 0, result.stderr
    assert_same_rows(out, builtin_small, SMALL)


def test_the_user_code_is_short() -> None:
    assert len((EXAMPLE / "must_cross" / "__init__.py").read_text().splitlines()) <= 40


@pytest.mark.slow
def test_example_through_a_scheduler_address(example_on_path: None, builtin_small: Path, tmp_path: Path) -> None:
    from .test_real_cluster import Cluster

    cluster = Cluster(tmp_path)
    try:
        cluster.wait_for_workers(2)
        out = tmp_path / "example"
        result = epcg("run", str(EXAMPLE / "job.toml"), "--out", str(out), "--scheduler", cluster.address,
                      "--set", example_rows(SMALL), "--set", "chunk_size=100000")
    finally:
        cluster.close()
    assert result.returncode == 0, result.stderr
    assert_same_rows(out, builtin_small, SMALL)


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_example_gives_table_2(example_on_path: None, tmp_path: Path) -> None:
    rows = [(3, 3, 3), (3, 3, 5), (3, 4, 3), (3, 4, 5), (4, 4, 3), (4, 4, 4), (4, 4, 5), (4, 4, 6)]
    builtin, example = tmp_path / "builtin", tmp_path / "example"
    assert epcg("run", str(JOBS / "witness-must-cross.toml"), "--out", str(builtin),
                "--set", builtin_rows(rows), "--set", "figures_per_row=0").returncode == 0
    result = epcg("run", str(EXAMPLE / "job.toml"), "--out", str(example), timeout=3600)
    assert result.returncode == 0, result.stderr
    assert_same_rows(example, builtin, rows)
