"""Export: one JSON line per found object, with the documented fields, and its picture."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from epcg.api.export import SCHEMA
from tests.conftest import epcg as cli
from tests.workbench_runs import SLOW, small_run

FIELDS = {
    "witness-puzzle": {"row", "width", "height", "k", "rank", "must_cross", "squares", "solutions", "solution"},
    "fling-board": {"width", "height", "pieces", "rank", "board", "unique", "ratio", "solution"},
    "witness-triple": {"variant", "score", "moves", "panels", "set_counts", "pair_counts"},
    "dwp-map": {"experiment", "run", "seed", "fitness", "grid", "room_list"},
}


@pytest.mark.parametrize("domain", [pytest.param(d, marks=[pytest.mark.slow] if d in SLOW else [])
                                    for d in ["witness", "fling", "triple", "dwp"]])
def test_export_lines_and_pictures(domain: str, tmp_path: Path) -> None:
    run = small_run(domain)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        out = run.export(tmp_path / "x", limit=3)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert 0 < len(lines) <= 3 and len({line["id"] for line in lines}) == len(lines)
    cut = [str(w.message) for w in said if "found more than 3" in str(w.message)]
    assert len(cut) == (len(lines) == 3 and len(list(run.found())) > 3), said  # said exactly when some were left out
    for line in lines:
        assert line["schema"] == SCHEMA and line["job"] == run.name
        assert FIELDS[line["type"]] <= set(line)
        assert (tmp_path / "x" / line["picture"]).read_bytes()[:4] == b"\x89PNG"


def test_exported_witness_puzzles_are_what_the_run_stored(tmp_path: Path) -> None:
    run = small_run("witness")
    lines = [json.loads(s) for s in run.export(tmp_path, pictures="svg", row="3x3:3").read_text().splitlines()]
    assert len(lines) == run.results["rows"][1]["puzzles_at_min"]
    assert {line["solutions"] for line in lines} == {run.results["rows"][1]["min_solutions"]}
    assert all(len(line["solution"]) == line["longest_solution"] for line in lines)
    assert (tmp_path / lines[0]["picture"]).read_text().lstrip().startswith("<?xml")


def test_cli_export(tmp_path: Path) -> None:
    run = small_run("fling")
    result = cli("export", str(run.path), "--out", str(tmp_path / "e"), "--where", "pieces=4", "--limit", "2")
    assert result.returncode == 0, result.stderr
    lines = (tmp_path / "e" / "found.jsonl").read_text().splitlines()
    assert [json.loads(s)["pieces"] for s in lines] == [4, 4]
    bad = cli("export", str(run.path), "--out", str(tmp_path / "f"), "--where", "colour=1")
    assert bad.returncode == 2 and bad.stderr.startswith("epcg: error: --where") and not (tmp_path / "f").exists()
