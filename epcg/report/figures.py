"""Saving pictures: every domain's figures are written the same way.

Figures are built on ``matplotlib.figure.Figure`` with the Agg canvas (no
pyplot state). Saved SVGs carry no date and stable ids, so the same figure
gives the same bytes run after run.
"""

from __future__ import annotations

import pathlib

from matplotlib import rc_context
from matplotlib.figure import Figure

DPI = 110
"""Resolution of the PNG copies."""


def save_figure(fig: Figure, stem: pathlib.Path | str, dpi: int = DPI) -> list[pathlib.Path]:
    """Write ``stem.svg`` and ``stem.png``, clear ``fig`` (nothing else holds it), return both paths."""
    stem = pathlib.Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    svg, png = stem.with_suffix(".svg"), stem.with_suffix(".png")
    with rc_context({"svg.hashsalt": "epcg"}):
        fig.savefig(svg, format="svg", metadata={"Date": None})
    fig.savefig(png, format="png", dpi=dpi)
    fig.clear()
    return [svg, png]
