"""Pictures of Witness panels: the bare puzzle, its solution, and galleries of both.

Everything is drawn in data units (one grid step = 1) as filled patches, so a
panel looks the same at any figure size, in SVG and in PNG. Figures are built
with :class:`matplotlib.figure.Figure` on an Agg canvas: no pyplot, no display,
and the process-wide backend is left alone. The functions take plain values
(positions, cells, colours, a vertex path) in the index conventions of
:mod:`epcg.games.witness.domain.geometry`. The goal nub points up.

Each constraint and path gets an SVG id, ``<panel>-cross-<position>``,
``<panel>-cell-<cell>-black|white`` and ``<panel>-path``, so a designer can
find them in the file.

>>> fig = puzzle_figure(Geometry(3, 3), cross=[16 + 12], cells=[0, 8], colours=[0, 1],
...                     path=[0, 4, 8, 12, 13, 14, 15], caption="3x3")
>>> len(fig.axes)
1
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PatchCollection
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyBboxPatch, Patch, Rectangle, RegularPolygon

from epcg.games.witness.domain.geometry import Geometry
from epcg.report.figures import DPI, save_figure

__all__ = ["PuzzleView", "draw_puzzle", "gallery_figure", "legend_text", "puzzle_figure", "save_figure"]

# Look, in grid steps (data units) and colours.
PANEL_COLOUR = "#3b4252"
GRID_COLOUR = "#c8ccd4"
PATH_COLOUR = "#ffc93c"
CROSS_COLOUR = "#000000"
REGION_COLOURS = ("#000000", "#ffffff")  # colour 0 black, colour 1 white
TEXT_COLOUR = "#222222"
LINE = 0.22  # grid line and path thickness
START_RADIUS = 0.26
NUB = 0.3  # goal nub length beyond the goal vertex, pointing up
HEX_RADIUS = 0.135  # must-cross hexagon, centre to corner
SQUARE = 0.4  # region square side
SQUARE_ROUNDING = 0.1
MARGIN = 0.6  # panel border around the grid
PAIR_GAP = 0.35  # between the puzzle and its solution


@dataclass(frozen=True)
class PuzzleView:
    """One gallery entry: a puzzle, optionally its solution path, and a caption."""

    cross: Sequence[int] = ()
    """Must-cross positions (vertices, then ``num_vertices + edge``)."""
    cells: Sequence[int] = ()
    """Cells holding a region square."""
    colours: Sequence[int] = ()
    """Colour of each square in ``cells``: 0 black, 1 white."""
    path: Sequence[int] | None = None
    """Vertex sequence from start to goal, or None to show the puzzle alone."""
    caption: str | None = None
    """Text under the entry, e.g. ``"rank 123 · 14 edges"``."""


@dataclass(frozen=True)
class _Checked:
    cross: tuple[int, ...]
    cells: tuple[int, ...]
    colours: tuple[int, ...]
    path: tuple[int, ...] | None


def _ints(name: str, values: Sequence[int]) -> tuple[int, ...]:
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise ValueError(f"{name} must be a sequence of integers, got {values!r}") from None


def _check(
    g: Geometry,
    cross: Sequence[int],
    cells: Sequence[int],
    colours: Sequence[int],
    path: Sequence[int] | None,
) -> _Checked:
    """Validate a puzzle against ``g``; raise ValueError naming the first fault."""
    size = f"{g.width}x{g.height} board"
    cr = _ints("cross", cross)
    for p in cr:
        if not 0 <= p < g.num_positions:
            raise ValueError(
                f"must-cross position {p} is out of range for a {size} "
                f"(0..{g.num_positions - 1})"
            )
    if len(set(cr)) != len(cr):
        raise ValueError(f"must-cross positions repeat: {cr}")
    ce, co = _ints("cells", cells), _ints("colours", colours)
    for c in ce:
        if not 0 <= c < g.num_cells:
            raise ValueError(f"cell {c} is out of range for a {size} (0..{g.num_cells - 1})")
    if len(set(ce)) != len(ce):
        raise ValueError(f"cells repeat: {ce}")
    if len(co) != len(ce):
        raise ValueError(f"{len(ce)} cells but {len(co)} colours: need one colour per cell")
    if any(c not in (0, 1) for c in co):
        raise ValueError(f"colours must be 0 (black) or 1 (white), got {co}")
    if path is None:
        return _Checked(cr, ce, co, None)
    pa = _ints("path", path)
    for v in pa:
        if not 0 <= v < g.num_vertices:
            raise ValueError(
                f"path vertex {v} is out of range for a {size} (0..{g.num_vertices - 1})"
            )
    if not pa or pa[0] != g.start or pa[-1] != g.goal:
        raise ValueError(f"path must run from vertex {g.start} to vertex {g.goal}, got {pa}")
    if len(set(pa)) != len(pa):
        raise ValueError(f"path visits a vertex twice: {pa}")
    for a, b in zip(pa, pa[1:]):
        (ax, ay), (bx, by) = g.vertex_xy(a), g.vertex_xy(b)
        if abs(ax - bx) + abs(ay - by) != 1:
            raise ValueError(f"path steps from vertex {a} to vertex {b}, which are not neighbours")
    return _Checked(cr, ce, co, pa)


def _position_xy(g: Geometry, p: int) -> tuple[float, float, bool]:
    """Centre of must-cross position ``p`` and whether it lies on a vertical edge."""
    if p < g.num_vertices:
        x, y = g.vertex_xy(p)
        return float(x), float(y), False
    a, b = g.edge_vertices(p - g.num_vertices)
    (ax, ay), (bx, by) = g.vertex_xy(a), g.vertex_xy(b)
    return (ax + bx) / 2, (ay + by) / 2, ax == bx


def _segment(x0: float, y0: float, x1: float, y1: float) -> Rectangle:
    """Axis-aligned bar of thickness LINE from (x0, y0) to (x1, y1), with flat ends."""
    if y0 == y1:
        return Rectangle((min(x0, x1), y0 - LINE / 2), abs(x1 - x0), LINE)
    return Rectangle((x0 - LINE / 2, min(y0, y1)), LINE, abs(y1 - y0))


def _bars(points: Sequence[tuple[float, float]]) -> list[Patch]:
    """Round-jointed thick polyline through ``points``, as bars plus joint discs."""
    out: list[Patch] = [_segment(*a, *b) for a, b in zip(points, points[1:])]
    out += [Circle(p, LINE / 2) for p in points]
    return out


def _draw_panel(
    ax: Axes, g: Geometry, pz: _Checked, ox: float, oy: float, gid: str, solved: bool
) -> None:
    """Draw one panel with its grid origin at (ox, oy); the path only if ``solved``."""
    w, h = g.width, g.height
    ax.add_patch(
        FancyBboxPatch(
            (ox - MARGIN, oy - MARGIN), w + 2 * MARGIN, h + 2 * MARGIN,
            boxstyle="round,pad=0,rounding_size=0.3",
            facecolor=PANEL_COLOUR, edgecolor="none", gid=f"{gid}-panel",
        )
    )
    grid: list[Patch] = [_segment(ox, oy + y, ox + w, oy + y) for y in range(h + 1)]
    grid += [_segment(ox + x, oy, ox + x, oy + h) for x in range(w + 1)]
    grid += [Circle((ox + x, oy + y), LINE / 2) for x, y in ((w, 0), (0, h))]
    grid += _bars([(ox + w, oy + h), (ox + w, oy + h + NUB)])
    grid.append(Circle((ox, oy), START_RADIUS))
    ax.add_collection(
        PatchCollection(grid, facecolor=GRID_COLOUR, edgecolor="none", gid=f"{gid}-grid")
    )
    if solved and pz.path is not None:
        pts = [(ox + x, oy + y) for x, y in map(g.vertex_xy, pz.path)]
        pts.append((ox + w, oy + h + NUB))
        ax.add_collection(
            PatchCollection(
                [*_bars(pts), Circle((ox, oy), START_RADIUS)],
                facecolor=PATH_COLOUR, edgecolor="none", zorder=1.5, gid=f"{gid}-path",
            )
        )
    for p in pz.cross:
        x, y, vertical = _position_xy(g, p)
        ax.add_patch(
            RegularPolygon(
                (ox + x, oy + y), 6, radius=HEX_RADIUS,
                orientation=0.0 if vertical else math.pi / 6,
                facecolor=CROSS_COLOUR, edgecolor="none", zorder=2, gid=f"{gid}-cross-{p}",
            )
        )
    for c, colour in zip(pz.cells, pz.colours):
        x, y = g.cell_xy(c)
        ax.add_patch(
            FancyBboxPatch(
                (ox + x + 0.5 - SQUARE / 2, oy + y + 0.5 - SQUARE / 2), SQUARE, SQUARE,
                boxstyle=f"round,pad=0,rounding_size={SQUARE_ROUNDING}",
                facecolor=REGION_COLOURS[colour], edgecolor="none", zorder=2,
                gid=f"{gid}-cell-{c}-{('black', 'white')[colour]}",
            )
        )


def _panel_extent(g: Geometry) -> tuple[float, float]:
    return g.width + 2 * MARGIN, g.height + 2 * MARGIN


def _frame(ax: Axes, width: float, height: float) -> Axes:
    """Show the data box (0, 0)-(width, height) of ``ax`` at equal aspect, without axes."""
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_aspect("equal")
    ax.set_axis_off()
    return ax


def _blank_axes(fig: Figure, width: float, height: float) -> Axes:
    """One axes filling ``fig``, showing (0, 0)-(width, height)."""
    return _frame(fig.add_axes((0, 0, 1, 1)), width, height)


def draw_puzzle(
    ax: Axes,
    geometry: Geometry,
    cross: Sequence[int] = (),
    cells: Sequence[int] = (),
    colours: Sequence[int] = (),
    path: Sequence[int] | None = None,
    title: str | None = None,
    *,
    gid: str | None = None,
) -> None:
    """Draw one panel on ``ax``: the bare puzzle, or with ``path`` (start to goal) traced.

    Sets the limits and equal aspect of ``ax`` and hides its frame. ``gid``
    prefixes the SVG ids (default ``ax<index of ax in its figure>``).
    Raises ValueError if any position, cell, colour or path step is invalid.
    """
    pz = _check(geometry, cross, cells, colours, path)
    if gid is None:
        gid = f"ax{ax.figure.axes.index(ax)}"
    _draw_panel(ax, geometry, pz, MARGIN, MARGIN, gid, solved=path is not None)
    _frame(ax, *_panel_extent(geometry))
    if title is not None:
        ax.set_title(title, color=TEXT_COLOUR)


def _pair_width(g: Geometry) -> float:
    return 2 * _panel_extent(g)[0] + PAIR_GAP


def _draw_pair(ax: Axes, g: Geometry, pz: _Checked, ox: float, oy: float, gid: str) -> None:
    """The puzzle at (ox, oy) (panel corner) and, if it has a path, its solution beside it."""
    _draw_panel(ax, g, pz, ox + MARGIN, oy + MARGIN, f"{gid}puzzle", solved=False)
    if pz.path is not None:
        x2 = ox + _panel_extent(g)[0] + PAIR_GAP + MARGIN
        _draw_panel(ax, g, pz, x2, oy + MARGIN, f"{gid}solution", solved=True)


def _unit_inches(g: Geometry, panel_inches: float) -> float:
    """Inches per grid step so the panel's longer side is ``panel_inches``."""
    return panel_inches / max(_panel_extent(g))


def legend_text(cross: bool, squares: bool, solved: bool) -> str:
    """The one-line legend under a panel picture: what each mark means and where (0, 0) is.

    >>> legend_text(True, False, True)
    'circle: start (0,0), bottom left · nub: goal, top right · x right, y up · hexagon: the path must cross it · yellow: a solution'
    """
    parts = ["circle: start (0,0), bottom left", "nub: goal, top right", "x right, y up"]
    if cross:
        parts.append("hexagon: the path must cross it")
    if squares:
        parts.append("squares: the path separates black from white")
    if solved:
        parts.append("yellow: a solution")
    return " · ".join(parts)


def puzzle_figure(
    geometry: Geometry,
    cross: Sequence[int] = (),
    cells: Sequence[int] = (),
    colours: Sequence[int] = (),
    path: Sequence[int] | None = None,
    caption: str | None = None,
    *,
    more_paths: Sequence[Sequence[int]] = (),
    legend: bool = True,
) -> Figure:
    """The puzzle and, beside it, the same puzzle with its solution ``path``, then one more panel per path of
    ``more_paths`` (the other solutions of a puzzle that has a few), each labelled ``solution i of n``; the
    caption and a legend line below.

    With ``path=None`` the figure holds the puzzle alone. Raises ValueError on
    invalid input.
    """
    pz = _check(geometry, cross, cells, colours, path)
    extra = [_check(geometry, cross, cells, colours, p) for p in more_paths] if path is not None else []
    pw, ph = _panel_extent(geometry)
    solved = ([pz] if path is not None else []) + extra
    width = pw + len(solved) * (pw + PAIR_GAP)
    unit = _unit_inches(geometry, 2.6)
    line = 0.22 / unit  # one line of small text, in grid steps
    label = line * 1.2 if len(solved) > 1 else 0.0
    text = (0.8 if caption else 0.0) + (2.6 * line if legend else 0.0)
    height = ph + text + label
    fig = Figure(figsize=(width * unit, height * unit), dpi=DPI)
    FigureCanvasAgg(fig)
    ax = _blank_axes(fig, width, height)
    _draw_panel(ax, geometry, pz, MARGIN, text + MARGIN, "puzzle", solved=False)
    for i, view in enumerate(solved):
        ox = (i + 1) * (pw + PAIR_GAP)
        _draw_panel(ax, geometry, view, ox + MARGIN, text + MARGIN, "solution" if i == 0 else f"solution{i + 1}",
                    solved=True)
        if label:
            ax.text(ox + pw / 2, text + ph + label / 2, f"solution {i + 1} of {len(solved)}", ha="center",
                    va="center", fontsize=9, color=TEXT_COLOUR)
    y = text
    if caption:
        ax.text(width / 2, y - 0.4, caption, ha="center", va="center", fontsize=10, color=TEXT_COLOUR)
        y -= 0.8
    if legend:
        ax.text(width / 2, y - 1.3 * line, legend_text(bool(cross), bool(cells), bool(solved)), ha="center",
                va="center", fontsize=7, color="#555555", wrap=True)
    return fig


def gallery_figure(
    geometry: Geometry,
    puzzles: Sequence[PuzzleView],
    columns: int = 4,
    title: str | None = None,
) -> Figure:
    """Many puzzles on one board size, each as a (puzzle | solution) pair with its caption.

    Entries fill rows left to right, ``columns`` pairs per row. Raises ValueError
    on invalid input, naming the entry.
    """
    if columns < 1:
        raise ValueError(f"columns must be at least 1, got {columns}")
    if not puzzles:
        raise ValueError("gallery needs at least one puzzle")
    checked = []
    for i, view in enumerate(puzzles):
        try:
            checked.append(_check(geometry, view.cross, view.cells, view.colours, view.path))
        except ValueError as err:
            raise ValueError(f"gallery entry {i}: {err}") from None
    columns = min(columns, len(puzzles))
    rows = -(-len(puzzles) // columns)
    pw, ph = _panel_extent(geometry)
    unit = _unit_inches(geometry, 1.9)
    gap = 0.45 / unit  # 0.45 in between pairs, whatever the board size
    caption_h = 0.3 / unit
    legend_h = 0.3 / unit
    title_h = (0.45 / unit if title else 0.0) + legend_h
    cell_w, cell_h = _pair_width(geometry) + gap, ph + caption_h + gap
    width, height = columns * cell_w + gap, rows * cell_h + gap + title_h
    fig = Figure(figsize=(width * unit, height * unit), dpi=DPI)
    FigureCanvasAgg(fig)
    ax = _blank_axes(fig, width, height)
    for i, (pz, view) in enumerate(zip(checked, puzzles)):
        r, c = divmod(i, columns)
        ox = gap + c * cell_w
        oy = height - title_h - (r + 1) * cell_h + caption_h
        _draw_pair(ax, geometry, pz, ox, oy, f"p{i}-")
        if view.caption:
            ax.text(ox + _pair_width(geometry) / 2, oy - caption_h / 2, view.caption,
                    ha="center", va="center", fontsize=9, color=TEXT_COLOUR)
    if title:
        ax.text(width / 2, height - (title_h - legend_h) / 2, title, ha="center", va="center",
                fontsize=13, color=TEXT_COLOUR)
    cross = any(view.cross for view in puzzles)
    squares = any(view.cells for view in puzzles)
    solved = any(view.path is not None for view in puzzles)
    ax.text(width / 2, height - title_h + legend_h / 2,
            "each pair: the puzzle, then its solution · " + legend_text(cross, squares, solved),
            ha="center", va="center", fontsize=8, color="#555555")
    return fig
