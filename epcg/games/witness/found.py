"""What a Witness run found: puzzles (the stored ones at each row's minimum, or any count by a walk) and
triple-panel sets (three piece panels that exactly one joint path solves).

A Witness run stores, per row, the ranks of every puzzle at the row's fewest
solutions and each one's longest solution (``store.zarr/<row>/at_min``).
:func:`puzzles` reads those arrays one Zarr chunk at a time. Asked for another
solution count, it walks the row's whole rank space in this process instead,
decoding and solving each puzzle: fine for small rows, and lazy, so
``itertools.islice`` or ``Run.found(limit=...)`` stops it early.

>>> p = WitnessPuzzle("must-cross", 3, 3, (3,), 1247, row="3x3:3")
>>> p.cross, p.solution_count, p.longest, p.solution
((1, 19, 33), 4, 14, 'RRRUULLDLUURRR')
>>> len(p.every_solution), p.every_solution[0] == p.solution
(4, True)
>>> p.to_dict()["must_cross"]
['vertex (1,0)', 'edge (0,1)-(1,1)', 'edge (1,1)-(1,2)']
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from epcg.games.witness.domain import scan
from epcg.games.witness.domain.paths import paths_for
from epcg.games.witness.domain.patterns import orbit, pattern_key
from epcg.games.witness.domain.puzzles import encode
from epcg.kinds.keep import read_kept
from epcg.report.found import Found
from epcg.runtime.records import Vouched

DRAWN_SOLUTIONS = 4
"""A puzzle with at most this many solutions is drawn, and exported, with every one of them."""


@dataclass(frozen=True, eq=False)
class WitnessPuzzle(Found):
    """One Witness puzzle of a run: its constraints, solution count and longest solution."""

    puzzle_kind: str
    """``must-cross``, ``regions`` or ``joint``."""
    width: int
    height: int
    k: tuple[int, ...]
    rank: int
    """Its rank in the row's puzzle space (see :mod:`epcg.games.witness.domain.puzzles`)."""
    row: str = ""
    """The row as job files and filters write it, e.g. ``3x4:2+4``."""
    solutions: int | None = None
    """Number of paths solving it (computed when not given)."""
    length: int | None = None
    """Edges of its longest solution (computed when not given)."""
    copies: int | None = None
    """Listed with ``distinct=``: how many of the puzzles listed it stands for (its pattern's or its orbit's)."""
    kind: str = field(default="witness-puzzle", init=False)

    @cached_property
    def _decoded(self) -> scan.Puzzle:
        k = self.k if len(self.k) == 2 else self.k[0]
        return scan.decode(self.puzzle_kind, self.width, self.height, k, self.rank)

    @cached_property
    def _solution_paths(self) -> np.ndarray:
        return scan.solutions(paths_for(self.width, self.height), self._decoded)

    cross = property(lambda self: self._decoded.cross, doc="Must-cross positions (vertices, then edges).")
    cells = property(lambda self: self._decoded.cells, doc="Cells holding a square.")
    colours = property(lambda self: self._decoded.colours, doc="Colour of each square: 0 black, 1 white.")

    @property
    def solution_count(self) -> int:
        return self.solutions if self.solutions is not None else len(self._solution_paths)

    @property
    def longest(self) -> int:
        paths = paths_for(self.width, self.height)
        return self.length if self.length is not None else int(paths.length[self._solution_paths[0]])

    @property
    def solution(self) -> str | None:
        """Its longest solution as moves (``U R D L``), or None if nothing solves it."""
        sols = self._solution_paths
        return paths_for(self.width, self.height).moves(int(sols[0])) if len(sols) else None

    @property
    def every_solution(self) -> list[str] | None:
        """Every solution as moves, longest first, when there are at most ``DRAWN_SOLUTIONS``; else None."""
        sols = self._solution_paths
        if not 0 < len(sols) <= DRAWN_SOLUTIONS:
            return None
        paths = paths_for(self.width, self.height)
        return [paths.moves(int(s)) for s in sols]

    @cached_property
    def pattern(self) -> str:
        """Its pattern: the set of paths solving it, up to the panel's symmetries (for one solution, that path in
        its least orientation; :mod:`~epcg.games.witness.domain.patterns`)."""
        paths = paths_for(self.width, self.height)
        return pattern_key(self.width, self.height, [paths.moves(int(s)) for s in self._solution_paths])

    @cached_property
    def orbit(self) -> int:
        """The lowest rank among its images under the panel's symmetries (its orbit's name)."""
        return min(encode(self.puzzle_kind, image) for image in orbit(self._decoded))

    def ident(self) -> str:
        return f"{self.kind}-{self.row.replace(':', '-k')}-{self.rank}"  # a file name: no ':'

    def caption(self) -> str:
        copies = f" · 1 of {self.copies:,} alike" if self.copies and self.copies > 1 else ""
        return f"{self.row} rank {self.rank:,} · {self.solution_count} sol. · {self.longest} edges{copies}"

    def to_dict(self) -> dict[str, Any]:
        g = self._decoded.geometry
        return {
            "type": self.kind, "puzzle_kind": self.puzzle_kind, "row": self.row,
            "width": self.width, "height": self.height, "k": list(self.k), "rank": self.rank,
            "must_cross": [g.position_name(p) for p in self.cross],
            "must_cross_positions": list(self.cross),
            "squares": [{"cell": list(g.cell_xy(c)), "colour": "white" if colour else "black"}
                        for c, colour in zip(self.cells, self.colours)],
            "solutions": self.solution_count, "longest_solution": self.longest, "solution": self.solution,
            "every_solution": self.every_solution, "pattern": self.pattern, "orbit": self.orbit,
            **({"copies": self.copies} if self.copies is not None else {}),
        }

    def figure(self) -> Figure:
        from epcg.games.witness.domain.render import puzzle_figure

        sols = self._solution_paths
        paths = paths_for(self.width, self.height)
        path = paths.path(int(sols[0])) if len(sols) else None
        more = [paths.path(int(s)) for s in sols[1:]] if len(sols) <= DRAWN_SOLUTIONS else []
        return puzzle_figure(self._decoded.geometry, self.cross, self.cells, self.colours, path,
                             caption=self.caption(), more_paths=more)


def stored(data: Vouched, row: Any) -> Iterator[tuple[int, int]]:
    """``(rank, longest)`` of every puzzle stored at the row's minimum, in rank order, as the reduction's record
    vouches for them (a run not reduced yet has none: refused in one line)."""
    name = f"{row.name}/at_min"
    ranks, longest = data.blocks(f"{name}/ranks"), data.blocks(f"{name}/longest")
    for (_, chunk_r), (_, chunk_l) in zip(ranks, longest):
        yield from zip(chunk_r.tolist(), chunk_l.tolist())


def kept_puzzles(data: Vouched, row: str, band: int, solutions: int) -> Iterator[tuple[int, int, int]]:
    """``(rank, solutions, longest)`` of the puzzles with ``solutions`` solutions that band ``band`` of row ``row``
    kept (job key ``keep``), in rank order, as the reduction's record vouches for them."""
    ranks, scores, longest = read_kept(data, row, band)
    for i in np.flatnonzero(scores == solutions).tolist():
        yield int(ranks[i]), solutions, int(longest[i])


@dataclass(frozen=True, eq=False)
class TripleSet(Found):
    """Three sub-panels (A, B, C) and the one path that solves all three together."""

    variant: str
    width: int
    height: int
    library: tuple[str, ...]
    data: dict[str, Any]
    """The triple as results.json holds it (classes, score, path, moves, panels, counts)."""
    kind: str = field(default="witness-triple", init=False)

    score = property(lambda self: self.data["score"], doc="Fewest joint solutions of any sub-panel or pair.")
    moves = property(lambda self: self.data["moves"], doc="The single joint solution as moves.")

    def ident(self) -> str:
        return f"{self.kind}-{self.variant}-" + "-".join(map(str, self.data["classes"]))

    def caption(self) -> str:
        return f"{self.variant} · score {self.score} · {self.moves}"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "variant": self.variant, "width": self.width, "height": self.height, **self.data}

    def figure(self) -> Figure:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        from epcg.games.witness.domain.paths import paths_for
        from epcg.games.witness.domain.piece_panels import PiecePanel
        from epcg.games.witness.domain.render import DPI
        from epcg.games.witness.domain.render_pieces import draw_piece_panel

        path = paths_for(self.width, self.height).path(self.data["path"])
        fig = Figure(figsize=(6.3, 4.6), dpi=DPI)
        FigureCanvasAgg(fig)
        for col, (name, panel) in enumerate(zip("ABC", self.data["panels"])):
            types = tuple(self.library.index(piece) for piece in panel["pieces"])
            pp = PiecePanel(self.width, self.height, tuple(panel["cells"]), types)
            for row, solved in enumerate((None, path)):
                ax = fig.add_axes((0.02 + col / 3, 0.5 - 0.47 * row, 0.3, 0.38))
                draw_piece_panel(ax, pp, self.library, solved, gid=f"{name}{row}")
                ax.set_title(f"{name} · {self.data['set_counts'][col]} sol." if row == 0 else f"{name} solved",
                             fontsize=9)
        fig.suptitle(self.caption(), fontsize=10)
        return fig
