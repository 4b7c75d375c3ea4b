"""What a run of a user's own content space found: scan designs and retrograde states, drawn by the space.

The generic job kinds fill the same :class:`~epcg.report.found.Found` interface as
the built-in games: a :class:`Design` is one rank of a scan row (at the
minimum, among the top, or at the maximum), a :class:`State` one state of a
retrograde layer with its bits. Each draws itself through its space's
``render`` (SVG text or a matplotlib figure); a space without one is drawn as
its ``describe`` text (or decoded value), so every found object has a picture.

>>> d = Design(job="j", space="m:S", row="row-000", params={"base": 10}, rank=7, score=7, role="min",
...            text="seven")
>>> d.to_dict()["type"], d.ident(), d.caption()
('scan-design', 'row-000-min-7', 'row-000 (base=10): rank 7, score 7 (at the minimum)')
>>> d.picture("png")[0]
'.png'
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from epcg.report.found import Found
from epcg.report.pictures import data_uri, png_bytes, svg_text
from epcg.runtime.text import figure_text

ROLES = {"min": "at the minimum", "top": "among the top scores", "max": "at the maximum",
         "kept": "in a band the job kept"}
"""The roles a scan design can have, and how a caption says them."""


def decoded_text(value: Any) -> str:
    """A space's decoded value as text: JSON for what JSON can hold (a dict, list, number, string, bool), else
    ``str``; so an exported design's ``text`` parses with ``json.loads`` whenever its value can.

    >>> decoded_text({"on": [1, 2], "n": 3}), decoded_text("a b"), decoded_text((1, 2)), decoded_text({1, 2})
    ('{"on": [1, 2], "n": 3}', 'a b', '[1, 2]', '{1, 2}')
    """
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, default=_plain)
    except (TypeError, ValueError):
        return str(value)


def _plain(value: Any) -> Any:
    """NumPy scalars and arrays as plain numbers and lists (json's ``default``); anything else is not JSON."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(type(value).__name__)


def text_figure(text: str, title: str = "") -> Figure:
    """A picture of a design that has only a text form (its ``describe`` or decoded value)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    lines = text.splitlines() or [""]
    fig = Figure(figsize=(max(2.4, 0.11 * max(len(line) for line in lines) + 0.6), 0.9 + 0.22 * len(lines)))
    FigureCanvasAgg(fig)
    fig.text(0.5, 0.5, figure_text(text), family="monospace", ha="center", va="center", fontsize=11)
    if title:
        fig.suptitle(figure_text(title), fontsize=8, color="#555")
    return fig


class _Drawn(Found):
    """A found object drawn by a function of its space: ``draw()`` gives SVG text, a Figure, or None."""

    text: str

    def draw(self) -> Any:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def _picture(self) -> Any:
        picture = self.draw()
        return picture if picture is not None else text_figure(self.text or str(self.ident()), self.caption())

    def figure(self) -> Figure:
        picture = self._picture()
        return picture if isinstance(picture, Figure) else text_figure(self.text, self.caption())

    def picture(self, fmt: str = "png", dpi: int = 80) -> tuple[str, bytes]:
        picture = self._picture()
        if isinstance(picture, str):
            return ".svg", picture.encode()
        return (".png", png_bytes(picture, dpi=dpi)) if fmt == "png" else (".svg", svg_text(picture).encode())

    def thumbnail(self, dpi: int = 75) -> str:
        suffix, data = self.picture("png", dpi)
        if suffix == ".svg":
            import base64

            return "data:image/svg+xml;base64," + base64.b64encode(data).decode("ascii")
        return data_uri(data)


@dataclass(frozen=True, eq=False)
class Design(_Drawn):
    """One rank of a scan row: its score and why it was kept (``role``: min, top or max)."""

    job: str
    space: str
    """The job's ``space`` import path."""
    row: str
    params: dict[str, Any]
    rank: int
    score: int | None
    role: str
    text: str = ""
    """The space's ``decode(rank)`` as text: JSON when the value is a dict, list or number (empty without
    ``decode``)."""
    render: Callable[[Any], Any] | None = field(default=None, repr=False)
    decode: Callable[[int], Any] | None = field(default=None, repr=False)
    copies: int | None = None
    """Listed with ``distinct="patterns"``: how many of the designs listed share its pattern."""
    kind: str = field(default="scan-design", init=False)

    def draw(self) -> Any:
        if self.render is None:
            return None
        return self.render(self.decode(self.rank) if self.decode is not None else self.rank)

    def caption(self) -> str:
        params = ", ".join(f"{k}={v}" for k, v in self.params.items())
        where = f"{self.row} ({params})" if params else self.row
        return f"{where}: rank {self.rank}, score {self.score} ({ROLES[self.role]})"

    def ident(self) -> str:
        return f"{self.row}-{self.role}-{self.rank}"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "space": self.space, "row": self.row, "params": self.params, "rank": self.rank,
                "score": self.score, "role": self.role, "text": self.text,
                **({"copies": self.copies} if self.copies is not None else {})}


@dataclass(frozen=True, eq=False)
class State(_Drawn):
    """One state of a retrograde layer with the bits it has (e.g. solvable)."""

    job: str
    space: str
    """The space's name."""
    layer: int
    rank: int
    bits: dict[str, bool]
    text: str = ""
    """The space's ``describe(layer, rank)`` (empty without it)."""
    render: Callable[[int, int], Any] | None = field(default=None, repr=False)
    row: str = ""
    """The row of a family job (``r000``, ...), empty for one space."""
    kind: str = field(default="retrograde-state", init=False)

    def draw(self) -> Any:
        return None if self.render is None else self.render(self.layer, self.rank)

    def caption(self) -> str:
        bits = ", ".join(name for name, on in self.bits.items() if on) or "no bit set"
        return f"{f'{self.row} ' if self.row else ''}layer {self.layer}, rank {self.rank}: {bits}"

    def ident(self) -> str:
        return f"{f'{self.row}-' if self.row else ''}layer-{self.layer}-{self.rank}"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "space": self.space, **({"row": self.row} if self.row else {}),
                "layer": self.layer, "rank": self.rank, "bits": self.bits, "text": self.text}


def set_bits(words: Any, chunk: int = 1 << 16) -> Iterator[int]:
    """Ranks of the set bits of a uint64 word array (a Zarr array or numpy), bit ``r % 64`` of word ``r // 64``,
    read ``chunk`` words at a time.

    >>> list(set_bits(np.array([5, 1 << 63], dtype=np.uint64)))
    [0, 2, 127]
    """
    total = words.shape[0]
    for a in range(0, total, chunk):
        block = np.ascontiguousarray(np.asarray(words[a:a + chunk]), dtype=np.uint64)
        bits = np.unpackbits(block.view(np.uint8), bitorder="little")
        for r in np.flatnonzero(bits):
            yield 64 * a + int(r)
