"""Slow, obviously-right Witness references: paths by recursion, regions by flood fill,
solutions of a puzzle by checking every path.

Only the index conventions of ``geometry.py`` are shared with the library;
ranks are decoded with ``itertools.combinations`` (lexicographic order).
"""

from __future__ import annotations

import itertools
from math import comb

Path = tuple[tuple[int, int], ...]


def all_paths(w: int, h: int) -> list[Path]:
    """Every self-avoiding path from (0, 0) to (w, h), as tuples of (x, y)."""
    out: list[Path] = []

    def walk(path: list[tuple[int, int]]) -> None:
        x, y = path[-1]
        if (x, y) == (w, h):
            out.append(tuple(path))
            return
        for dx, dy in ((1, 0), (0, 1), (-1, 0), (0, -1)):
            nx, ny = x + dx, y + dy
            if 0 <= nx <= w and 0 <= ny <= h and (nx, ny) not in path:
                path.append((nx, ny))
                walk(path)
                path.pop()

    walk([(0, 0)])
    return out


def positions(w: int, h: int, path: Path) -> set[int]:
    """Must-cross positions on a path: vertex ``y*(w+1)+x``; edges after the vertices."""
    nv = (w + 1) * (h + 1)
    out = {y * (w + 1) + x for x, y in path}
    for (ax, ay), (bx, by) in zip(path, path[1:]):
        if ay == by:
            out.add(nv + ay * w + min(ax, bx))
        else:
            out.add(nv + w * (h + 1) + min(ay, by) * (w + 1) + ax)
    return out


def regions(w: int, h: int, path: Path) -> list[int]:
    """Region label of each cell ``y*w+x`` (flood fill; labels are arbitrary but consistent)."""
    used = {frozenset(e) for e in zip(path, path[1:])}
    label = [-1] * (w * h)
    for c0 in range(w * h):
        if label[c0] >= 0:
            continue
        label[c0] = c0
        todo = [c0]
        while todo:
            c = todo.pop()
            x, y = c % w, c // w
            steps = [
                (x + 1, y, ((x + 1, y), (x + 1, y + 1))),
                (x - 1, y, ((x, y), (x, y + 1))),
                (x, y + 1, ((x, y + 1), (x + 1, y + 1))),
                (x, y - 1, ((x, y), (x + 1, y))),
            ]
            for nx, ny, wall in steps:
                if 0 <= nx < w and 0 <= ny < h and frozenset(wall) not in used:
                    o = ny * w + nx
                    if label[o] < 0:
                        label[o] = c0
                        todo.append(o)
    return label


def solves(w: int, h: int, path: Path, cross=(), cells=(), colours=()) -> bool:
    """Does ``path`` cross every position and keep different colours in different regions?"""
    if not set(cross) <= positions(w, h, path):
        return False
    lab = regions(w, h, path)
    for (a, ca), (b, cb) in itertools.combinations(zip(cells, colours), 2):
        if ca != cb and lab[a] == lab[b]:
            return False
    return True


def num_positions(w: int, h: int) -> int:
    return 3 * w * h + 2 * w + 2 * h + 1


def _split(kind: str, k) -> tuple[int, int]:
    return {"must-cross": lambda: (k, 0), "regions": lambda: (0, k), "joint": lambda: tuple(k)}[kind]()


def all_puzzles(kind: str, w: int, h: int, k):
    """Every ``(cross, cells, colours)`` in rank order (lexicographic combinations, colour bits last)."""
    kc, kr = _split(kind, k)
    for cross in itertools.combinations(range(num_positions(w, h)), kc):
        if not kr:
            yield cross, (), ()
            continue
        for cells in itertools.combinations(range(w * h), kr):
            for bits in range(2 ** (kr - 1)):
                yield cross, cells, (0,) + tuple((bits >> i) & 1 for i in range(kr - 1))


def puzzle_of(kind: str, w: int, h: int, k, rank: int) -> tuple[tuple, tuple, tuple]:
    """``(cross, cells, colours)`` of a rank, by walking ``itertools.combinations``."""
    kc, kr = _split(kind, k)
    nreg = comb(w * h, kr) * 2 ** (kr - 1) if kr else 1
    cross_rank, rest = divmod(rank, nreg)
    cross = next(itertools.islice(itertools.combinations(range(num_positions(w, h)), kc), cross_rank, None))
    cells: tuple = ()
    colours: tuple = ()
    if kr:
        cells_rank, bits = divmod(rest, 2 ** (kr - 1))
        cells = next(itertools.islice(itertools.combinations(range(w * h), kr), cells_rank, None))
        colours = (0,) + tuple((bits >> i) & 1 for i in range(kr - 1))
    return cross, cells, colours


def solution_stats(w: int, h: int, paths: list[Path], cross=(), cells=(), colours=()) -> tuple[int, int]:
    """``(number of solutions, edges of the longest one or 0)`` by checking every path."""
    lengths = [len(p) - 1 for p in paths if solves(w, h, p, cross, cells, colours)]
    return len(lengths), max(lengths, default=0)


def scan(kind: str, w: int, h: int, k, start: int, stop: int) -> tuple[int, int, list[int], list[int]]:
    """``(solvable, min non-zero solutions or 0, ranks at min, their longest)`` by brute force."""
    paths = all_paths(w, h)
    facts = [(len(p) - 1, positions(w, h, p), regions(w, h, p)) for p in paths]
    best, ranks, longest, solvable = 0, [], [], 0
    puzzles = itertools.islice(all_puzzles(kind, w, h, k), start, stop)
    for r, (cross, cells, colours) in enumerate(puzzles, start):
        lengths = [
            length for length, pos, lab in facts
            if set(cross) <= pos and all(
                lab[a] != lab[b]
                for (a, ca), (b, cb) in itertools.combinations(zip(cells, colours), 2) if ca != cb
            )
        ]
        if not lengths:
            continue
        solvable += 1
        if best == 0 or len(lengths) < best:
            best, ranks, longest = len(lengths), [], []
        if len(lengths) == best:
            ranks.append(r)
            longest.append(max(lengths))
    return solvable, best, ranks, longest


def regions_scan_numpy(w: int, h: int, k: int, labels=None) -> tuple[int, int, list[int], list[int]]:
    """``scan("regions", w, h, k, 0, max_rank)`` with the per-path check vectorised over paths.

    Same paths (``all_paths``) and regions (``regions``) as above, unless
    ``labels`` (one row of cell labels per path of ``all_paths``) is given,
    e.g. from a variant rule. Fast enough for 4×4 (a few seconds per row).
    """
    import numpy as np

    paths = all_paths(w, h)
    lengths = np.array([len(p) - 1 for p in paths])
    lab = np.array(labels if labels is not None else [regions(w, h, p) for p in paths])
    best, ranks, longest, solvable = 0, [], [], 0
    rank = 0
    for cells in itertools.combinations(range(w * h), k):
        same = {(i, j): lab[:, cells[i]] == lab[:, cells[j]] for i, j in itertools.combinations(range(k), 2)}
        for bits in range(2 ** (k - 1)):
            colours = (0,) + tuple((bits >> i) & 1 for i in range(k - 1))
            ok = np.ones(len(paths), dtype=bool)
            for (i, j), s in same.items():
                if colours[i] != colours[j]:
                    ok &= ~s
            n = int(ok.sum())
            if n:
                solvable += 1
                if best == 0 or n < best:
                    best, ranks, longest = n, [], []
                if n == best:
                    ranks.append(rank)
                    longest.append(int(lengths[ok].max()))
            rank += 1
    return solvable, best, ranks, longest
