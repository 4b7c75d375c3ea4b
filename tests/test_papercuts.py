"""Small things a new user tripped over: a note about a cap they never asked for, a warning on every run in a
notebook without ipywidgets."""

from __future__ import annotations

import sys
import tomllib
import warnings

import pytest

from epcg.games.witness.scans import Config, notes
from epcg.runtime import progress

from .conftest import ROOT


def test_the_shipped_5x5_cap_says_nothing_when_the_rows_are_smaller() -> None:
    data = tomllib.loads((ROOT / "jobs" / "witness-must-cross.toml").read_text())
    assert notes(Config(**{**data, "rows": ["4x4:5"]})) == []
    assert notes(Config(**data)) == []
    slip = notes(Config(**{**data, "rows": ["4x5:3"], "solution_counts": {"5x4": 10}}))
    assert slip == ["solution_counts names 5x4, the board of no row: it caps nothing (the rows' boards: 4x5)"]


def test_no_notebook_bar_without_ipywidgets(monkeypatch: pytest.MonkeyPatch) -> None:
    from tqdm.std import tqdm as text_bar

    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import ipywidgets raises ImportError
    assert progress.bar_class() is text_bar
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # tqdm.auto's notebook bar would warn "IProgress not found" here
        progress.bar_class()(total=3, disable=True).close()
