"""One Fling! board a designer drew, as a run sees it (``FlingRun.probe``, ``epcg probe``).

The board is written as printed: its pieces' cells (``a1 f2 c3``: column
letter from the left, row number from the top) or its picture, one row per
line or ``/`` between rows, ``o`` a piece and ``.`` empty, exactly the run's
width and height. Whether it is solvable, and uniquely, comes from the run's
stored layer when the run has that layer; its solution count, search trees and
solution are computed on the spot (milliseconds).

>>> parse_board("a1 c1 b3", 3, 3).bits == parse_board("o.o/.../.o.", 3, 3).bits
True
>>> parse_board("a1 a1", 3, 3)
Traceback (most recent call last):
...
epcg.runtime.errors.InvalidValue: cell a1 is given twice
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from epcg.api.probe import Probe
from epcg.games.fling.domain import evaluate
from epcg.games.fling.domain.render import puzzle_figure, text_strip
from epcg.games.fling.domain.rules import Board, Move
from epcg.games.fling.found import FlingBoard, orbit_ranks, orbits_only
from epcg.runtime.errors import InvalidValue

CELL = re.compile(r"([a-z])([0-9]+)")
SHOWN_SOLUTIONS = 3
"""Solutions a probe of a board with several draws."""


def parse_board(text: str, width: int, height: int) -> Board:
    """The board ``text`` writes (cells or a picture, see the module docstring) on a ``width`` x ``height``
    board; an InvalidValue naming the first problem."""
    if not isinstance(text, str):
        raise InvalidValue(f"a Fling! board is text (cells such as 'a1 f2' or a picture of o and .), got {text!r}")
    body = text.strip()
    if not body:
        raise InvalidValue("the board is empty: give its pieces' cells (a1 f2 c3 …) or its picture of o and .")
    if "/" in body or "\n" in body or not set(body) - set("o."):
        return _picture(body, width, height)
    bits = 0
    for token in body.replace(",", " ").split():
        match = CELL.fullmatch(token.lower())
        if not match:
            raise InvalidValue(f"{token!r} is not a cell: a column letter and a row number, such as a1 or f7")
        x, y = ord(match[1]) - ord("a"), int(match[2]) - 1
        if x >= width:
            raise InvalidValue(f"cell {token} is off the board: columns run a to {chr(ord('a') + width - 1)}")
        if not 0 <= y < height:
            raise InvalidValue(f"cell {token} is off the board: rows run 1 to {height}")
        if bits >> (y * width + x) & 1:
            raise InvalidValue(f"cell {token} is given twice")
        bits |= 1 << (y * width + x)
    return Board(width, height, bits)


def _picture(body: str, width: int, height: int) -> Board:
    rows = [row.strip() for row in body.replace("/", "\n").splitlines() if row.strip()]
    if len(rows) != height:
        raise InvalidValue(f"the picture has {len(rows)} rows; this run's board has {height}")
    for y, row in enumerate(rows, 1):
        bad = set(row) - set("o.")
        if bad:
            raise InvalidValue(f"row {y} of the picture holds {sorted(bad)[0]!r}: use o for a piece and . for empty")
        if len(row) != width:
            raise InvalidValue(f"row {y} of the picture is {len(row)} cells wide; this run's board is {width}")
    board = Board.parse("\n".join(rows))
    if not board.pieces:
        raise InvalidValue("the picture has no piece (o)")
    return board


def probe(run: Any, text: str) -> Probe:
    """What ``run`` (a FlingRun) knows of the board ``text`` (see the module docstring)."""
    c = run.config
    board = parse_board(text, c.width, c.height)
    k = board.pieces
    found = FlingBoard(c.width, c.height, k, board.rank())
    images = orbit_ranks(c.width, c.height, k, found.rank)
    count = evaluate.solution_counter(c.width, c.height)(board.bits)
    cells = " ".join(board.move_name(Move(cell, 0))[:-1] for cell in board.cells())
    facts: dict[str, Any] = {"width": c.width, "height": c.height, "pieces": k, "rank": found.rank,
                             "orbit": images[0], "orbit_size": len(images), "pattern": found.pattern.key,
                             "copies": found.copies, "solvable": count > 0, "solutions": count}
    lines = [f"board {cells}: {k} piece{'' if k == 1 else 's'} on {c.width}x{c.height}, rank {found.rank:,} of "
             f"layer {k}; its orbit (mirror images and turns) holds {len(images)} board"
             f"{'' if len(images) == 1 else 's'} (lowest rank {images[0]:,}); its pattern ({found.pattern.key}: "
             f"the same puzzle moved, turned or closed up) {found.copies:,} board{'' if found.copies == 1 else 's'}"]
    stored = _stored(run, k, images[0] if orbits_only(run.stored, k) else found.rank) if k <= c.max_pieces else None
    if stored is not None:
        facts["stored"] = {"solvable": stored[0], "unique": stored[1]}
    verdict = "not solvable" if count == 0 else "uniquely solvable" if count == 1 else f"solvable, {count:,} solutions"
    source = (f" (the run's layer {k} says {_says(stored)})" if stored is not None else
              f" (computed: the run's layers stop at {c.max_pieces} pieces)")
    if count == 1:
        brute, expert = evaluate.tree_sizes(c.width, c.height, board.bits)
        facts.update({"ratio": brute / expert, "brute_force_nodes": brute, "expert_nodes": expert})
        verdict += f", ratio {brute / expert:.3f} ({brute:,} / {expert:,}: brute-force / expert search-tree nodes)"
    lines.append(verdict + source)
    facts["kept"] = kept = _kept(run, found, images, facts.get("ratio"))
    lines.append("kept by the run: " + ("; ".join(kept) if kept else "no (not in its best list or a kept band)"))
    solutions = _solutions(board, count)
    facts["solution"] = [" ".join(board.move_name(m) for m in s) for s in solutions]
    picture = ""
    for i, moves in enumerate(solutions, 1):
        head = "solution" if count == 1 else f"solution {i} of {count:,}"
        picture += ("\n" if picture else "") + f"{head}: {' '.join(board.move_name(m) for m in moves)}\n" + \
            text_strip(board, moves)
    return Probe(cells, facts, lines, picture,
                 lambda: puzzle_figure(board, solutions[0] if solutions else [], title=f"{cells}: {verdict}"))


def _stored(run: Any, k: int, rank: int) -> tuple[bool, bool]:
    """(solvable, unique) of the board of ``rank`` in the run's stored layer ``k`` (its orbit layer when the run
    kept one board per orbit)."""
    only = orbits_only(run.stored, k)
    word, bit = divmod(rank, 64)
    out = []
    for kind in ("solvable", "unique"):
        name = f"orbits/{kind}/{k}" if only else f"{kind}/{k}"
        out.append(bool(int(run.stored.read(name, word, word + 1)[0]) >> bit & 1))
    return out[0], out[1]


def _says(stored: tuple[bool, bool]) -> str:
    return "uniquely solvable" if stored[1] else "solvable" if stored[0] else "not solvable"


def _kept(run: Any, found: FlingBoard, images: list[int], ratio: float | None) -> list[str]:
    """Where the run kept the board: its place in the best list (its pattern's or its orbit's), a kept band."""
    from epcg.games.fling.evaluation import kept_bands, kept_name
    from epcg.kinds.keep import band_of, band_text, read_kept

    c, results, out = run.config, run.results, []
    if found.pieces == c.max_pieces:
        for place, p in enumerate(results.get("puzzles") or [], 1):
            if p.get("pattern") == found.pattern.key:
                out.append(f"its pattern is #{place} of the best list")
            elif p["rank"] in images:
                out.append(f"its orbit is #{place} of the best list")
    if ratio is None:
        return out
    for i, entry in enumerate(kept_bands(results, found.pieces)):
        low, high = band_of(entry["band"])
        if entry["kept"] and low <= ratio <= high:
            ranks = read_kept(run.stored, kept_name(found.pieces), i)[0]
            if np.isin(np.asarray(images), ranks).any():
                out.append(f"in the kept band {band_text((low, high), 'expert ratio')}")
    return out


def _solutions(board: Board, count: int) -> list[list[Move]]:
    """The board's solutions, at most ``SHOWN_SOLUTIONS``, first moves first."""
    if count == 0:
        return []
    if count == 1:
        return [evaluate.solution(board)]
    counter = evaluate.solution_counter(board.width, board.height)
    out: list[list[Move]] = []

    def walk(b: Board, path: list[Move]) -> None:
        if len(out) >= SHOWN_SOLUTIONS:
            return
        if b.pieces == 1:
            out.append(list(path))
            return
        for m in b.legal_moves():
            after = b.apply(m)
            if counter(after.bits):
                walk(after, path + [m])
                if b.pieces == 2:
                    return  # the last move's choice is free: one of them

    walk(board, [])
    return out
