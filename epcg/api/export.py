"""Found content leaves epcg: JSON lines a level editor or game engine reads, plus pictures.

``Run.export(DIR)`` (and ``epcg export RUN_DIR``) writes

    DIR/found.jsonl        one JSON object per line, one line per puzzle, board, triple or map
    DIR/pictures/ID.png    its picture with the solution (or .svg; none with pictures=None)

Every line has ``schema`` (``"epcg-found/1"``), ``id`` (unique in the run, also the
picture's file name), ``job``, ``type`` and ``picture`` (the path relative to DIR, or
null), then the fields of its type:

``witness-puzzle``
    ``puzzle_kind`` (must-cross, regions, joint), ``row``, ``width``, ``height``
    (cells), ``k`` (list), ``rank``; ``must_cross`` (names such as ``"vertex (1,0)"``,
    ``"edge (0,1)-(1,1)"``, x right and y up from the start at the bottom left) and
    ``must_cross_positions`` (indices of :mod:`epcg.games.witness.domain.geometry`);
    ``squares`` (``{"cell": [x, y], "colour": "black" | "white"}``); ``solutions``
    (paths solving it), ``longest_solution`` (edges), ``solution`` (moves ``U R D L``
    from the start to the goal at the top right), ``every_solution`` (every solution's
    moves, longest first, when there are at most 4, else null; the picture draws each).
``fling-board``
    ``width``, ``height``, ``pieces``, ``rank``; ``board`` (rows from the top, ``o``
    a piece, ``.`` empty); ``unique``; ``ratio``, ``brute_force_nodes``,
    ``expert_nodes`` (null unless unique); ``solution`` (moves such as ``a1D``: column
    letter, row number from the top, direction R L D U); ``orbit_size`` (the boards of its
    orbit: itself, its mirror images and half turn). Every board is exported, mirror images
    included, unless ``orbits=true`` asks for one board per orbit (the lowest rank).
``witness-triple``
    ``variant``, ``width``, ``height``, ``score``, ``moves`` (the one joint solution),
    ``path``, ``panels`` (three of ``{"rank", "cells", "pieces"}``, cells numbered
    ``y * width + x`` from the bottom left, pieces as rows top to bottom, ``#`` a cell,
    ``/`` between rows), ``set_counts``, ``pair_counts``, ``classes``, ``arrangements``.
``scan-design`` (a run of a user's scan space, ``space = "pkg.mod:NAME"``)
    ``space``, ``row``, ``params`` (the row's keyword arguments), ``rank``, ``score``,
    ``role`` (``min``: at the row's lowest score; ``top``: among its highest; ``max``: at
    its highest), ``text`` (the space's ``decode(rank)`` as JSON text when it is a dict, list,
    number or bool, so ``json.loads`` reads it back; else as ``str``). The picture is the
    space's ``render``: an SVG file when it draws SVG text, whatever ``pictures`` asks.
``retrograde-state`` (a run of a user's retrograde space)
    ``space``, ``layer``, ``rank``, ``bits`` (``{name: true|false}``), ``text`` (the
    space's ``describe(layer, rank)``). Drawn by the space's ``render(layer, rank)``, or
    as its text.
``dwp-map``
    ``experiment``, ``run``, ``seed``, ``fitness``, ``rooms``; ``grid`` (rows of digits:
    0 empty, 1 room, 2 corridor, 3 start room, 4 obstacle), ``room_list`` (``[row, col,
    height, width, kind]``).

>>> SCHEMA
'epcg-found/1'
"""

from __future__ import annotations

import errno
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from epcg.runtime.errors import OutputFailed, UserError

SCHEMA = "epcg-found/1"


@dataclass(frozen=True)
class Exported:
    """What an export wrote: the JSONL file, how many objects, and whether ``limit`` left matching ones out."""

    path: Path
    count: int
    cut: bool


def export(run: Any, path: Path, *, limit: int | None = None, pictures: str | None = "png",
           **filters: Any) -> Exported:
    """Write ``path/found.jsonl`` (and ``path/pictures/``) for what ``run`` found, at most ``limit`` objects."""
    if pictures not in ("png", "svg", None):
        raise ValueError(f"pictures must be 'png', 'svg' or None, got {pictures!r}")
    items = run.found(**filters)
    first = next(items, None)  # a bad filter fails here, before anything is written
    chosen = itertools.chain([first] if first is not None else [], items)
    try:
        out, count = _write(run, path, pictures, itertools.islice(chosen, limit))
    except OSError as exc:
        where = exc.filename or path
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise OutputFailed(f"cannot write {where}: {exc.strerror}") from None
        raise UserError(f"cannot write {where}: {exc.strerror}") from None
    return Exported(out, count, cut=limit is not None and count == limit and next(chosen, None) is not None)


def _write(run: Any, path: Path, pictures: str | None, items: Iterator[Any]) -> tuple[Path, int]:
    path.mkdir(parents=True, exist_ok=True)
    if pictures:
        (path / "pictures").mkdir(exist_ok=True)
    out = path / "found.jsonl"
    count = 0
    with out.open("w") as handle:
        for item in items:
            data = item.to_dict()
            ident = item.ident()
            picture = None
            if pictures:
                suffix, drawn = item.picture(pictures)
                picture = f"pictures/{ident}{suffix}"
                (path / picture).write_bytes(drawn)
            line = {"schema": SCHEMA, "id": ident, "job": run.name, **data, "picture": picture}
            handle.write(json.dumps(line) + "\n")
            count += 1
    return out, count
