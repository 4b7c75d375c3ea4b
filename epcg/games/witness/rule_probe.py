"""One panel of the game's own symbols a designer drew, as a rules run sees it (``WitnessRun.probe``,
``epcg probe``).

A panel is written as parts separated by commas (vertices ``(x,y)``, y up;
cells by their lower left vertex): ``vertex (x,y)`` and ``edge (x,y)-(x,y)``
hexagons, ``gap (x,y)-(x,y)``, ``start (x,y)``, ``exit (x,y)``, and cell
symbols ``cell (x,y) triangle 2``, ``cell (x,y) square red``, ``cell (x,y)
star black``, ``cell (x,y) elimination``, ``cell (x,y) tetris ##/#.``,
``cell (x,y) negative #``; ``WxH:`` first names the board when the run has
rows of several sizes. A start or exit may be left out where the row fixes
it. The panel's row is the first of the run's rows of that board that places
exactly those symbols there; its solutions are counted on the spot.

>>> parse("3x3: cell (0,0) triangle 2, edge (0,1)-(1,1), exit (3,3)", None)[2]
{'hexagons': [19], 'gaps': [], 'starts': [], 'exits': [15], 'cells': {0: ('triangle', 2)}}
>>> parse("cell (0,0) circle", (3, 3))
Traceback (most recent call last):
...
epcg.runtime.errors.InvalidValue: 'circle' is not a cell symbol: triangle N, square COLOUR, star COLOUR, elimination, tetris PIECE or negative PIECE
"""

from __future__ import annotations

import re
from typing import Any

from epcg.api.probe import Probe
from epcg.games.witness.domain.geometry import Geometry
from epcg.games.witness.domain.pieces import parse_piece
from epcg.games.witness.domain.rules import COLOUR_NAMES, Panel, RuleRow, encode
from epcg.games.witness.found import stored
from epcg.runtime.errors import InvalidValue

SIZE = re.compile(r"\s*(\d+)\s*x\s*(\d+)\s*:")
POINT = r"\(\s*(\d+)\s*,\s*(\d+)\s*\)"
PART = re.compile(rf"(vertex|edge|gap|start|exit|cell)\s*{POINT}(?:\s*-\s*{POINT})?(?:\s+([a-z]+)(?:\s+([#./0-9a-z]+))?)?")


def parse(text: str, size: tuple[int, int] | None) -> tuple[int, int, dict[str, Any]]:
    """``(width, height, parts)`` of the panel ``text``: hexagon positions, gap edges, start and exit vertices,
    and ``cells``: cell -> ``(symbol, value)`` (a count, a colour index or a piece); an InvalidValue naming the
    first problem."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidValue("the panel is empty: give its parts, as 'cell (0,0) triangle 2, exit (3,3)'")
    match = SIZE.match(text)
    if match:
        size, text = (int(match[1]), int(match[2])), text[match.end():]
    if size is None:
        raise InvalidValue("name the board first, as in '4x4: cell (0,0) triangle 2' (this run has rows of several "
                           "sizes)")
    g = Geometry(*size)
    parts: dict[str, Any] = {"hexagons": [], "gaps": [], "starts": [], "exits": [], "cells": {}}
    at = 0
    for item in PART.finditer(text):
        _separator(text[at:item.start()])
        at = item.end()
        _part(g, item, parts)
    _separator(text[at:])
    return g.width, g.height, parts


def _separator(between: str) -> None:
    if between.strip(" ,;\n\t"):
        raise InvalidValue(f"{between.strip(' ,;')!r} is not a part of a panel: write vertex (x,y), edge "
                           "(x,y)-(x,y), gap (x,y)-(x,y), start (x,y), exit (x,y) or cell (x,y) SYMBOL, separated "
                           "by commas")


def _vertex(g: Geometry, x: int, y: int, part: str) -> int:
    if not (0 <= x <= g.width and 0 <= y <= g.height):
        raise InvalidValue(f"{part!r} is off the {g.width}x{g.height} panel: vertices run (0,0) to "
                           f"({g.width},{g.height})")
    return g.vertex(x, y)


def _part(g: Geometry, item: re.Match, parts: dict[str, Any]) -> None:
    what, part = item[1], item[0]
    x, y = int(item[2]), int(item[3])
    if what == "cell":
        if item[4] is not None or not (0 <= x < g.width and 0 <= y < g.height):
            raise InvalidValue(f"{part!r}: a cell is cell (x,y) SYMBOL, (0,0) to ({g.width - 1},{g.height - 1})")
        cell = g.cell(x, y)
        if cell in parts["cells"]:
            raise InvalidValue(f"cell ({x},{y}) is given twice")
        parts["cells"][cell] = _symbol(item[6], item[7], part)
        return
    if item[6] is not None:
        raise InvalidValue(f"{part!r}: only a cell has a symbol")
    if what in ("vertex", "start", "exit"):
        if item[4] is not None:
            raise InvalidValue(f"{part!r}: a {what} is one vertex, {what} (x,y)")
        pos = _vertex(g, x, y, part)
        key = {"vertex": "hexagons", "start": "starts", "exit": "exits"}[what]
    else:
        ends = (x, y), (int(item[4] or -9), int(item[5] or -9))
        if item[4] is None or abs(ends[0][0] - ends[1][0]) + abs(ends[0][1] - ends[1][1]) != 1:
            raise InvalidValue(f"{part!r}: an edge joins two neighbouring vertices, as {what} (0,1)-(1,1)")
        edge = g.edge_between(*(_vertex(g, vx, vy, part) for vx, vy in ends))
        pos, key = (g.num_vertices + edge, "hexagons") if what == "edge" else (edge, "gaps")
    if pos in parts[key]:
        raise InvalidValue(f"{part!r} is given twice")
    parts[key].append(pos)


def _symbol(name: str | None, value: str | None, part: str) -> tuple[str, Any]:
    if name == "triangle":
        if value not in ("1", "2", "3"):
            raise InvalidValue(f"{part!r}: a triangle shows 1, 2 or 3")
        return name, int(value)
    if name in ("square", "star"):
        if value not in COLOUR_NAMES:
            raise InvalidValue(f"{part!r}: a {name} has a colour, one of {', '.join(COLOUR_NAMES)}")
        return name, COLOUR_NAMES.index(value)
    if name == "elimination" and value is None:
        return name, 0
    if name in ("tetris", "negative") and value:
        try:
            return name, "/".join(parse_piece(value).rows)
        except ValueError as e:
            raise InvalidValue(f"{part!r}: {e}") from None
    raise InvalidValue(f"{name!r} is not a cell symbol: triangle N, square COLOUR, star COLOUR, elimination, "
                       "tetris PIECE or negative PIECE")


def _panel(row: RuleRow, parts: dict[str, Any]) -> Panel:
    """The placement of ``row`` the parts make; a ValueError naming what the row cannot place."""
    ends = []
    for what, places, count in (("start", row.start_places, row.start_count),
                                ("exit", row.exit_places, row.exit_count)):
        given = tuple(sorted(parts[what + "s"]))
        if not given and len(places) == count:
            given = places
        ends.append(given)
    pieces = {"tetris": row.pieces, "negative": row.negative_pieces}
    symbols = []
    for cell, (kind, value) in sorted(parts["cells"].items()):
        if kind in pieces:
            shapes = ["/".join(parse_piece(t).rows) for t in pieces[kind]]
            if value not in shapes:
                raise ValueError(f"row {row.name} has no {kind} piece {value}")
            value = shapes.index(value)
        symbols.append((cell, kind, value))
    return Panel(row.width, row.height, ends[0], ends[1], tuple(sorted(parts["gaps"])),
                 tuple(sorted(parts["hexagons"])), tuple(symbols))


def probe(run: Any, text: str) -> Probe:
    """What ``run`` (a rules run) knows of the panel ``text``."""
    from epcg.games.witness.rule_found import RulesPanel
    from epcg.games.witness.rule_scans import decoded

    rows = list(zip(run.config.parsed_rows(), run.results["rows"]))
    sizes = {(r.width, r.height) for r, _ in rows}
    width, height, parts = parse(text, next(iter(sizes)) if len(sizes) == 1 else None)
    refusals = []
    for row, res in rows:
        if (row.width, row.height) != (width, height):
            continue
        try:
            rank = encode(row, _panel(row, parts))
        except ValueError as e:
            refusals.append(str(e))
            continue
        found = RulesPanel(row, rank)
        facts = decoded(row, rank)
        count = facts["solutions"]
        kept = count == res["min_solutions"] and any(r == rank for r, _ in stored(run.stored, row))
        facts.update({"row": row.name, "solvable": count > 0, "longest_solution": found.longest if count else None,
                      "pattern": found.pattern, "kept": kept})
        verdict = "not solvable" if count == 0 else "uniquely solvable" if count == 1 else \
            f"solvable, {count:,} solutions"
        lines = [f"panel of row {row.name}, rank {rank:,}",
                 verdict + (f", the longest {found.longest} edges: {'-'.join(facts['solution'])}" if count else ""),
                 f"kept by the run: {'yes, at' if kept else 'no; the row keeps those at'} the row's fewest "
                 f"solutions ({res['min_solutions']:,})"]
        return Probe(text.strip(), facts, lines, "", found.figure)
    if not refusals:
        raise InvalidValue(f"this run has no row of {width}x{height} panels; its rows are "
                           f"{', '.join(r.name for r, _ in rows)}")
    raise InvalidValue(f"no row of this run places that panel: {'; '.join(refusals)}")
