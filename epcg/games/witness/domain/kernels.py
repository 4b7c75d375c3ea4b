"""Numba scan kernels: min non-zero solution count over a rank range of Witness puzzles.

Each kernel walks the ranks ``[start, stop)`` as a DFS in lexicographic order.
A node is a prefix of the puzzle (some positions, or some cells with colours)
and keeps its solution set: the AND of its constraints' bitsets (``bitsets.py``).
Every subtree is a contiguous rank block, so an empty prefix skips its whole
block, and blocks outside ``[start, stop)`` are never entered.

What makes it fast:

- *Spans*: a level's solution set keeps the range of its non-zero words, and
  the next AND runs over that range only, as a plain loop that LLVM vectorises
  (indices are unsigned so numba emits no negative-index wraparound, which
  would block vectorisation).
- *Early exit at the leaves*: a puzzle's count is only needed exactly while it
  is at most the best so far (``acc[0]``) or the histogram's cap; the leaf
  popcount stops above both. Only puzzles at or below the best are passed to
  ``_record``.

Results go to a shared accumulator: ``acc = [min, n_at_min, solvable, nodes, exact]`` plus
the rank and longest solution of every puzzle at the current min, written while
they fit in ``ranks`` (``acc[1]`` may exceed its length; the wrapper then reruns
with room for all), and, unless ``hist`` is None, ``hist[c]``: the puzzles with
``c`` solutions for ``1 <= c < len(hist)`` (numba compiles the None case
without any of it). Score bands to keep are ``bands[b] = [low, high, matched]``: every puzzle whose count
is in one is counted in ``matched`` and, while there is room, written to ``kept[b]`` as ``[rank, count,
longest]``; ranks come in ascending order, so those written are a band's lowest. ``acc[4]`` is the highest
count a puzzle must be counted exactly up to for the bands (0 without). Paths are stored longest first, so a
puzzle's longest solution is the path of its lowest set bit. The scan module
turns these into the reductions of :mod:`epcg.search.scan`. ``nodes`` counts the
solution sets the must-cross walk computes (prefixes and puzzles): a prefix is
computed only when its parent's set is non-empty, so an empty prefix is pruned
together with every puzzle that extends it (``tests/games/witness/test_witness_scan.py``
compares the count with a walk that prunes nothing).

All kernels trust their caller (``scan.puzzle_space`` and ``epcg.search.scan_range`` check): tables as built by
``bitsets_for``, ``0 <= start <= stop <= max_rank``, ``k`` within the board,
``acc[0]`` initialised above the number of paths.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from epcg.combinatorics.jit import INLINE, KERNEL
from epcg.combinatorics.binomial import BINOMIAL
from epcg.combinatorics.bits import ctz as _ctz
from epcg.combinatorics.bits import popcount
from epcg.combinatorics.combinations import _unrank_lex

_ONE = np.uint64(1)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(**INLINE)
def _record(count, longest, rank, acc, ranks, longs):
    """Fold a puzzle with ``0 < count <= acc[0]`` solutions into the accumulator (not ``acc[2]``)."""
    if count < acc[0]:
        acc[0] = count
        acc[1] = 0
    n = acc[1]
    if n < ranks.shape[0]:
        ranks[n] = rank
        longs[n] = longest
    acc[1] = n + 1


@njit(**INLINE)
def _keep(count, longest, rank, bands, kept):
    """Fold a puzzle with ``count`` exact solutions into every band that holds the count."""
    for b in range(bands.shape[0]):
        if bands[b, 0] <= count <= bands[b, 1]:
            n = bands[b, 2]
            if n < kept.shape[1]:
                kept[b, n, 0] = rank
                kept[b, n, 1] = count
                kept[b, n, 2] = longest
            bands[b, 2] = n + 1


@njit(**INLINE)
def _kept_count(count, bands):
    """Whether a band holds ``count``."""
    for b in range(bands.shape[0]):
        if bands[b, 0] <= count <= bands[b, 1]:
            return True
    return False


@njit(**KERNEL)
def _ones(out, m):
    """``out`` = the first ``m`` bits set (``ceil(m/64)`` words)."""
    full = m >> 6
    for i in range(full):
        out[i] = _ALL
    if m & 63:
        out[full] = (_ONE << np.uint64(m & 63)) - _ONE


@njit(**INLINE)
def _and_level(cur, span, i, table, q):
    """``cur[i+1] = cur[i] & table[q]`` over the words ``span[i]``; returns its size.

    ``span[i] = (first, stop)`` bounds the non-zero words of level ``i``; the
    result's span is trimmed to its own non-zero words (empty when it has none, so
    ANDs from an empty level cost nothing).
    """
    lo = span[i, 0]
    hi = span[i, 1]
    total = 0
    w = np.uint64(lo)
    end = np.uint64(hi)
    while w < end:
        x = cur[i, w] & table[q, w]
        cur[i + 1, w] = x
        total += popcount(x)
        w += _ONE
    if total > 0:
        while cur[i + 1, lo] == 0:
            lo += 1
        while cur[i + 1, hi - 1] == 0:
            hi -= 1
    else:
        hi = lo
    span[i + 1, 0] = lo
    span[i + 1, 1] = hi
    return total


_BLOCK = np.uint64(16)
"""Words ANDed and counted between two checks of the early exit (a block the compiler vectorises)."""
_SMALL = 64
"""Below this limit a minimum search checks the early exit after every non-zero word (the limit passes within a
few words; blocks pay off when counting on)."""


@njit(**INLINE)
def _count_and(cur, i, table, q, lo, hi, limit):
    """``(count, first)`` of ``cur[i] & table[q]`` over words ``[lo, hi)``, stopping once count exceeds ``limit``.

    ``first`` is the lowest set bit (-1 if none). After the first non-zero word
    the words are counted in blocks of ``_BLOCK`` with no branch inside, so an
    exact count (``limit`` at least the set's size) costs one vectorised pass.
    """
    w = lo
    while w < hi:
        x = cur[i, w] & table[q, w]
        if x != 0:
            break
        w += _ONE
    if w >= hi:
        return 0, -1
    first = np.int64(w) * 64 + np.int64(_ctz(cur[i, w] & table[q, w]))
    count = 0
    while w < hi:
        end = min(w + _BLOCK, hi)
        total = 0
        while w < end:
            total += popcount(cur[i, w] & table[q, w])
            w += _ONE
        count += total
        if count > limit:
            break
    return count, first


@njit(**INLINE)
def _cross_leaves(cur, span, i, table, q0, n, lo0, start, stop, lengths, acc, ranks, longs, hist, bands, kept):
    """Last must-cross level: puzzle ``cur[i] & table[q]`` has rank ``lo0 + q - q0``, ``q0 <= q < n``.

    Returns False once it reaches ``stop``.
    """
    lo = np.uint64(span[i, 0])
    hi = np.uint64(span[i, 1])
    solvable = 0
    evaluated = 0
    done = False
    for q in range(max(q0, q0 + start - lo0), n):
        r = lo0 + q - q0
        if r >= stop:
            done = True
            break
        evaluated += 1
        limit = acc[0]
        exact = max(limit, acc[4])
        if hist is None and exact < _SMALL:
            # a minimum search near its end: exit after the word that passes the limit (inline: a helper
            # returning (count, first) compiles to a slower loop here)
            count = 0
            first = -1
            w = lo
            while w < hi:
                x = cur[i, w] & table[q, w]
                if x != 0:
                    if first < 0:
                        first = np.int64(w) * 64 + np.int64(_ctz(x))
                    count += popcount(x)
                    if count > exact:
                        break
                w += _ONE
        elif hist is None:
            count, first = _count_and(cur, i, table, q, lo, hi, exact)
        else:
            count, first = _count_and(cur, i, table, q, lo, hi, max(exact, hist.shape[0] - 1))
        if count > 0:
            solvable += 1
            if hist is not None:
                if count < hist.shape[0]:
                    hist[count] += 1
            if count <= limit:
                _record(count, lengths[first], r, acc, ranks, longs)
            if count <= acc[4]:
                _keep(count, lengths[first], r, bands, kept)
    acc[2] += solvable
    acc[3] += evaluated
    return not done


@njit(**INLINE)
def _buf_and(buf, i0, j0, table, row, i1, j1, lo, hi):
    """``buf[i1, j1] = buf[i0, j0] & table[row]`` over words ``[lo, hi)``; returns its size."""
    total = 0
    w = np.uint64(lo)
    end = np.uint64(hi)
    while w < end:
        x = buf[i0, j0, w] & table[row, w]
        buf[i1, j1, w] = x
        total += popcount(x)
        w += _ONE
    return total


@njit(**INLINE)
def _buf_rows_upto(buf, i0, j0, table, rows, nrows, lo, hi, limit):
    """``(count, first)`` of ``buf[i0, j0] & table[rows[0]] & ..`` over words ``[lo, hi)``.

    Stops once the count exceeds ``limit``; ``first`` is the lowest set bit (-1 if none).
    """
    count = 0
    first = -1
    w = np.uint64(lo)
    end = np.uint64(hi)
    while w < end:
        x = buf[i0, j0, w]
        for r in range(nrows):
            x &= table[rows[r], w]
        if x != 0:
            if first < 0:
                first = np.int64(w) * 64 + np.int64(_ctz(x))
            count += popcount(x)
            if count > limit:
                break
        w += _ONE
    return count, first


@njit(**KERNEL)
def _regions_dfs(base, m, lo_word, hi_word, sep, pair_index, lengths, ncells, kr,
                 rank_base, start, stop, buf, cnt, acc, ranks, longs, hist, bands, kept):
    """Scan all regions puzzles over the path subset ``base`` (``m`` paths in words ``[lo_word, hi_word)``).

    Puzzle ``(cells_rank, colour_bits)`` has rank
    ``rank_base + cells_rank * 2**(kr-1) + colour_bits``. ``buf[i, j]`` is the
    solution set of the cell prefix ``0..i`` under colouring ``j`` of cells
    ``1..i`` (bit ``t-1`` = colour of cell ``t``), ``cnt[i, j]`` its size; a
    cell adds, for each earlier cell of the other colour, that pair's
    separation set. Returns False once it reaches ``stop``.
    """
    mult = np.int64(1) << (kr - 1)
    item = np.empty(kr, dtype=np.int64)
    nextbase = np.empty(kr, dtype=np.int64)
    rows = np.empty(kr, dtype=np.int64)
    for w in range(lo_word, hi_word):
        buf[0, 0, w] = base[w]
    cnt[0, 0] = m
    solvable = 0
    done = False
    i = 0
    item[0] = -1
    nextbase[0] = 0
    while i >= 0:
        q = item[i] + 1
        if q > ncells - kr + i:
            i -= 1
            continue
        item[i] = q
        b = nextbase[i]
        size = BINOMIAL[ncells - 1 - q, kr - 1 - i]
        nextbase[i] = b + size
        lo = rank_base + b * mult
        if lo + size * mult <= start:
            continue
        if lo >= stop:
            done = True
            break
        if i == kr - 1:
            for j2 in range(mult):
                r = lo + j2
                if r < start or r >= stop:
                    continue
                j = j2 & ~(np.int64(1) << (i - 1)) if i > 0 else 0
                if cnt[max(i - 1, 0), j] == 0:
                    continue
                col = j2 >> (i - 1) if i > 0 else 0
                nrows = 0
                for t in range(i):
                    if (0 if t == 0 else (j >> (t - 1)) & 1) != col:
                        rows[nrows] = pair_index[item[t], q]
                        nrows += 1
                limit = acc[0]
                exact = max(limit, acc[4])
                if hist is not None:
                    exact = max(exact, hist.shape[0] - 1)
                parent = cnt[max(i - 1, 0), j]
                if nrows == 0 and parent > limit and not _kept_count(parent, bands):  # one colour: the parent's set
                    solvable += 1
                    if hist is not None:
                        if parent < hist.shape[0]:
                            hist[parent] += 1
                    continue
                c, first = _buf_rows_upto(buf, max(i - 1, 0), j, sep, rows, nrows, lo_word, hi_word, exact)
                if c > 0:
                    solvable += 1
                    if hist is not None:
                        if c < hist.shape[0]:
                            hist[c] += 1
                    if c <= limit:
                        _record(c, lengths[first], r, acc, ranks, longs)
                    if c <= acc[4]:
                        _keep(c, lengths[first], r, bands, kept)
            continue
        if i > 0:
            half = np.int64(1) << (i - 1)
            for j in range(half):
                pc = cnt[i - 1, j]
                for col in range(2):
                    j2 = j | (col << (i - 1))
                    c = pc
                    copy = pc > 0
                    for t in range(i):
                        if c == 0:
                            break
                        if (0 if t == 0 else (j >> (t - 1)) & 1) == col:
                            continue
                        row = pair_index[item[t], q]
                        if copy:
                            c = _buf_and(buf, i - 1, j, sep, row, i, j2, lo_word, hi_word)
                            copy = False
                        else:
                            c = _buf_and(buf, i, j2, sep, row, i, j2, lo_word, hi_word)
                    if copy:
                        for w in range(lo_word, hi_word):
                            buf[i, j2, w] = buf[i - 1, j, w]
                    cnt[i, j2] = c
        i += 1
        item[i] = q
        nextbase[i] = b
    acc[2] += solvable
    return not done


@njit(**KERNEL)
def _scan_cross(cross, sep, pair_index, lengths, num_paths, n, kc, ncells, kr,
                start, stop, acc, ranks, longs, hist, bands, kept):
    """Must-cross (``kr == 0``) or joint scan of ``[start, stop)``.

    Levels ``0..kc-1`` choose positions from ``cross`` (``(n, W)``). A
    must-cross puzzle is a leaf of level ``kc-1``; a joint puzzle hands each
    non-empty cross set to ``_regions_dfs`` (``sep`` is only read then).
    """
    W = cross.shape[1]
    joint = kr > 0
    cur = np.zeros((kc + 1, W), dtype=np.uint64)
    span = np.zeros((kc + 1, 2), dtype=np.int64)
    item = np.empty(kc, dtype=np.int64)
    nextbase = np.empty(kc, dtype=np.int64)
    mult = np.int64(1)
    rbuf = np.zeros((1, 1, 1), dtype=np.uint64)
    rcnt = np.zeros((1, 1), dtype=np.int64)
    if joint:
        mult = BINOMIAL[ncells, kr] << (kr - 1)
        rbuf = np.zeros((kr, np.int64(1) << (kr - 1), W), dtype=np.uint64)
        rcnt = np.zeros((kr, np.int64(1) << (kr - 1)), dtype=np.int64)
    _ones(cur[0], num_paths)
    span[0, 1] = W
    levels = kc if joint else kc - 1  # internal levels; the children of the last are leaves
    if levels == 0:
        _cross_leaves(cur, span, 0, cross, 0, n, 0, start, stop, lengths, acc, ranks, longs, hist, bands, kept)
        return
    nodes = 0  # kept local and added to acc[3] once: a store to acc in the loop would slow the walk
    i = 0
    item[0] = -1
    nextbase[0] = 0
    while i >= 0:
        q = item[i] + 1
        if q > n - kc + i:
            i -= 1
            continue
        item[i] = q
        b = nextbase[i]
        size = BINOMIAL[n - 1 - q, kc - 1 - i]
        nextbase[i] = b + size
        lo = b * mult
        if lo + size * mult <= start:
            continue
        if lo >= stop:
            break
        c = _and_level(cur, span, i, cross, q)
        nodes += 1
        if c == 0:
            continue
        if i == levels - 1:
            if joint:
                more = _regions_dfs(cur[kc], c, span[kc, 0], span[kc, 1], sep, pair_index, lengths,
                                    ncells, kr, lo, start, stop, rbuf, rcnt, acc, ranks, longs, hist, bands,
                                    kept)
            else:
                more = _cross_leaves(cur, span, i + 1, cross, q + 1, n, lo, start, stop, lengths, acc, ranks, longs,
                                     hist, bands, kept)
            if not more:
                break
            continue
        i += 1
        item[i] = q
        nextbase[i] = b
    acc[3] += nodes


@njit(**KERNEL)
def _scan_regions(sep, pair_index, lengths, num_paths, ncells, kr, start, stop, acc, ranks, longs, hist, bands,
                  kept):
    """Regions scan of ``[start, stop)`` over all paths."""
    W = sep.shape[1]
    base = np.zeros(W, dtype=np.uint64)
    _ones(base, num_paths)
    buf = np.zeros((kr, np.int64(1) << (kr - 1), W), dtype=np.uint64)
    cnt = np.zeros((kr, np.int64(1) << (kr - 1)), dtype=np.int64)
    _regions_dfs(base, num_paths, 0, W, sep, pair_index, lengths, ncells, kr,
                 0, start, stop, buf, cnt, acc, ranks, longs, hist, bands, kept)


@njit(**KERNEL)
def _count_puzzle(rank, cross, sep, pair_index, num_paths, npos, kc, ncells, kr):
    """Solutions of the puzzle of one rank (the layout of ``puzzles.py``): decode it, AND its sets.

    The plain per-rank evaluator; the scan kernels above must agree with it.
    """
    nreg = (BINOMIAL[ncells, kr] << (kr - 1)) if kr > 0 else np.int64(1)
    words = cross.shape[1]
    sols = np.zeros(words, dtype=np.uint64)
    _ones(sols, num_paths)
    if kc > 0:
        positions = np.empty(kc, dtype=np.int64)
        _unrank_lex(rank // nreg, npos, kc, positions)
        for p in positions:
            for w in range(words):
                sols[w] &= cross[p, w]
    if kr > 0:
        rest = rank % nreg
        cells = np.empty(kr, dtype=np.int64)
        _unrank_lex(rest >> (kr - 1), ncells, kr, cells)
        colours = np.zeros(kr, dtype=np.int64)
        for t in range(1, kr):
            colours[t] = (rest >> (t - 1)) & 1
        for a in range(kr):
            for b in range(a + 1, kr):
                if colours[a] != colours[b]:
                    row = pair_index[cells[a], cells[b]]
                    for w in range(words):
                        sols[w] &= sep[row, w]
    total = 0
    for w in range(words):
        total += popcount(sols[w])
    return total
