"""A Witness job's table rows: ``'4x4'`` (paths), ``'4x4:5'`` (must-cross, regions), ``'3x4:2+4'`` (joint)."""

from __future__ import annotations

import re

import pydantic

from epcg.games.witness.domain import scan
from epcg.games.witness.domain.frontier import MAX_SLOTS
from epcg.games.witness.domain.geometry import MAX_SIDE, Geometry

_ROW = re.compile(r"^(\d+)x(\d+)(?::(\d+)(?:\+(\d+))?)?$")
MAX_PUZZLES = 1 << 40
"""Largest puzzle space one row may scan (about 10^12 puzzles)."""
MAX_COUNT_SIDE = 64
"""Longest side of a paths row counted without listing (the shorter may be up to ``MAX_SLOTS - 2``)."""


class Row(pydantic.BaseModel):
    """One table row: a board and its constraint counts."""

    model_config = pydantic.ConfigDict(frozen=True)
    width: int
    height: int
    k: tuple[int, ...] = ()

    @property
    def geometry(self) -> Geometry:
        return Geometry(self.width, self.height)

    @property
    def name(self) -> str:
        """The row in stage, chunk and store names: ``3x4-k2+4``."""
        ks = "+".join(str(k) for k in self.k)
        return f"{self.width}x{self.height}" + (f"-k{ks}" if ks else "")

    @property
    def key(self) -> str:
        """The row as a user writes and reads it (job files, filters, exports, captions): ``3x4:2+4``."""
        ks = "+".join(str(k) for k in self.k)
        return f"{self.width}x{self.height}" + (f":{ks}" if ks else "")

    @property
    def listed(self) -> bool:
        """Whether this board's paths can be listed (else a paths row counts them only)."""
        return max(self.width, self.height) <= MAX_SIDE

    @property
    def kernel_k(self) -> int | tuple[int, int]:
        return self.k if len(self.k) == 2 else self.k[0]


def parse_row(text: str, kind: str) -> Row:
    """Parse ``'4x4'`` (paths), ``'4x4:5'`` (must-cross, regions) or ``'3x4:2+4'`` (joint).

    >>> parse_row("3x4:2+4", "joint").name, parse_row(" 3x4:2+4", "joint").key
    ('3x4-k2+4', '3x4:2+4')
    """
    match = _ROW.match(text.strip())
    shapes = {"paths": "WxH", "joint": "WxH:K+K", "must-cross": "WxH:K", "regions": "WxH:K"}
    if not match:
        raise ValueError(f"row {text!r} is not of the form {shapes[kind]}")
    w, h = int(match[1]), int(match[2])
    ks = tuple(int(g) for g in match.groups()[2:] if g is not None)
    if len(ks) != {"paths": 0, "joint": 2}.get(kind, 1):
        raise ValueError(f"row {text!r} is not of the form {shapes[kind]} for kind {kind!r}")
    if kind == "paths":
        if not (1 <= min(w, h) <= MAX_SLOTS - 2 and max(w, h) <= MAX_COUNT_SIDE):
            raise ValueError(f"row {text!r}: paths are counted on boards up to {MAX_SLOTS - 2} cells on the "
                             f"shorter side and {MAX_COUNT_SIDE} on the longer")
        return Row(width=w, height=h)
    if not (1 <= w <= MAX_SIDE and 1 <= h <= MAX_SIDE):
        raise ValueError(f"row {text!r}: boards up to {MAX_SIDE}x{MAX_SIDE} are supported")
    g = Geometry(w, h)
    limits = {"must-cross": (g.num_positions,), "regions": (g.num_cells,), "joint": (g.num_positions, g.num_cells)}
    for k, limit, what in zip(ks, limits.get(kind, ()), ("positions", "cells")):
        if not 1 <= k <= limit:
            where = "must-cross positions" if (kind != "regions" and what == "positions") else "cells"
            raise ValueError(f"row {text!r}: k={k} must be 1..{limit}, the {where} of a {w}x{h} board")
    row = Row(width=w, height=h, k=ks)
    if kind != "paths" and scan.max_rank(kind, w, h, row.kernel_k) > MAX_PUZZLES:
        raise ValueError(f"row {text!r} has more than 2^40 puzzles; epcg scans at most that per row")
    return row
