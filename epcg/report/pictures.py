"""Figures as bytes and text: what found objects hand to Jupyter, the HTML report and exports.

>>> from matplotlib.figure import Figure
>>> fig = Figure(figsize=(1, 1))
>>> png_bytes(fig)[:4], svg_text(fig).startswith("<?xml")
(b'\\x89PNG', True)
"""

from __future__ import annotations

import base64
import io

from matplotlib import rc_context
from matplotlib.figure import Figure

from epcg.report.figures import DPI


def png_bytes(fig: Figure, dpi: int = DPI) -> bytes:
    """The figure as PNG bytes."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def svg_text(fig: Figure) -> str:
    """The figure as an SVG document with stable ids and no date (same figure, same text)."""
    buffer = io.StringIO()
    with rc_context({"svg.hashsalt": "epcg"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def data_uri(png: bytes) -> str:
    """A ``data:image/png;base64,...`` URI: a picture an HTML page carries inline.

    >>> data_uri(b"x")
    'data:image/png;base64,eA=='
    """
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
