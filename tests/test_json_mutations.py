"""Every JSON file of a finished run, mutated (replaced whole, a value anywhere replaced, a key dropped,
truncated): reading the run answers right or says one line naming what is wrong, never a traceback.

The run is a small Fling! run with the files a submitted run also has (batch.json, allocations.json) and a
verification (verified.json). Readers: ``epcg status`` and ``epcg export`` in this process (click's runner),
and the API (``epcg.open``, ``table``, ``top``, ``best_boards``, ``boards``, ``summary``). A few examples per
file in the default run; many more with ``-m slow``."""

from __future__ import annotations

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

JOB = {"name": "small", "domain": "fling", "width": 4, "height": 4, "max_pieces": 4, "top_puzzles": 3}
BATCH = {"kind": "detached", "connect": {"cluster_file": None, "scheduler": None, "workers": 1,
                                          "threads_per_worker": None, "scheduler_file": None}}
ALLOCATIONS = {"allocations": [{"job": None, "pid": 1, "node": "here", "started_at": 1.0, "ended_at": 2.0,
                                "why": "finished"}], "next": None, "cancel": False, "base": 0}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The run, and what its readers answer when nothing is mutated."""
    out = tmp_path_factory.mktemp("mutations") / "run"
    epcg.run(JOB, out, serial=True, progress=False)
    assert CliRunner().invoke(main, ["verify", str(out), "--serial"]).exit_code == 0
    (out / "batch.json").write_text(json.dumps(BATCH))
    (out / "allocations.json").write_text(json.dumps(ALLOCATIONS))
    return out, answers(out)


def answers(out: Path) -> dict[str, Any]:
    run = epcg.open(out)
    return {"table": run.table().to_dict("records"), "top": str(run.top()),
            "best": [b.rank for b in run.best_boards()], "boards": sorted(b.rank for b in run.boards(3))}


def files(out: Path) -> list[str]:
    return sorted(str(p.relative_to(out)) for p in out.rglob("*.json") if "store.zarr" not in p.parts)


def paths(value: Any, at: tuple = ()) -> list[tuple]:
    """Every place in a JSON value (a key of a table, an index of a list), the whole value first."""
    found = [at]
    if isinstance(value, dict):
        for key, inner in value.items():
            found += paths(inner, at + (key,))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            found += paths(inner, at + (i,))
    return found


def mutated(text: str, data: st.DataObject) -> str:
    """``text`` (a JSON file) changed one way: replaced whole, one value replaced, one key dropped, cut short."""
    how = data.draw(st.sampled_from(["whole", "value", "drop", "truncate"]))
    if how == "truncate":
        return text[:data.draw(st.integers(0, max(len(text) - 1, 0)))]
    if how == "whole":
        return json.dumps(data.draw(json_values))
    value = json.loads(text)
    where = data.draw(st.sampled_from(paths(value)[1:] or [()]))
    if not where:
        return json.dumps(data.draw(json_values))
    parent = value
    for step in where[:-1]:
        parent = parent[step]
    if how == "drop":
        del parent[where[-1]]
    else:
        parent[where[-1]] = data.draw(json_values)
    return json.dumps(value)


def one_line(exc: BaseException) -> bool:
    return isinstance(exc, UserError) and "\n" not in str(exc) and bool(str(exc).strip())


def read_everything(copy: Path, name: str, expected: dict[str, Any]) -> None:
    """Every reader: a right answer or one line."""
    runner = CliRunner()
    for args in (["status", str(copy)], ["export", str(copy), "--out", str(copy / "x"), "--pictures", "none",
                                         "--limit", "5"]):
        result = runner.invoke(main, args)
        assert isinstance(result.exception, (SystemExit, type(None))), (name, args, result.exc_info)
        assert "Traceback" not in result.output, (name, args, result.output)
        if result.exit_code:
            errors = [line for line in result.output.splitlines() if line.startswith("epcg: error:")]
            assert len(errors) == 1, (name, args, result.output)
    try:
        run = epcg.open(copy)
        got = {"table": run.table().to_dict("records"), "top": str(run.top()),
               "best": [b.rank for b in run.best_boards()], "boards": sorted(b.rank for b in run.boards(3))}
        run.summary  # noqa: B018 - read it too
    except Exception as exc:  # noqa: BLE001 - what is asserted: only one-line UserErrors come out
        assert one_line(exc), (name, type(exc).__name__, exc)
        return
    if name != "results.json":  # results.json is not sealed: a value of the right shape is read as written
        assert got == expected, name  # boards as a set: a layer whose fill is not vouched is read by its orbits


def check(finished: tuple[Path, dict[str, Any]], data: st.DataObject) -> None:
    out, expected = finished
    name = data.draw(st.sampled_from(files(out)))
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "run"
        shutil.copytree(out, copy, ignore=shutil.ignore_patterns("x", "export"))
        target = copy / name
        target.write_text(mutated(target.read_text(), data))
        read_everything(copy, name, expected)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_mutated_json_file_is_one_line_or_the_right_answer(finished, data) -> None:
    check(finished, data)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_many_mutated_json_files(finished, data) -> None:
    check(finished, data)
