"""Numba scan kernels: min non-zero solution count over a rank range of Witness puzzles.

Each kernel walks the ranks ``[start, stop)`` as a DFS in lexicographic order.
A node is a prefix of the puzzle (some positions, or some cells with colours);
it keeps its solution set, the AND of its constraints' bitsets (``bitsets.py``).
Every subtree is a contiguous rank block, so an empty prefix skips its whole
block, and blocks outside ``[start, stop)`` are never entered.

*Compaction*: once a prefix's solution set is small, its survivors are
renumbered ``0 .. m-1`` and the tables the subtree still needs (crossings of
the later positions; cell separations for the joint kind) are rebuilt over the
survivors, so deeper ANDs touch ``ceil(m/64)`` words instead of all of them.
A cost estimate decides when (``_worth_compacting``).

Results go to a shared accumulator (``_record``): ``acc = [min, n_at_min,
solvable]`` plus the rank and longest solution of every puzzle at the current
min, written while they fit in ``ranks`` (``acc[1]`` may exceed its length; the
wrapper then reruns with room for them). Paths are stored longest first, so a
puzzle's longest solution is the path of the lowest set bit.

All kernels trust their caller: tables shaped and zero-padded as built by
``bitsets_for``, ``0 <= start <= stop <= max_rank``, ``k`` within the board.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from epcg.combinatorics.binomial import BINOMIAL
from epcg.domains.witness.bitsets import _and_count, _and_rows_count_upto, _ctz, _first, popcount

_ONE = np.uint64(1)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)

COMPACT_WORDS = 256
"""Largest compacted bitset, in words (16,384 survivors)."""


@njit(cache=True, nogil=True, inline="always")
def _record(count, longest, rank, acc, ranks, longs):
    """Fold a puzzle with ``0 < count <= acc[0]`` solutions into the accumulator (not ``acc[2]``)."""
    if count < acc[0]:
        acc[0] = count
        acc[1] = 0
    if count == acc[0]:
        n = acc[1]
        if n < ranks.shape[0]:
            ranks[n] = rank
            longs[n] = longest
        acc[1] = n + 1


@njit(cache=True, nogil=True)
def _ones(out, m):
    """``out`` = the first ``m`` bits set (``ceil(m/64)`` words)."""
    full = m >> 6
    for i in range(full):
        out[i] = _ALL
    if m & 63:
        out[full] = (_ONE << np.uint64(m & 63)) - _ONE


@njit(cache=True, nogil=True)
def _path_of(rep, corig, t):
    """Original path index of bit ``t`` in representation ``rep`` (-1: the full path list)."""
    if rep < 0:
        return t
    return corig[rep, t]


@njit(cache=True, nogil=True)
def _worth_compacting(m, words, below, per_survivor):
    """Compact a set of ``m`` survivors now spread over ``words`` non-zero words?

    ``below`` estimates the bitset operations left in the subtree, each of which
    would shrink from ``words`` to ``ceil(m/64)`` words; rebuilding costs about
    ``per_survivor`` operations per survivor.
    """
    new = (m + 63) >> 6
    if new > 0 and new * 2 <= words and new <= COMPACT_WORDS:
        return below * (words - new) > m * per_survivor
    return False


@njit(cache=True, nogil=True)
def _compact(cur, span, i, m, rep, corig, cross_mask, first_pos, n, ctab, regions, pair_cells, csep):
    """Renumber the ``m`` survivors of level ``i`` (representation ``rep``) into slot ``i``.

    Fills ``corig[i]``, the crossings ``ctab[i, p]`` of positions
    ``first_pos .. n-1`` and, when ``pair_cells`` has rows, the separations
    ``csep[i, pair]``; then makes level ``i`` the dense set ``0 .. m-1``.
    Returns the new number of words.
    """
    new = (m + 63) >> 6
    for p in range(first_pos, n):
        for w in range(new):
            ctab[i, p, w] = 0
    npairs = pair_cells.shape[0]
    for pair in range(npairs):
        for w in range(new):
            csep[i, pair, w] = 0
    t2 = 0
    for w0 in range(span[i, 0], span[i, 1]):
        x = cur[i, w0]
        while x != 0:
            low = x & (~x + _ONE)
            t = w0 * 64 + np.int64(_ctz(low))
            x ^= low
            o = _path_of(rep, corig, t)
            corig[i, t2] = o
            word = t2 >> 6
            bit = _ONE << np.uint64(t2 & 63)
            for cw in range(cross_mask.shape[1]):
                y = cross_mask[o, cw]
                while y != 0:
                    lowy = y & (~y + _ONE)
                    p = cw * 64 + np.int64(_ctz(lowy))
                    y ^= lowy
                    if p >= first_pos:
                        ctab[i, p, word] |= bit
            for pair in range(npairs):
                if regions[o, pair_cells[pair, 0]] != regions[o, pair_cells[pair, 1]]:
                    csep[i, pair, word] |= bit
            t2 += 1
    _ones(cur[i], m)
    span[i, 0] = 0
    span[i, 1] = new
    return new


@njit(cache=True, nogil=True, inline="always")
def _and_level(cur, span, i, table, q):
    """``cur[i+1] = cur[i] & table[q]`` over the words ``span[i]``; returns its size.

    ``span[i] = (first, stop)`` bounds the non-zero words of level ``i``; the
    AND runs over that span only (a plain loop LLVM vectorises) and trims it
    for level ``i+1``. Survivors cluster at low path indices (long paths cross
    more positions), so spans stay short.
    """
    lo = span[i, 0]
    hi = span[i, 1]
    total = 0
    w = np.uint64(lo)  # unsigned: no negative-index wraparound, so LLVM vectorises
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
    span[i + 1, 0] = lo
    span[i + 1, 1] = hi
    return total


@njit(cache=True, nogil=True, inline="always")
def _cross_leaves(cur, span, i, table, q0, n, lo0, start, stop, rep, corig, lengths, acc, ranks, longs):
    """Last must-cross level: puzzle ``cur[i] & table[q]`` has rank ``lo0 + q - q0``, ``q0 <= q < n``.

    Counts stop early above the best count so far (``acc[0]``): only puzzles at
    or below it go to ``_record``. Returns False once it reaches ``stop``.
    """
    lo = np.uint64(span[i, 0])
    hi = np.uint64(span[i, 1])
    solvable = 0
    done = False
    for q in range(max(q0, q0 + start - lo0), n):
        r = lo0 + q - q0
        if r >= stop:
            done = True
            break
        limit = acc[0]
        count = 0
        first = -1
        w = lo
        while w < hi:
            x = cur[i, w] & table[q, w]
            w += _ONE
            if x != 0:
                if first < 0:
                    first = np.int64(w - _ONE) * 64 + np.int64(_ctz(x))
                count += popcount(x)
                if count > limit:
                    break
        if count > 0:
            solvable += 1
            if count <= limit:
                _record(count, lengths[_path_of(rep, corig, first)], r, acc, ranks, longs)
    acc[2] += solvable
    return not done


@njit(cache=True, nogil=True)
def _regions_dfs(base, m, words, sep, rep, corig, pair_index, lengths, ncells, kr,
                 rank_base, start, stop, buf, cnt, acc, ranks, longs):
    """Scan all regions puzzles over the path subset ``base`` (``m`` paths, ``words`` words).

    ``sep`` holds the separations in the same representation as ``base``.
    Puzzle ``(cells_rank, colour_bits)`` has rank
    ``rank_base + cells_rank * 2**(kr-1) + colour_bits``. ``buf[i, j]`` is the
    solution set of the cell prefix ``0..i`` under colouring ``j`` of cells
    ``1..i`` (bit ``t-1`` = colour of cell ``t``), ``cnt[i, j]`` its size.
    Returns False once it reaches ``stop``.
    """
    mult = np.int64(1) << (kr - 1)
    item = np.empty(kr, dtype=np.int64)
    nextbase = np.empty(kr, dtype=np.int64)
    rows = np.empty(kr, dtype=np.int64)
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
            return False
        if i == 0:
            for w in range(words):
                buf[0, 0, w] = base[w]
            cnt[0, 0] = m
            if kr == 1 and start <= lo:
                acc[2] += 1
                if m <= acc[0]:
                    _record(m, lengths[_path_of(rep, corig, _first(base, words))], lo, acc, ranks, longs)
        elif i == kr - 1:
            for j2 in range(mult):
                j = j2 & ~(np.int64(1) << (i - 1))
                r = lo + j2
                if cnt[i - 1, j] == 0 or r < start or r >= stop:
                    continue
                col = j2 >> (i - 1)
                nrows = 0
                for t in range(i):
                    if (0 if t == 0 else (j >> (t - 1)) & 1) != col:
                        rows[nrows] = pair_index[item[t], q]
                        nrows += 1
                c, first = _and_rows_count_upto(buf[i - 1, j], sep, rows, nrows, words, acc[0])
                if c > 0:
                    acc[2] += 1
                    if c <= acc[0]:
                        _record(c, lengths[_path_of(rep, corig, first)], r, acc, ranks, longs)
        else:
            half = np.int64(1) << (i - 1)
            for j in range(half):
                pc = cnt[i - 1, j]
                for col in range(2):
                    j2 = j | (col << (i - 1))
                    if pc == 0:
                        cnt[i, j2] = 0
                        continue
                    c = pc
                    src_is_parent = True
                    for t in range(i):
                        ct = 0 if t == 0 else (j >> (t - 1)) & 1
                        if ct == col:
                            continue
                        row = pair_index[item[t], q]
                        if src_is_parent:
                            c = _and_count(buf[i - 1, j], sep[row], buf[i, j2], words)
                            src_is_parent = False
                        else:
                            c = _and_count(buf[i, j2], sep[row], buf[i, j2], words)
                        if c == 0:
                            break
                    if src_is_parent:
                        for w in range(words):
                            buf[i, j2, w] = buf[i - 1, j, w]
                    cnt[i, j2] = c
        if i == kr - 1:
            continue
        i += 1
        item[i] = q
        nextbase[i] = b
    return True


@njit(cache=True, nogil=True)
def _scan_cross(cross, sep, cross_mask, regions, pair_cells, pair_index, lengths, num_paths,
                n, kc, ncells, kr, start, stop, acc, ranks, longs):
    """Must-cross (``kr == 0``) or joint scan of ``[start, stop)``.

    Levels ``0..kc-1`` choose positions from ``cross`` (``(n, W)``); a joint
    puzzle hands each non-empty cross set to ``_regions_dfs``. ``sep`` and
    ``pair_cells`` are only read when ``kr > 0``.
    """
    W = cross.shape[1]
    cw = min(W, COMPACT_WORDS)
    joint = kr > 0
    npairs = pair_cells.shape[0] if joint else 0
    ctab = np.zeros((kc + 1, n, cw), dtype=np.uint64)
    csep = np.zeros((kc + 1, npairs, cw), dtype=np.uint64)
    corig = np.zeros((kc + 1, cw * 64), dtype=np.int64)
    cur = np.zeros((kc + 1, W), dtype=np.uint64)
    span = np.zeros((kc + 1, 2), dtype=np.int64)
    reps = np.full(kc + 1, -1, dtype=np.int64)
    words = np.zeros(kc + 1, dtype=np.int64)
    item = np.empty(kc, dtype=np.int64)
    nextbase = np.empty(kc, dtype=np.int64)
    mult = np.int64(1)
    leaf_work = 1.0
    base = np.zeros(W, dtype=np.uint64)
    rbuf = np.zeros((1, 1, 1), dtype=np.uint64)
    rcnt = np.zeros((1, 1), dtype=np.int64)
    if joint:
        mult = BINOMIAL[ncells, kr] << (kr - 1)
        leaf_work = 1.0 * mult * kr
        rbuf = np.zeros((kr, np.int64(1) << (kr - 1), W), dtype=np.uint64)
        rcnt = np.zeros((kr, np.int64(1) << (kr - 1)), dtype=np.int64)
    per_survivor = 8 * (32 + npairs)  # bit extractions per survivor, in vectorised word ANDs
    _ones(cur[0], num_paths)
    span[0, 1] = W
    words[0] = W
    levels = kc if joint else kc - 1  # internal levels; their children are leaves
    if levels == 0:
        _cross_leaves(cur, span, 0, cross, 0, n, 0, start, stop, -1, corig, lengths, acc, ranks, longs)
        return
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
            return
        rep = reps[i]
        if rep < 0:
            c = _and_level(cur, span, i, cross, q)
        else:
            c = _and_level(cur, span, i, ctab[rep], q)
        if c == 0:
            continue
        reps[i + 1] = rep
        words[i + 1] = words[i]
        if _worth_compacting(c, span[i + 1, 1] - span[i + 1, 0], leaf_work * size, per_survivor):
            words[i + 1] = _compact(cur, span, i + 1, c, rep, corig, cross_mask, q + 1, n, ctab,
                                    regions, pair_cells[:npairs], csep)
            reps[i + 1] = i + 1
        if i == levels - 1:
            r = reps[i + 1]
            if joint:
                wd = words[kc]
                for w in range(wd):
                    base[w] = 0
                for w in range(span[kc, 0], span[kc, 1]):
                    base[w] = cur[kc, w]
                table_sep = sep if r < 0 else csep[r]
                done = not _regions_dfs(base, c, wd, table_sep, r, corig, pair_index, lengths,
                                        ncells, kr, lo, start, stop, rbuf, rcnt, acc, ranks, longs)
            else:
                table = cross if r < 0 else ctab[r]
                done = not _cross_leaves(cur, span, i + 1, table, q + 1, n, lo, start, stop,
                                         r, corig, lengths, acc, ranks, longs)
            if done:
                return
            continue
        i += 1
        item[i] = q
        nextbase[i] = b


@njit(cache=True, nogil=True)
def _scan_regions(sep, pair_index, lengths, num_paths, ncells, kr, start, stop, acc, ranks, longs):
    """Regions scan of ``[start, stop)`` over all paths."""
    W = sep.shape[1]
    base = np.zeros(W, dtype=np.uint64)
    _ones(base, num_paths)
    buf = np.zeros((kr, np.int64(1) << (kr - 1), W), dtype=np.uint64)
    cnt = np.zeros((kr, np.int64(1) << (kr - 1)), dtype=np.int64)
    corig = np.zeros((1, 1), dtype=np.int64)
    _regions_dfs(base, num_paths, W, sep, -1, corig, pair_index, lengths, ncells, kr,
                 0, start, stop, buf, cnt, acc, ranks, longs)
