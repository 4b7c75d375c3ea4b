"""Triple-panel sets a run found: three piece panels that exactly one joint path solves.

The results of a triple run decode the first ``reported`` optimal class
triples of each variant; each becomes a :class:`TripleSet`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from matplotlib.figure import Figure

from epcg.api.found import Found


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

        from epcg.domains.witness.paths import paths_for
        from epcg.domains.witness.piece_panels import PiecePanel
        from epcg.domains.witness.render import DPI
        from epcg.domains.witness.render_pieces import draw_piece_panel

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
