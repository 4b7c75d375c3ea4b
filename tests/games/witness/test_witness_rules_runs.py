"""Rules jobs through the CLI: bad rows refused in one line, and a job with every symbol run, reported and
exported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import JOBS, epcg, load_results

BAD_ROWS = {
    "an unknown symbol": ('{size = "3x3", circles = 2}', "unknown key 'rows.0.circles' (allowed keys: size,"),
    "more symbols than cells": ('{size = "2x2", triangles = 3, squares = 2}', "5 cell symbols"),
    "more hexagons than places": ('{size = "2x2", hexagons = 22}', "hexagons = 22: a 2x2 board has 21 places"),
    "a triangle count of 4": ('{size = "3x3", triangles = 2, triangle_counts = [1, 4]}',
                              "a triangle shows 1, 2 or 3"),
    "more exits than places": ('{size = "3x3", exits = "corners", exit_count = 4}', "exit_count = 4"),
    "a vertex off the board": ('{size = "3x3", starts = ["4,0"]}', "vertex '4,0' is off a 3x3 board"),
    "a piece larger than the board": ('{size = "2x2", tetris = 1, pieces = ["###"]}', "does not fit"),
    "no colour": ('{size = "2x2", stars = 2, colours = 0}', "colours = 0"),
    "a negative count": ('{size = "2x2", gaps = -1}', "rows.0.gaps"),
}


@pytest.mark.parametrize("name", list(BAD_ROWS))
def test_bad_row_is_one_line(tmp_path: Path, name: str) -> None:
    row, said = BAD_ROWS[name]
    job = tmp_path / "bad.toml"
    job.write_text(f'name = "bad"\ndomain = "witness"\nkind = "rules"\nrows = [{row}]\n')
    out = tmp_path / "run"
    result = epcg("run", str(job), "--out", str(out))
    assert result.returncode == 2, result.stderr
    lines = (result.stdout + result.stderr).strip().splitlines()
    assert len(lines) == 1 and said in lines[0], lines
    assert not out.exists()


def test_rows_repeating_a_name_are_refused(tmp_path: Path) -> None:
    job = tmp_path / "twice.toml"
    job.write_text('name = "twice"\ndomain = "witness"\nkind = "rules"\n'
                   'rows = [{size = "2x2", triangles = 1}, {size = "2x2", triangles = 1}]\n')
    result = epcg("plan", str(job))
    assert result.returncode == 2 and "rows repeat 2x2-t1" in result.stderr


@pytest.mark.slow
def test_every_symbol_runs_reports_and_exports(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = epcg("run", str(JOBS / "witness-rules.toml"), "--out", str(out), "--serial")
    assert result.returncode == 0, result.stderr
    rows = {r["name"]: r for r in load_results(out)["rows"]}
    assert (rows["3x3-t2"]["puzzles"], rows["3x3-t2"]["solvable"], rows["3x3-t2"]["min_solutions"],
            rows["3x3-t2"]["puzzles_at_min"]) == (324, 322, 4, 11)
    assert (rows["3x3-s2"]["puzzles"], rows["3x3-s2"]["solvable"], rows["3x3-s2"]["min_solutions"]) == (36, 36, 24)
    placed = set().union(*(r["symbols"] for r in rows.values()))
    assert {"hexagons", "gaps", "triangles", "squares", "stars", "eliminations", "tetris", "negatives", "starts",
            "exits"} <= placed
    html = (out / "report.html").read_text()
    assert html.count("<img") >= len(rows)
    exported = epcg("export", str(out), "--limit", "30")
    assert exported.returncode == 0, exported.stderr
    found = [json.loads(line) for line in (out / "export" / "found.jsonl").read_text().splitlines()]
    assert len(found) == 30 and all(f["type"] == "witness-rules-panel" for f in found)
    assert all((out / "export" / f["picture"]).stat().st_size > 0 for f in found)
