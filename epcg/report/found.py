"""What a run found: one puzzle, board, panel triple or map, drawn on demand.

Every found object is a small frozen value with ``to_dict()`` (the export
schema, plain JSON), ``figure()`` (a matplotlib figure drawn by the domain's
render code, solution included), and ``png()``/``svg()``. Jupyter shows it as
a picture through ``_repr_png_``, as python-chess shows boards.
"""

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure

from epcg.report.pictures import data_uri, png_bytes, svg_text


class Found:
    """Base of the found objects: pictures from :meth:`figure`, data from :meth:`to_dict`."""

    kind: str = ""
    """What this is in the export schema: ``witness-puzzle``, ``fling-board``, ``witness-triple``, ``dwp-map``."""

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def figure(self) -> Figure:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def caption(self) -> str:
        """One line saying what this is (the picture's caption in galleries)."""
        return self.kind

    def ident(self) -> str:
        """A name unique within its run (file names of exported pictures)."""
        return self.kind

    def png(self, dpi: int = 80) -> bytes:
        """The picture as PNG bytes."""
        return png_bytes(self.figure(), dpi=dpi)

    def svg(self) -> str:
        """The picture as an SVG document."""
        return svg_text(self.figure())

    def picture(self, fmt: str = "png", dpi: int = 80) -> tuple[str, bytes]:
        """The picture as ``(suffix, bytes)``, PNG or SVG as asked (a user's space that draws only SVG gives SVG)."""
        return (".png", self.png(dpi)) if fmt == "png" else (".svg", self.svg().encode())

    def thumbnail(self, dpi: int = 75) -> str:
        """The picture as a data URI, for a page that carries its pictures inline."""
        return data_uri(png_bytes(self.figure(), dpi=dpi))

    def _repr_png_(self) -> bytes:
        return self.png()
