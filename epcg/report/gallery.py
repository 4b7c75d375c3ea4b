"""What a job kind hands report.html: gallery groups of found objects, and plot figures.

A kind's :class:`~epcg.api.Run` subclass fills ``gallery(items)`` with
:class:`Group`\\ s of :class:`Item`\\ s (a found object and the values the page's
filters act on) and ``plots(groups)`` with ``(title, PNG)`` pairs; the page
(:mod:`epcg.report.html`) never asks which kind it shows.

>>> share(32, 5), sorted(spread(10, 3))
(6, [0, 4, 9])
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from epcg.report.found import Found


@dataclass
class Item:
    """One gallery entry: a found object, its group and the values the filters act on."""

    found: Found
    group: str
    attrs: dict[str, Any]


@dataclass
class Group:
    """A gallery section (a Witness row, a Fling! layer, a variant, an experiment, a user's row)."""

    name: str
    total: int
    """How many such objects the run found (the gallery draws a sample when fewer)."""
    items: list[Item]
    """The sample the page draws."""
    every: Iterable[Item] | None = None
    """Every object the run kept of the group, in order, never drawn (its caption and filter values only), for
    the page to list and page through; None when the run keeps no list of them (the sample alone is listed)."""


class Reported(Protocol):
    """What report.html reads of a run: an :class:`epcg.api.Run` (a kind's subclass fills the last three)."""

    name: str
    domain: str
    path: Path | str
    results: dict[str, Any]
    summary: str
    dir: Any
    """The run directory (:class:`epcg.runtime.store.RunDir`) the page is written into."""
    FILTERS: tuple[tuple[str, str, str], ...]

    def figures(self) -> list[Path]: ...

    def gallery(self, items: int) -> list[Group]: ...

    def plots(self, groups: list[Group]) -> list[tuple[str, bytes]]: ...


def share(items: int, groups: int) -> int:
    """Gallery entries per group when ``items`` are shared among ``groups`` (at least two each)."""
    return max(2, items // max(1, groups))


def spread(total: int, n: int) -> set[int]:
    """About ``n`` indices spread evenly over ``range(total)``."""
    return set(np.linspace(0, total - 1, min(n, total)).round().astype(int).tolist()) if total else set()


def plot_axes() -> tuple[Figure, Axes]:
    """A figure of the report's plot size with one axes, ready for :func:`epcg.report.pictures.png_bytes`."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = Figure(figsize=(6.5, 3.4), layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()
