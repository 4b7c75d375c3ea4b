"""Slow, obviously-right references for piece constraints and triple panels.

Pieces are sets of ``(x, y)`` cells (``y`` up); a region is a set of cells
from a flood fill of the path (``witness.regions``); tiling tries every
translation of each piece in turn. Panels are listed with
``itertools.combinations`` × ``itertools.product`` (cell set most significant,
so the list index is the panel rank). Triples are checked one by one.
"""

from __future__ import annotations

import itertools

from tests.reference.witness import regions

Cells = frozenset[tuple[int, int]]


def piece_cells(text: str) -> Cells:
    """Cells of a piece written top row first, shifted to start at (0, 0)."""
    rows = text.split("/")
    h = len(rows)
    cells = {(x, h - 1 - i) for i, row in enumerate(rows) for x, ch in enumerate(row) if ch == "#"}
    x0, y0 = min(x for x, _ in cells), min(y for _, y in cells)
    return frozenset((x - x0, y - y0) for x, y in cells)


def tiles(region: set[tuple[int, int]], pieces: list[Cells]) -> bool:
    """Can ``pieces`` (each used once, translated only) cover ``region`` exactly?"""
    if not pieces:
        return not region
    first, rest = pieces[0], pieces[1:]
    px, py = min(first)
    for x, y in region:
        shifted = {(x + dx - px, y + dy - py) for dx, dy in first}
        if shifted <= region and tiles(region - shifted, rest):
            return True
    return False


def _labels(w: int, h: int, path: list[tuple[int, int]]) -> list[int]:
    return regions(w, h, tuple(path))


def solves(w: int, h: int, path: list[tuple[int, int]], cells, types, library) -> bool:
    """Does ``path`` solve the panel with piece ``library[types[i]]`` at cell ``cells[i]``?"""
    label = _labels(w, h, path)
    for lab in set(label[c] for c in cells):
        region = {(c % w, c // w) for c in range(w * h) if label[c] == lab}
        pieces = [piece_cells(library[t]) for c, t in zip(cells, types) if label[c] == lab]
        if not tiles(region, pieces):
            return False
    return True


def separates(w: int, h: int, path: list[tuple[int, int]], cells) -> bool:
    """Are the symbols at ``cells`` in pairwise different regions of ``path``?"""
    label = _labels(w, h, path)
    return len({label[c] for c in cells}) == len(cells)


def panels(w: int, h: int, k: int, p: int):
    """Every panel ``(cells, types)`` in rank order."""
    for cells in itertools.combinations(range(w * h), k):
        for types in itertools.product(range(p), repeat=k):
            yield cells, types


def solution_sets(w: int, h: int, k: int, library, paths: list[list[tuple[int, int]]]):
    """``{rank: (solving path indices, separating solving path indices)}`` of the solvable panels."""
    out = {}
    for rank, (cells, types) in enumerate(panels(w, h, k, len(library))):
        ok = frozenset(s for s, path in enumerate(paths) if solves(w, h, path, cells, types, library))
        if ok:
            out[rank] = (ok, frozenset(s for s in ok if separates(w, h, paths[s], cells)))
    return out


def best_triples(sets, separate: bool):
    """``(best score, set of ordered panel-rank triples at it)`` by checking every triple.

    ``sets`` as from ``solution_sets``. The score is symmetric, so each
    multiset of three panels is scored once and then listed in every order.
    """
    ranks = sorted(sets)
    bits = {r: sum(1 << s for s in sets[r][0]) for r in ranks}
    sep = {r: sum(1 << s for s in sets[r][1]) for r in ranks}
    best, found = 0, set()
    for x, a in enumerate(ranks):
        for y in range(x, len(ranks)):
            b = ranks[y]
            ab = bits[a] & bits[b]
            if not ab:  # no joint solution for any third panel
                continue
            for c in ranks[y:]:
                joint = ab & bits[c]
                if joint == 0 or joint & (joint - 1):  # not exactly one joint solution
                    continue
                if separate and not joint & sep[a] & sep[b] & sep[c]:
                    continue
                A, B, C = bits[a], bits[b], bits[c]
                score = min(A.bit_count(), B.bit_count(), C.bit_count(),
                            (A & B).bit_count(), (A & C).bit_count(), (B & C).bit_count())
                if score > best:
                    best, found = score, set()
                if score == best:
                    found.update(itertools.permutations((a, b, c)))
    return best, found
