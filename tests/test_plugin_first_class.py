"""A user's own space is first class: `epcg plan` figures in every column, report.html with the space's
pictures, `epcg export`; and a user kernel that crashes its worker, or a cluster whose workers cannot start,
ends the run with one line instead of a hang or a traceback."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from .conftest import ROOT, epcg

MUST_CROSS = ROOT / "examples" / "must-cross"
PEG = ROOT / "examples" / "peg-solitaire"


@pytest.fixture
def examples_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(MUST_CROSS), str(PEG), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.syspath_prepend(str(MUST_CROSS))
    monkeypatch.syspath_prepend(str(PEG))
    for name in ("must_cross", "peg_solitaire"):
        sys.modules.pop(name, None)


@pytest.mark.parametrize("job", [pytest.param(MUST_CROSS / "job.toml", marks=pytest.mark.slow),  # 25 s in CI
                                 PEG / "jobs" / "triangle6.toml"], ids=["scan", "retrograde"])
def test_plan_of_a_users_space_has_every_figure(examples_on_path: None, job: Path) -> None:
    result = epcg("plan", str(job))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    total = next(line for line in lines if line.startswith("total"))
    assert "?" not in total, result.stdout
    assert any(line.startswith("estimated: compute from") and "timed here" in line for line in lines)
    assert "run would accept this job" in result.stdout


@pytest.mark.slow
def test_the_plan_refuses_what_the_workers_cannot_hold(examples_on_path: None) -> None:
    result = epcg("plan", str(PEG / "jobs" / "triangle6.toml"), "--memory-limit", "100MB")
    assert "run would refuse: stage" in result.stdout and "per worker process" in result.stdout


def _run_export_and_look(out: Path, job: Path, *sets: str) -> list[dict]:
    """Run ``job`` serially, export it, and look at its report in Chromium; return the exported lines."""
    from tests.browser import chromium_page, screenshot

    result = epcg("run", str(job), "--out", str(out), "--serial", *sets)
    assert result.returncode == 0, result.stderr
    exported = epcg("export", str(out), "--limit", "12", "--trust-space")  # the user's own space draws its objects
    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(line) for line in (out / "export" / "found.jsonl").read_text().splitlines()]
    assert lines and all((out / "export" / line["picture"]).stat().st_size > 500 for line in lines)
    with chromium_page() as (page, refused):
        page.goto((out / "report.html").as_uri())
        assert page.locator("figure.item").count() >= 4
        assert page.locator("figure.plot").count() >= 1
        assert page.eval_on_selector_all("figure.item img, figure.plot img",
                                         "imgs => imgs.every(i => i.complete && i.naturalWidth > 0)")
        page.locator("#gallery").scroll_into_view_if_needed()
        screenshot(page, out.parent / f"report-{out.name}.png")
        assert not refused
    return lines


@pytest.mark.slow
def test_scan_example_report_and_export(examples_on_path: None, tmp_path: Path) -> None:
    out = tmp_path / "must-cross"
    lines = _run_export_and_look(out, MUST_CROSS / "job.toml", "--set", "rows=[{width=3,height=3,k=3}]",
                                 "--set", "top=3", "--set", "max=true", "--set", "figures_per_row=2")
    summary = (out / "summary.md").read_text()
    assert "36 designs at the minimum score 4; the first:\n\n- rank 1247: `[1, 19, 33]`" in summary
    assert "| score | designs |" in summary and "designs at the maximum score 152" in summary
    from epcg.kinds.runs import ScanRun

    from .test_columns_documented import headers

    assert len(headers(summary)) >= 12 and all(f"`{c}`" in ScanRun.NOTATION for c in headers(summary))
    assert (out / "figures" / "row-000-histogram.png").is_file()
    first = lines[0]
    assert (first["type"], first["role"], first["params"]) == ("scan-design", "min", {"width": 3, "height": 3, "k": 3})
    assert (first["rank"], first["score"], json.loads(first["text"])) == (1247, 4, [1, 19, 33])  # decode's tuple
    at_max = epcg("export", str(out), "--out", str(tmp_path / "max"), "--where", 'role="max"')
    assert at_max.returncode == 0, at_max.stderr
    maxima = [json.loads(line) for line in (tmp_path / "max" / "found.jsonl").read_text().splitlines()]
    assert [(m["rank"], m["score"]) for m in maxima] == [(155, 152), (310, 152)]
    cut = epcg("export", str(out), "--out", str(tmp_path / "cut"), "--limit", "5", "--pictures", "none",
               "--trust-space")  # without it a last note says the designs are not drawn
    assert cut.stdout.splitlines()[-2:] == [
        f"5 objects: {tmp_path / 'cut' / 'found.jsonl'}",
        "note: the run found more than 5 that match; these are the first 5 (--limit N for more, "
        "--where KEY=VALUE to choose)"]
    exact = epcg("export", str(out), "--out", str(tmp_path / "exact"), "--limit", "2", "--where", "role=max")
    assert "found more than" not in exact.stdout  # exactly as many as the limit: no cut


@pytest.mark.slow  # the scan example checks the same outputs in the default run
def test_retrograde_example_report_and_export(examples_on_path: None, tmp_path: Path) -> None:
    """The family job (triangles of side 4 and 5, one analysis per row) gives each row the plain space's layers."""
    from epcg.search.retrograde import solve_layers
    from peg_solitaire import TRIANGLE4, TRIANGLE5

    out = tmp_path / "peg"
    lines = _run_export_and_look(out, PEG / "jobs" / "triangles.toml")
    rows = json.loads((out / "results.json").read_text())["rows"]
    for name, space in (("r000", TRIANGLE4), ("r001", TRIANGLE5)):
        ours = [(r["layer"], r["solvable"]) for r in rows if r["row"] == name]
        assert ours == [(r["layer"], r["solvable"]) for r in solve_layers(space).rows]
    assert (out / "figures" / "r001-layers.png").is_file()
    assert "- rank 0: `oooooooooooooo.`" in (out / "summary.md").read_text()
    assert lines[0] == {**lines[0], "type": "retrograde-state", "row": "r000", "layer": 9, "bits": {"solvable": True}}
    second = epcg("export", str(out), "--out", str(tmp_path / "r001"), "--where", "row=r001", "--where", "layer=13",
                  "--trust-space")
    assert second.returncode == 0, second.stderr
    assert {json.loads(line)["row"] for line in (tmp_path / "r001" / "found.jsonl").read_text().splitlines()} == {"r001"}


CRASHING = '''
import numpy as np
from numba import njit
from epcg.search import ScanSpace


@njit(cache=True)
def out_of_bounds(rank, buf, at):
    if rank == at:
        buf[1 << 40] = 1      # far outside: the process dies (SIGSEGV)
    return rank % 7


@njit(cache=True)
def needs_an_array(rank, buf):
    return buf[rank % 4]


CRASH = ScanSpace(max_rank=4000, evaluate=out_of_bounds, data=(np.zeros(4, np.int64), 1300), name="crash")
SAMPLED = ScanSpace(max_rank=4000, evaluate=out_of_bounds, data=(np.zeros(4, np.int64), 1500), name="sampled")
AT_ZERO = ScanSpace(max_rank=4000, evaluate=out_of_bounds, data=(np.zeros(4, np.int64), 0), name="at-zero")
MISMATCH = ScanSpace(max_rank=10, evaluate=needs_an_array, data=(3.5,), name="mismatch")
'''


@pytest.fixture
def crashing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "crashing.py").write_text(CRASHING)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    return tmp_path


def job(where: Path, space: str) -> str:
    path = where / f"{space}.toml"
    path.write_text(f'name = "crash"\nspace = "crashing:{space}"\nchunk_size = 500\n')
    return str(path)


def errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("epcg: error:")]


def test_a_kernel_that_kills_its_workers_ends_the_run_in_one_line(crashing: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES", "1")  # two deaths, not Dask's four
    began = time.monotonic()
    result = epcg("run", job(crashing, "CRASH"), "--out", str(crashing / "run"), "--workers", "1", timeout=120)
    assert time.monotonic() - began < 60
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    (line,) = errors(result.stderr)
    assert "chunk row-000/00002 (stage row-000, range [1,000, 1,500)) killed its worker process 2 times" in line
    assert "boundscheck=True" in line and "--check" in line
    assert not (crashing / "run" / "results.json").exists()


@pytest.mark.slow
def test_check_and_serial_name_the_rank(crashing: Path) -> None:
    checked = epcg("run", job(crashing, "CRASH"), "--out", str(crashing / "a"), "--check", "--workers", "1")
    assert checked.returncode == 1
    assert errors(checked.stderr) == ["epcg: error: --check: evaluator of crash failed at rank 1300: "
                                      "IndexError: index is out of bounds"]
    assert "Dask dashboard" not in checked.stdout  # refused before any cluster or task
    serial = epcg("run", job(crashing, "CRASH"), "--out", str(crashing / "b"), "--serial")
    assert serial.returncode == 2
    assert errors(serial.stderr) == ["epcg: error: evaluator of crash failed at rank 1300: "
                                     "IndexError: index is out of bounds"]


@pytest.mark.slow
def test_a_kernel_that_crashes_while_the_plan_times_it_is_one_line(crashing: Path) -> None:
    result = epcg("plan", job(crashing, "SAMPLED"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    (line,) = errors(result.stderr)
    assert "timing the evaluator of crashing:SAMPLED" in line and "killed its process (SIGSEGV)" in line


def test_a_kernel_that_crashes_at_rank_zero_is_one_line_in_plan_and_check(crashing: Path) -> None:
    planned = epcg("plan", job(crashing, "AT_ZERO"))
    assert planned.returncode == 1 and "Traceback" not in planned.stderr
    (line,) = errors(planned.stderr)
    assert "timing the evaluator of crashing:AT_ZERO" in line and "killed its process (SIGSEGV)" in line
    checked = epcg("run", job(crashing, "AT_ZERO"), "--out", str(crashing / "run"), "--check", "--workers", "1")
    assert checked.returncode == 1
    assert errors(checked.stderr) == ["epcg: error: --check: evaluator of at-zero failed at rank 0: "
                                      "IndexError: index is out of bounds"]


def test_data_that_does_not_match_the_evaluator_is_one_line_before_any_task(crashing: Path) -> None:
    result = epcg("run", job(crashing, "MISMATCH"), "--out", str(crashing / "run"), "--workers", "1")
    assert result.returncode == 2
    (line,) = errors(result.stderr)
    assert line.startswith("epcg: error: evaluator crashing.needs_an_array of mismatch does not compile with numba")
    assert len(result.stderr.strip().splitlines()) == 1 and not (crashing / "run").exists()


@pytest.mark.slow
def test_workers_that_cannot_start_end_the_run_in_one_line(crashing: Path) -> None:
    cluster = crashing / "tiny.toml"
    cluster.write_text('kind = "local"\nworkers = 2\nmemory_limit = "50MB"\ndashboard_address = ":0"\n')
    began = time.monotonic()
    result = epcg("run", job(crashing, "CRASH"), "--out", str(crashing / "run"), "--cluster", str(cluster),
                  "--force", timeout=180)
    assert time.monotonic() - began < 60
    assert result.returncode == 1 and "Traceback" not in result.stderr
    (line,) = errors(result.stderr)
    assert "no Dask worker has been alive" in line or "failed to start" in line or "workers died" in line


def test_a_plain_function_is_told_to_use_a_family_decorator(examples_on_path: None, tmp_path: Path) -> None:
    path = tmp_path / "job.toml"
    path.write_text('name = "plain"\nspace = "peg_solitaire:peg_space"\n')
    result = epcg("plan", str(path))
    assert result.returncode == 2
    assert "is a plain function, not an epcg space" in result.stderr and "@retrograde_family" in result.stderr
