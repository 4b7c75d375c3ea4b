"""results.json of every kind a built-in game runs: a finished run reads as finished, and the file mutated
(replaced whole, a value replaced, a key dropped, cut short) is read right or refused in one line naming it,
never a traceback, by ``epcg status``, ``epcg export`` and the API (``table``, ``found``, ``summary``, and each
kind's own readers). Fling!'s every JSON file is mutated in test_json_mutations."""

from __future__ import annotations

import itertools
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import epcg
from epcg.cli import main
from epcg.runtime.errors import UserError

from .test_json_mutations import mutated, one_line

JOBS: dict[str, dict[str, Any]] = {
    "must-cross": {"domain": "witness", "kind": "must-cross", "rows": ["3x3:2", "3x3:3"], "figures_per_row": 2},
    "joint": {"domain": "witness", "kind": "joint", "rows": ["3x3:1+2"], "figures_per_row": 2},
    "regions": {"domain": "witness", "kind": "regions", "rows": ["3x3:3"], "figures_per_row": 2},
    "paths": {"domain": "witness", "kind": "paths", "rows": ["2x2", "3x3"]},
    "rules": {"domain": "witness", "kind": "rules", "figures_per_row": 2, "keep": [{"solutions": 4}],
              "rows": [{"size": "3x3", "triangles": 2}, {"size": "2x2", "stars": 2, "colours": 1}]},
    "unique-cover": {"domain": "witness", "kind": "unique-cover", "boards": ["3x3"], "tasks": 2, "figures": 2},
    "triple": {"domain": "witness", "kind": "triple", "width": 3, "height": 2, "pieces": 2, "tasks": 2,
               "reported": 4},
    "dwp": {"domain": "dwp", "runs": 2, "mating_events": 20,
            "experiments": [{"id": 1, "population": 10, "mnm": 1, "states": 4, "grid": [30, 30], "max_rooms": 40},
                            {"id": 2, "population": 10, "mnm": 3, "states": 4, "grid": [30, 30], "max_rooms": 40}]},
}
SLOW = {"triple", "dwp"}
"""Kinds whose small run compiles long enough to keep their cases in -m slow."""


def readers(run: Any) -> dict[str, Any]:
    """What a user reads of a run: the table, the first objects found (or the line refusing them: a paths run
    keeps none), the summary, and the kind's own."""
    try:
        found: Any = [str(f) for f in itertools.islice(run.found(), 5)]
    except UserError as exc:
        found = f"refused: {exc}"
    got = {"table": run.table().to_dict("records"), "found": found, "summary": run.summary}
    if hasattr(run, "maps"):
        got["maps"] = [m.fitness for m in run.maps()]
    return got


@pytest.fixture(scope="module", params=[pytest.param(kind, marks=[pytest.mark.slow] * (kind in SLOW))
                                        for kind in sorted(JOBS)])
def finished(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp(request.param) / "run"
    epcg.run({"name": request.param, **JOBS[request.param]}, out, serial=True, progress=False)
    return out, readers(epcg.open(out))


def test_a_finished_run_of_every_kind_reads_as_finished(finished) -> None:
    out, _ = finished
    status = CliRunner().invoke(main, ["status", str(out)])
    assert status.exit_code == 0 and status.output.splitlines()[0].endswith(", finished"), status.output
    assert epcg.open(out).results == json.loads((out / "results.json").read_text())


def _rows_key(results: dict[str, Any]) -> str:
    return "boards" if "boards" in results else "rows"


def _one_row_fewer(results: dict[str, Any]) -> None:
    results[_rows_key(results)].pop()


def _no_rows(results: dict[str, Any]) -> None:
    del results[_rows_key(results)]


@pytest.mark.parametrize("change, said", [(_one_row_fewer, "where the job has"), (_no_rows, "Field required")])
def test_a_row_missing_or_no_rows_is_named(finished, tmp_path: Path, change, said: str) -> None:
    """Readers pair the job's rows with the file's: one row fewer is a damaged file, not a shorter table."""
    out, _ = finished
    copy = tmp_path / "run"
    shutil.copytree(out, copy)
    results = json.loads((copy / "results.json").read_text())
    change(results)
    (copy / "results.json").write_text(json.dumps(results))
    with pytest.raises(Exception) as refused:
        epcg.open(copy).results  # noqa: B018
    assert one_line(refused.value) and "results.json is damaged" in str(refused.value), refused.value
    assert said in str(refused.value), refused.value


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_mutated_results_file_is_one_line_or_the_right_answer(finished, data) -> None:
    out, expected = finished
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "run"
        shutil.copytree(out, copy)
        target = copy / "results.json"
        target.write_text(mutated(target.read_text(), data))
        runner = CliRunner()
        for args in (["status", str(copy)], ["export", str(copy), "--out", str(copy / "x"), "--pictures", "none",
                                             "--limit", "5"]):
            result = runner.invoke(main, args)
            assert isinstance(result.exception, (SystemExit, type(None))), (args, result.exc_info)
            if result.exit_code:
                errors = [line for line in result.output.splitlines() if line.startswith("epcg: error:")]
                assert len(errors) == 1, (args, result.output)
        try:
            readers(epcg.open(copy))
        except Exception as exc:  # noqa: BLE001 - what is asserted: only one-line UserErrors come out
            assert one_line(exc), (type(exc).__name__, exc)
