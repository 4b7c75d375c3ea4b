"""Every filter the API accepts (the keyword arguments of each run class's listing method) has its line in the
class's WHERE and in docs/filters.md, whose table is the one the code makes."""

from __future__ import annotations

from collections.abc import Iterator

from epcg.api import filters
from epcg.api.runs import Run

from .conftest import ROOT

DOC = ROOT / "docs" / "filters.md"


def test_every_filter_has_its_line_in_the_code_and_in_docs() -> None:
    assert filters.missing() == []
    text = DOC.read_text()
    assert filters.filter_table() in text, "docs/filters.md is stale: python -m epcg.api.filters prints its table"
    keys = filters.filter_keys()
    assert {kind for kind, _, _ in keys} == {"witness", "fling", "dwp", "scan", "retrograde"}
    for kind, method, key in keys:
        assert f"| {kind} | `{method}` | `{key}` |" in text
    assert ("witness", "puzzles", "length") in keys and "`--where length=longest`" in text


def test_a_filter_added_without_its_line_is_found(monkeypatch) -> None:
    class Boards(Run):
        FOUND = "boards"
        WHERE = {"boards": {"pieces": ("n", "a layer"), "gone": ("x", "a filter removed since")}}

        def boards(self, pieces: int | None = None, *, distinct: str | None = None) -> Iterator[object]:
            yield from ()

    monkeypatch.setattr(filters, "kinds_with_run_types", lambda: [("toy", Boards)])
    assert filters.missing() == ["toy: boards(distinct=) has no line in Boards.WHERE",
                                 "toy: Boards.WHERE describes boards(gone=), which takes no such filter"]
    assert "| toy | `boards` | `distinct` | ? | ? |" in filters.filter_table()


def test_the_export_command_points_at_the_table() -> None:
    from click.testing import CliRunner

    from epcg.cli import main

    assert "docs/filters.md" in CliRunner().invoke(main, ["export", "--help"]).output
