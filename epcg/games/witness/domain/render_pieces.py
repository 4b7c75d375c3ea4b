"""Pictures of piece-constraint panels and triple panels (the paper's Figure 3).

A piece symbol is drawn as in The Witness: a small copy of its polyomino,
centred in its cell. With a solution path, the virtual pieces the rule places
are shown as tinted cells, one tint per piece (Figure 2(c)). Panels are
drawn with :func:`epcg.games.witness.domain.render.draw_puzzle` (grid, path,
framing) on Agg figures; save them with :func:`render.save_figure`.

>>> from epcg.games.witness.domain.piece_panels import PiecePanel
>>> fig = panel_figure(PiecePanel(3, 3, (0, 4, 8), (7, 7, 7)), LIBRARY, caption="three '###'")
>>> len(fig.axes)
1
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PatchCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from epcg.games.witness.domain.paths import paths_for
from epcg.games.witness.domain.piece_panels import PiecePanel
from epcg.games.witness.domain.pieces import LIBRARY, parse_library
from epcg.games.witness.domain.render import DPI, MARGIN, TEXT_COLOUR, draw_puzzle
from epcg.games.witness.domain.tiling import tiling_placements
from epcg.games.witness.domain.triple import TripleProblem, triple_info

__all__ = ["draw_piece_panel", "panel_figure", "subpanels_figure", "triple_figure"]

PIECE_COLOUR = "#f2c14e"
GLYPH_STEP = 0.17  # one glyph square plus its gap, in grid steps
GLYPH_SQUARE = 0.14
VIRTUAL_TINTS = ("#88c0d0", "#a3be8c", "#b48ead", "#d08770", "#ebcb8b", "#5e81ac")
VIRTUAL_INSET = 0.08  # tinted virtual-piece cells stop short of the grid lines


def _glyph(piece_cells: Sequence[tuple[int, int]], cx: float, cy: float) -> list[Rectangle]:
    """Squares of a polyomino centred on (cx, cy)."""
    xs = [dx for dx, _ in piece_cells]
    ys = [dy for _, dy in piece_cells]
    mx, my = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
    half = GLYPH_SQUARE / 2
    return [Rectangle((cx + (dx - mx) * GLYPH_STEP - half, cy + (dy - my) * GLYPH_STEP - half),
                      GLYPH_SQUARE, GLYPH_SQUARE) for dx, dy in piece_cells]


def draw_piece_panel(
    ax: Axes,
    panel: PiecePanel,
    library: Sequence[str] = LIBRARY,
    path: Sequence[int] | None = None,
    title: str | None = None,
    *,
    gid: str | None = None,
) -> None:
    """Draw a piece panel on ``ax``; with ``path`` (vertex sequence), the path and the virtual pieces.

    Raises ValueError on a bad library, piece type or path.
    """
    pieces = parse_library(library)
    g = panel.geometry
    if any(not 0 <= t < len(pieces) for t in panel.types):
        raise ValueError(f"piece types must be 0..{len(pieces) - 1}, got {panel.types}")
    draw_puzzle(ax, g, path=path, title=title, gid=gid)
    prefix = gid if gid is not None else f"ax{ax.figure.axes.index(ax)}"
    if path is not None:
        _draw_virtual(ax, panel, pieces, path, prefix)
    glyphs = []
    for c, t in zip(panel.cells, panel.types):
        x, y = g.cell_xy(c)
        glyphs += _glyph(pieces[t].cells, MARGIN + x + 0.5, MARGIN + y + 0.5)
    ax.add_collection(PatchCollection(glyphs, facecolor=PIECE_COLOUR, edgecolor="none", zorder=2.5,
                                      gid=f"{prefix}-pieces"))


def _draw_virtual(ax: Axes, panel: PiecePanel, pieces, path: Sequence[int], prefix: str) -> None:
    """Tint the cells of one tiling of each symbol region (nothing for a region that cannot be tiled)."""
    g = panel.geometry
    regions = _regions_of(g.width, g.height, path)
    patches, colours = [], []
    n = 0
    for lab in sorted({regions[c] for c in panel.cells}):
        mask = sum(1 << c for c in range(g.num_cells) if regions[c] == lab)
        types = [t for c, t in zip(panel.cells, panel.types) if regions[c] == lab]
        for t, anchor in tiling_placements(mask, g.width, g.height, types, pieces) or []:
            ax0, ay0 = g.cell_xy(anchor)
            for dx, dy in pieces[t].cells:
                patches.append(Rectangle((MARGIN + ax0 + dx + VIRTUAL_INSET, MARGIN + ay0 + dy + VIRTUAL_INSET),
                                         1 - 2 * VIRTUAL_INSET, 1 - 2 * VIRTUAL_INSET))
                colours.append(VIRTUAL_TINTS[n % len(VIRTUAL_TINTS)])
            n += 1
    ax.add_collection(PatchCollection(patches, facecolor=colours, edgecolor="none", alpha=0.45, zorder=1.2,
                                      gid=f"{prefix}-virtual"))


def _regions_of(width: int, height: int, path: Sequence[int]) -> list[int]:
    """Region label of each cell under a vertex path (looked up in the board's path list)."""
    ps = paths_for(width, height)
    target = tuple(int(v) for v in path)
    for i in range(len(ps)):
        if ps.path(i) == target:
            return ps.regions[i].tolist()
    raise ValueError(f"{target} is not a start-to-goal path of a {width}x{height} board")


def _figure(columns: int, rows: int, g, caption_rows: int, title: str | None) -> tuple[Figure, list[list[Axes]]]:
    """A grid of panel axes with room for a caption under each and a title on top (inches)."""
    panel_in = 2.0
    gap_in, caption_in, title_in = 0.25, 0.35 * caption_rows, 0.5 if title else 0.0
    ratio = (g.height + 2 * MARGIN) / (g.width + 2 * MARGIN)
    cell_w, cell_h = panel_in + gap_in, panel_in * ratio + caption_in + gap_in
    width, height = columns * cell_w + gap_in, rows * cell_h + gap_in + title_in
    fig = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)
    axes = []
    for r in range(rows):
        row = []
        for c in range(columns):
            left = gap_in + c * cell_w
            bottom = height - title_in - (r + 1) * cell_h + caption_in + gap_in / 2
            row.append(fig.add_axes((left / width, bottom / height, panel_in / width, panel_in * ratio / height)))
        axes.append(row)
    if title:
        fig.text(0.5, 1 - title_in / 2 / height, title, ha="center", va="center", fontsize=12, color=TEXT_COLOUR)
    return fig, axes


def _caption(ax: Axes, text: str) -> None:
    ax.text(0.5, -0.04, text, transform=ax.transAxes, ha="center", va="top", fontsize=9, color=TEXT_COLOUR)


def panel_figure(panel: PiecePanel, library: Sequence[str] = LIBRARY, path: Sequence[int] | None = None,
                 caption: str | None = None) -> Figure:
    """One piece panel (with ``path``: solved) and an optional caption."""
    fig, axes = _figure(1, 1, panel.geometry, 1 if caption else 0, None)
    draw_piece_panel(axes[0][0], panel, library, path, gid="panel")
    if caption:
        _caption(axes[0][0], caption)
    return fig


def triple_figure(problem: TripleProblem, triple: Sequence[int]) -> Figure:
    """Figure 3: the three sub-panels in a row, and below them the same row solved by the single joint path."""
    info = triple_info(problem, triple)
    path = paths_for(problem.width, problem.height).path(info.path)
    title = (f"score {info.score}: pairs {'/'.join(map(str, info.pair_counts))} joint solutions, "
             f"one joint path {info.moves}")
    fig, axes = _figure(3, 2, problem.panel(info.panels[0]).geometry, 1, title)
    for col, (name, rank, count) in enumerate(zip("ABC", info.panels, info.set_counts)):
        panel = problem.panel(rank)
        draw_piece_panel(axes[0][col], panel, problem.library, gid=f"{name}")
        _caption(axes[0][col], f"{name} · rank {rank} · {count} solutions")
        draw_piece_panel(axes[1][col], panel, problem.library, path, gid=f"{name}-solved")
        _caption(axes[1][col], f"{name} solved")
    return fig


def subpanels_figure(problem: TripleProblem, triple: Sequence[int]) -> Figure:
    """Each sub-panel of a triple alone, with its number of solutions (its longest solution drawn)."""
    info = triple_info(problem, triple)
    ps = paths_for(problem.width, problem.height)
    fig, axes = _figure(3, 1, ps.geometry, 1, "each sub-panel alone")
    for col, (name, rank, count, d) in enumerate(zip("ABC", info.panels, info.set_counts, info.classes)):
        bits = problem.bits[d]
        first = next(64 * w + (int(x) & -int(x)).bit_length() - 1 for w, x in enumerate(bits) if x)
        draw_piece_panel(axes[0][col], problem.panel(rank), problem.library, ps.path(first), gid=name)
        _caption(axes[0][col], f"{name}: {count} solutions (longest shown)")
    return fig
