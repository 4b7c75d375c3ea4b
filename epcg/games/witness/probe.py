"""One Witness panel a designer drew, as a run sees it (``WitnessRun.probe``, ``epcg probe``).

A panel is written in docs/notation.md's names, separated by commas: hexagons
``vertex (x,y)`` and ``edge (x,y)-(x,y)``, squares ``cell (x,y) black`` or
``white``; ``WxH:`` first names the board when the run has rows of several
sizes. The panel's row is the run's row of that board with that many
hexagons (and squares); its solutions are counted on the spot (every path of
the board, milliseconds), and the run says whether it kept it.

>>> from epcg.games.witness.domain.geometry import Geometry
>>> parse_panel("3x3: vertex (1,0), edge (0,1)-(1,1), edge (1,1)-(1,2)", None)
(3, 3, (1, 19, 33), (), ())
>>> parse_panel("vertex (1,0), vertex (1,0)", (3, 3))
Traceback (most recent call last):
...
epcg.runtime.errors.InvalidValue: vertex (1,0) is given twice
"""

from __future__ import annotations

import re
from typing import Any

from epcg.api.probe import Probe
from epcg.games.witness.domain.geometry import Geometry
from epcg.games.witness.domain.paths import paths_for
from epcg.games.witness.found import DRAWN_SOLUTIONS, WitnessPuzzle, stored
from epcg.games.witness.domain.puzzles import Puzzle, encode
from epcg.runtime.errors import InvalidValue

SIZE = re.compile(r"\s*(\d+)\s*x\s*(\d+)\s*:")
ITEM = re.compile(r"(vertex|edge|cell)\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)(?:\s*-\s*\(\s*(\d+)\s*,\s*(\d+)\s*\))?"
                  r"(?:\s+(black|white))?")


def parse_panel(text: str, size: tuple[int, int] | None) -> tuple[int, int, tuple[int, ...], tuple[int, ...],
                                                                  tuple[int, ...]]:
    """``(width, height, hexagon positions, square cells, their colours)`` of the panel ``text`` (the board's
    size from its ``WxH:`` or ``size``); an InvalidValue naming the first problem."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidValue("the panel is empty: give its hexagons (vertex (x,y), edge (x,y)-(x,y)) and squares "
                           "(cell (x,y) black|white), separated by commas")
    match = SIZE.match(text)
    if match:
        size, text = (int(match[1]), int(match[2])), text[match.end():]
    if size is None:
        raise InvalidValue("name the board first, as in '4x4: vertex (1,0), …' (this run has rows of several sizes)")
    g = Geometry(*size)
    cross: list[int] = []
    squares: dict[int, int] = {}
    items, at = [], 0
    for item in ITEM.finditer(text):
        items.append(item)
        _separator(text[at:item.start()])
        at = item.end()
    _separator(text[at:])
    for item in items:
        part = item[0]
        what, x, y = item[1], int(item[2]), int(item[3])
        name = part.split(" black")[0].split(" white")[0]
        if what == "cell":
            if not (0 <= x < g.width and 0 <= y < g.height):
                raise InvalidValue(f"{name} is off the {g.width}x{g.height} panel: cells run (0,0) to "
                                   f"({g.width - 1},{g.height - 1})")
            if item[6] is None or item[4] is not None:
                raise InvalidValue(f"{part!r}: a square is cell (x,y) black or cell (x,y) white")
            if g.cell(x, y) in squares:
                raise InvalidValue(f"{name} is given twice")
            squares[g.cell(x, y)] = int(item[6] == "white")
            continue
        if item[6] is not None:
            raise InvalidValue(f"{part!r}: a hexagon has no colour")
        ends = [(x, y)] + ([(int(item[4]), int(item[5]))] if item[4] is not None else [])
        for vx, vy in ends:
            if not (0 <= vx <= g.width and 0 <= vy <= g.height):
                raise InvalidValue(f"{name} is off the {g.width}x{g.height} panel: vertices run (0,0) to "
                                   f"({g.width},{g.height})")
        if what == "vertex":
            if len(ends) != 1:
                raise InvalidValue(f"{part!r}: a vertex is one point, vertex (x,y)")
            pos = g.vertex(x, y)
        else:
            if len(ends) != 2 or abs(ends[0][0] - ends[1][0]) + abs(ends[0][1] - ends[1][1]) != 1:
                raise InvalidValue(f"{part!r}: an edge joins two neighbouring vertices, as edge (0,1)-(1,1)")
            pos = g.num_vertices + g.edge_between(g.vertex(*ends[0]), g.vertex(*ends[1]))
        if pos in cross:
            raise InvalidValue(f"{g.position_name(pos)} is given twice")
        cross.append(pos)
    if not cross and not squares:
        raise InvalidValue("the panel has no hexagon and no square")
    cells = tuple(sorted(squares))
    colours = tuple(squares[c] for c in cells)
    if colours and colours[0]:  # the same regions separate: the lowest square black, as ranks have it
        colours = tuple(1 - c for c in colours)
    return g.width, g.height, tuple(sorted(cross)), cells, colours


def _separator(between: str) -> None:
    """Refuse anything but commas and spaces between a panel's parts."""
    if between.strip(" ,;\n\t"):
        raise InvalidValue(f"{between.strip(' ,;')!r} is not a hexagon or a square: write vertex (x,y), "
                           "edge (x,y)-(x,y) or cell (x,y) black|white, separated by commas")


def probe(run: Any, text: str) -> Probe:
    """What ``run`` (a must-cross, regions or joint WitnessRun) knows of the panel ``text``."""
    kind = run.config.kind
    if kind not in ("must-cross", "regions", "joint"):
        raise InvalidValue(f"a {kind} run holds no panels to probe against; probe a must-cross, regions or "
                           "joint run")
    rows = list(zip(run.config.parsed_rows(), run.results["rows"]))
    sizes = {(r.width, r.height) for r, _ in rows}
    width, height, cross, cells, colours = parse_panel(text, next(iter(sizes)) if len(sizes) == 1 else None)
    k = {"must-cross": (len(cross),), "regions": (len(cells),), "joint": (len(cross), len(cells))}[kind]
    if kind == "must-cross" and cells or kind == "regions" and cross:
        raise InvalidValue(f"a {kind} run's panels hold {'hexagons' if kind == 'must-cross' else 'squares'} only")
    match = [(r, res) for r, res in rows if (r.width, r.height, tuple(r.k)) == (width, height, k)]
    if not match:
        raise InvalidValue(f"this run has no row of {width}x{height} panels with k = {'+'.join(map(str, k))}; its "
                           f"rows are {', '.join(r.name for r, _ in rows)}")
    row, res = match[0]
    puzzle = Puzzle(width, height, cross, cells, colours)
    rank = encode(kind, puzzle)
    found = WitnessPuzzle(kind, width, height, row.k, rank, row=row.name)
    count = found.solution_count
    g, paths = puzzle.geometry, paths_for(width, height)
    names = [g.position_name(p) for p in cross] + ["cell ({},{}) {}".format(*g.cell_xy(c), "white" if o else "black")
                                                   for c, o in zip(cells, colours)]
    facts: dict[str, Any] = {"row": row.name, "rank": rank, "orbit": found.orbit, "pattern": found.pattern,
                             "solvable": count > 0, "solutions": count,
                             "longest_solution": found.longest if count else None}
    kept = count == res["min_solutions"] and any(r == rank for r, _ in stored(run.stored, row))
    facts["kept"] = kept
    verdict = "not solvable" if count == 0 else "uniquely solvable" if count == 1 else f"solvable, {count:,} solutions"
    lines = [f"panel {', '.join(names)}: row {row.name}, rank {rank:,} (its orbit's lowest {found.orbit:,})",
             verdict + (f", the longest {found.longest} edges" if count else ""),
             f"kept by the run: {'yes, at the row' if kept else 'no; the row keeps'}'s fewest solutions "
             f"({res['min_solutions']:,})"]
    solutions = list(found._solution_paths[:DRAWN_SOLUTIONS])
    facts["solution"] = [paths.moves(int(s)) for s in solutions]
    picture = "\n\n".join(f"solution {i} of {count:,}: {paths.moves(int(s))}\n" +
                          text_panel(g, cross, cells, colours, paths.path(int(s)))
                          for i, s in enumerate(solutions, 1))
    return Probe(", ".join(names), facts, lines, picture or text_panel(g, cross, cells, colours, ()), found.figure)


def text_panel(g: Geometry, cross: tuple[int, ...], cells: tuple[int, ...], colours: tuple[int, ...],
               path: tuple[int, ...]) -> str:
    """The panel as text, top row first: ``+`` a vertex, ``#`` the path, ``x`` a hexagon (``X`` on the path),
    ``b``/``w`` a square, ``S`` the start, ``G`` the goal.

    >>> print(text_panel(Geometry(2, 1), (1,), (1,), (0,), (0, 1, 2, 5)))
    +   +   G
          b #
    S###X####
    """
    rows, cols = 2 * g.height + 1, 2 * g.width + 1
    canvas = [[" "] * cols for _ in range(rows)]
    at = lambda x, y: (2 * (g.height - y), 2 * x)  # noqa: E731 - a vertex's place on the canvas
    for v in range(g.num_vertices):
        r, c = at(*g.vertex_xy(v))
        canvas[r][c] = "+"
    for a, b in zip(path, path[1:]):
        (ra, ca), (rb, cb) = at(*g.vertex_xy(a)), at(*g.vertex_xy(b))
        canvas[ra][ca] = canvas[rb][cb] = canvas[(ra + rb) // 2][(ca + cb) // 2] = "#"
    for p in cross:
        if p < g.num_vertices:
            r, c = at(*g.vertex_xy(p))
        else:
            (ra, ca), (rb, cb) = (at(*g.vertex_xy(v)) for v in g.edge_vertices(p - g.num_vertices))
            r, c = (ra + rb) // 2, (ca + cb) // 2
        canvas[r][c] = "X" if canvas[r][c] == "#" else "x"
    for cell, colour in zip(cells, colours):
        x, y = g.cell_xy(cell)
        canvas[2 * (g.height - y) - 1][2 * x + 1] = "w" if colour else "b"
    for v, mark in ((g.start, "S"), (g.goal, "G")):
        r, c = at(*g.vertex_xy(v))
        canvas[r][c] = mark
    return "\n".join("".join(ch if c % 2 == 0 else WIDE.get(ch, f" {ch} ") for c, ch in enumerate(row)).rstrip()
                     for row in canvas)


WIDE = {"#": "###", "X": "#X#"}
"""Between two vertices a character is drawn three wide, so the panel looks square in a terminal."""
