"""Piece constraints of The Witness: fixed-orientation polyominoes and where they fit.

A piece is written as rows **top to bottom**, ``#`` a cell, ``.`` a gap and
``/`` between rows: ``"##/#."`` is an L of three cells. Panel cells count ``y``
upwards (``geometry.py``), so the text's last row is the piece's bottom row.
Pieces are never rotated or reflected.

A piece is stored as its cells ``(dx, dy)`` relative to its **anchor**, the
cell that comes first in cell order ``y*w + x`` (lowest row, then leftmost).
Tiling a region by "cover the lowest uncovered cell next" (``tiling.py``) only
ever needs to place a piece by its anchor, so ``placement_masks`` gives, for
every piece and every cell, the cells the piece covers when anchored there.

>>> parse_piece("##/#.").cells          # anchor = bottom-left cell
((0, 0), (0, 1), (1, 1))
>>> parse_piece(".#/##").cells          # bottom row first: anchor is its left cell
((0, 0), (1, 0), (1, 1))
>>> len(LIBRARY), [parse_piece(t).size for t in LIBRARY[:4]]
(24, [1, 2, 2, 3])
>>> m = placement_masks(parse_library(["##", "#/#"]), 3, 3)
>>> bin(int(m[0, 0])), bin(int(m[1, 4])), int(m[0, 2])   # '##' at cell 2 would leave the board
('0b11', '0b10010000', 0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from epcg.games.witness.domain.geometry import Geometry

__all__ = ["LIBRARY", "Piece", "parse_library", "parse_piece", "placement_masks"]

LIBRARY: tuple[str, ...] = (
    "#", "##", "#/#", "##/#.", "##/.#", "#./##", ".#/##", "###", "#/#/#", "##/##",
    "###/#..", "#../###", "###/..#", "..#/###", "##/#./#.", "##/.#/.#", "#./#./##",
    ".#/.#/##", "####", "#/#/#/#", "###/.#.", ".#./###", "#./##/#.", ".#/##/.#",
)
"""The paper's 24 fixed-orientation pieces (1 monomino, 2 dominoes, 6 trominoes, 15 tetrominoes)."""


@dataclass(frozen=True)
class Piece:
    """One fixed-orientation polyomino."""

    text: str
    """Its source text, rows top to bottom (``"##/#."``)."""
    cells: tuple[tuple[int, int], ...]
    """Cells ``(dx, dy)`` relative to the anchor (``dy`` up), in cell order; ``cells[0] == (0, 0)``."""
    width: int
    height: int

    @property
    def size(self) -> int:
        return len(self.cells)

    @property
    def rows(self) -> tuple[str, ...]:
        """The piece as text rows, top to bottom, normalised (``'#'`` and ``'.'``)."""
        x0 = min(dx for dx, _ in self.cells)
        grid = [["."] * self.width for _ in range(self.height)]
        for dx, dy in self.cells:
            grid[self.height - 1 - dy][dx - x0] = "#"
        return tuple("".join(r) for r in grid)


def parse_piece(text: str) -> Piece:
    """A piece from its text; ValueError names the fault (one line).

    >>> parse_piece("#./##/#.").rows
    ('#.', '##', '#.')
    """
    if not isinstance(text, str):
        raise ValueError(f"piece must be a string like '##/#.', got {text!r}")
    rows = text.split("/")
    bad = set(text) - set("#./")
    if bad:
        raise ValueError(f"piece {text!r}: unknown character {sorted(bad)[0]!r} (use '#', '.' and '/')")
    if "#" not in text:
        raise ValueError(f"piece {text!r} is empty: it needs at least one '#'")
    if len({len(r) for r in rows}) != 1:
        raise ValueError(f"piece {text!r} has rows of different lengths")
    h = len(rows)
    full = {(x, h - 1 - i) for i, r in enumerate(rows) for x, ch in enumerate(r) if ch == "#"}
    xs, ys = [x for x, _ in full], [y for _, y in full]
    x0, y0 = min(xs), min(ys)
    cells = sorted(((x - x0, y - y0) for x, y in full), key=lambda c: (c[1], c[0]))
    cell_set = set(cells)
    todo, seen = [cells[0]], {cells[0]}
    while todo:
        x, y = todo.pop()
        for n in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if n in cell_set and n not in seen:
                seen.add(n)
                todo.append(n)
    if len(seen) != len(cells):
        raise ValueError(f"piece {text!r} is not connected")
    ax, ay = cells[0]
    return Piece(
        text=text,
        cells=tuple((x - ax, y - ay) for x, y in cells),
        width=max(xs) - x0 + 1,
        height=max(ys) - y0 + 1,
    )


def parse_library(pieces: Sequence[str]) -> tuple[Piece, ...]:
    """A piece library: a non-empty list of distinct piece texts (index = piece type).

    >>> [p.size for p in parse_library(["#", "##/##"])]
    [1, 4]
    """
    if isinstance(pieces, str) or not isinstance(pieces, Sequence):
        raise ValueError(f"piece library must be a list of piece strings, got {pieces!r}")
    if len(pieces) == 0:
        raise ValueError("piece library is empty: give at least one piece")
    out = tuple(parse_piece(t) for t in pieces)
    seen: dict[tuple, str] = {}
    for p in out:
        if p.cells in seen:
            raise ValueError(f"piece library lists the same piece twice: {seen[p.cells]!r} and {p.text!r}")
        seen[p.cells] = p.text
    return out


def placement_masks(library: Sequence[Piece], width: int, height: int) -> np.ndarray:
    """``(len(library), cells)`` uint64: cells covered by piece ``t`` anchored at cell ``c`` (0: off the board)."""
    g = Geometry(width, height)
    out = np.zeros((len(library), g.num_cells), dtype=np.uint64)
    for t, piece in enumerate(library):
        for c in range(g.num_cells):
            x, y = g.cell_xy(c)
            mask = 0
            for dx, dy in piece.cells:
                if not (0 <= x + dx < width and 0 <= y + dy < height):
                    break
                mask |= 1 << g.cell(x + dx, y + dy)
            else:
                out[t, c] = mask
    return out
