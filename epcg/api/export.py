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

import contextlib
import errno
import itertools
import json
import numbers
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from epcg.runtime.checked import names_space
from epcg.runtime.errors import InvalidValue, OutputFailed, UserError

SCHEMA = "epcg-found/1"


LIMIT = 1000
"""Objects an export writes at most unless told otherwise (``epcg export --limit``, ``Run.export(limit=)``)."""
FILES = ("found.jsonl", "pictures")
"""What an export puts in its directory: a directory holding anything else is not replaced."""


@dataclass(frozen=True)
class Exported:
    """What an export wrote: the JSONL file, how many objects, whether ``limit`` left matching ones out, and
    whether its objects lack the text and pictures only the job's own space can give (an untrusted run of a
    user's space: listed by rank and score)."""

    path: Path
    count: int
    cut: bool
    undrawn: bool = False


def export(run: Any, path: Path, *, limit: int | None = LIMIT, pictures: str | None = "png",
           **filters: Any) -> Exported:
    """Write ``path/found.jsonl`` (and ``path/pictures/``) for what ``run`` found, at most ``limit`` objects.

    The export is written into a directory beside ``path`` and moved into place when it is whole, replacing the
    previous export there: an export that fails or is interrupted leaves the previous one, or nothing, never a
    mixture or a part. ``path`` must be absent, empty, or a previous export (``found.jsonl``, ``pictures/``).
    """
    if pictures not in ("png", "svg", None):
        raise InvalidValue(f"pictures must be 'png', 'svg' or None, got {pictures!r}")
    if limit is not None and not (isinstance(limit, numbers.Integral) and not isinstance(limit, bool) and limit >= 1):
        raise InvalidValue(f"limit must be a number of objects >= 1 (or None for all), got {limit!r}")
    _check_destination(path)
    items = run.found(**filters)
    first = next(items, None)  # a bad filter fails here, before anything is written
    chosen = itertools.chain([first] if first is not None else [], items)
    staging = path.parent / f".{path.name}.epcg-export-{os.getpid()}"
    with _only_export(path):
        previous = (path / "found.jsonl").exists()
        try:
            _clear_leftovers(path)
            shutil.rmtree(staging, ignore_errors=True)
            count = _write(run, staging, pictures, itertools.islice(chosen, limit), limit)
            cut = limit is not None and count == limit and next(chosen, None) is not None
            _swap(staging, path)
        except OSError as exc:
            where = str(exc.filename or path).replace(str(staging), str(path))  # the staging directory is ours
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                kept = f"the previous export in {path} is kept" if previous else f"nothing was written to {path}"
                raise OutputFailed(f"cannot write {where}: {exc.strerror}; {kept}") from None
            raise UserError(f"cannot write {where}: {exc.strerror}") from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return Exported(path / "found.jsonl", count, cut, count > 0 and names_space(run.job.to_dict()) and not run.trusted)


@contextlib.contextmanager
def _only_export(path: Path) -> Iterator[None]:
    """Hold ``path`` for this export: a second export to it at the same moment is refused in one line (exit
    status 75), not swapped in over the first unseen. The lock is an flock on a file beside ``path`` (the kernel
    drops it with its process), removed by its holder at the end; a lock taken on a file removed meanwhile is
    taken again on the new one."""
    import fcntl

    from epcg.runtime.errors import Conflict

    lock = path.parent / f".{path.name}.epcg-export.lock"
    while True:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = open(lock, "a+")
        except OSError as exc:
            raise UserError(f"cannot write {path}: {exc.strerror}") from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise Conflict(f"--out {path} is being written by another export ({holder}); wait for it to finish "
                           "or export to another directory") from None
        try:
            current = os.fstat(handle.fileno()).st_ino == os.stat(lock).st_ino
        except FileNotFoundError:
            current = False
        if current:
            break
        handle.close()
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}\n")
        handle.flush()
        yield
    finally:
        with contextlib.suppress(OSError):
            lock.unlink()  # still held: an export that opened it meanwhile finds it removed and takes a new one
        handle.close()


def _check_destination(path: Path) -> None:
    """Refuse a destination an export would wrongly replace: a file, or a directory holding other files."""
    if path.exists() and not path.is_dir():
        raise UserError(f"--out {path} is a file, not a directory")
    if path.is_dir():
        other = sorted(p.name for p in path.iterdir() if p.name not in FILES)
        if other:
            raise UserError(f"--out {path} holds files that are not an export ({', '.join(other[:3])}); "
                            "an export replaces its directory: choose an empty or new one")


def _clear_leftovers(path: Path) -> None:
    """Remove staging and replaced directories of earlier exports to ``path``: called under the export's lock,
    which every export to ``path`` holds while it has such a directory, so any found is a killed export's."""
    for prefix in ("export", "old"):
        for left in path.parent.glob(f".{path.name}.epcg-{prefix}-*"):
            if left.is_dir():
                shutil.rmtree(left, ignore_errors=True)


def _swap(staging: Path, path: Path) -> None:
    """Put the whole new export at ``path``: the old one is renamed aside, the new one renamed in, the old one
    removed (a kill between the two renames leaves no export at ``path``, never a mixture)."""
    old = path.parent / f".{path.name}.epcg-old-{os.getpid()}"
    if path.exists():
        os.replace(path, old)
    os.replace(staging, path)
    shutil.rmtree(old, ignore_errors=True)


def _write(run: Any, path: Path, pictures: str | None, items: Iterator[Any], limit: int | None = None) -> int:
    """Write the objects (and their pictures), with a progress bar on a terminal (drawing takes 0.1-0.5 s each)."""
    from epcg.runtime.progress import bar_class

    path.mkdir(parents=True)
    if pictures:
        (path / "pictures").mkdir()
    count = 0
    shown = bar_class()(items, total=limit, unit="object", desc="export", disable=None, leave=False)
    with (path / "found.jsonl").open("w") as handle:
        for item in shown:
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
    return count
