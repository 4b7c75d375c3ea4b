"""Witness puzzle spaces as :class:`~epcg.search.scan.ScanSpace`: the score of a puzzle is its number of solutions.

``puzzle_space(kind, width, height, k)`` is the space of one table row (rank
layouts in ``puzzles.py``). Its evaluator counts one puzzle's solutions; its
``evaluate_range`` is the fused DFS kernel of ``kernels.py``, which computes
:data:`REDUCTIONS` (fewest non-zero solutions with every puzzle reaching it and
each one's longest solution as payload, the count, the solution-count
histogram) for a whole rank range at once.

>>> from epcg.search import scan_range
>>> space = puzzle_space("must-cross", 3, 3, 3)
>>> r = scan_range(space, 0, space.max_rank, REDUCTIONS)
>>> r.count, r.argmin.value, len(r.argmin.ranks), r.count - r.ignored
(9880, 4, 36, 9766)
>>> space.decode(int(r.argmin.ranks[0])).cross
(1, 19, 33)
>>> scan_range(puzzle_space("regions", 3, 3, 5), 0, 2016, REDUCTIONS).argmin.value
1
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import numpy as np

from epcg.games.witness.domain.bitsets import bitsets_for
from epcg.games.witness.domain.geometry import Geometry
from epcg.games.witness.domain.kernels import _count_puzzle, _scan_cross, _scan_regions
from epcg.games.witness.domain.paths import paths_for
from epcg.games.witness.domain.puzzles import Puzzle, decode, max_rank, parse_k, solutions
from epcg.search.scan import ArgMin, Histogram, Kept, Reductions, ScanPartial, ScanSpace

__all__ = ["REDUCTIONS", "Puzzle", "cost_cuts", "decode", "max_rank", "puzzle_space", "render", "solutions",
           "walk"]

REDUCTIONS = Reductions(min=True, ignore=0, histogram=True)
"""What the Witness jobs keep: fewest non-zero solutions (and every puzzle there), the histogram."""

_INITIAL_ROOM = 4096
MAX_BUFFER_BYTES = 1 << 30
"""Largest per-call work buffer: the regions DFS keeps ``k * 2**(k-1)`` bitsets."""


def puzzle_space(kind: str, width: int, height: int, k) -> ScanSpace:
    """The puzzles of one kind, board and ``k`` (``(k_cross, k_regions)`` for joint) as a scan space."""
    kc, kr = parse_k(kind, width, height, k)
    g = Geometry(width, height)
    if kr and kr * (1 << (kr - 1)) * 8 * ((len(paths_for(width, height)) + 63) // 64) > MAX_BUFFER_BYTES:
        raise ValueError(f"k_regions={kr} needs more than {MAX_BUFFER_BYTES >> 30} GiB of bitsets on {width}x{height}")
    bits = bitsets_for(width, height)
    return ScanSpace(
        max_rank=max_rank(kind, width, height, k),
        evaluate=_count_puzzle,
        data=(bits.cross, bits.separated, bits.pair_index, bits.num_paths, g.num_positions, kc, g.num_cells, kr),
        name=f"witness {kind} {width}x{height} k={k}",
        evaluate_range=partial(_fused, kind, width, height, (kc, kr)),
        decode=partial(decode, kind, width, height, k),
        render=render,
    )


LEAF_WORDS = 32
"""A puzzle's fixed cost in :func:`cost_cuts`, in words of AND and popcount (measured: tens of words)."""


def cost_cuts(width: int, height: int, k: int, tasks: int) -> list[int]:
    """Rank cuts ``[0, .., max_rank]`` of a must-cross row into ``tasks`` ranges of about equal cost.

    Ranges of equal size cost unevenly: a prefix whose solution set is empty
    costs nothing below it, a sparse one costs a short span of words per
    puzzle. A shallow pass over the prefixes of two positions (each a
    contiguous block of ranks) estimates each block's cost as its puzzles times
    ``LEAF_WORDS`` plus the non-zero word span of its set, and the cuts fall at
    equal shares of the cumulative cost (inside a block, in proportion). Any
    cuts give the same results; only the seconds per task change.

    >>> cost_cuts(3, 3, 3, 4)[0], cost_cuts(3, 3, 3, 4)[-1], len(cost_cuts(3, 3, 3, 4))
    (0, 9880, 5)
    """
    total = max_rank("must-cross", width, height, k)
    tasks = max(1, min(tasks, total))
    if k < 3 or tasks == 1:
        return sorted({total * j // tasks for j in range(tasks + 1)})
    cross = bitsets_for(width, height).cross
    n = cross.shape[0]
    sizes, costs = [], []
    for a in range(n - k + 1):
        pair = cross[a + 1: n - k + 2] & cross[a]
        nonzero = pair != 0
        any_ = nonzero.any(axis=1)
        first = np.argmax(nonzero, axis=1)
        last = pair.shape[1] - np.argmax(nonzero[:, ::-1], axis=1)
        span = np.where(any_, last - first, 0)
        b = np.arange(a + 1, n - k + 2)
        size = np.array([math.comb(n - 1 - int(x), k - 2) for x in b], dtype=np.float64)
        sizes.append(size)
        costs.append(np.where(any_, size * (LEAF_WORDS + span), 1.0))
    sizes_, cum = np.concatenate(sizes), np.cumsum(np.concatenate(costs))
    starts = np.concatenate([[0], np.cumsum(sizes_)[:-1]])
    cuts = {0, total}
    for j in range(1, tasks):
        target = cum[-1] * j / tasks
        i = int(np.searchsorted(cum, target))
        before = cum[i - 1] if i else 0.0
        share = (target - before) / (cum[i] - before) if cum[i] > before else 0.0
        cuts.add(int(starts[i]) + int(round(share * sizes_[i])))
    return sorted(cuts)


def walk(kind: str, width: int, height: int, k, start: int, stop: int, cap: int = 0,
         best: int | None = None) -> tuple[int, int]:
    """Run the fused kernel over ``[start, stop)`` for its cost; returns ``(minimum, nodes)``.

    ``best`` is the minimum the walk starts from: by default above every count,
    as a task starts, so its first puzzles are counted exactly; a lower one
    makes each puzzle's count stop above ``max(best, cap)`` (``cap`` 0: no
    histogram), as in a long task once its minimum has fallen. ``minimum`` is
    the lowest non-zero count met (or where it started), ``nodes`` the solution
    sets the must-cross walk computes, prefixes and puzzles (0 for regions).

    >>> walk("must-cross", 2, 2, 2, 0, max_rank("must-cross", 2, 2, 2))[1] < 21 + 210  # every prefix and pair
    True
    """
    bits = bitsets_for(width, height)
    acc = np.array([bits.num_paths + 1 if best is None else best, 0, 0, 0, 0], dtype=np.int64)
    room = np.zeros(1, dtype=np.int64)
    hist = np.zeros(cap + 1, dtype=np.int64) if cap else None
    if start < stop:
        _kernel(kind, width, height, parse_k(kind, width, height, k), start, stop, acc, room, room.copy(), hist,
                *_no_bands())
    return int(acc[0]), int(acc[3])


def render(puzzle: Puzzle):
    """A matplotlib figure of a puzzle with its longest solution (if it has one)."""
    from epcg.games.witness.domain.render import puzzle_figure

    paths = paths_for(puzzle.width, puzzle.height)
    sols = solutions(paths, puzzle)
    return puzzle_figure(puzzle.geometry, cross=puzzle.cross, cells=puzzle.cells, colours=puzzle.colours,
                         path=paths.path(int(sols[0])) if len(sols) else None,
                         caption=f"{len(sols)} solution(s)")


def _fused(kind: str, width: int, height: int, ks: tuple[int, int], start: int, stop: int,
           reductions: Reductions) -> ScanPartial | None:
    """The partial of ``[start, stop)`` from the DFS kernels (:func:`fused_partial`)."""
    return fused_partial(bitsets_for(width, height).num_paths, partial(_kernel, kind, width, height, ks, start, stop),
                         start, stop, reductions)


def fused_partial(num_paths: int, kernel: Callable[..., None], start: int, stop: int,
                  reductions: Reductions) -> ScanPartial | None:
    """The partial of ``[start, stop)`` from a kernel filling ``kernels.py``'s accumulator,
    ``kernel(acc, ranks, longs, hist, bands, kept)``, over puzzles with at most ``num_paths`` solutions; None
    for reductions it does not compute (a band holding 0 solutions among them: the walks skip unsolvable
    puzzles a whole prefix at a time)."""
    if not (reductions.min and reductions.ignore == 0 and reductions.top == 0):
        return None
    if any(low <= 0 for low, _high in reductions.keep):
        return None
    if not reductions.histogram:
        cap = 0
    else:
        cap = num_paths if reductions.cap is None else min(reductions.cap, num_paths)
    room = _INITIAL_ROOM
    kept_room = min(_INITIAL_ROOM, reductions.keep_cap)
    while True:
        acc = np.array([num_paths + 1, 0, 0, 0, max((high for _, high in reductions.keep), default=0)],
                       dtype=np.int64)
        ranks = np.zeros(room, dtype=np.int64)
        longs = np.zeros(room, dtype=np.int64)
        hist = np.zeros(cap + 1, dtype=np.int64) if cap else None
        bands = np.array([[low, high, 0] for low, high in reductions.keep], dtype=np.int64).reshape(-1, 3)
        kept = np.zeros((len(bands), kept_room, 3), dtype=np.int64)
        if start == stop:
            break
        kernel(acc, ranks, longs, hist, bands, kept)
        matched = int(bands[:, 2].max(initial=0))
        if acc[1] <= room and (matched <= kept_room or kept_room == reductions.keep_cap):
            break
        room = max(room, int(acc[1]))
        kept_room = max(kept_room, min(matched, reductions.keep_cap))
    solvable = int(acc[2])
    n = int(acc[1]) if solvable else 0
    order = np.argsort(ranks[:n], kind="stable")
    argmin = ArgMin(int(acc[0]), ranks[:n][order].astype(np.uint64), longs[:n][order].astype(np.uint8)) \
        if solvable else ArgMin.empty()
    histogram = None
    if reductions.histogram:
        tally = np.zeros(1, dtype=np.int64) if hist is None else hist
        tally[0] = (stop - start) - solvable
        values = np.flatnonzero(tally)
        histogram = Histogram(dict(zip(values.tolist(), tally[values].tolist())),
                              above=solvable - int(tally[1:].sum()), cap=reductions.cap)
    kept_bands = tuple(
        Kept(band, reductions.keep_cap, kept[b, :min(n, reductions.keep_cap), 0].astype(np.uint64),
             kept[b, :min(n, reductions.keep_cap), 1], kept[b, :min(n, reductions.keep_cap), 2].astype(np.uint8), int(n))
        for b, (band, n) in enumerate(zip(reductions.keep, bands[:, 2].tolist())))
    return ScanPartial(count=stop - start, ignored=(stop - start) - solvable, argmin=argmin, histogram=histogram,
                       kept=kept_bands)


def _no_bands() -> tuple[np.ndarray, np.ndarray]:
    """The kernels' band arguments when no band is kept."""
    return np.zeros((0, 3), dtype=np.int64), np.zeros((0, 0, 3), dtype=np.int64)


def _kernel(kind: str, width: int, height: int, ks: tuple[int, int], start: int, stop: int, acc: np.ndarray,
            ranks: np.ndarray, longs: np.ndarray, hist: np.ndarray | None, bands: np.ndarray,
            kept: np.ndarray) -> None:
    """The regions or must-cross/joint kernel over ``[start, stop)`` (``start < stop``) into ``acc``."""
    kc, kr = ks
    g = Geometry(width, height)
    bits = bitsets_for(width, height)
    if kind == "regions":
        _scan_regions(bits.separated, bits.pair_index, bits.lengths, bits.num_paths,
                      g.num_cells, kr, start, stop, acc, ranks, longs, hist, bands, kept)
    else:
        _scan_cross(bits.cross, bits.separated, bits.pair_index, bits.lengths, bits.num_paths,
                    g.num_positions, kc, g.num_cells, kr, start, stop, acc, ranks, longs, hist, bands, kept)


PATTERNS_COUNTED = 50_000
"""The most puzzles of a row whose patterns a run counts (each is solved again: about a millisecond on 4x4)."""


def count_patterns(kind: str, width: int, height: int, k: int | tuple[int, int], ranks: np.ndarray) -> int | None:
    """How many different patterns (:func:`~epcg.games.witness.domain.patterns.pattern_key`: solution sets up to
    the panel's symmetries) the puzzles of ``ranks`` have; None for more than :data:`PATTERNS_COUNTED` of them."""
    from epcg.games.witness.domain.patterns import pattern_key

    if len(ranks) > PATTERNS_COUNTED:
        return None
    paths = paths_for(width, height)

    def key(rank: int) -> str:
        found = solutions(paths, decode(kind, width, height, k, rank))
        return pattern_key(width, height, [paths.moves(int(s)) for s in found])

    return len({key(rank) for rank in ranks.tolist()})
