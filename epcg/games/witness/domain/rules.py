"""The Witness's own rules as a placement space: what a row places, where, and the rank of each placement.

A :class:`RuleRow` says how many of each symbol a panel holds and where the
line may start and end; a placement puts every symbol somewhere. The rules
(what a path must do to solve a panel) are in ``rule_check.py``; the fast scan
in ``rule_kernel.py``.

Symbols and their places:

- ``hexagons``: vertices and edges (the line passes through each);
- ``gaps``: edges (the line never crosses one);
- cell symbols, at most one per cell: ``triangles`` (value 1, 2 or 3),
  ``squares`` and ``stars`` (value: a colour of ``colours``), ``eliminations``,
  ``tetris`` (value: a piece of ``pieces``) and ``negatives`` (a piece of
  ``negative_pieces``); ``rotate`` lets every piece turn;
- ``start_count`` starts among ``starts`` and ``exit_count`` exits among
  ``exits``: lists of vertices or ``"corner"`` (the lower left one for starts,
  the upper right one for exits), ``"corners"``, ``"border"``, ``"any"``; a
  fixed start is never an exit place.

Rank layout, most significant first: start set, exit set, gap set, hexagon set
(lexicographic combinations), then the cell symbols: the set of cells they take
(a combination), which type sits in each of those cells (a permutation of the
type multiset, types in :data:`CELL_TYPES` order, lexicographic), and each
one's value (mixed radix over the cells in order, the last cell fastest).
Every colouring is its own placement (no symmetry is removed).

>>> row = RuleRow(width=3, height=3, triangles=2)
>>> row.max_rank
324
>>> decode(row, 0).cell_symbols
((0, 'triangle', 1), (1, 'triangle', 1))
>>> decode(row, 323).cell_symbols
((7, 'triangle', 3), (8, 'triangle', 3))
>>> RuleRow(width=3, height=3, exits="corners", exit_count=2).name
'3x3-x2corners'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

from epcg.combinatorics.combinations import Combinations
from epcg.games.witness.domain.geometry import Geometry
from epcg.games.witness.domain.pieces import parse_piece

CELL_TYPES = ("triangle", "square", "star", "elimination", "tetris", "negative")
"""Cell symbol types, in the order of the type permutation of a rank."""
COUNT_KEYS = ("triangles", "squares", "stars", "eliminations", "tetris", "negatives")
"""The row key holding how many of each cell type (same order as ``CELL_TYPES``)."""
PLACES = ("corner", "corners", "border", "any")
"""Named vertex sets for ``starts`` and ``exits``."""
COLOUR_NAMES = ("black", "white", "red", "blue", "yellow", "green", "orange", "purple")
"""Square and star colours, by colour index."""
MAX_COLOURS = len(COLOUR_NAMES)


@dataclass(frozen=True)
class Panel:
    """One placement: every symbol and where it is."""

    width: int
    height: int
    starts: tuple[int, ...]
    exits: tuple[int, ...]
    gaps: tuple[int, ...] = ()
    """Edges."""
    hexagons: tuple[int, ...] = ()
    """Positions: vertices ``0..V-1``, then edges ``V + e`` (``geometry.py``)."""
    cell_symbols: tuple[tuple[int, str, int], ...] = ()
    """``(cell, type, value)`` by cell: triangle count, colour index, or piece index."""
    rank: int = -1
    """Its rank in its row."""

    @property
    def geometry(self) -> Geometry:
        return Geometry(self.width, self.height)


def named_vertices(g: Geometry, where: str | tuple[str, ...], corner: int) -> tuple[int, ...]:
    """The vertices a ``starts``/``exits`` value names, ascending; ``corner`` is the one ``"corner"`` means.

    >>> g = Geometry(2, 2)
    >>> named_vertices(g, "border", 0), named_vertices(g, ("0,2", "2,2"), 0), named_vertices(g, "corners", 0)
    ((0, 1, 2, 3, 5, 6, 7, 8), (6, 8), (0, 2, 6, 8))
    """
    if isinstance(where, str):
        if where == "corner":
            return (corner,)
        if where == "corners":
            return tuple(sorted({g.vertex(x, y) for x in (0, g.width) for y in (0, g.height)}))
        if where == "border":
            return tuple(v for v in range(g.num_vertices)
                         if g.vertex_xy(v)[0] in (0, g.width) or g.vertex_xy(v)[1] in (0, g.height))
        if where == "any":
            return tuple(range(g.num_vertices))
        raise ValueError(f"a vertex set is one of {', '.join(PLACES)} or a list like [\"0,3\", \"3,3\"], "
                         f"got {where!r}")
    out = set()
    for text in where:
        try:
            x, y = (int(t) for t in str(text).split(","))
        except ValueError:
            raise ValueError(f"a vertex is written \"x,y\", got {text!r}") from None
        if not (0 <= x <= g.width and 0 <= y <= g.height):
            raise ValueError(f"vertex {text!r} is off a {g.width}x{g.height} board")
        out.add(g.vertex(x, y))
    if not out:
        raise ValueError("a vertex list needs at least one vertex")
    return tuple(sorted(out))


def _rotations(text: str) -> tuple[str, ...]:
    """The distinct quarter turns of a piece, as texts (the piece itself first)."""
    rows = parse_piece(text).rows
    out: list[str] = []
    for _ in range(4):
        key = "/".join(rows)
        if key not in out:
            out.append(key)
        rows = tuple("".join(r[i] for r in reversed(rows)) for i in range(len(rows[0])))
    return tuple(out)


@dataclass(frozen=True)
class RuleRow:
    """One row of a rules job: a board, the symbols it places and where the line may start and end."""

    width: int
    height: int
    hexagons: int = 0
    gaps: int = 0
    triangles: int = 0
    squares: int = 0
    stars: int = 0
    eliminations: int = 0
    tetris: int = 0
    negatives: int = 0
    triangle_counts: tuple[int, ...] = (1, 2, 3)
    colours: int = 2
    pieces: tuple[str, ...] = ("#",)
    negative_pieces: tuple[str, ...] = ("#",)
    rotate: bool = False
    starts: str | tuple[str, ...] = "corner"
    start_count: int = 1
    exits: str | tuple[str, ...] = "corner"
    exit_count: int = 1
    label: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        g = Geometry(self.width, self.height)
        for key in ("hexagons", "gaps", *COUNT_KEYS):
            if getattr(self, key) < 0:
                raise ValueError(f"{key} = {getattr(self, key)}: a count is at least 0")
        if self.hexagons > g.num_positions:
            raise ValueError(f"hexagons = {self.hexagons}: a {self.width}x{self.height} board has "
                             f"{g.num_positions} places for them (vertices and edges)")
        if self.gaps > g.num_edges:
            raise ValueError(f"gaps = {self.gaps}: a {self.width}x{self.height} board has {g.num_edges} edges")
        if self.cell_count > g.num_cells:
            counts = ", ".join(f"{k} = {getattr(self, k)}" for k in COUNT_KEYS if getattr(self, k))
            raise ValueError(f"{self.cell_count} cell symbols ({counts}): a {self.width}x{self.height} board has "
                             f"{g.num_cells} cells")
        if not self.triangle_counts or any(c not in (1, 2, 3) for c in self.triangle_counts) \
                or len(set(self.triangle_counts)) != len(self.triangle_counts):
            raise ValueError(f"triangle_counts = {list(self.triangle_counts)}: a triangle shows 1, 2 or 3 "
                             "(distinct values)")
        if not 1 <= self.colours <= MAX_COLOURS:
            raise ValueError(f"colours = {self.colours}: 1..{MAX_COLOURS} colours")
        for key in ("pieces", "negative_pieces"):
            if not getattr(self, key):
                raise ValueError(f"{key} is empty: give at least one piece")
            for text in getattr(self, key):
                piece = parse_piece(text)
                if piece.width > self.width or piece.height > self.height:
                    if not (self.rotate and piece.height <= self.width and piece.width <= self.height):
                        raise ValueError(f"piece {text!r} does not fit on a {self.width}x{self.height} board")
        for what, count in (("starts", self.start_count), ("exits", self.exit_count)):
            places = self.start_places if what == "starts" else self.exit_places
            if not 1 <= count <= len(places):
                raise ValueError(f"{what[:-1]}_count = {count}: {what} names {len(places)} vertices")

    @property
    def geometry(self) -> Geometry:
        return Geometry(self.width, self.height)

    @cached_property
    def start_places(self) -> tuple[int, ...]:
        g = self.geometry
        return named_vertices(g, self.starts, g.start)

    @cached_property
    def exit_places(self) -> tuple[int, ...]:
        """The vertices ``exits`` names, less the start when it is fixed (an exit there would end every path at
        once)."""
        g = self.geometry
        fixed = self.start_places if len(self.start_places) == self.start_count else ()
        return tuple(v for v in named_vertices(g, self.exits, g.goal) if v not in fixed)

    @property
    def type_counts(self) -> tuple[int, ...]:
        return tuple(getattr(self, key) for key in COUNT_KEYS)

    @property
    def cell_count(self) -> int:
        return sum(self.type_counts)

    @property
    def type_values(self) -> tuple[int, ...]:
        """How many values each cell type takes (``CELL_TYPES`` order)."""
        return (len(self.triangle_counts), self.colours, self.colours, 1, len(self.pieces),
                len(self.negative_pieces))

    @property
    def piece_variants(self) -> tuple[tuple[str, ...], ...]:
        """Each piece of ``pieces`` then ``negative_pieces``: its orientations (one unless ``rotate``)."""
        return tuple(_rotations(t) if self.rotate else ("/".join(parse_piece(t).rows),)
                     for t in (*self.pieces, *self.negative_pieces))

    @property
    def name(self) -> str:
        """A short name: ``4x4-h2-t2-xborder``."""
        if self.label:
            return self.label
        parts = [f"{self.width}x{self.height}"]
        for key, letter in (("hexagons", "h"), ("gaps", "g"), ("triangles", "t"), ("squares", "q"),
                            ("stars", "s"), ("eliminations", "y"), ("tetris", "p"), ("negatives", "n")):
            if getattr(self, key):
                parts.append(f"{letter}{getattr(self, key)}")
        for what, count, default in (("o", self.start_count, "corner"), ("x", self.exit_count, "corner")):
            where = self.starts if what == "o" else self.exits
            if where != default or count != 1:
                named = where if isinstance(where, str) else "+".join(w.replace(",", ".") for w in where)
                parts.append(f"{what}{count if count != 1 else ''}{named}")
        return "-".join(parts)

    @property
    def radices(self) -> tuple[int, ...]:
        """Sizes of the rank's parts, most significant first: starts, exits, gaps, hexagons, cells, types,
        values."""
        g = self.geometry
        n = self.cell_count
        arrangements = math.factorial(n)
        for c in self.type_counts:
            arrangements //= math.factorial(c)
        values = math.prod(v ** c for v, c in zip(self.type_values, self.type_counts))
        return (math.comb(len(self.start_places), self.start_count), math.comb(len(self.exit_places), self.exit_count),
                math.comb(g.num_edges, self.gaps), math.comb(g.num_positions, self.hexagons),
                math.comb(g.num_cells, n), arrangements, values)

    @property
    def max_rank(self) -> int:
        """Placements of this row (ranks ``0 .. max_rank-1``)."""
        return math.prod(self.radices)


def _split(rank: int, radices: tuple[int, ...]) -> list[int]:
    digits = []
    for r in reversed(radices):
        rank, d = divmod(rank, r)
        digits.append(d)
    return digits[::-1]


def arrangement(counts: tuple[int, ...], index: int) -> tuple[int, ...]:
    """The ``index``-th arrangement (lexicographic) of the multiset with ``counts[t]`` items of type ``t``.

    >>> [arrangement((1, 2), i) for i in range(3)]
    [(0, 1, 1), (1, 0, 1), (1, 1, 0)]
    """
    left = list(counts)
    out = []
    for _ in range(sum(counts)):
        for t, c in enumerate(left):
            if not c:
                continue
            left[t] -= 1
            block = math.factorial(sum(left)) // math.prod(math.factorial(x) for x in left)
            if index < block:
                out.append(t)
                break
            index -= block
            left[t] += 1
    return tuple(out)


def _lex_rank(items: tuple[int, ...], n: int) -> int:
    """Lexicographic rank of an ascending combination of ``range(n)`` (as ``Combinations`` unranks it)."""
    k = len(items)
    return math.comb(n, k) - 1 - sum(math.comb(n - 1 - c, k - i) for i, c in enumerate(items))


def _arrangement_index(counts: tuple[int, ...], types: tuple[int, ...]) -> int:
    """The index of ``types`` among the arrangements of the multiset ``counts`` (inverse of ``arrangement``)."""
    left = list(counts)
    index = 0
    for t in types:
        for smaller in range(t):
            if left[smaller]:
                left[smaller] -= 1
                index += math.factorial(sum(left)) // math.prod(math.factorial(x) for x in left)
                left[smaller] += 1
        left[t] -= 1
    return index


def encode(row: RuleRow, panel: Panel) -> int:
    """The rank of a placement of ``row`` (inverse of :func:`decode`); a ValueError naming what the row cannot
    place.

    >>> row = RuleRow(width=3, height=3, triangles=1, squares=1)
    >>> all(encode(row, decode(row, r)) == r for r in range(row.max_rank))
    True
    """
    g = row.geometry
    digits = []
    for what, chosen, places, count in (("start", panel.starts, row.start_places, row.start_count),
                                        ("exit", panel.exits, row.exit_places, row.exit_count)):
        if len(chosen) != count or not set(chosen) <= set(places):
            names = ", ".join(f"({x},{y})" for x, y in map(g.vertex_xy, places))
            raise ValueError(f"row {row.name} has {count} {what}(s) among {names}")
        digits.append(_lex_rank(tuple(sorted(places.index(v) for v in chosen)), len(places)))
    for what, chosen, n, count in (("gaps", panel.gaps, g.num_edges, row.gaps),
                                   ("hexagons", panel.hexagons, g.num_positions, row.hexagons)):
        if len(chosen) != count:
            raise ValueError(f"row {row.name} has {count} {what}, the panel {len(chosen)}")
        digits.append(_lex_rank(tuple(sorted(chosen)), n))
    symbols = sorted(panel.cell_symbols)
    types = tuple(CELL_TYPES.index(kind) for _, kind, _ in symbols)
    if tuple(types.count(t) for t in range(len(CELL_TYPES))) != row.type_counts:
        want = ", ".join(f"{k} = {getattr(row, k)}" for k in COUNT_KEYS if getattr(row, k)) or "none"
        raise ValueError(f"row {row.name} places cell symbols {want}; the panel's differ")
    digits.append(_lex_rank(tuple(c for c, _, _ in symbols), g.num_cells))
    digits.append(_arrangement_index(row.type_counts, types))
    value = 0
    for (_, kind, v), t in zip(symbols, types):
        index = row.triangle_counts.index(v) if kind == "triangle" and v in row.triangle_counts else v
        if not 0 <= index < row.type_values[t] or (kind == "triangle" and v not in row.triangle_counts):
            raise ValueError(f"row {row.name} has no {kind} of value {v}")
        value = value * row.type_values[t] + index
    digits.append(value)
    rank = 0
    for d, radix in zip(digits, row.radices):
        rank = rank * radix + d
    return rank


def decode(row: RuleRow, rank: int) -> Panel:
    """The placement of a rank."""
    if not 0 <= rank < row.max_rank:
        raise ValueError(f"rank {rank} out of range [0, {row.max_rank})")
    g = row.geometry
    s, x, gp, hx, cl, ar, vl = _split(rank, row.radices)
    starts = tuple(row.start_places[i] for i in Combinations(len(row.start_places), row.start_count).unrank(s))
    exits = tuple(row.exit_places[i] for i in Combinations(len(row.exit_places), row.exit_count).unrank(x))
    gaps = Combinations(g.num_edges, row.gaps).unrank(gp) if row.gaps else ()
    hexagons = Combinations(g.num_positions, row.hexagons).unrank(hx) if row.hexagons else ()
    n = row.cell_count
    symbols: tuple[tuple[int, str, int], ...] = ()
    if n:
        cells = Combinations(g.num_cells, n).unrank(cl)
        types = arrangement(row.type_counts, ar)
        values = []
        for t in reversed(types):
            vl, v = divmod(vl, row.type_values[t])
            values.append(v)
        values.reverse()
        symbols = tuple(
            (c, CELL_TYPES[t], row.triangle_counts[v] if t == 0 else v) for c, t, v in zip(cells, types, values))
    return Panel(row.width, row.height, starts, exits, tuple(gaps), tuple(hexagons), symbols, rank)
