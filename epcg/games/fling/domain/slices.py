"""Slices of a Fling! layer: the boards that agree on their first rows, and the slices their moves reach.

In lexicographic rank order (:mod:`~epcg.games.fling.domain.layers`) a board's
lowest cells vary slowest, so the boards of layer ``k`` whose cells in the first
``rows`` rows (cells ``0 .. T-1``, ``T = rows * width``) are one pattern ``a``
hold consecutive ranks: a *slice*, ``C(n - T, k - |a|)`` boards from the rank of
``a + {T, T+1, ...}``. A move slides pieces along one row or column, so it
changes only that line. A move on a later row keeps the pattern; a move on one
of the first rows changes that row of it; a move on a column changes the
column's first ``rows`` cells in a way that depends only on them and on the
rest of the column. So the slices of layer ``k - 1`` that a slice's moves
reach, its *neighbours*, are computed from the pattern alone (a superset: the
moves of every column content that fits the pattern), a few dozen of the
thousands of slices of a layer.

A task of layer ``k`` then reads only the words of layer ``k - 1`` under the
neighbours of the slices it covers (:meth:`Slicing.reads`), held as a
:class:`SlicedLayer`: those words one after another, and per pattern where its
slice's words begin among them (``where``), which the block kernel looks a
successor's rank up through. A successor in a slice not held is counted and
the kernel's caller raises ``LookupError``: a wrong neighbour set is an error,
never a wrong answer.

>>> s = Slicing(7, 8, 1)
>>> len(s.keys(9)), s.boards(9, 0b0000001)          # row 0 holds only cell 0
(128, 450978066)
>>> sorted(bin(a) for a in s.neighbours(9, 0b0000101))   # o.o....: a row move, a piece down, or neither
['0b1', '0b10', '0b100', '0b101']
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL
from epcg.combinatorics.binomial import BINOMIAL
from epcg.combinatorics.bits import ctz
from epcg.games.fling.domain.moves import LINE_TABLE_MAX, line_table
from epcg.games.fling.domain.sparse import BitIndex, bit_index
from epcg.search.retrograde import Spans

__all__ = ["ABSENT", "GROUP_SLACK", "MAX_LEAD_CELLS", "SlicedLayer", "Slicing"]

ABSENT = np.iinfo(np.int64).min
"""``where`` of a pattern whose slice is not held."""
GROUP_SLACK = 2
"""A read group may cover up to this many times the words of the layer before that its most-read slice needs."""
MAX_LEAD_CELLS = 21
"""Cells of the first rows a slice is keyed by, at most (a ``where`` table of 2^21 entries is 16 MiB)."""


@njit(**KERNEL)
def _first_ranks(keys, n, lead, k):
    """Lex rank of each slice's first board: its pattern, then the next free cells from ``lead`` on."""
    out = np.empty(keys.shape[0], dtype=np.int64)
    for i in range(keys.shape[0]):
        a = keys[i]
        total = BINOMIAL[n, k] - 1
        j = 0
        for c in range(lead):
            if a >> c & 1:
                total -= BINOMIAL[n - 1 - c, k - j]
                j += 1
        for c in range(lead, lead + k - j):
            total -= BINOMIAL[n - 1 - c, k - j]
            j += 1
        out[i] = total
    return out


@njit(**KERNEL)
def _neighbours(a, width, rows, row_start, row_result, col_start, col_result, out):
    """Patterns a move can leave in the first ``rows`` rows of a board whose pattern is ``a`` (see the module),
    ``a`` itself first; writes them to ``out`` and returns how many (repeats possible)."""
    m = 0
    out[m] = a
    m += 1
    row_mask = (1 << width) - 1
    for y in range(rows):
        v = a >> (y * width) & row_mask
        for j in range(row_start[v], row_start[v + 1]):
            out[m] = a & ~(row_mask << (y * width)) | row_result[j] << (y * width)
            m += 1
    for x in range(width):
        lead = 0
        cleared = a
        for y in range(rows):
            c = x + y * width
            lead |= (a >> c & 1) << y
            cleared &= ~(1 << c)
        for j in range(col_start[lead], col_start[lead + 1]):
            b = cleared
            after = col_result[j]
            for y in range(rows):
                b |= (after >> y & 1) << (x + y * width)
            out[m] = b
            m += 1
    return m


@njit(**KERNEL)
def _reads(p0, p1, keys, pos_before, w0_before, w1_before, width, rows, row_start, row_result, col_start,
           col_result):
    """Merged word ranges of the layer before under the neighbours of slices ``p0 .. p1-1`` (as an (m, 2) array):
    the neighbours' positions marked in a bitmap, then read off in rank order."""
    buffer = np.empty(1 + rows * 2 * width + width * (1 << rows), dtype=np.int64)
    marks = np.zeros((w0_before.shape[0] + 63) >> 6, dtype=np.uint64)
    for p in range(p0, p1):
        for i in range(_neighbours(keys[p], width, rows, row_start, row_result, col_start, col_result, buffer)):
            q = pos_before[buffer[i]]
            if q >= 0:
                marks[q >> 6] |= np.uint64(1) << np.uint64(q & 63)
    spans = np.empty((min(w0_before.shape[0], (p1 - p0) * buffer.shape[0]), 2), dtype=np.int64)
    m = 0
    for wi in range(marks.shape[0]):
        x = marks[wi]
        while x:
            q = (wi << 6) + ctz(x)
            x &= x - np.uint64(1)
            if m and w0_before[q] <= spans[m - 1, 1]:
                spans[m - 1, 1] = max(spans[m - 1, 1], w1_before[q])
            else:
                spans[m, 0] = w0_before[q]
                spans[m, 1] = w1_before[q]
                m += 1
    return spans[:m].copy()


@njit(**KERNEL)
def _groups(keys, w0, pos_before, w0_before, w1_before, width, rows, row_start, row_result, col_start, col_result,
            slack):
    """First words of the read groups of a layer (its slices ``keys`` from words ``w0``; see :meth:`Slicing.groups`)."""
    buffer = np.empty(1 + rows * 2 * width + width * (1 << rows), dtype=np.int64)
    seen = np.full(w0_before.shape[0], -1, dtype=np.int64)  # the slice last counting it
    largest = 0
    for p in range(keys.shape[0]):
        words = 0
        for i in range(_neighbours(keys[p], width, rows, row_start, row_result, col_start, col_result, buffer)):
            q = pos_before[buffer[i]]
            if q >= 0 and seen[q] != p:
                seen[q] = p
                words += w1_before[q] - w0_before[q]
        largest = max(largest, words)
    budget = slack * largest
    group = np.full(w0_before.shape[0], -1, dtype=np.int64)  # the group that reads it
    seen[:] = -1
    bounds = np.empty(keys.shape[0] + 1, dtype=np.int64)
    bounds[0] = 0
    g = 0
    total = 0
    for p in range(keys.shape[0]):
        m = _neighbours(keys[p], width, rows, row_start, row_result, col_start, col_result, buffer)
        new = 0
        for i in range(m):
            q = pos_before[buffer[i]]
            if q >= 0 and seen[q] != p:
                seen[q] = p
                new += (w1_before[q] - w0_before[q]) * (group[q] != g)
        if total and total + new > budget and w0[p] > bounds[g]:
            g += 1
            bounds[g] = w0[p]
            total = 0
            new = 0
            for i in range(m):
                q = pos_before[buffer[i]]
                if q >= 0 and seen[q] == p:
                    seen[q] = -2 - p  # counted once more, for the new group
                    new += w1_before[q] - w0_before[q]
        for i in range(m):
            q = pos_before[buffer[i]]
            if q >= 0:
                group[q] = g
        total += new
    return bounds[:g + 1].copy()


@njit(**KERNEL)
def _where(spans, w0, w1, keys, size):
    """``Slicing.where`` over a layer's slices (their patterns and word ranges)."""
    table = np.full(size, np.iinfo(np.int64).min, dtype=np.int64)
    at = 0
    i = 0
    for p in range(keys.shape[0]):  # in rank order, so in word order
        while i < spans.shape[0] and spans[i, 1] <= w0[p]:
            at += spans[i, 1] - spans[i, 0]
            i += 1
        if i < spans.shape[0] and spans[i, 0] <= w0[p] and w1[p] <= spans[i, 1]:
            table[keys[p]] = 64 * (at - spans[i, 0])
    return table


class _Layer:
    """A layer's slices: patterns in rank order, first ranks (and the layer's size), word ranges, and each pattern's
    position (-1: no slice)."""

    def __init__(self, slicing: Slicing, k: int) -> None:
        counts = slicing.popcounts
        rest = k - counts
        keys = np.flatnonzero((counts <= k) & (rest <= slicing.cells - slicing.lead)).astype(np.int64)
        firsts = _first_ranks(keys, slicing.cells, slicing.lead, k)
        order = np.argsort(firsts, kind="stable")
        self.keys = keys[order]
        self.starts = np.append(firsts[order], math.comb(slicing.cells, k))
        self.w0 = self.starts[:-1] >> 6
        self.w1 = ((self.starts[1:] - 1) >> 6) + 1
        self.pos = np.full(1 << slicing.lead, -1, dtype=np.int32)
        self.pos[self.keys] = np.arange(self.keys.shape[0])


@dataclass(frozen=True)
class Slicing:
    """The slices of every layer of Fling! on a ``width × height`` board, keyed by the first ``rows`` rows."""

    width: int
    height: int
    rows: int

    def __post_init__(self) -> None:
        if not 1 <= self.rows < self.height or self.rows * self.width > MAX_LEAD_CELLS:
            raise ValueError(f"slices are keyed by 1 to {self.height - 1} first rows of at most {MAX_LEAD_CELLS} "
                             f"cells in all, got {self.rows} rows of {self.width}")
        if max(self.width, self.height) > LINE_TABLE_MAX:
            raise ValueError(f"slices need rows and columns of at most {LINE_TABLE_MAX} cells")

    @property
    def cells(self) -> int:
        return self.width * self.height

    @property
    def lead(self) -> int:
        """Cells the key covers, ``T``."""
        return self.rows * self.width

    @property
    def table_bytes(self) -> int:
        """Bytes of the tables a process keeps per layer it solves: the positions of two layers' slices and the
        ``where`` of up to four held groups."""
        return (2 * 4 + 4 * 8) << self.lead

    @cached_property
    def popcounts(self) -> np.ndarray:
        """Pieces in each pattern."""
        return np.bitwise_count(np.arange(1 << self.lead, dtype=np.int64)).astype(np.int64)

    @lru_cache(maxsize=4)
    def _layer(self, k: int) -> _Layer:
        return _Layer(self, k)

    def keys(self, k: int) -> np.ndarray:
        """The patterns of layer ``k``'s slices, in rank order."""
        return self._layer(k).keys

    def boards(self, k: int, a: int) -> int:
        """Boards in the slice of pattern ``a``."""
        return math.comb(self.cells - self.lead, k - a.bit_count())

    def words(self, k: int, a: int) -> tuple[int, int]:
        """The word range of layer ``k`` that holds the slice of pattern ``a``."""
        layer = self._layer(k)
        p = layer.pos[a]
        return int(layer.w0[p]), int(layer.w1[p])

    @cached_property
    def _tables(self) -> tuple[np.ndarray, ...]:
        """Moves of a row (line table) and, per content of a column's first ``rows`` cells (bit ``y``: row ``y``),
        the contents a move on the column can leave there over every content of the rest of the column."""
        rows, column = line_table(self.width), line_table(self.height)
        low = (1 << self.rows) - 1
        leads = []
        for lead in range(1 << self.rows):
            after: set[int] = set()
            for rest in range(1 << (self.height - self.rows)):
                v = lead | rest << self.rows
                after.update(int(r) & low for r in column.result[column.start[v]:column.start[v + 1]])
            leads.append(sorted(after))
        col_start = np.cumsum([0] + [len(x) for x in leads]).astype(np.int64)
        col_result = np.array([r for x in leads for r in x], dtype=np.int64)
        return rows.start, rows.result.astype(np.int64), col_start, col_result

    def neighbours(self, k: int, a: int) -> frozenset[int]:
        """Patterns of the slices of layer ``k - 1`` holding a move's result from a board of layer ``k`` in ``a``'s."""
        out = np.empty(1 + self.rows * 2 * self.width + self.width * (1 << self.rows), dtype=np.int64)
        m = _neighbours(a, self.width, self.rows, *self._tables, out)
        before = self._layer(k - 1)
        return frozenset(int(b) for b in out[:m] if before.pos[b] >= 0)

    def covered(self, k: int, start: int, stop: int) -> tuple[int, int]:
        """Positions ``[p0, p1)`` (in :meth:`keys`) of the slices that words ``[start, stop)`` of layer ``k`` hold
        boards of."""
        starts = self._layer(k).starts
        p0 = max(int(np.searchsorted(starts, 64 * start, side="right")) - 1, 0)
        p1 = int(np.searchsorted(starts, min(64 * stop, int(starts[-1])), side="left"))
        return p0, max(p1, p0 + 1)

    def reads(self, k: int, start: int, stop: int) -> Spans:
        """Word ranges of layer ``k - 1`` (merged) that the moves from words ``[start, stop)`` of layer ``k`` reach."""
        layer, before = self._layer(k), self._layer(k - 1)
        spans = _reads(*self.covered(k, start, stop), layer.keys, before.pos, before.w0, before.w1, self.width,
                       self.rows, *self._tables)
        return tuple((int(a), int(b)) for a, b in spans)

    @lru_cache(maxsize=64)
    def groups(self, k: int) -> np.ndarray:
        """First words of layer ``k``'s read groups, in order, then the layer's words: runs of consecutive slices
        whose neighbours together cover at most ``GROUP_SLACK`` times the words the most-read single slice's cover
        (a group is cut at the first word of a slice, so a word of two groups is read by the second)."""
        layer, before = self._layer(k), self._layer(k - 1)
        bounds = _groups(layer.keys, layer.w0, before.pos, before.w0, before.w1, self.width, self.rows,
                         *self._tables, GROUP_SLACK)
        return np.append(bounds, -(-int(layer.starts[-1]) // 64))

    @lru_cache(maxsize=4)
    def where(self, k: int, spans: Spans) -> np.ndarray:
        """For every pattern, the offset that turns a rank of its slice of layer ``k`` into a bit of ``spans``'s
        words laid one after another (:data:`ABSENT` for a slice not wholly inside them)."""
        layer = self._layer(k)
        return _where(np.array(spans, dtype=np.int64).reshape(-1, 2), layer.w0, layer.w1, layer.keys,
                      1 << self.lead)


@dataclass(frozen=True)
class SlicedLayer:
    """Some slices of a layer, as a task holds them: ``solvable``'s words of each span one after another,
    ``unique``'s index of the same words, and ``where`` (:meth:`Slicing.where`)."""

    solvable: np.ndarray
    unique: BitIndex
    where: np.ndarray

    @classmethod
    def from_words(cls, slicing: Slicing, k: int, spans: Spans, solvable: np.ndarray,
                   unique: np.ndarray) -> SlicedLayer:
        """``spans`` of layer ``k`` cut from its whole words (tests, checks)."""
        cut = [np.concatenate([w[a:b] for a, b in spans]) if spans else w[:0] for w in (solvable, unique)]
        return cls(cut[0], bit_index(cut[1]), slicing.where(k, spans))
