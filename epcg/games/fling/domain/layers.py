"""Retrograde analysis of Fling! layers (paper Algorithm 5) as pure functions over word ranges.

Layer ``k`` holds two bitsets over the C(n, k) boards of ``k`` pieces on an
``n = width * height`` cell board, indexed by lexicographic rank (paper
Algorithm 4: rank 0 is cells ``{0..k-1}``) and packed in uint64 words: bit
``r % 64`` of word ``r // 64`` is the board of rank ``r``; bits past C(n, k)
are 0.

* ``k = 1``: every board is solvable and unique.
* ``k = 2``: unique = solvable (the choice of the last move does not count).
* ``k > 2``: over the board's legal moves, ``sc`` counts moves whose result
  is solvable and ``ss`` moves whose result is unique (moves, not distinct
  results); solvable iff ``sc > 0``, unique iff ``sc == 1 and ss == 1``.
  A board stops looking at moves once ``sc > 1``.

>>> s, u = first_layer(3, 1)
>>> [int(w) for w in s], [int(w) for w in u]
([7], [7])
>>> s2, u2 = solve_words(3, 1, 2, s, u, 0, layer_words(3, 1, 2))
>>> bin(int(s2[0]))                      # only o.o (rank 1) has a move
'0b10'

Three kernels compute the same words. On boards whose rows and columns are
at most ``LINE_TABLE_MAX`` cells long, the block kernel (``_solve_blocks``)
solves the boards that share their lowest ``k - 1`` pieces together: a move
of those pieces is a move of each such board, and its results for all of them
are consecutive ranks of layer ``k - 1``, so one rank and one 64-bit window
of ``prev_solvable`` serve a few dozen boards; only moves on the last
piece's row and column are ranked board by board. The fast kernel
(``_solve_fast``, one board at a time, the baseline the benchmarks compare
with) ranks every move of every board. Longer lines use ``_solve_plain``,
which walks cells and ranks every successor from scratch.

How the fast kernel spends its time, per board of the range (the block
kernel does the same per block of boards):

* boards are enumerated by a bit-trick lex increment, not unranked; the
  transposed board and the per-chunk rank sums (below) are updated only where
  the increment changed bits;
* each row, and each column of the transposed board, is looked up in a
  per-line move table (``moves.line_table``) listing its moves and results;
* the rank is a sum over 8-bit chunks (``_build_rank_table``); a successor
  differs from its parent only inside the span of one line, so its rank is
  the parent's chunk sums above and below that span plus one table lookup per
  chunk inside it;
* successors are looked up in ``prev_solvable`` without data-dependent
  branches (so lookups overlap) until two are solvable; ``prev_unique`` is
  read at most once per board, for the only solvable successor, from its
  compact index (:mod:`~epcg.games.fling.domain.sparse`: few boards are unique,
  so it holds their ranks, not a bit per board).

On random word ranges of 7×8 layer 8 the block kernel solves about 2× the
boards per CPU second of the fast one (``benchmarks/fling_symmetry.py``).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
from numba import njit

from epcg.combinatorics.jit import INLINE, KERNEL
from epcg.combinatorics.binomial import BINOMIAL
from epcg.combinatorics.bitboard import _rank_lex_bb, _unrank_lex_bb
from epcg.combinatorics.bits import ctz, msb, popcount
from epcg.games.fling.domain.moves import LINE_TABLE_MAX, _fling, line_table
from epcg.games.fling.domain.sparse import BitIndex, _index_bit, as_index

__all__ = ["check_misses", "check_previous", "choose_kernel", "finish_parts", "first_layer", "layer_size", "layer_words", "merge_parts",
           "solve_words"]

_ONE = np.uint64(1)
_BYTE = np.uint64(255)
_ABSENT = np.iinfo(np.int64).min


# --------------------------------------------------------------------------- sizes


def _check_board(width: int, height: int) -> int:
    if not (isinstance(width, int) and isinstance(height, int)) or width < 1 or height < 1:
        raise ValueError(f"board must be positive integers width x height, got {width!r} x {height!r}")
    if width * height > 64:
        raise ValueError(f"a board has at most 64 cells, got {width} x {height}")
    return width * height


def layer_size(width: int, height: int, k: int) -> int:
    """Number of boards with ``k`` pieces, C(width*height, k).

    >>> layer_size(7, 8, 10)
    35607051480
    """
    return math.comb(_check_board(width, height), k) if k >= 0 else 0


def layer_words(width: int, height: int, k: int) -> int:
    """uint64 words holding one bit per board of layer ``k``, ceil(C(n, k) / 64).

    >>> layer_words(7, 8, 2), layer_size(7, 8, 2)
    (25, 1540)
    """
    return -(-layer_size(width, height, k) // 64)


def first_layer(width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """Words of layer 1: every one-piece board is solved, and uniquely.

    >>> [hex(int(w)) for w in first_layer(7, 8)[0]]
    ['0xffffffffffffff']
    """
    n = _check_board(width, height)
    words = np.zeros(layer_words(width, height, 1), dtype=np.uint64)
    for r in range(n):
        words[r >> 6] |= _ONE << np.uint64(r & 63)
    return words, words.copy()


# --------------------------------------------------------------------------- rank tables


@njit(**KERNEL)
def _build_rank_table(n, kc):
    """``T[t, a, b]``: chunk ``t``'s part of the rank sum of a ``kc``-piece board.

    The lexicographic rank of a board with ``kc`` pieces is
    ``C(n, kc) - 1 - sum_cells C(n - 1 - cell, above(cell) + 1)`` where
    ``above(cell)`` counts pieces on higher cells. Split the cells into 8-bit
    chunks; chunk ``t`` holding bits ``b`` with ``a`` pieces in higher chunks
    contributes ``T[t, a, b]``. ``a`` runs to ``kc + 1``: the kernel also
    reads the parent's (``kc + 1`` pieces) empty chunks below all its pieces.
    """
    nchunks = (n + 7) // 8
    table = np.zeros((nchunks, kc + 2, 256), dtype=np.int64)
    for t in range(nchunks):
        for a in range(kc + 2):
            for b in range(256):
                s = 0
                above = a
                for x in range(7, -1, -1):
                    if (b >> x) & 1:
                        cell = 8 * t + x
                        if cell < n:
                            s += BINOMIAL[n - 1 - cell, above + 1]
                        above += 1
                table[t, a, b] = s
    return table


@cache
def _rank_table(n: int, kc: int) -> np.ndarray:
    return _build_rank_table(n, kc)


@cache
def _column_tables(width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """``cell_t[c]``: bit of cell ``c`` in the transposed board (column ``x`` in bits
    ``x*height .. x*height+height-1``); ``scatter[v]``: column value ``v`` as column 0 cells."""
    cell_t = np.zeros(64, dtype=np.uint64)
    for c in range(width * height):
        cell_t[c] = np.uint64(1) << np.uint64((c % width) * height + c // width)
    scatter = np.zeros(1 << height, dtype=np.uint64)
    for v in range(1 << height):
        s = 0
        for y in range(height):
            if v >> y & 1:
                s |= 1 << (y * width)
        scatter[v] = s
    return cell_t, scatter


# --------------------------------------------------------------------------- kernels


@njit(**KERNEL)
def _increment(board, full, n):
    """Next board in lexicographic order (see ``bitboard._increment_lex_bb``); 0 after the last."""
    empty = ~board & full
    if empty == 0:
        return np.uint64(0)
    q = msb(empty)
    rest = board & ((_ONE << np.uint64(q)) - _ONE)
    if rest == 0:
        return np.uint64(0)
    p = msb(rest)
    run = n - 1 - q
    return (rest ^ (_ONE << np.uint64(p))) | (((_ONE << np.uint64(run + 1)) - _ONE) << np.uint64(p + 1))


@njit(**KERNEL)
def _bit(words, r):
    return (words[r >> 6] >> np.uint64(r & 63)) & _ONE


@njit(**INLINE)
def _bit_in_part(words, r, part):
    """Bit of rank ``r`` of a layer whose words from ``part`` on are ``words``, and ``r`` within them
    (0 and 0 for a rank outside them): branch-free, so the kernels' lookups still overlap."""
    r -= part << 6
    inside = (r >= 0) & ((r >> 6) < words.shape[0])
    q = r if inside else 0
    return np.int64(inside) & np.int64((words[q >> 6] >> np.uint64(q & 63)) & _ONE), q


@njit(**INLINE)
def _flip_images(images, maps, cells):
    """Toggle ``cells`` (a bitboard) in each board image: ``images[g]`` is a board's image under ``maps[g]``
    (``symmetry.symmetry_maps``), kept current by XOR-ing in the images of the cells that changed."""
    x = cells
    while x:
        c = ctz(x)
        for g in range(images.shape[0]):
            images[g] ^= maps[g, c]
        x &= x - _ONE


@njit(**INLINE)
def _chunk_sums(board, tc, rank_t, above, c_hi, c_lo, p_hi, lo):
    """Update the chunk sums of ``board`` (see ``_build_rank_table``) from chunk ``tc`` up, the lowest
    that changed, and return the sum over every chunk. ``above[t]``: pieces in higher chunks; ``p_hi[t]``:
    the sum over chunks up to ``t``; ``lo[t]``: over chunks below ``t`` with one piece fewer above (a
    successor's chunks below its changes)."""
    nchunks = above.shape[0]
    a = 0
    for t in range(nchunks - 1, tc - 1, -1):
        above[t] = a
        b = (board >> np.uint64(8 * t)) & _BYTE
        c_hi[t] = rank_t[t, a, b]
        c_lo[t] = rank_t[t, max(a - 1, 0), b]
        a += popcount(b)
    for t in range(tc, nchunks):
        p_hi[t] = c_hi[t] + (p_hi[t - 1] if t > 0 else 0)
        if t > tc:
            lo[t] = lo[t - 1] + c_lo[t - 1]
    return p_hi[nchunks - 1]


@njit(**INLINE)
def _rank_near(child, diff, base, total_hi, p_hi, lo, above, rank_t):
    """Rank of ``child`` (one piece fewer than the board whose chunk sums are given) that differs from that
    board only in the chunks ``diff`` spans: the board's sums outside them, a table lookup per chunk inside."""
    tlo = ctz(diff) >> 3
    thi = msb(diff) >> 3
    s = total_hi - p_hi[thi] + lo[tlo]
    a = above[thi]
    for t in range(thi, tlo - 1, -1):
        b = (child >> np.uint64(8 * t)) & _BYTE
        s += rank_t[t, a, b]
        a += popcount(b)
    return base - s


@njit(**KERNEL)
def _solve_fast(width, height, k, r0, r1, prev_s, prev_u, out_s, out_u, w0,
                row_start, row_result, col_start, col_result, rank_t, cell_t, scatter, part):
    """Fill ``out_s``/``out_u`` (word 0 = layer word ``w0``) for ranks ``r0 .. r1-1``.

    ``part`` is None (the previous-layer words are complete) or the first
    word of the previous layer they hold: then only successors inside that
    part count, and the output is the part's partial (:func:`solve_words`).
    Numba compiles the two cases apart, so the complete case pays nothing.
    Unchecked: ``k >= 2``, ``r0 < r1 <= C(n, k)``, ``64*w0 <= r0``, outputs
    zeroed and long enough, tables built for this board and ``k - 1`` (rows
    and columns at most ``LINE_TABLE_MAX``).
    """
    n = width * height
    full = (_ONE << np.uint64(n)) - _ONE if n < 64 else ~np.uint64(0)
    row_mask = np.uint64((1 << width) - 1)
    col_mask = np.uint64((1 << height) - 1)
    nchunks = (n + 7) // 8
    base = BINOMIAL[n, k - 1] - 1
    above = np.zeros(nchunks, dtype=np.int64)
    c_hi = np.zeros(nchunks, dtype=np.int64)
    c_lo = np.zeros(nchunks, dtype=np.int64)
    p_hi = np.zeros(nchunks, dtype=np.int64)  # sum of c_hi over chunks <= t
    lo = np.zeros(nchunks, dtype=np.int64)  # sum of c_lo over chunks < t
    diffs = np.empty(4 * k, dtype=np.uint64)
    board = _unrank_lex_bb(r0, n, k)
    changed = board  # bits that differ from the previous board (all, at first)
    tb = np.uint64(0)  # transposed board: column x in bits x*height ..
    for r in range(r0, r1):
        # per-chunk parts of the rank sum; chunks below the lowest changed bit keep theirs
        x = changed
        while x:
            tb ^= cell_t[ctz(x)]
            x &= x - _ONE
        total_hi = _chunk_sums(board, ctz(changed) >> 3, rank_t, above, c_hi, c_lo, p_hi, lo)
        # successors as the cells they flip: rows, then (unless two are solvable
        # already) columns of the transposed board
        sc = np.int64(0)
        first = np.int64(-1)
        for phase in range(2):
            m = 0
            if phase == 0:
                for y in range(height):
                    shift = np.uint64(y * width)
                    v = (board >> shift) & row_mask
                    for j in range(row_start[v], row_start[v + 1]):
                        diffs[m] = (v ^ np.uint64(row_result[j])) << shift
                        m += 1
            else:
                for cx in range(width):
                    v = (tb >> np.uint64(cx * height)) & col_mask
                    for j in range(col_start[v], col_start[v + 1]):
                        diffs[m] = scatter[v ^ np.uint64(col_result[j])] << np.uint64(cx)
                        m += 1
            # rank each successor from the parent's sums outside its changed span;
            # branch-free apart from the short chunk loop, so lookups can overlap
            for i in range(m):
                cr = _rank_near(board ^ diffs[i], diffs[i], base, total_hi, p_hi, lo, above, rank_t)
                if part is None:
                    ok = np.int64((prev_s[cr >> 6] >> np.uint64(cr & 63)) & _ONE)
                else:  # prev_s holds words part.. of the layer: look up only ranks inside them
                    ok, cr = _bit_in_part(prev_s, cr, part)
                sc += ok
                first = cr if ok else first
                if sc > 1:
                    break
            if sc > 1:
                break
        if sc > 0:
            bit = _ONE << np.uint64(r & 63)
            out_s[(r >> 6) - w0] |= bit
            if sc == 1 and _index_bit(prev_u, first):
                out_u[(r >> 6) - w0] |= bit
        nxt = _increment(board, full, n)
        changed = board ^ nxt
        board = nxt


@njit(**INLINE)
def _window(words, start, length, part):
    """Bits ``start .. start+length-1`` (``1 <= length <= 64``) of a layer as the low bits of a word;
    ``part`` as in ``_bit_in_part`` (ranks outside the words held read 0). Branch-free, so its inlined copies
    in the kernels' move loops hold no atomic reference-count update of ``words``, as branches would."""
    if part is not None:
        start -= part << 6
    w = start >> 6
    sh = np.uint64(start & 63)
    last = words.shape[0] - 1
    lo = words[min(max(w, 0), last)] & (np.uint64(0) - np.uint64(0 <= w <= last))
    hi = words[min(max(w + 1, 0), last)] & (np.uint64(0) - np.uint64((0 <= w + 1 <= last) & (sh != 0)))
    x = (lo >> sh) | (hi << ((np.uint64(64) - sh) & np.uint64(63)))
    return x & (~np.uint64(0) >> np.uint64(64 - length))


@njit(**INLINE)
def _bit_in_slices(words, where, child, r, counts):
    """Bit of rank ``r`` (the board ``child``) of a layer held as slices (``where``, see ``_solve_blocks``), and
    where it lies in ``words``; a slice not held reads 0 and adds 1 to ``counts[2]``."""
    off = where[child & np.uint64(where.shape[0] - 1)]
    inside = off != _ABSENT
    q = r + off if inside else 0
    counts[2] += 1 - np.int64(inside)
    return np.int64(inside) & np.int64((words[q >> 6] >> np.uint64(q & 63)) & _ONE), q


@njit(**KERNEL)
def _window_sliced(words, where, child, r, m, length, mask, located, counts):
    """``_window`` of the results ``Q + {c}`` (``c > m``; ``child`` is ``Q + {m + 1}``, of rank ``r``) of a layer
    held as slices, for the boards of ``mask``; returns the bits and where bit 0 lies in ``words``. When ``m + 1``
    is a cell the slices are keyed by, the results lie in several slices: each is looked up alone, the bits' places
    go to ``located`` and the place returned is -1."""
    lead = np.uint64(where.shape[0] - 1)
    if (_ONE << np.uint64(m + 1)) > lead:  # every result has Q's pattern
        off = where[child & lead]
        if off == _ABSENT:
            counts[2] += mask != 0
            return np.uint64(0), np.int64(0)
        return _window(words, r + off, length, None) & mask, r + off
    moved = child ^ (_ONE << np.uint64(m + 1))
    hit = np.uint64(0)
    x = mask
    while x:
        j = ctz(x)
        x &= x - _ONE
        ok, q = _bit_in_slices(words, where, moved | (_ONE << np.uint64(m + 1 + j)), r + j, counts)
        located[j] = q
        hit |= np.uint64(ok) << np.uint64(j)
    return hit, np.int64(-1)


@njit(**KERNEL)
def _canonical_in_block(prefix, m, valid, images, maps, fixed):
    """The boards ``prefix + {m + 1 + j}`` of ``valid`` that are canonical (the lowest lex rank of their
    orbit), as bits ``j``; ``fixed[j]``: how many symmetries, the identity included, fix board ``j``.
    ``images[g]``: the prefix's image under ``maps[g]``."""
    canon = np.uint64(0)
    x = valid
    while x:
        j = ctz(x)
        x &= x - _ONE
        c = m + 1 + j
        board = prefix | (_ONE << np.uint64(c))
        f = 1
        for g in range(maps.shape[0]):
            image = images[g] | maps[g, c]
            d = image ^ board
            f += d == 0
            if image & d & (~d + _ONE):
                break
        else:
            canon |= _ONE << np.uint64(j)
            fixed[j] = f
    return canon


@njit(**INLINE)
def _decided_lead(prefix, m, images, maps):
    """The shortest leading part of ``prefix`` (its lowest cells, as a bitboard) that makes every board
    beginning with it non-canonical; 0 if not even the whole prefix (highest cell ``m``) does.

    A board is canonical when, against each image, the lowest cell where the two differ is the board's. If
    for a symmetry ``g`` the lowest cell ``x`` where a leading part ``S`` and ``g(S)`` differ is ``g(S)``'s and
    lies below ``S``'s highest cell, it stays the lowest difference for every board beginning with ``S``: the
    board's further cells lie above ``S``'s, and their images below ``x``, if any, are not the board's. A
    longer part is then decided too, so only symmetries that decide the whole prefix (``images[g]``: its
    image) are scanned for the shortest part."""
    best = np.uint64(0)
    top = _ONE << np.uint64(m)
    for g in range(maps.shape[0]):
        d = images[g] ^ prefix
        low = d & (~d + _ONE)
        if not (images[g] & low) or low >= top:
            continue
        lead = np.uint64(0)
        image = np.uint64(0)
        x = prefix
        while x:
            cell = x & (~x + _ONE)
            x ^= cell
            lead |= cell
            image |= maps[g, ctz(cell)]
            d = image ^ lead
            low = d & (~d + _ONE)
            if image & low and low < cell:
                break
        if best == 0 or lead < best:  # leads of one prefix are nested: the shorter is the smaller number
            best = lead
    return best


@njit(**INLINE)
def _look_up(diff, line, anchor, valid, m, length, ones, twos, base, total_hi, p_hi, lo, above, rank_t,
             prev_s, where, part, firsts, located, counts):
    """One move of a block's prefix (``diff``: the cells it flips): its results' bits in ``prev_s`` added to
    ``ones`` and ``twos`` (``_solve_blocks``), which it returns. ``line``: the cells of the move's line if it
    moves towards higher cells, else 0; the boards whose ``c`` lies on it are left to the board-by-board moves."""
    cr = _rank_near(anchor ^ diff, diff, base, total_hi, p_hi, lo, above, rank_t)
    mask = valid & ~(line >> np.uint64(m + 1))
    one_by_one = False
    if where is None:
        hit = _window(prev_s, cr, length, part) & mask
        at = cr if part is None else cr - (part << 6)
    else:
        hit, at = _window_sliced(prev_s, where, anchor ^ diff, cr, m, length, mask, located, counts)
        one_by_one = at < 0
    new = hit & ~ones
    while new:
        j = ctz(new)
        firsts[j] = located[j] if one_by_one else at + j
        new &= new - _ONE
    return ones | hit, twos | (ones & hit)


@njit(**KERNEL)
def _solve_blocks(width, height, k, r0, r1, prev_s, prev_u, out_s, out_u, w0,
                  row_start, row_result, row_frm, row_step, col_start, col_result, col_frm, col_step,
                  rank_t, cell_t, scatter, part, where, maps, counts):
    """``_solve_fast``'s contract, a block at a time: the boards that share their lowest ``k - 1`` pieces.

    In lex order the boards ``P + {c}`` with prefix ``P`` (``k - 1`` pieces,
    highest ``m``) and ``c`` from ``m + 1`` to ``n - 1`` are consecutive ranks,
    a *block*. A move of ``P`` on a line (row or column) without ``c`` is a
    move of every such board, and its result ``Q + {c}`` keeps ``c`` as its
    highest piece (a move only puts pieces between pieces of its line), so the
    results over the block are consecutive ranks of layer ``k - 1`` too: one
    rank and one window of up to 64 bits serve the whole block. So is a move
    of ``P`` towards lower cells on ``c``'s row or column (``c`` lies behind
    it). Per board are left only the moves towards higher cells on ``c``'s row
    and column (``c`` leaves the board) and ``c``'s own, for boards with fewer
    than two solvable results from the rest. Counts per board are kept bitwise
    (``ones``: one solvable result so far, ``twos``: two) with the rank of
    each board's first solvable result (``firsts``); ``prev_u`` is read once
    per board left with exactly one, at the end of its block (few boards are
    unique, so it is an index, not a bit per board). ``part`` as in
    ``_solve_fast``. ``where`` is None, or (``part`` None) ``prev_s`` holds
    some slices of layer ``k - 1`` and ``where`` where each begins
    (:class:`~epcg.games.fling.domain.slices.SlicedLayer`): a result in a slice
    not held adds 1 to ``counts[2]`` and reads 0.

    ``maps`` None: every board. Otherwise the symmetries (``symmetry.symmetry_maps``):
    only canonical boards get bits, each adding its orbit size to ``counts[0]``
    (solvable) and ``counts[1]`` (unique). Most boards are not canonical, and
    mostly their lowest cells decide it: the prefixes that begin with such
    cells are passed over as one range of ranks (:func:`_decided_lead`); a
    block without a canonical board otherwise costs a few compares a board.
    Unchecked like ``_solve_fast``.
    """
    n = width * height
    row_mask = np.uint64((1 << width) - 1)
    col_mask = np.uint64((1 << height) - 1)
    prefixes = (_ONE << np.uint64(n - 1)) - _ONE
    nchunks = (n + 7) // 8
    base = BINOMIAL[n, k - 1] - 1
    above = np.zeros(nchunks, dtype=np.int64)
    c_hi = np.zeros(nchunks, dtype=np.int64)
    c_lo = np.zeros(nchunks, dtype=np.int64)
    p_hi = np.zeros(nchunks, dtype=np.int64)
    lo = np.zeros(nchunks, dtype=np.int64)
    firsts = np.empty(64, dtype=np.int64)  # board j's first solvable result (relative to prev_s's word 0)
    located = np.empty(64, dtype=np.int64)  # a window's results looked up one by one (slices): where each was
    column_cells = scatter[col_mask]
    board = _unrank_lex_bb(r0, n, k)
    top = msb(board)
    prefix = board ^ (_ONE << np.uint64(top))
    block = r0 - (top - msb(prefix) - 1)  # rank of the block's first board
    anchor = np.uint64(0)  # prefix + {m + 1} of the last block solved
    tb = np.uint64(0)  # its prefix, transposed
    solved = np.uint64(0)  # its prefix
    images = np.zeros(0 if maps is None else maps.shape[0], dtype=np.uint64)  # of the prefix
    fixed = np.ones(64, dtype=np.int64)
    # a board's orbit size by how many symmetries fix it, looked up: a division per board is a costly instruction
    orbit_sizes = np.zeros(1 if maps is None else maps.shape[0] + 2, dtype=np.int64)
    for f in range(1, orbit_sizes.shape[0]):
        orbit_sizes[f] = (orbit_sizes.shape[0] - 1) // f
    if maps is not None:
        _flip_images(images, maps, prefix)
    n_s = 0
    n_u = 0
    while block < r1:
        m = msb(prefix)
        length = n - 1 - m
        # boards of this block inside [r0, r1), as bits j (board prefix + {m + 1 + j})
        j0 = max(r0 - block, 0)
        j1 = min(r1 - block, length)
        valid = (~np.uint64(0) >> np.uint64(64 - j1)) & ~((_ONE << np.uint64(j0)) - _ONE)
        if maps is not None:
            lead = _decided_lead(prefix, m, images, maps)
            if lead != prefix and lead:  # no board of any prefix beginning with lead is canonical: go past them
                rest = np.uint64(k - 1 - popcount(lead))
                nxt = _increment(lead | (((_ONE << rest) - _ONE) << (np.uint64(n - 1) - rest)), prefixes, n - 1)
                if nxt == 0:
                    break
                _flip_images(images, maps, prefix ^ nxt)
                prefix = nxt
                block = _rank_lex_bb(prefix | (_ONE << np.uint64(msb(prefix) + 1)), n, k)
                continue
            valid = np.uint64(0) if lead else _canonical_in_block(prefix, m, valid, images, maps, fixed)
        if valid:
            x = prefix ^ solved
            while x:
                tb ^= cell_t[ctz(x)]
                x &= x - _ONE
            solved = prefix
            nxt_anchor = prefix | (_ONE << np.uint64(m + 1))
            tc = ctz(anchor ^ nxt_anchor) >> 3
            anchor = nxt_anchor
            total_hi = _chunk_sums(anchor, tc, rank_t, above, c_hi, c_lo, p_hi, lo)
            ones = np.uint64(0)
            twos = np.uint64(0)
            # the prefix's moves: rows, then columns, each looked up as it is made until every board has two
            for y in range((m // width) + 1):
                if twos == valid:
                    break
                shift = np.uint64(y * width)
                v = (prefix >> shift) & row_mask
                for i in range(row_start[v], row_start[v + 1]):
                    diff = (v ^ np.uint64(row_result[i])) << shift
                    line = (row_mask << shift) if row_step[i] == 0 else np.uint64(0)
                    ones, twos = _look_up(diff, line, anchor, valid, m, length, ones, twos, base, total_hi, p_hi,
                                          lo, above, rank_t, prev_s, where, part, firsts, located, counts)
                    if twos == valid:
                        break
            for cx in range(width):
                if twos == valid:
                    break
                v = (tb >> np.uint64(cx * height)) & col_mask
                for i in range(col_start[v], col_start[v + 1]):
                    diff = scatter[v ^ np.uint64(col_result[i])] << np.uint64(cx)
                    line = (column_cells << np.uint64(cx)) if col_step[i] == 0 else np.uint64(0)
                    ones, twos = _look_up(diff, line, anchor, valid, m, length, ones, twos, base, total_hi, p_hi,
                                          lo, above, rank_t, prev_s, where, part, firsts, located, counts)
                    if twos == valid:
                        break
            # moves on c's own row and column, board by board
            need = valid & ~twos
            while need:
                j = ctz(need)
                need &= need - _ONE
                c = m + 1 + j
                here = prefix | (_ONE << np.uint64(c))
                sc = np.int64((ones >> np.uint64(j)) & _ONE)
                cy = c // width
                cx = c - cy * width
                for phase in range(2):
                    if phase == 0:
                        shift = np.uint64(cy * width)
                        v = (here >> shift) & row_mask
                        i0, i1 = row_start[v], row_start[v + 1]
                    else:
                        v = ((tb | cell_t[c]) >> np.uint64(cx * height)) & col_mask
                        i0, i1 = col_start[v], col_start[v + 1]
                    for i in range(i0, i1):
                        if phase == 0:
                            if row_step[i] != 0 and row_frm[i] != cx:
                                continue  # a move of the prefix: counted for the whole block
                            diff = (v ^ np.uint64(row_result[i])) << shift
                        else:
                            if col_step[i] != 0 and col_frm[i] != cy:
                                continue
                            diff = scatter[v ^ np.uint64(col_result[i])] << np.uint64(cx)
                        child = here ^ diff
                        cr = _rank_near(child, anchor ^ child, base, total_hi, p_hi, lo, above, rank_t)
                        if where is not None:
                            ok, cr = _bit_in_slices(prev_s, where, child, cr, counts)
                        elif part is None:
                            ok = np.int64((prev_s[cr >> 6] >> np.uint64(cr & 63)) & _ONE)
                        else:
                            ok, cr = _bit_in_part(prev_s, cr, part)
                        if ok:
                            if sc == 0:
                                firsts[j] = cr
                            sc += 1
                            if sc > 1:
                                break
                    if sc > 1:
                        break
                bit = _ONE << np.uint64(j)
                if sc > 0:
                    ones |= bit
                if sc > 1:
                    twos |= bit
            if k == 2 and part is None:
                unique = ones
            else:
                unique = np.uint64(0)
                x = ones & ~twos
                while x:
                    j = ctz(x)
                    unique |= _index_bit(prev_u, firsts[j]) << np.uint64(j)
                    x &= x - _ONE
            if maps is not None:
                x = ones
                while x:
                    j = ctz(x)
                    weight = orbit_sizes[fixed[j]]
                    n_s += weight
                    n_u += weight * np.int64((unique >> np.uint64(j)) & _ONE)
                    x &= x - _ONE
            # the block's bits j land on ranks block + j
            q = block - 64 * w0
            w = q >> 6
            sh = np.uint64(q & 63)
            if w >= 0:
                out_s[w] |= ones << sh
                out_u[w] |= unique << sh
            if sh and w + 1 < out_s.shape[0]:
                out_s[w + 1] |= ones >> (np.uint64(64) - sh)
                out_u[w + 1] |= unique >> (np.uint64(64) - sh)
        block += length
        nxt = _increment(prefix, prefixes, n - 1)
        if nxt == 0:
            break
        if maps is not None:
            _flip_images(images, maps, prefix ^ nxt)
        prefix = nxt
    counts[0] += n_s
    counts[1] += n_u


@njit(**KERNEL)
def _solve_plain(width, height, k, r0, r1, prev_s, prev_u, out_s, out_u, w0, part):
    """Same contract as ``_solve_fast`` for any board: moves by walking cells
    (``moves._fling``), successors ranked from scratch. Unchecked like ``_solve_fast``."""
    n = width * height
    board = _unrank_lex_bb(r0, n, k)
    for r in range(r0, r1):
        sc = 0
        first = -1
        x = board
        while x and sc <= 1:
            cell = ctz(x)
            x &= x - _ONE
            for d in range(4):
                child = _fling(board, width, height, cell, d)
                if child != 0:
                    cr = _rank_lex_bb(child, n, k - 1)
                    if part is not None:
                        cr -= part << 6
                        if cr < 0 or (cr >> 6) >= prev_s.shape[0]:
                            continue
                    if _bit(prev_s, cr):
                        sc += 1
                        first = cr
                        if sc > 1:
                            break
        if sc > 0:
            bit = _ONE << np.uint64(r & 63)
            out_s[(r >> 6) - w0] |= bit
            if sc == 1 and _index_bit(prev_u, first):
                out_u[(r >> 6) - w0] |= bit
        if r + 1 < r1:
            board = _increment(board, (_ONE << np.uint64(n)) - _ONE if n < 64 else ~np.uint64(0), n)


# --------------------------------------------------------------------------- public


def _check_words(name: str, words: np.ndarray, expected: int) -> np.ndarray:
    words = np.ascontiguousarray(words)
    if words.dtype != np.uint64 or words.ndim != 1 or words.shape[0] != expected:
        raise ValueError(f"{name} must be a 1-D uint64 array of {expected} words, got {words.dtype} {words.shape}")
    return words


def check_previous(width: int, height: int, k: int, solvable: np.ndarray, unique: BitIndex | np.ndarray,
                   part_start: int | None, where: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The previous layer checked: all of layer ``k - 1``, one part of it from ``part_start``, or (``where``) some
    of its slices (:class:`~epcg.games.fling.domain.slices.SlicedLayer`); ``solvable`` as words, ``unique`` as the
    array of its :class:`~epcg.games.fling.domain.sparse.BitIndex` (dense words are indexed here)."""
    if where is not None:
        lead = np.shape(where)[0] if np.ndim(where) == 1 else 0
        if part_start is not None or np.asarray(where).dtype != np.int64 or lead < 2 or lead & (lead - 1):
            raise ValueError("where must be an int64 table of 2^T slice offsets, without part_start")
        words = np.shape(solvable)[0] if np.ndim(solvable) == 1 else 0
        return _check_words("prev_solvable", solvable, words), as_index("prev_unique", unique, words)
    total = layer_words(width, height, k - 1)
    if part_start is None:
        return _check_words("prev_solvable", solvable, total), as_index("prev_unique", unique, total)
    words = np.shape(solvable)[0] if np.ndim(solvable) == 1 else -1
    if not isinstance(part_start, int) or part_start < 0 or words < 0 or part_start + words > total:
        raise ValueError(f"a part of layer {k - 1} must lie within its {total} words, got {words} from {part_start!r}")
    return _check_words("prev_solvable", solvable, words), as_index("prev_unique", unique, words)


def choose_kernel(kernel: str, width: int, height: int) -> str:
    """The kernel ``kernel`` names on this board (``"auto"``: ``"block"`` when every line is at most
    ``LINE_TABLE_MAX`` cells, else ``"plain"``); ``ValueError`` for an unknown one or one the board's lines
    are too long for.

    >>> choose_kernel("auto", 7, 8), choose_kernel("auto", 17, 1)
    ('block', 'plain')
    """
    if kernel == "auto":
        kernel = "block" if max(width, height) <= LINE_TABLE_MAX else "plain"
    if kernel not in ("fast", "block", "plain") or (kernel != "plain" and max(width, height) > LINE_TABLE_MAX):
        raise ValueError(f"kernel must be 'auto', 'plain' or (lines <= {LINE_TABLE_MAX}) 'fast' or 'block', "
                         f"got {kernel!r}")
    return kernel


def solve_words(
    width: int,
    height: int,
    k: int,
    prev_solvable: np.ndarray,
    prev_unique: BitIndex | np.ndarray,
    word_start: int,
    word_stop: int,
    *,
    kernel: str = "auto",
    part_start: int | None = None,
    where: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Words ``[word_start, word_stop)`` of layer ``k`` (``solvable``, ``unique``).

    ``prev_solvable``/``prev_unique`` are the whole layer ``k - 1`` (uint64,
    ``layer_words(width, height, k - 1)`` words each; ``prev_unique`` also as
    a :class:`~epcg.games.fling.domain.sparse.BitIndex` of them, which is how
    a job holds it). Any split of a layer into word ranges gives the same words.

    With ``part_start``, ``prev_*`` are only the words from ``part_start`` on
    of layer ``k - 1``, and the result is a *partial*: only moves to boards
    in them count; ``solvable``: one of them leads to a solvable board;
    ``unique``: exactly one does, to a unique board. :func:`merge_parts` over
    parts covering layer ``k - 1``, then :func:`finish_parts`, give the layer. Single-threaded and ``nogil``:
    run several calls on threads to use more cores. ``kernel`` is ``"auto"``
    (``"block"`` when every line is at most ``LINE_TABLE_MAX`` cells, else
    ``"plain"``), ``"block"``, ``"fast"`` (one board at a time, the baseline)
    or ``"plain"`` (the cell-walking kernel, for checks).

    With ``where`` (block kernel only), ``prev_*`` hold only the slices of
    layer ``k - 1`` that these words' moves reach, laid out as a
    :class:`~epcg.games.fling.domain.slices.SlicedLayer` says; a move to a
    slice not held raises ``LookupError``.
    """
    n = _check_board(width, height)
    if not isinstance(k, int) or not 2 <= k <= n:
        raise ValueError(f"k must be an integer in [2, {n}], got {k!r}")
    total = layer_words(width, height, k)
    if not (isinstance(word_start, int) and isinstance(word_stop, int)) or not 0 <= word_start <= word_stop <= total:
        raise ValueError(f"word range [{word_start!r}, {word_stop!r}) not within [0, {total}]")
    prev_solvable, prev_unique = check_previous(width, height, k, prev_solvable, prev_unique, part_start, where)
    kernel = choose_kernel(kernel, width, height)
    if where is not None and kernel != "block":
        raise ValueError(f"slices are read by the block kernel only, got kernel={kernel!r}")
    counts = np.zeros(3, dtype=np.int64)
    out_s = np.zeros(word_stop - word_start, dtype=np.uint64)
    out_u = np.zeros(word_stop - word_start, dtype=np.uint64)
    r0 = 64 * word_start
    r1 = min(64 * word_stop, layer_size(width, height, k))
    if r0 < r1:
        if kernel in ("fast", "block"):
            rows, cols = line_table(width), line_table(height)
            cell_t, scatter = _column_tables(width, height)
            if kernel == "block":
                _solve_blocks(width, height, k, r0, r1, prev_solvable, prev_unique, out_s, out_u, word_start,
                              rows.start, rows.result, rows.frm, rows.step, cols.start, cols.result, cols.frm,
                              cols.step, _rank_table(n, k - 1), cell_t, scatter, part_start, where, None,
                              counts)
            else:
                _solve_fast(width, height, k, r0, r1, prev_solvable, prev_unique, out_s, out_u, word_start,
                            rows.start, rows.result, cols.start, cols.result,
                            _rank_table(n, k - 1), cell_t, scatter, part_start)
        else:
            _solve_plain(width, height, k, r0, r1, prev_solvable, prev_unique, out_s, out_u, word_start, part_start)
    check_misses(k, counts)
    if k == 2 and part_start is None:
        out_u[:] = out_s
    return out_s, out_u


def check_misses(k: int, counts: np.ndarray) -> None:
    """``LookupError`` if the block kernel met moves to slices of layer ``k - 1`` not held (``counts[2]``)."""
    if counts[2]:
        raise LookupError(f"{int(counts[2]):,} moves from layer {k} reached slices of layer {k - 1} that were not "
                          f"read: the slices' neighbours are wrong")


def merge_parts(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]
                ) -> tuple[np.ndarray, np.ndarray]:
    """Two partials of the same words over disjoint parts of the previous layer, as one partial.

    A partial is ``(some, one)``: some successor in the parts is solvable;
    exactly one is, and it is unique. Associative and commutative.

    >>> a = np.array([0b011], dtype=np.uint64), np.array([0b011], dtype=np.uint64)  # one unique for both boards
    >>> b = np.array([0b110], dtype=np.uint64), np.array([0b000], dtype=np.uint64)  # boards 1 and 2: some
    >>> [bin(int(w[0])) for w in merge_parts(a, b)]   # board 1 now has two: not one
    ['0b111', '0b1']
    """
    return a[0] | b[0], (a[1] & ~b[0]) | (b[1] & ~a[0])


def finish_parts(k: int, merged: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The layer's ``(solvable, unique)`` from the partial merged over every part of layer ``k - 1``."""
    return (merged[0], merged[0].copy()) if k == 2 else merged
