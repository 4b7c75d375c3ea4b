"""The Witness's rules written plainly in Python: the slow reference of ``epcg.games.witness.domain.rule_kernel``.

Every path of the grid from any start to any exit is listed by a recursive
walk; its regions are found by flood fill; each rule is checked on the path
and its regions with sets, and elimination marks by trying every set of
symbols they could erase. Nothing here uses the library's tables or kernels:
only a placement (``rules.Panel``) is read.

>>> from epcg.games.witness.domain.rules import RuleRow, decode
>>> row = RuleRow(width=2, height=2, hexagons=1)
>>> [count(decode(row, r)) for r in range(4)]
[12, 8, 5, 8]
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from itertools import combinations

from epcg.games.witness.domain.pieces import parse_piece
from epcg.games.witness.domain.rules import Panel, RuleRow

Vertex = tuple[int, int]
Edge = frozenset


def _vertices(width: int, height: int) -> list[Vertex]:
    return [(x, y) for y in range(height + 1) for x in range(width + 1)]


def _index(width: int, v: Vertex) -> int:
    return v[1] * (width + 1) + v[0]


def _xy(width: int, i: int) -> Vertex:
    return i % (width + 1), i // (width + 1)


def _walks(width: int, height: int, start: Vertex, goal: Vertex) -> Iterator[tuple[Vertex, ...]]:
    """Every path from ``start`` to ``goal`` that visits no vertex twice."""
    path = [start]
    seen = {start}

    def go(v: Vertex) -> Iterator[tuple[Vertex, ...]]:
        if v == goal:
            yield tuple(path)
            return
        x, y = v
        for n in ((x + 1, y), (x, y + 1), (x - 1, y), (x, y - 1)):
            if 0 <= n[0] <= width and 0 <= n[1] <= height and n not in seen:
                seen.add(n)
                path.append(n)
                yield from go(n)
                path.pop()
                seen.discard(n)

    yield from go(start)


@lru_cache(maxsize=64)
def paths(width: int, height: int, starts: tuple[int, ...], exits: tuple[int, ...]) -> tuple[tuple[Vertex, ...], ...]:
    """Every path from a start to a different exit (vertex indices as in ``geometry.py``)."""
    out = []
    for s in starts:
        for e in exits:
            if s != e:
                out += _walks(width, height, _xy(width, s), _xy(width, e))
    return tuple(out)


def _edge_index(width: int, height: int, edge: Edge) -> int:
    (ax, ay), (bx, by) = sorted(edge)
    if ay == by:
        return ay * width + ax
    return width * (height + 1) + ay * (width + 1) + ax


def _regions(width: int, height: int, edges: set[Edge]) -> dict[tuple[int, int], int]:
    """Region number of each cell ``(x, y)``: cells meet across an edge the path does not use."""
    label: dict[tuple[int, int], int] = {}
    for cell in ((x, y) for y in range(height) for x in range(width)):
        if cell in label:
            continue
        number = len(set(label.values()))
        todo = [cell]
        label[cell] = number
        while todo:
            x, y = todo.pop()
            for nx, ny, wall in ((x + 1, y, frozenset({(x + 1, y), (x + 1, y + 1)})),
                                 (x - 1, y, frozenset({(x, y), (x, y + 1)})),
                                 (x, y + 1, frozenset({(x, y + 1), (x + 1, y + 1)})),
                                 (x, y - 1, frozenset({(x, y), (x + 1, y)}))):
                if 0 <= nx < width and 0 <= ny < height and (nx, ny) not in label and wall not in edges:
                    label[nx, ny] = number
                    todo.append((nx, ny))
    return label


def _shapes(text: str, rotate: bool) -> list[frozenset[tuple[int, int]]]:
    """A piece's cells in each orientation it may take."""
    cells = frozenset(parse_piece(text).cells)
    out = [cells]
    if rotate:
        for _ in range(3):
            cells = frozenset((y, -x) for x, y in cells)
            out.append(cells)
    return out


def _tiles(region: set[tuple[int, int]], pieces: list[str], negatives: list[str], rotate: bool,
           width: int, height: int) -> bool:
    """Whether the pieces, less the negatives, can lie on the board covering ``region`` once and every other
    cell not at all (or, if their areas are equal, cancelling everywhere)."""
    if not pieces and not negatives:
        return True
    area = sum(len(parse_piece(p).cells) for p in pieces) - sum(len(parse_piece(n).cells) for n in negatives)
    if area < 0 or (area > 0 and area != len(region)):
        return False
    board = [(x, y) for y in range(height) for x in range(width)]
    target = {c: (1 if area > 0 and c in region else 0) for c in board}
    cover = dict.fromkeys(board, 0)

    def spots(text: str) -> list[list[tuple[int, int]]]:
        out = []
        for shape in _shapes(text, rotate):
            for ox, oy in board:
                cells = [(ox + x, oy + y) for x, y in shape]
                if all(c in cover for c in cells):
                    out.append(cells)
        return out

    todo = [(n, -1) for n in negatives] + [(p, 1) for p in pieces]

    def place(i: int) -> bool:
        if i == len(todo):
            return cover == target
        text, sign = todo[i]
        for cells in spots(text):
            for c in cells:
                cover[c] += sign
            if (sign < 0 or all(cover[c] <= target[c] for c in cells)) and place(i + 1):
                return True
            for c in cells:
                cover[c] -= sign
        return False

    return place(0)


def _wrong(symbol: tuple, kept: list[tuple], touch: dict, region: set, row: RuleRow) -> bool:
    """Whether ``symbol`` (a ``(cell, type, value)``) is wrong among the ``kept`` symbols of its region."""
    cell, kind, value = symbol
    if kind == "triangle":
        return touch[cell] != value
    if kind == "square":
        return any(k == "square" and v != value for _, k, v in kept)
    if kind == "star":
        return sum(1 for _, k, v in kept if k in ("square", "star") and v == value) != 2
    if kind in ("tetris", "negative"):
        pieces = [row.pieces[v] for _, k, v in kept if k == "tetris"]
        negatives = [row.negative_pieces[v] for _, k, v in kept if k == "negative"]
        return not _tiles(region, pieces, negatives, row.rotate, row.width, row.height)
    return False


def _region_right(symbols: list[tuple], touch: dict, region: set, row: RuleRow) -> bool:
    marks = [s for s in symbols if s[1] == "elimination"]
    others = [s for s in symbols if s[1] != "elimination"]
    for erased_count in range(len(marks) + 1):
        if (len(marks) - erased_count) % 2:
            continue  # the marks left over erase each other in pairs
        for erased in combinations(others, erased_count):
            kept = [s for s in others if s not in erased]
            if any(_wrong(s, kept, touch, region, row) for s in kept):
                continue
            if all(_wrong(s, kept + [s], touch, region, row) for s in erased):
                return True
    return False


def solves(panel: Panel, row: RuleRow, path: tuple[Vertex, ...]) -> bool:
    """Whether ``path`` solves ``panel``."""
    w, h = panel.width, panel.height
    if _index(w, path[0]) not in panel.starts or _index(w, path[-1]) not in panel.exits:
        return False
    edges = {frozenset(pair) for pair in zip(path, path[1:])}
    on = {_index(w, v) for v in path} | {(w + 1) * (h + 1) + _edge_index(w, h, e) for e in edges}
    if any(p not in on for p in panel.hexagons):
        return False
    if any(_edge_index(w, h, e) in panel.gaps for e in edges):
        return False
    label = _regions(w, h, edges)
    touch = {}
    for y in range(h):
        for x in range(w):
            sides = [{(x, y), (x + 1, y)}, {(x, y + 1), (x + 1, y + 1)}, {(x, y), (x, y + 1)},
                     {(x + 1, y), (x + 1, y + 1)}]
            touch[y * w + x] = sum(frozenset(s) in edges for s in sides)
    by_region: dict[int, list[tuple]] = {}
    for symbol in panel.cell_symbols:
        c = symbol[0]
        by_region.setdefault(label[c % w, c // w], []).append(symbol)
    for number, symbols in by_region.items():
        region = {cell for cell, n in label.items() if n == number}
        if not _region_right(symbols, touch, region, row):
            return False
    return True


def solution_paths(panel: Panel, row: RuleRow) -> list[tuple[Vertex, ...]]:
    """Every path solving ``panel`` (a placement of ``row``)."""
    return [p for p in paths(panel.width, panel.height, row.start_places, row.exit_places)
            if solves(panel, row, p)]


def count(panel: Panel, row: RuleRow | None = None) -> int:
    """How many paths solve ``panel``."""
    row = row or RuleRow(width=panel.width, height=panel.height)
    return len(solution_paths(panel, row))
