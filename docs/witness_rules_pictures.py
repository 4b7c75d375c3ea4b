"""Draw docs/witness-rules.png: one solved 3x3 panel per symbol, each a placement with the fewest solutions of a
small row of that symbol.

    python docs/witness_rules_pictures.py
"""

from __future__ import annotations

from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from epcg.games.witness.domain.render_rules import _draw
from epcg.games.witness.domain.rule_scan import puzzle_space, solution_path
from epcg.games.witness.domain.rules import RuleRow, decode
from epcg.search import Reductions, scan_range

EXAMPLES = [
    ("hexagons = 2", RuleRow(width=3, height=3, hexagons=2)),
    ("gaps = 3", RuleRow(width=3, height=3, gaps=3)),
    ("triangles = 2", RuleRow(width=3, height=3, triangles=2)),
    ("squares = 3, colours = 3", RuleRow(width=3, height=3, squares=3, colours=3)),
    ("stars = 2, colours = 1", RuleRow(width=3, height=3, stars=2, colours=1)),
    ("squares = 2, eliminations = 1", RuleRow(width=3, height=3, squares=2, eliminations=1)),
    ('tetris = 1, pieces = ["##/#."], rotate = true', RuleRow(width=3, height=3, tetris=1, pieces=("##/#.",),
                                                              rotate=True)),
    ('tetris = 1, negatives = 1, pieces = ["###"]', RuleRow(width=3, height=3, tetris=1, negatives=1,
                                                            pieces=("###",))),
    ('triangles = 1, exits = "border"', RuleRow(width=3, height=3, triangles=1, exits="border")),
    ('starts = "corners", exits = "corners"', RuleRow(width=3, height=3, hexagons=1, starts="corners",
                                                      exits="corners")),
]


def main() -> None:
    columns = 5
    fig = Figure(figsize=(2.6 * columns, 3.0 * 2), dpi=110)
    FigureCanvasAgg(fig)
    for i, (text, row) in enumerate(EXAMPLES):
        part = scan_range(puzzle_space(row), 0, row.max_rank, Reductions(min=True, ignore=0))
        rank = int(part.argmin.ranks[len(part.argmin.ranks) // 2])
        path, count = solution_path(row, rank)
        r, c = divmod(i, columns)
        ax = fig.add_axes((c / columns, 0.5 - 0.5 * r + 0.1, 1 / columns, 0.38))
        _draw(ax, row, decode(row, rank), path, 0.6, 0.6, f"e{i}")
        ax.set_xlim(0, 4.2)
        ax.set_ylim(0, 4.2)
        ax.set_aspect("equal")
        ax.set_axis_off()
        fig.text((c + 0.5) / columns, 0.5 - 0.5 * r + 0.06, f"{text}\n{count} solution(s)", ha="center",
                 va="center", fontsize=8)
    out = Path(__file__).with_name("witness-rules.png")
    fig.savefig(out)
    print(out)


if __name__ == "__main__":
    main()
