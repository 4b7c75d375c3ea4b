"""Witness panels for content spaces of one's own: which paths cross each must-cross position, and pictures.

``examples/must-cross`` builds its space on these two functions only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.figure import Figure


def crossing_bitsets(width: int, height: int) -> np.ndarray:
    """Which paths of a ``width × height`` Witness panel cross each must-cross position: a ``(positions, words)``
    uint64 array, bit ``p % 64`` of word ``p // 64`` of row ``i`` set when path ``p`` passes position ``i``.

    For content spaces of one's own built on Witness panels (``examples/must-cross``). Positions are the
    panel's vertices, then its edges (:meth:`must_cross_figure` draws them); paths run from the bottom left
    corner to the top right one without visiting a vertex twice.

    >>> cross = crossing_bitsets(2, 2)
    >>> cross.shape, int(sum(bin(int(w)).count("1") for w in cross[0]))   # 21 positions; 12 paths, all through the start
    ((21, 1), 12)
    """
    from epcg.games.witness.domain.bitsets import bitsets_for

    return np.ascontiguousarray(bitsets_for(width, height).cross)


def must_cross_figure(width: int, height: int, positions: Any, caption: str | None = None) -> Figure:
    """A ``width × height`` panel with a must-cross hexagon on each of ``positions`` (as numbered by
    :func:`crossing_bitsets`): a space's ``render`` for puzzles of that kind."""
    from epcg.games.witness.domain.geometry import Geometry
    from epcg.games.witness.domain.render import puzzle_figure

    return puzzle_figure(Geometry(width, height), [int(p) for p in positions], caption=caption)
