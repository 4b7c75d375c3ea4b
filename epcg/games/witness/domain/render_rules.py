"""Pictures of panels with the game's own symbols, drawn as the game draws them.

Starts are large discs, each exit a short nub pointing out of the panel, gaps
a broken edge. In the cells: squares are rounded squares and stars eight-pointed
stars in their colour, triangles 1 to 3 small orange triangles, an elimination
mark a white Y, a tetris piece its cells in yellow (tilted when it may be
rotated), a negative piece its cells hollow in blue. Hexagons and the look of
the panel are those of ``render.py``.

>>> from epcg.games.witness.domain.rules import RuleRow, decode
>>> row = RuleRow(width=2, height=2, triangles=1, stars=2, colours=2, exits="border")
>>> fig = rules_figure(row, decode(row, 5), None, caption="2x2")
>>> len(fig.axes)
1
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PatchCollection
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyBboxPatch, Patch, Polygon, Rectangle, RegularPolygon

from epcg.games.witness.domain.pieces import parse_piece
from epcg.games.witness.domain.render import (CROSS_COLOUR, GRID_COLOUR, HEX_RADIUS, LINE, MARGIN, NUB,
                                              PAIR_GAP, PANEL_COLOUR, PATH_COLOUR, SQUARE, SQUARE_ROUNDING,
                                              START_RADIUS, TEXT_COLOUR, _bars, _blank_axes, _position_xy,
                                              _segment)
from epcg.games.witness.domain.rules import Panel, RuleRow
from epcg.report.figures import DPI

__all__ = ["COLOURS", "RulesView", "rules_figure", "rules_gallery"]

COLOURS = ("#000000", "#ffffff", "#e53935", "#1e88e5", "#fdd835", "#43a047", "#fb8c00", "#8e24aa")
"""How each of ``rules.COLOUR_NAMES`` is drawn."""
TRIANGLE_COLOUR = "#ff9800"
PIECE_COLOUR = "#ffd54f"
NEGATIVE_COLOUR = "#42a5f5"
GAP = 0.3
"""Length of the break a gap leaves in its edge."""


@dataclass(frozen=True)
class RulesView:
    """One gallery entry: a placement, its solution path (vertices) or None, and a caption."""

    panel: Panel
    path: Sequence[int] | None = None
    caption: str | None = None


def _exit_direction(panel: Panel, v: int) -> tuple[int, int]:
    x, y = panel.geometry.vertex_xy(v)
    if y == panel.height:
        return 0, 1
    if x == panel.width:
        return 1, 0
    if y == 0:
        return 0, -1
    if x == 0:
        return -1, 0
    return 0, 1


def _grid(panel: Panel, ox: float, oy: float) -> list[Patch]:
    """Edges (a gap broken in its middle), starts and exit nubs."""
    g = panel.geometry
    gaps = set(panel.gaps)
    out: list[Patch] = []
    for e in range(g.num_edges):
        a, b = (g.vertex_xy(v) for v in g.edge_vertices(e))
        (ax_, ay), (bx, by) = a, b
        if e in gaps:
            mx, my = (ax_ + bx) / 2, (ay + by) / 2
            dx, dy = (bx - ax_) * GAP / 2, (by - ay) * GAP / 2
            out.append(_segment(ox + ax_, oy + ay, ox + mx - dx, oy + my - dy))
            out.append(_segment(ox + mx + dx, oy + my + dy, ox + bx, oy + by))
        else:
            out.append(_segment(ox + ax_, oy + ay, ox + bx, oy + by))
    out += [Circle((ox + x, oy + y), LINE / 2) for x, y in map(g.vertex_xy, range(g.num_vertices))]
    for v in panel.exits:
        x, y = g.vertex_xy(v)
        dx, dy = _exit_direction(panel, v)
        out += _bars([(ox + x, oy + y), (ox + x + dx * NUB, oy + y + dy * NUB)])
    out += [Circle((ox + x, oy + y), START_RADIUS) for x, y in map(g.vertex_xy, panel.starts)]
    return out


def _star(x: float, y: float, size: float, colour: str, gid: str) -> Polygon:
    points = []
    for i in range(16):
        r = size if i % 2 == 0 else size * 0.72
        angle = math.pi / 8 * i
        points.append((x + r * math.cos(angle), y + r * math.sin(angle)))
    return Polygon(points, closed=True, facecolor=colour, edgecolor="none", zorder=2, gid=gid)


def _triangles(x: float, y: float, n: int, gid: str) -> list[Patch]:
    step = 0.22
    left = x - step * (n - 1) / 2
    return [RegularPolygon((left + i * step, y - 0.02), 3, radius=0.1, orientation=0.0, facecolor=TRIANGLE_COLOUR,
                           edgecolor="none", zorder=2, gid=f"{gid}-{i}") for i in range(n)]


def _elimination(x: float, y: float, gid: str) -> list[Patch]:
    out: list[Patch] = []
    for angle in (90, 210, 330):
        a = math.radians(angle)
        ex, ey = x + 0.16 * math.cos(a), y + 0.16 * math.sin(a)
        w = 0.07
        nx, ny = -math.sin(a) * w / 2, math.cos(a) * w / 2
        out.append(Polygon([(x + nx, y + ny), (ex + nx, ey + ny), (ex - nx, ey - ny), (x - nx, y - ny)],
                           closed=True, facecolor="#ffffff", edgecolor="none", zorder=2, gid=f"{gid}-{angle}"))
    return out


def _piece(x: float, y: float, text: str, negative: bool, tilted: bool, gid: str) -> list[Patch]:
    cells = parse_piece(text).cells
    xs, ys = [c[0] for c in cells], [c[1] for c in cells]
    span = max(max(xs) - min(xs), max(ys) - min(ys)) + 1
    unit = min(0.16, 0.62 / span)
    cx, cy = (max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2
    turn = math.radians(15 if tilted else 0)
    out: list[Patch] = []
    for dx, dy in cells:
        px, py = (dx - cx) * unit, (dy - cy) * unit
        rx, ry = px * math.cos(turn) - py * math.sin(turn), px * math.sin(turn) + py * math.cos(turn)
        side = unit * 0.82
        out.append(Rectangle((x + rx - side / 2, y + ry - side / 2), side, side, angle=math.degrees(turn),
                             rotation_point="center", facecolor="none" if negative else PIECE_COLOUR,
                             edgecolor=NEGATIVE_COLOUR if negative else "none", linewidth=1.0, zorder=2,
                             gid=f"{gid}-{dx}.{dy}"))
    return out


def _symbols(ax: Axes, row: RuleRow, panel: Panel, ox: float, oy: float, gid: str) -> None:
    g = panel.geometry
    for p in panel.hexagons:
        x, y, vertical = _position_xy(g, p)
        ax.add_patch(RegularPolygon((ox + x, oy + y), 6, radius=HEX_RADIUS,
                                    orientation=0.0 if vertical else math.pi / 6, facecolor=CROSS_COLOUR,
                                    edgecolor="none", zorder=2, gid=f"{gid}-cross-{p}"))
    for cell, kind, value in panel.cell_symbols:
        cx, cy = g.cell_xy(cell)
        x, y = ox + cx + 0.5, oy + cy + 0.5
        name = f"{gid}-cell-{cell}-{kind}"
        patches: list[Patch]
        if kind == "square":
            patches = [FancyBboxPatch((x - SQUARE / 2, y - SQUARE / 2), SQUARE, SQUARE,
                                      boxstyle=f"round,pad=0,rounding_size={SQUARE_ROUNDING}",
                                      facecolor=COLOURS[value], edgecolor="none", zorder=2, gid=name)]
        elif kind == "star":
            patches = [_star(x, y, 0.24, COLOURS[value], name)]
        elif kind == "triangle":
            patches = _triangles(x, y, value, name)
        elif kind == "elimination":
            patches = _elimination(x, y, name)
        else:
            pieces = row.pieces if kind == "tetris" else row.negative_pieces
            patches = _piece(x, y, pieces[value], kind == "negative", row.rotate, name)
        for patch in patches:
            ax.add_patch(patch)


def _draw(ax: Axes, row: RuleRow, panel: Panel, path: Sequence[int] | None, ox: float, oy: float,
          gid: str) -> None:
    """One panel with its grid origin at (ox, oy), the path traced if given."""
    g = panel.geometry
    ax.add_patch(FancyBboxPatch((ox - MARGIN, oy - MARGIN), g.width + 2 * MARGIN, g.height + 2 * MARGIN,
                                boxstyle="round,pad=0,rounding_size=0.3", facecolor=PANEL_COLOUR,
                                edgecolor="none", gid=f"{gid}-panel"))
    ax.add_collection(PatchCollection(_grid(panel, ox, oy), facecolor=GRID_COLOUR, edgecolor="none",
                                      gid=f"{gid}-grid"))
    if path:
        pts = [(ox + x, oy + y) for x, y in map(g.vertex_xy, path)]
        dx, dy = _exit_direction(panel, path[-1])
        pts.append((pts[-1][0] + dx * NUB, pts[-1][1] + dy * NUB))
        ax.add_collection(PatchCollection([*_bars(pts), Circle(pts[0], START_RADIUS)], facecolor=PATH_COLOUR,
                                          edgecolor="none", zorder=1.5, gid=f"{gid}-path"))
    _symbols(ax, row, panel, ox, oy, gid)


LEGEND = ("disc: start · nub: exit · broken edge: gap · hexagon: cross it · square: one colour a region · "
          "star: one other of its colour in its region · triangles: edges of the cell on the line · "
          "Y: erases one broken symbol · yellow/blue cells: a region's pieces/negative pieces")


def rules_figure(row: RuleRow, panel: Panel, path: Sequence[int] | None, caption: str | None = None) -> Figure:
    """The panel and, beside it, the panel with ``path`` traced (if it has one), and a caption."""
    return rules_gallery(row, [RulesView(panel, path, caption)], columns=1, legend=False)


def rules_gallery(row: RuleRow, views: Sequence[RulesView], columns: int = 4, title: str | None = None,
                  legend: bool = True) -> Figure:
    """Many placements of one row, each as a (panel | solution) pair with its caption, ``columns`` a line, under
    a title and a line saying what each symbol means (``legend``)."""
    if not views:
        raise ValueError("gallery needs at least one panel")
    g = row.geometry
    columns = max(1, min(columns, len(views)))
    lines = -(-len(views) // columns)
    pw, ph = g.width + 2 * MARGIN, g.height + 2 * MARGIN
    unit = 1.9 / max(pw, ph)
    gap = 0.45 / unit
    caption_h = 0.3 / unit
    title_h = (0.45 / unit if title else 0.0) + (0.3 / unit if legend else 0.0)
    pair = 2 * pw + PAIR_GAP
    width, height = columns * (pair + gap) + gap, lines * (ph + caption_h + gap) + gap + title_h
    shown = max(width, 7.0 / unit) if legend else width  # room for the legend's line
    fig = Figure(figsize=(shown * unit, height * unit), dpi=DPI)
    FigureCanvasAgg(fig)
    ax = _blank_axes(fig, shown, height)
    for i, view in enumerate(views):
        r, c = divmod(i, columns)
        ox = (shown - width) / 2 + gap + c * (pair + gap)
        oy = height - title_h - (r + 1) * (ph + caption_h + gap) + caption_h
        _draw(ax, row, view.panel, None, ox + MARGIN, oy + MARGIN, f"p{i}-puzzle")
        if view.path is not None:
            _draw(ax, row, view.panel, view.path, ox + pw + PAIR_GAP + MARGIN, oy + MARGIN, f"p{i}-solution")
        if view.caption:
            ax.text(ox + pair / 2, oy - caption_h / 2, view.caption, ha="center", va="center", fontsize=9,
                    color=TEXT_COLOUR)
    if title:
        ax.text(shown / 2, height - 0.45 / unit / 2, title, ha="center", va="center", fontsize=12,
                color=TEXT_COLOUR)
    if legend:
        ax.text(shown / 2, height - title_h + 0.15 / unit, LEGEND, ha="center", va="center", fontsize=6,
                color="#555555", wrap=True)
    return fig
