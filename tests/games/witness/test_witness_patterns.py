"""Witness patterns: the panel's symmetries map solutions onto solutions, and a pattern is one solution set."""

from __future__ import annotations

import json

import pytest

import epcg
from epcg.games.witness.domain.paths import paths_for
from epcg.games.witness.domain.patterns import _image, _moves, orbit, pattern_key, symmetries
from epcg.games.witness.domain.puzzles import decode, max_rank, solutions


def _solved(p) -> set[str]:
    paths = paths_for(p.width, p.height)
    return {paths.moves(int(i)) for i in solutions(paths, p)}


@pytest.mark.parametrize("kind, width, height, k", [("must-cross", 3, 3, 2), ("must-cross", 3, 2, 3),
                                                    pytest.param("must-cross", 3, 3, 3, marks=pytest.mark.slow),
                                                    ("regions", 3, 3, 3), ("joint", 2, 3, (1, 2))])
def test_every_symmetry_maps_the_solutions_of_every_panel(kind, width, height, k):
    """For every panel of the row and every symmetry, the image panel's solutions are the panel's solutions
    mapped: so panels of one orbit, and so of one pattern, have the same solution set under the mapping."""
    for rank in range(max_rank(kind, width, height, k)):
        p = decode(kind, width, height, k, rank)
        mine = _solved(p)
        for t in symmetries(width, height):
            assert _solved(_image(p, t)) == {_moves(s, t) for s in mine}, (rank, t)
        assert len({pattern_key(width, height, sorted(_solved(q))) for q in orbit(p)}) == 1


def test_a_half_turn_walks_the_path_backwards():
    assert _moves("RRUU", 1) == "UURR" and _moves("RRUU", 2) == "UURR" and _moves("RURU", 3) == "RURU"
    assert symmetries(4, 3) == (0, 1)


def test_distinct_patterns_of_a_run(tmp_path):
    """A 3x3 row listed with distinct="patterns": one puzzle per pattern, copies adding up to every puzzle, and
    every puzzle of a pattern has the first one's solutions under some symmetry."""
    out = tmp_path / "w"
    run = epcg.run({"name": "w", "domain": "witness", "kind": "must-cross", "rows": ["3x3:3"]}, out, progress=False,
                   report=False)
    every = list(run.puzzles())
    firsts = list(run.puzzles(distinct="patterns"))
    assert sum(p.copies for p in firsts) == len(every) and len(firsts) < len(every)
    row = run.results["rows"][0]
    assert row["patterns_at_min"] == len(firsts) and row["puzzles_at_min"] == len(every)
    table = next(line for line in run.summary.splitlines() if line.startswith("| 3x3 |"))
    assert f"| {len(every):,} | {len(firsts):,} |" in table
    by_key = {p.pattern: p for p in firsts}
    for p in every:
        first = by_key[p.pattern]
        mine = _solved(decode("must-cross", 3, 3, 3, p.rank))
        theirs = _solved(decode("must-cross", 3, 3, 3, first.rank))
        assert any({_moves(s, t) for s in mine} == theirs for t in symmetries(3, 3))
    orbits = list(run.puzzles(distinct="orbits"))
    assert len(firsts) <= len(orbits) <= len(every) and sum(p.copies for p in orbits) == len(every)
    with pytest.raises(epcg.runtime.errors.InvalidValue, match="distinct must be one of"):
        list(run.puzzles(distinct="shapes"))


@pytest.mark.slow
def test_the_longest_4x4_panels_with_6_hexagons_export_one_per_path_shape(tmp_path):
    """The acceptance: 4x4:6's longest single-solution panels use several paths but few shapes; the export with
    distinct=patterns gives one panel per shape, its copies adding up to all of them."""
    run = epcg.run({"name": "w", "domain": "witness", "kind": "must-cross", "rows": ["4x4:6"]}, tmp_path / "w",
                   progress=False, report=False)
    longest = list(run.puzzles("4x4:6", length="longest"))
    shapes = {pattern_key(4, 4, [p.solution]) for p in longest}
    assert len({p.solution for p in longest}) > len(shapes)
    done = run.export(tmp_path / "x", pictures=None, row="4x4:6", length="longest", distinct="patterns")
    lines = [json.loads(line) for line in done.read_text().splitlines()]
    assert {x["pattern"] for x in lines} == shapes and len(lines) == len(shapes)
    assert sum(x["copies"] for x in lines) == len(longest)
    assert run.results["rows"][0]["patterns_at_min"] == len(list(run.puzzles("4x4:6", distinct="patterns")))
