"""A user's space with ``max = true`` served as a maximum, checked on a real run against a plain loop: max and
at-max columns in summary.md, pictures of the designs at the maximum, the ignored score out of the plot,
``decode``'s dict exported as JSON, and report.html saying how to read it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from epcg.kinds.scan import plotted_scores

from .conftest import epcg

PLUGIN = '''
from numba import njit

from epcg.search import ScanSpace


@njit(cache=True)
def score(rank):
    if rank % 7 == 0:
        return -1
    return (rank * 37) % 11


def decode(rank):
    return {"rank": rank, "bits": [int(b) for b in format(rank, "08b")]}


SPACE = ScanSpace(max_rank=120, evaluate=score, name="toy", decode=decode,
                  render=lambda d: f"<svg><text>{d['rank']}</text></svg>")
'''


def scores() -> list[int]:
    return [-1 if r % 7 == 0 else (r * 37) % 11 for r in range(120)]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("maxspace")
    patch = pytest.MonkeyPatch()
    (where / "toyspace.py").write_text(PLUGIN)
    (where / "job.toml").write_text('name = "toy"\nspace = "toyspace:SPACE"\nrows = [{}]\nmax = true\n'
                                    "ignore = -1\nchunk_size = 50\nfigures_per_row = 3\n")
    patch.setenv("PYTHONPATH", os.pathsep.join([str(where), os.environ.get("PYTHONPATH", "")]))
    out = where / "run"
    try:
        result = epcg("run", str(where / "job.toml"), "--out", str(out), "--serial")
        assert result.returncode == 0, result.stderr
        exported = epcg("export", str(out), "--where", "role=max", "--pictures", "none", "--trust-space")
        assert exported.returncode == 0, exported.stderr
    finally:
        patch.undo()
    return out


def test_summary_has_max_and_at_max_columns(run: Path) -> None:
    s = scores()
    kept = [x for x in s if x != -1]
    low, high = min(kept), max(kept)
    summary = (run / "summary.md").read_text()
    assert "| row | parameters | ranks | ignored | min | at min | max | at max |" in summary
    assert f"| 120 | {s.count(-1)} | {low} | {s.count(low)} | {high} | {s.count(high)} |" in summary


def test_pictures_at_the_maximum(run: Path) -> None:
    at_max = [r for r, x in enumerate(scores()) if x == max(scores())]
    drawn = sorted(int(p.stem.rsplit("-", 1)[1]) for p in (run / "figures").glob("*-max-rank-*.svg"))
    assert drawn == at_max[:3]


def test_the_ignored_score_is_not_plotted(run: Path) -> None:
    row = json.loads((run / "results.json").read_text())["rows"][0]
    assert row["histogram"]["-1"] == scores().count(-1)  # counted ...
    plotted = dict(plotted_scores(row, -1))
    assert -1 not in plotted and plotted == {x: scores().count(x) for x in set(scores()) - {-1}}  # ... not drawn


def test_decode_is_exported_as_json(run: Path) -> None:
    lines = [json.loads(line) for line in (run / "export" / "found.jsonl").read_text().splitlines()]
    at_max = [r for r, x in enumerate(scores()) if x == max(scores())]
    assert [x["rank"] for x in lines] == at_max and {x["role"] for x in lines} == {"max"}
    for x in lines:
        assert json.loads(x["text"]) == {"rank": x["rank"], "bits": [int(b) for b in format(x["rank"], "08b")]}


def test_report_html_says_how_to_read_it(run: Path) -> None:
    page = (run / "report.html").read_text()
    assert "How to read this" in page and "<th>at max</th>" in page
