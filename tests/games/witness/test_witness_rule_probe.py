"""Probing a rules panel: its text read back to its row and rank, its solutions counted on the spot, bad text
refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

import epcg
from epcg.games.witness.domain.rules import COLOUR_NAMES, RuleRow, decode, encode
from epcg.games.witness.rule_probe import _panel, parse
from epcg.runtime.errors import InvalidValue
from tests.conftest import epcg as epcg_cli
from tests.reference import witness_rules as reference


def _text(row: RuleRow, rank: int) -> str:
    """A placement written in the probe's notation, from its decoded parts."""
    p, g = decode(row, rank), row.geometry
    parts = [g.position_name(h) for h in p.hexagons]
    parts += ["gap " + g.position_name(g.num_vertices + e).split(" ", 1)[1] for e in p.gaps]
    parts += ["start ({},{})".format(*g.vertex_xy(v)) for v in p.starts]
    parts += ["exit ({},{})".format(*g.vertex_xy(v)) for v in p.exits]
    for cell, kind, value in p.cell_symbols:
        if kind in ("square", "star"):
            shown = COLOUR_NAMES[value]
        elif kind in ("tetris", "negative"):
            shown = (row.pieces if kind == "tetris" else row.negative_pieces)[value]
        else:
            shown = "" if kind == "elimination" else str(value)
        parts.append("cell ({},{}) {} {}".format(*g.cell_xy(cell), kind, shown).strip())
    return f"{row.width}x{row.height}: " + ", ".join(parts)


ROWS = [RuleRow(width=2, height=2, hexagons=1, gaps=1, exits="border"),
        RuleRow(width=2, height=2, triangles=1, squares=1, stars=1, colours=3),
        RuleRow(width=2, height=2, eliminations=1, tetris=1, negatives=1, pieces=("#", "##"), starts="corners")]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_every_placement_written_out_reads_back_to_its_rank(row: RuleRow) -> None:
    for rank in range(row.max_rank):
        width, height, parts = parse(_text(row, rank), None)
        assert encode(row, _panel(row, parts)) == rank


BAD = {
    "a triangle of 4": ("cell (0,0) triangle 4", "a triangle shows 1, 2 or 3"),
    "a square without colour": ("cell (0,0) square", "a square has a colour"),
    "a colour nobody has": ("cell (0,0) star pink", "a star has a colour"),
    "an unknown symbol": ("cell (0,0) circle", "'circle' is not a cell symbol"),
    "a cell off the board": ("cell (3,0) triangle 1", "a cell is cell (x,y) SYMBOL"),
    "an edge that is no edge": ("gap (0,0)-(1,1)", "an edge joins two neighbouring vertices"),
    "words between parts": ("cell (0,0) triangle 1 and vertex (1,1)", "'and' is not a part of a panel"),
    "a cell twice": ("cell (0,0) triangle 1, cell (0,0) triangle 2", "cell (0,0) is given twice"),
    "nothing": ("  ", "the panel is empty"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_text_is_refused_naming_the_problem(name: str) -> None:
    text, said = BAD[name]
    with pytest.raises(InvalidValue, match=said.replace("(", r"\(").replace(")", r"\)")):
        parse(text, (3, 3))


@pytest.mark.slow
def test_probe_of_a_rules_run(tmp_path: Path) -> None:
    """Every 17th placement of a row probed: the rank, the reference's solution count; a stored panel is kept;
    a panel no row places, and bad text on the command line, are one line with exit status 2."""
    row = RuleRow(width=3, height=3, triangles=2)
    out = tmp_path / "r"
    run = epcg.run({"name": "r", "domain": "witness", "kind": "rules", "rows": [{"size": "3x3", "triangles": 2}]},
                   out, progress=False, report=False)
    for rank in range(0, row.max_rank, 17):
        facts = run.probe(_text(row, rank)).to_dict()
        assert facts["rank"] == rank
        assert facts["solutions"] == len(reference.solution_paths(decode(row, rank), row))
    first = next(iter(run.panels()))
    probed = run.probe(_text(row, first.rank))
    assert probed.facts["kept"] and probed.facts["solutions"] == 4 and "kept by the run: yes" in str(probed)
    with pytest.raises(InvalidValue, match="no row of this run places that panel"):
        run.probe("cell (0,0) triangle 1")
    for text in ("cell (0,0) triangle 4", "cell (0,0) triangle 1"):
        result = epcg_cli("probe", str(out), text)
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
