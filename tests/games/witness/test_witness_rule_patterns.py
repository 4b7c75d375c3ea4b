"""Rules panels grouped by pattern: the same set of solving paths up to the row's symmetries, checked against
maps of the board written out here and against the must-cross patterns on single paths."""

from __future__ import annotations

import itertools

import pytest

import epcg
from epcg.games.witness.domain.geometry import Geometry
from epcg.games.witness.domain.paths import paths_for
from epcg.games.witness.domain.patterns import pattern_key
from epcg.games.witness.domain.rule_patterns import pattern
from epcg.games.witness.domain.rules import RuleRow, decode
from tests.reference import witness_rules as reference


def _board_maps(w: int, h: int) -> list:
    """Every map of the board onto itself as a function of ``(x, y)``: the dihedral group of the rectangle."""
    turns = [lambda x, y: (x, y), lambda x, y: (w - x, h - y)]
    if w == h:
        turns += [lambda x, y: (w - y, x), lambda x, y: (y, w - x)]
    return turns + [lambda x, y, f=f: f(w - x, y) for f in turns]


def _images(row: RuleRow, solved: set[tuple]) -> list[frozenset]:
    """The solution sets ``solved`` (paths as ``(x, y)`` tuples) becomes under each map that keeps the row's
    start and exit places (paths as they are) or swaps them (paths reversed)."""
    g = row.geometry
    starts = {g.vertex_xy(v) for v in row.start_places}
    exits = {g.vertex_xy(v) for v in row.exit_places}
    out = []
    for f in _board_maps(row.width, row.height):
        s2, x2 = {f(*p) for p in starts}, {f(*p) for p in exits}
        if (s2, x2) == (starts, exits):
            out.append(frozenset(tuple(f(*p) for p in path) for path in solved))
        elif (s2, x2) == (exits, starts):
            out.append(frozenset(tuple(f(*p) for p in reversed(path)) for path in solved))
    return out


@pytest.mark.parametrize("row", [RuleRow(width=2, height=2, triangles=1, exits="border"),
                                 RuleRow(width=3, height=2, triangles=1),
                                 RuleRow(width=2, height=2, starts="corners", exits="corners")],
                         ids=lambda r: r.name)
def test_two_panels_share_a_pattern_exactly_when_a_symmetry_maps_their_solutions(row: RuleRow) -> None:
    g = row.geometry
    solved, keys = [], []
    for rank in range(row.max_rank):
        paths = reference.solution_paths(decode(row, rank), row)
        solved.append({tuple(p) for p in paths})
        keys.append(pattern(g, row.start_places, row.exit_places,
                            [tuple(g.vertex(x, y) for x, y in p) for p in paths]))
    assert len(set(keys)) > 1
    for a, b in itertools.combinations(range(row.max_rank), 2):
        same = frozenset(solved[b]) in _images(row, solved[a])
        assert (keys[a] == keys[b]) == same, (a, b)


@pytest.mark.parametrize("width, height", [(3, 3), (3, 2)])
def test_single_paths_group_as_the_must_cross_patterns_do(width: int, height: int) -> None:
    """On the board's own start and goal, one path's pattern here and its must-cross pattern (written as
    moves) split the paths into the same classes."""
    g = Geometry(width, height)
    paths = paths_for(width, height)
    ours, theirs = {}, {}
    for i in range(len(paths)):
        path = tuple(int(v) for v in paths.vertices[i, : int(paths.length[i]) + 1])
        ours.setdefault(pattern(g, (g.start,), (g.goal,), [path]), set()).add(i)
        theirs.setdefault(pattern_key(width, height, [paths.moves(i)]), set()).add(i)
    assert sorted(map(sorted, ours.values())) == sorted(map(sorted, theirs.values()))


@pytest.mark.slow
def test_distinct_patterns_of_a_rules_run(tmp_path) -> None:
    """A run's panels with distinct="patterns": one per pattern, copies adding up to every panel."""
    run = epcg.run({"name": "r", "domain": "witness", "kind": "rules",
                    "rows": [{"size": "3x3", "triangles": 2}]}, tmp_path / "r", progress=False, report=False)
    every = list(run.panels())
    firsts = list(run.panels(distinct="patterns"))
    assert sum(p.copies for p in firsts) == len(every) == 11
    assert len({p.pattern for p in firsts}) == len(firsts) < len(every)
    assert {p.pattern for p in every} == {p.pattern for p in firsts}
    with pytest.raises(epcg.runtime.errors.InvalidValue, match="distinct must be one of"):
        list(run.panels(distinct="orbits"))
