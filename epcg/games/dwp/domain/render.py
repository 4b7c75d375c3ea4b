"""Pictures of DWP maps (paper Figures 2, 4, 6-8) and fitness box plots (Figures 3 and 5).

Figures are built with :class:`matplotlib.figure.Figure` on an Agg canvas: no
pyplot, no display. A map is drawn cell by cell from its int8 grid (start room
red, rooms grey, corridors blue, obstacles light blue, empty white, with a
legend of the kinds the map has); when the room list is given, each room and
corridor also gets a thin outline, so rooms that touch stay distinguishable.

>>> import numpy as np
>>> g = np.zeros((6, 6), np.int8); g[1:3, 1:3] = 3; g[3, 1:4] = 2; g[0, 5] = 4
>>> fig = map_figure(g, np.array([[1, 1, 2, 2, 3], [3, 1, 1, 3, 2]]), title="tiny")
>>> len(fig.axes), [t.get_text() for t in fig.legends[0].get_texts()]
(1, ['start room', 'corridor', 'obstacle'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PatchCollection
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from epcg.report.figures import save_figure

__all__ = ["box_plot", "draw_map", "map_figure", "save_figure"]

# Colours by cell value: empty, room, corridor, start room, obstacle.
CELL_COLOURS = ("#ffffff", "#9a9a9a", "#2f5fd0", "#d62728", "#b3dcf2")
LEGEND = ((3, "start room"), (1, "room"), (2, "corridor"), (4, "obstacle"))
"""The legend's entries, as cell value and name, in the order they are listed."""
OUTLINE = "#303030"
FRAME = "#606060"


def draw_map(ax: Axes, grid: np.ndarray, rooms: np.ndarray | None = None, title: str | None = None) -> None:
    """Draw ``grid`` (and outlines of ``rooms`` rows ``(row, col, height, width, kind)``) on ``ax``."""
    grid = np.asarray(grid)
    rows, cols = grid.shape
    ax.imshow(grid, cmap=ListedColormap(CELL_COLOURS), vmin=-0.5, vmax=len(CELL_COLOURS) - 0.5,
              interpolation="nearest", extent=(0, cols, rows, 0))
    if rooms is not None and len(rooms):
        outlines = [Rectangle((c0, r0), w, h) for r0, c0, h, w, _ in np.asarray(rooms).tolist()]
        ax.add_collection(PatchCollection(outlines, facecolor="none", edgecolor=OUTLINE, linewidth=0.4))
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_color(FRAME)
    if title:
        ax.set_title(title, fontsize=9)


def map_figure(grid: np.ndarray, rooms: np.ndarray | None = None, *, title: str | None = None,
               size: float = 5.0) -> Figure:
    """A figure holding one map, ``size`` inches on its longer side."""
    rows, cols = np.shape(grid)
    scale = size / max(rows, cols)
    fig = Figure(figsize=(cols * scale, rows * scale + (0.3 if title else 0.0) + 0.35), layout="constrained")
    FigureCanvasAgg(fig)
    draw_map(fig.add_subplot(), grid, rooms, title)
    present = set(np.unique(grid).tolist())
    handles = [Patch(facecolor=CELL_COLOURS[value], edgecolor=FRAME, linewidth=0.4, label=name)
               for value, name in LEGEND if value in present]
    if handles:
        fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=7, frameon=False,
                   handlelength=1.0, columnspacing=1.0)
    return fig


def box_plot(results_by_experiment: Mapping[int, Sequence[float]], *,
             title: str = "Fitness for different experiments.") -> Figure:
    """Box plots of the best fitness of each run, one box per experiment, in experiment order."""
    if not results_by_experiment:
        raise ValueError("no experiments to plot")
    keys = sorted(results_by_experiment)
    fig = Figure(figsize=(max(4.0, 0.5 * len(keys) + 1.5), 4.0), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.boxplot([np.asarray(results_by_experiment[k], dtype=float) for k in keys],
               tick_labels=[str(k) for k in keys], widths=0.6,
               medianprops={"color": CELL_COLOURS[3]}, flierprops={"markersize": 3})
    ax.set_xlabel("Experiment")
    ax.set_ylabel("Best fitness (A²/B)")
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    return fig
