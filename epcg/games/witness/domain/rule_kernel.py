"""The scan of a rules row, compiled: every placement of a rank range, its solution count and longest solution.

Ranks are walked in order (``rules.py`` gives the layout): the first is
decoded, each next one stepped from it like an odometer (``_step``), so only
the parts that changed move, a combination to its successor, and only the
atoms from the first part that changed are rebuilt (``_atoms``). A placement
becomes a list of *atoms*, rows of the row's bitset table (``rule_tables.py``):
its start set, its exit set, each gap, each hexagon and, when no elimination
mark can erase them, each triangle and each pair of squares of different
colours. Level ``i`` of ``cur`` is the AND of the first ``i`` atoms; consecutive
placements share most of their atoms, so only the levels from the first changed
atom are computed again (with the non-zero word spans of ``kernels._and_level``).
A star with one partner of its colour is an atom too (the paths keeping the
two in one region), one with none the empty row.
The last atom's AND is counted with the early exit of ``kernels._count_and``,
a run of ranks at a time where the last atom alone moves (``_leaf``: the last
hexagon of a row without cell symbols, the value of a last triangle), with no
step between them, and not at all under an empty level;
stars with more partners are checked a word at a time from the pairs' bitsets (``_stars_word``),
and when tetris pieces or elimination marks need a path's regions, its paths
are checked one by one (``rule_check.path_ok``), longest first.

Results go to the accumulator of ``kernels.py`` (``acc = [min, n_at_min,
solvable, nodes, exact]``, ranks and longest solutions at the minimum, the
histogram and the kept bands), so ``scan.fused_partial`` turns them into a
:class:`~epcg.search.scan.ScanPartial`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from epcg.combinatorics.jit import INLINE, KERNEL
from epcg.combinatorics.binomial import BINOMIAL
from epcg.combinatorics.bits import ctz, popcount
from epcg.combinatorics.combinations import _unrank_lex
from epcg.games.witness.domain.kernels import _and_level, _count_and, _cross_leaves, _keep, _ones, _record
from epcg.games.witness.domain.rule_check import SQUARE, STAR, TRIANGLE, path_ok

# spec fields
NSP, SC, NXP, XC, EDGES, GK, NPOS, HK, NCELLS, N = range(10)
COUNTS = 10
"""``spec[COUNTS + t]``: cell symbols of type ``t``; ``spec[VALUES + t]``: the values it takes."""
VALUES = 16
CELL_BITSETS = 22
"""1 when triangles and squares are ANDed as bitsets (no elimination mark can erase them)."""
CHECK = 23
"""1 when paths are checked one by one (tetris, negatives or eliminations)."""
NPIECES = 24
STAR_BITSETS = 25
"""1 when stars are checked word by word from the pairs' bitsets (no elimination mark can erase them)."""
SPEC_SIZE = 26

_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)

_ONE = np.uint64(1)


@njit(**KERNEL)
def _multinomial(left, ntypes):
    total = 0
    out = np.int64(1)
    for t in range(ntypes):
        total += left[t]
        out *= BINOMIAL[total, left[t]]
    return out


@njit(**KERNEL)
def _arrangement(index, counts, n, out):
    """``out[:n]`` = the ``index``-th arrangement of the type multiset ``counts`` (``rules.arrangement``)."""
    left = counts.copy()
    for i in range(n):
        for t in range(left.shape[0]):
            if left[t] == 0:
                continue
            left[t] -= 1
            block = _multinomial(left, left.shape[0])
            if index < block:
                out[i] = t
                break
            index -= block
            left[t] += 1


@njit(**KERNEL)
def _decode(rank, spec, radices, tri_values, digits, sel, cells, types, vidx, values):
    """Decode ``rank`` whole: its ``digits`` (the parts of the layout), ``sel`` (``[0]``: start set, ``[1]``: exit
    set, then the gaps, then the hexagons), the cells, types, value indices ``vidx`` and values of its cell
    symbols."""
    rest = rank
    for i in range(6, -1, -1):
        digits[i] = rest % radices[i]
        rest //= radices[i]
    sel[0] = digits[0]
    sel[1] = digits[1]
    if spec[GK] > 0:
        _unrank_lex(digits[2], spec[EDGES], spec[GK], sel[2:])
    if spec[HK] > 0:
        _unrank_lex(digits[3], spec[NPOS], spec[HK], sel[2 + spec[GK]:])
    n = spec[N]
    if n > 0:
        _unrank_lex(digits[4], spec[NCELLS], n, cells)
        _arrangement(digits[5], spec[COUNTS:COUNTS + 6], n, types)
        v = digits[6]
        for i in range(n - 1, -1, -1):
            radix = spec[VALUES + types[i]]
            vidx[i] = v % radix
            v //= radix
    _values(n, types, vidx, tri_values, values)


@njit(**INLINE)
def _values(n, types, vidx, tri_values, values):
    for i in range(n):
        values[i] = tri_values[vidx[i]] if types[i] == TRIANGLE else vidx[i]


@njit(**INLINE)
def _first(items, lo, k):
    for j in range(k):
        items[lo + j] = j


@njit(**INLINE)
def _next_lex(items, lo, n, k):
    """``items[lo:lo+k]`` to the next combination (it has one); returns the index within it that moved."""
    i = k - 1
    while items[lo + i] == n - k + i:
        i -= 1
    nxt = items[lo + i] + 1
    for j in range(i, k):
        items[lo + j] = nxt + (j - i)
    return i


@njit(**INLINE)
def _step(spec, radices, tri_values, digits, sel, cells, types, vidx, values):
    """Advance a decoded rank to the next one without a division: the last digit steps, carrying into the ones
    before it; a part that steps moves to its successor, the parts after it start again from their first.

    Returns the first *item* that changed, items numbered as the atoms of the placement's prefix (0 the start
    set, 1 the exit set, ``2 + i`` gap ``i``, ``2 + GK + i`` hexagon ``i``), then ``2 + GK + HK + i`` for the
    ``i``-th cell symbol."""
    base = 2 + spec[GK] + spec[HK]
    n = spec[N]
    d = 6
    digits[6] += 1
    if digits[6] < radices[6]:
        # the common step: the value of the last cell symbols, carried from the last cell
        i = n - 1
        vidx[i] += 1
        while vidx[i] == spec[VALUES + types[i]]:
            vidx[i] = 0
            i -= 1
            vidx[i] += 1
        for j in range(i, n):
            values[j] = tri_values[vidx[j]] if types[j] == TRIANGLE else vidx[j]
        return base + i
    while digits[d] == radices[d]:
        digits[d] = 0
        d -= 1
        digits[d] += 1
    item = base
    sel[0] = digits[0]
    sel[1] = digits[1]
    if d < 2:
        item = d
    if d <= 2 and spec[GK] > 0:
        if d == 2:
            item = 2 + _next_lex(sel, 2, spec[EDGES], spec[GK])
        else:
            _first(sel, 2, spec[GK])
    if d <= 3 and spec[HK] > 0:
        if d == 3:
            item = 2 + spec[GK] + _next_lex(sel, 2 + spec[GK], spec[NPOS], spec[HK])
        else:
            _first(sel, 2 + spec[GK], spec[HK])
    if n == 0:
        return item
    if d == 4:
        _next_lex(cells, 0, spec[NCELLS], n)
    elif d < 4:
        _first(cells, 0, n)
    if radices[5] > 1:  # with one arrangement of the types, they stay as decoded
        _arrangement(digits[5], spec[COUNTS:COUNTS + 6], n, types)
    vidx[:] = 0
    _values(n, types, vidx, tri_values, values)
    return item


@njit(**INLINE)
def _atoms(item, spec, offsets, pair_index, sel, cells, types, values, atoms, sym_atoms):
    """Bring ``atoms``, the table rows of the decoded placement, up to date from ``item`` on (``_step``'s
    numbering; ``sym_atoms[i]`` is where the atoms of cell symbol ``i`` begin). Returns ``(how many, the first
    atom that may have changed)``."""
    hexagons = 2 + spec[GK]
    base = hexagons + spec[HK]
    sym = 0
    if item < base:
        for j in range(item, base):
            atoms[j] = offsets[j if j < 2 else (3 if j < hexagons else 2)] + sel[j]
        changed = item
    else:
        sym = item - base
        changed = sym_atoms[sym]
    if not spec[CELL_BITSETS]:
        return base, min(changed, base)
    a = sym_atoms[sym] if sym > 0 else base
    for i in range(sym, spec[N]):
        sym_atoms[i] = a
        if types[i] == TRIANGLE:
            atoms[a] = offsets[4] + 3 * cells[i] + values[i] - 1
            a += 1
        elif types[i] == SQUARE:
            for j in range(i):
                if types[j] == SQUARE and values[j] != values[i]:
                    atoms[a] = offsets[5] + pair_index[cells[j], cells[i]]
                    a += 1
    if spec[STAR_BITSETS]:
        a = _star_atoms(spec[N], offsets, pair_index, cells, types, values, atoms, a)
    return a, changed


@njit(**INLINE)
def _star_atoms(n, offsets, pair_index, cells, types, values, atoms, a):
    """Append the atom of each star with at most one partner (another square or star of its colour): the
    paths keeping the two in one region, or the empty row when it has none; returns the atoms' new end."""
    for i in range(n):
        if types[i] != STAR:
            continue
        c = 0
        partner = -1
        for j in range(n):
            if j != i and (types[j] == STAR or types[j] == SQUARE) and values[j] == values[i]:
                c += 1
                partner = j
        if c <= 1:
            atoms[a] = offsets[7] - 1 if c == 0 else offsets[6] + pair_index[cells[i], cells[partner]]
            a += 1
    return a


@njit(**KERNEL)
def _star_partners(n, offsets, pair_index, cells, types, values, partners, counts):
    """For each star ``s`` with two partners or more (numbered in cell order; ``_star_atoms`` takes the others),
    the bitset rows ``partners[s, :counts[s]]`` of the pairs it forms with the other squares and stars of its
    colour; returns the number of such stars."""
    ns = 0
    for i in range(n):
        if types[i] != STAR:
            continue
        c = 0
        for j in range(n):
            if j != i and (types[j] == STAR or types[j] == SQUARE) and values[j] == values[i]:
                partners[ns, c] = offsets[5] + pair_index[cells[i], cells[j]]
                c += 1
        if c > 1:
            counts[ns] = c
            ns += 1
    return ns


@njit(**INLINE)
def _stars_word(w, rows, ns, partners, counts):
    """The paths of word ``w`` on which every star's region holds exactly one of its partners: for each star,
    ``one`` tracks "exactly one partner so far in its region" and ``none`` "no partner so far" (a partner's row
    holds the paths that separate it from the star)."""
    x = _ALL
    for s in range(ns):
        none = _ALL
        one = np.uint64(0)
        for j in range(counts[s]):
            apart = rows[partners[s, j], w]
            one = (one & apart) | (none & ~apart)
            none &= apart
        x &= one
    return x


@njit(**KERNEL)
def _checked(cur, span, level, rows, spec, ns, partners, counts, regions, touch, cells, types, values, voff, place,
             vsize, limit, scratch):
    """``(count, first)`` of the paths of ``cur[level]`` that satisfy the stars (word by word) and the other cell
    symbols (path by path), stopping above ``limit``; ``first`` is the lowest (longest) one, -1 if none."""
    n = spec[N]
    count = 0
    first = -1
    for w in range(span[level, 0], span[level, 1]):
        x = cur[level, w]
        if ns > 0:
            x &= _stars_word(w, rows, ns, partners, counts)
        if not spec[CHECK]:
            if x != 0:
                if first < 0:
                    first = w * 64 + ctz(x)
                count += popcount(x)
                if count > limit:
                    return count, first
            continue
        while x != 0:
            b = ctz(x)
            x &= x - _ONE
            p = w * 64 + b
            if path_ok(regions[p], touch[p], n, cells, types, values, spec[NPIECES], voff, place, vsize,
                       scratch[0], scratch[1], scratch[2]):
                if first < 0:
                    first = p
                count += 1
                if count > limit:
                    return count, first
    return count, first


@njit(**KERNEL)
def scan_rules(rows, spec, radices, tri_values, offsets, pair_index, num_paths, lengths, regions, touch, voff,
               place, vsize, start, stop, acc, ranks, longs, hist, bands, kept):
    """Every placement of ``[start, stop)`` into the accumulator (``kernels.py``'s conventions)."""
    W = rows.shape[1]
    n = spec[N]
    most = 2 + spec[GK] + spec[HK] + 2 * n + n * (n - 1) // 2
    cur = np.zeros((most + 1, W), dtype=np.uint64)
    span = np.zeros((most + 1, 2), dtype=np.int64)
    _ones(cur[0], num_paths)
    span[0, 1] = W
    digits = np.zeros(7, dtype=np.int64)
    sel = np.zeros(2 + spec[GK] + spec[HK], dtype=np.int64)
    cells = np.zeros(max(n, 1), dtype=np.int64)
    types = np.zeros(max(n, 1), dtype=np.int64)
    vidx = np.zeros(max(n, 1), dtype=np.int64)
    values = np.zeros(max(n, 1), dtype=np.int64)
    atoms = np.zeros(most, dtype=np.int64)
    before = np.full(most, -1, dtype=np.int64)
    sym_atoms = np.zeros(max(n, 1), dtype=np.int64)
    scratch = np.zeros((3, max(n, 1)), dtype=np.int64)
    partners = np.zeros((max(n, 1), max(n, 1)), dtype=np.int64)
    counts = np.zeros(max(n, 1), dtype=np.int64)
    valid = 0  # levels of cur that hold the ANDs of ``before``'s atoms
    solvable = 0
    crossed = 0  # placements counted by _cross_leaves
    r = start
    while r < stop:
        if r == start:
            _decode(r, spec, radices, tri_values, digits, sel, cells, types, vidx, values)
            item = 0
        else:
            item = _step(spec, radices, tri_values, digits, sel, cells, types, vidx, values)
        m, same = _atoms(item, spec, offsets, pair_index, sel, cells, types, values, atoms, sym_atoms)
        same = min(same, valid)
        while same < m - 1 and same < valid and atoms[same] == before[same]:
            same += 1
        for i in range(same, m - 1):
            _and_level(cur, span, i, rows, atoms[i])
            before[i] = atoms[i]
        valid = m - 1
        ns = _star_partners(n, offsets, pair_index, cells, types, values, partners, counts) \
            if spec[STAR_BITSETS] else 0
        if spec[CHECK] or ns > 0:
            _and_level(cur, span, m - 1, rows, atoms[m - 1])
            count, first = _checked(cur, span, m, rows, spec, ns, partners, counts, regions, touch, cells, types,
                                    values, voff, place, vsize, _exact(acc, hist), scratch)
            solvable += _fold(count, first, r, lengths, acc, ranks, longs, hist, bands, kept)
            r += 1
            continue
        leaf = _leaf(spec, types)
        run = 1 if leaf < 0 else min(stop - r, spec[NPOS] - sel[leaf] if n == 0 else spec[VALUES + TRIANGLE] - vidx[n - 1])
        lo = np.uint64(span[m - 1, 0])
        hi = np.uint64(span[m - 1, 1])
        if lo < hi and (n == 0 or tri_values[vidx[n - 1] + run - 1] - tri_values[vidx[n - 1]] == run - 1):
            # the run's rows are consecutive: must-cross's own leaf loop (it adds the solvable ones to acc)
            _cross_leaves(cur, span, m - 1, rows, atoms[m - 1], atoms[m - 1] + run, r, start, stop, lengths, acc,
                          ranks, longs, hist, bands, kept)
            crossed += run
        elif lo < hi:
            for j in range(run):
                q = atoms[m - 1]
                if j > 0:
                    q = offsets[2] + sel[leaf] + j if n == 0 else \
                        offsets[4] + 3 * cells[n - 1] + tri_values[vidx[n - 1] + j] - 1
                count, first = _count_and(cur, m - 1, rows, q, lo, hi, _exact(acc, hist))
                solvable += _fold(count, first, r + j, lengths, acc, ranks, longs, hist, bands, kept)
        if run > 1:
            if n == 0:
                sel[leaf] += run - 1
                digits[3] += run - 1
            else:
                vidx[n - 1] += run - 1
                values[n - 1] = tri_values[vidx[n - 1]]
                digits[6] += run - 1
        r += run
    acc[2] += solvable
    acc[3] += stop - start - crossed  # _cross_leaves counted its leaves


@njit(**INLINE)
def _leaf(spec, types):
    """Where the placement's last atom alone runs through consecutive ranks: the index in ``sel`` of the last
    hexagon of a row without cell symbols, ``0`` for a last cell symbol that is a triangle (its values run),
    -1 otherwise (one rank at a time)."""
    n = spec[N]
    if n == 0:
        return 1 + spec[GK] + spec[HK] if spec[HK] > 0 else -1
    return 0 if spec[CELL_BITSETS] and not spec[STAR_BITSETS] and types[n - 1] == TRIANGLE else -1


@njit(**INLINE)
def _exact(acc, hist):
    """Up to which count a placement's solutions must be counted exactly now."""
    exact = max(acc[0], acc[4])
    if hist is not None:
        exact = max(exact, hist.shape[0] - 1)
    return exact


@njit(**INLINE)
def _fold(count, first, r, lengths, acc, ranks, longs, hist, bands, kept):
    """Fold the placement of rank ``r`` with ``count`` solutions (``first`` the lowest) into the accumulator;
    returns 1 if it is solvable."""
    if count == 0:
        return 0
    if hist is not None and count < hist.shape[0]:
        hist[count] += 1
    if count <= acc[0]:
        _record(count, lengths[first], r, acc, ranks, longs)
    if count <= acc[4]:
        _keep(count, lengths[first], r, bands, kept)
    return 1


@njit(**KERNEL)
def solve_rank(rank, rows, spec, radices, tri_values, offsets, pair_index, num_paths, regions, touch, voff, place,
               vsize, out):
    """The paths solving the placement of ``rank`` into ``out`` (ascending, while they fit); returns how many."""
    W = rows.shape[1]
    n = spec[N]
    digits = np.zeros(7, dtype=np.int64)
    sel = np.zeros(2 + spec[GK] + spec[HK], dtype=np.int64)
    cells = np.zeros(max(n, 1), dtype=np.int64)
    types = np.zeros(max(n, 1), dtype=np.int64)
    vidx = np.zeros(max(n, 1), dtype=np.int64)
    values = np.zeros(max(n, 1), dtype=np.int64)
    atoms = np.zeros(2 + spec[GK] + spec[HK] + 2 * n + n * (n - 1) // 2, dtype=np.int64)
    scratch = np.zeros((3, max(n, 1)), dtype=np.int64)
    _decode(rank, spec, radices, tri_values, digits, sel, cells, types, vidx, values)
    m, _ = _atoms(0, spec, offsets, pair_index, sel, cells, types, values, atoms, np.zeros(max(n, 1), np.int64))
    partners = np.zeros((max(n, 1), max(n, 1)), dtype=np.int64)
    counts = np.zeros(max(n, 1), dtype=np.int64)
    ns = _star_partners(n, offsets, pair_index, cells, types, values, partners, counts) if spec[STAR_BITSETS] else 0
    found = 0
    for w in range(W):
        x = rows[atoms[0], w]
        for i in range(1, m):
            x &= rows[atoms[i], w]
        if ns > 0:
            x &= _stars_word(w, rows, ns, partners, counts)
        while x != 0:
            p = w * 64 + ctz(x)
            x &= x - _ONE
            if spec[CHECK] and not path_ok(regions[p], touch[p], n, cells, types, values, spec[NPIECES], voff,
                                           place, vsize, scratch[0], scratch[1], scratch[2]):
                continue
            if found < out.shape[0]:
                out[found] = p
            found += 1
    return found


@njit(**KERNEL)
def count_rank(rank, rows, spec, radices, tri_values, offsets, pair_index, num_paths, regions, touch, voff, place,
               vsize):
    """Solutions of the placement of one rank: the plain per-rank evaluator the range scan must agree with."""
    return solve_rank(rank, rows, spec, radices, tri_values, offsets, pair_index, num_paths, regions, touch, voff,
                      place, vsize, np.zeros(0, dtype=np.int64))

