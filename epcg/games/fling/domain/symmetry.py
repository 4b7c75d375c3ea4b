"""Fling! layers reduced by board symmetry: one board per orbit is solved, every board is counted.

The rules treat the four directions alike, so a board's mirror images and
rotations (the symmetries of the rectangle: identity, the two mirrors and the
half turn; for square boards also the four maps that swap rows and columns)
have the same solution count. A *canonical* board is the member of its orbit
with the lowest lexicographic rank.

A symmetric layer keeps the layout of :mod:`~epcg.games.fling.domain.layers`
(one bit per rank, C(n, k) bits) but only canonical ranks carry bits; every
other bit is 0. So it is the unreduced layer ANDed with the canonical mask,
and any word range still is one task. Each solved board adds its orbit size
(group order over stabiliser size) to the counts, so the counts are those of
the unreduced layer. Solving layer ``k`` reads the unreduced layer ``k - 1``,
filled from its orbit layer by :func:`expand_words` (every board gets its
canonical image's bits; any word range at a time, so filling can be a stage of
tasks: ``solvable`` is read board by board, while the few ``unique`` orbits are
ranked member by member once per layer, :func:`orbit_members`), and ranks and
looks up successors exactly like the unreduced kernel, whose lookups for
neighbouring boards stay close in memory. The block kernel
(``layers._solve_blocks`` with the symmetries) first finds which boards of a
block (those sharing their lowest ``k - 1`` pieces) are canonical: mostly the
shared pieces decide, so about three blocks in four have none and cost only
those compares. ``kernel="fast"`` (``_solve_sym_fast``) goes board by board.

Lex order of two boards with the same number of pieces needs no ranks: with
``d = a ^ b``, the board holding the lowest differing cell ``d & -d`` comes
first (both agree below it, and it is the next piece of exactly one of them).

>>> maps = symmetry_maps(3, 1)              # o.. <-> ..o
>>> int(canonical(0b100, maps)), int(canonical(0b011, maps)), int(orbit_size(0b101, maps))
(1, 3, 1)
>>> s1, u1, _, _ = first_layer_symmetric(3, 1)
>>> bin(int(s1[0])), [bin(int(w)) for w in expand_layer(3, 1, 1, s1, u1)[0]]
('0b11', ['0b111'])
>>> s, u, ns, nu = solve_words_symmetric(3, 1, 2, *expand_layer(3, 1, 1, s1, u1), 0, 1)
>>> bin(int(s[0])), ns, nu                  # o.o is its own mirror image
('0b10', 1, 1)
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import njit

from epcg.combinatorics.jit import INLINE, KERNEL
from epcg.combinatorics.binomial import BINOMIAL
from epcg.combinatorics.bitboard import _rank_lex_bb, _unrank_lex_bb
from epcg.combinatorics.bits import ctz, msb, popcount, prefetch
from epcg.games.fling.domain.layers import (
    _bit_in_part,
    _check_board,
    _chunk_sums,
    _column_tables,
    _flip_images,
    _increment,
    _rank_near,
    _rank_table,
    _solve_blocks,
    check_misses,
    check_previous,
    choose_kernel,
    layer_size,
    layer_words,
)
from epcg.games.fling.domain.moves import _fling, line_table
from epcg.games.fling.domain.sparse import BitIndex, _index_bit, as_index, from_ranks

__all__ = [
    "canonical",
    "canonical_words",
    "expand_layer",
    "expand_words",
    "orbit_members",
    "orbit_total",
    "first_layer_symmetric",
    "orbit_size",
    "solve_words_symmetric",
    "symmetry_maps",
]

_ONE = np.uint64(1)
_BYTE = np.uint64(255)


# --------------------------------------------------------------------------- the group


@cache
def symmetry_maps(width: int, height: int) -> np.ndarray:
    """Cell images under every symmetry but the identity: ``maps[g, c]`` is the bit of cell ``c``'s image.

    Three maps (two mirrors, half turn) for rectangles, seven for squares. The
    identity with these maps is a group acting on cells (on a one-row board the
    vertical mirror acts as the identity), so orbit size = order / stabiliser.

    >>> symmetry_maps(7, 8).shape, symmetry_maps(4, 4).shape
    ((3, 64), (7, 64))
    >>> [int(m[0]).bit_length() - 1 for m in symmetry_maps(2, 2)]  # images of cell 0 (top left)
    [1, 2, 3, 0, 3, 1, 2]
    """
    _check_board(width, height)
    w1, h1 = width - 1, height - 1
    moves = [lambda x, y: (w1 - x, y), lambda x, y: (x, h1 - y), lambda x, y: (w1 - x, h1 - y)]
    if width == height:
        moves += [lambda x, y: (y, x), lambda x, y: (w1 - y, h1 - x),
                  lambda x, y: (w1 - y, x), lambda x, y: (y, h1 - x)]
    maps = np.zeros((len(moves), 64), dtype=np.uint64)
    for g, move in enumerate(moves):
        for c in range(width * height):
            x, y = move(c % width, c // width)
            maps[g, c] = np.uint64(1) << np.uint64(y * width + x)
    return maps


@njit(**KERNEL)
def _image(board, maps, g):
    out = np.uint64(0)
    x = np.uint64(board)
    while x:
        out |= maps[g, ctz(x)]
        x &= x - _ONE
    return out


@njit(**KERNEL)
def _before(a, b):
    """True when board ``a`` has a lower lex rank than ``b`` (same piece count)."""
    d = a ^ b
    return (a & d & (~d + _ONE)) != 0


@njit(**KERNEL)
def canonical(board, maps):
    """The member of ``board``'s orbit with the lowest lex rank."""
    best = np.uint64(board)
    for g in range(maps.shape[0]):
        image = _image(board, maps, g)
        if _before(image, best):
            best = image
    return best


@njit(**KERNEL)
def orbit_size(board, maps):
    """Number of distinct boards in ``board``'s orbit."""
    fixed = 1
    for g in range(maps.shape[0]):
        fixed += _image(board, maps, g) == np.uint64(board)
    return (maps.shape[0] + 1) // fixed


# --------------------------------------------------------------------------- kernels


@njit(**KERNEL)
def _canonical_words(n, k, r0, r1, maps, out, w0):
    """Set the bits of canonical ranks ``r0 .. r1-1`` in ``out``; returns the boards they represent.

    Images are updated where the lex increment changed bits, as in the kernels."""
    full = (_ONE << np.uint64(n)) - _ONE if n < 64 else ~np.uint64(0)
    nmaps = maps.shape[0]
    images = np.zeros(nmaps, dtype=np.uint64)
    board = _unrank_lex_bb(r0, n, k)
    changed = board
    total = 0
    for r in range(r0, r1):
        _flip_images(images, maps, changed)
        fixed = 1
        is_canonical = True
        for g in range(nmaps):
            d = images[g] ^ board
            fixed += d == 0
            if images[g] & d & (~d + _ONE):
                is_canonical = False
                break
        if is_canonical:
            out[(r >> 6) - w0] |= _ONE << np.uint64(r & 63)
            total += (nmaps + 1) // fixed
        nxt = _increment(board, full, n)
        changed = board ^ nxt
        board = nxt
    return total


@njit(**INLINE)
def _image_sums(image, n, k, low, high, g):
    """Sums for ranking ``image + {x}`` (``image``: ``k - 1`` pieces) in layer ``k``, by the number ``p``
    of pieces of ``image`` below ``x``: the rank is ``C(n, k) - 1 - low[p] - C(n - 1 - x, k - p) - high[p]``
    (``bitboard._rank_lex_bb``: the ``i``-th lowest piece adds ``C(n - 1 - cell, k - i)``, and ``x`` pushes
    the pieces above it one place up); written to row ``g`` of ``low`` and ``high``."""
    x = image
    i = 0
    while x:
        cell = ctz(x)
        low[g, i + 1] = low[g, i] + BINOMIAL[n - 1 - cell, k - i]
        high[g, i] = BINOMIAL[n - 1 - cell, k - i - 1]
        i += 1
        x &= x - _ONE
    high[g, k - 1] = 0
    for i in range(k - 2, -1, -1):
        high[g, i] += high[g, i + 1]


_READ_BATCH = 4096  # ranks computed before they are read: 64 KiB of ranks and places, in the L2 cache
_READ_AHEAD = 64  # reads in flight: a prefetch this many ranks ahead of the read


@njit(**KERNEL)
def _read_bits(src_s, ranks, where, count, out_s, part):
    """Set bit ``where[i]`` of ``out_s`` to the bit of rank ``ranks[i]`` in ``src_s``, for ``i < count``,
    prefetching ``_READ_AHEAD`` ranks ahead. ``part`` as in ``_expand``."""
    for i in range(count):
        if i + _READ_AHEAD < count:
            q = ranks[i + _READ_AHEAD] >> 6 if part is None else (ranks[i + _READ_AHEAD] >> 6) - part
            if 0 <= q < src_s.shape[0]:
                prefetch(src_s, q)
        cr = ranks[i]
        if part is None:
            ok = (src_s[cr >> 6] >> np.uint64(cr & 63)) & _ONE
        else:
            ok = np.uint64(_bit_in_part(src_s, cr, part)[0])
        out_s[where[i] >> 6] |= ok << np.uint64(where[i] & 63)


@njit(**KERNEL)
def _members(ranks, first, n, k, maps, out):
    """Write the ranks of every member of the orbits of ``ranks`` (relative to word ``first``) to ``out``, each
    rank's own first; returns how many were written (``ranks`` times the group's order)."""
    at = 0
    for i in range(ranks.shape[0]):
        r = np.int64(ranks[i]) + (first << 6)
        board = _unrank_lex_bb(r, n, k)
        out[at] = np.uint64(r)
        at += 1
        for g in range(maps.shape[0]):
            out[at] = np.uint64(_rank_lex_bb(_image(board, maps, g), n, k))
            at += 1
    return at


@njit(**KERNEL)
def _expand(n, k, r0, r1, src_s, out_s, w0, maps, part):
    """``solvable`` bits of the boards of ranks ``r0 .. r1-1`` of the unreduced layer that are not canonical
    (word 0 of ``out_s`` = ``w0``), each read from the symmetric layer's ``src_s`` at the rank of the board's
    canonical image. A canonical board's bit is its own in ``src_s``, where every other bit is 0, so
    :func:`expand_words` ORs those words in whole.

    Boards go block by block as in ``layers._solve_blocks``: the boards
    ``P + {c}`` sharing their lowest ``k - 1`` pieces ``P``. A board's images
    are ``g(P) + {g(c)}``, so the images of ``P`` are kept current and each
    canonical image is ranked from sums over its prefix's image (computed once
    per block and symmetry, :func:`_image_sums`) with one popcount and lookup.
    The ranks of a few thousand boards are computed first, then read in one
    pass that prefetches a little ahead (:func:`_read_bits`): prefetched as
    soon as they are computed, the scattered reads of a large layer hold up
    the ranking itself (docs/fling-symmetry.md). ``part`` is None
    (``src_s`` is the whole layer) or the first word of the layer ``src_s``
    holds: then only boards whose canonical image lies inside get bits.
    Unchecked: ``r0 < r1 <= C(n, k)``, ``out_s`` zeroed and long enough.
    """
    nmaps = maps.shape[0]
    last_rank = BINOMIAL[n, k] - 1
    prefixes = (_ONE << np.uint64(n - 1)) - _ONE
    images = np.zeros(nmaps, dtype=np.uint64)  # of the prefix
    low = np.zeros((nmaps, k + 1), dtype=np.int64)
    high = np.zeros((nmaps, k + 1), dtype=np.int64)
    summed = np.zeros(nmaps, dtype=np.uint64)  # the image each symmetry's sums are for
    ranks = np.empty(_READ_BATCH, dtype=np.int64)
    where = np.empty(_READ_BATCH, dtype=np.int64)  # bit of out_s each rank's bit goes to
    count = 0
    board = _unrank_lex_bb(r0, n, k)
    top = msb(board)
    prefix = board ^ (_ONE << np.uint64(top))
    block = r0 - (top - msb(prefix) - 1)
    _flip_images(images, maps, prefix)
    while block < r1:
        m = msb(prefix)
        length = n - 1 - m
        j0 = max(r0 - block, 0)
        j1 = min(r1 - block, length)
        for j in range(j0, j1):
            c = m + 1 + j
            best = prefix | (_ONE << np.uint64(c))
            by = -1
            for g in range(nmaps):
                image = images[g] | maps[g, c]
                d = image ^ best
                if image & d & (~d + _ONE):
                    best = image
                    by = g
            if by >= 0:
                if summed[by] != images[by]:
                    _image_sums(images[by], n, k, low, high, by)
                    summed[by] = images[by]
                cell = maps[by, c]
                p = popcount(images[by] & (cell - _ONE))
                where[count] = block + j - 64 * w0
                ranks[count] = last_rank - (low[by, p] + BINOMIAL[n - 1 - ctz(cell), k - p] + high[by, p])
                count += 1
        if count > _READ_BATCH - 64:
            _read_bits(src_s, ranks, where, count, out_s, part)
            count = 0
        block += length
        nxt = _increment(prefix, prefixes, n - 1)
        if nxt == 0:
            break
        _flip_images(images, maps, prefix ^ nxt)
        prefix = nxt
    _read_bits(src_s, ranks, where, count, out_s, part)


@njit(**KERNEL)
def _solve_sym_fast(width, height, k, r0, r1, prev_s, prev_u, out_s, out_u, w0,
                    row_start, row_result, col_start, col_result, rank_t, cell_t, scatter, maps, counts, part):
    """``retrograde._solve_fast`` for the canonical boards of ranks ``r0 .. r1-1`` only; each solved
    board adds its orbit size to ``counts[0]`` (solvable) and ``counts[1]`` (unique).

    ``prev_s``/``prev_u`` are the whole expanded layer ``k - 1`` (every rank),
    so successors are ranked and looked up exactly as in ``_solve_fast``. The
    board's images under each symmetry are updated where the increment changed
    bits, so a non-canonical board costs a few compares; the transposed board
    and the chunk sums catch up, at the next canonical board, with every bit
    changed since the last one. ``part`` as in ``_solve_fast`` (then ``counts``
    mean nothing). Unchecked like ``_solve_fast``.
    """
    n = width * height
    full = (_ONE << np.uint64(n)) - _ONE if n < 64 else ~np.uint64(0)
    row_mask = np.uint64((1 << width) - 1)
    col_mask = np.uint64((1 << height) - 1)
    nchunks = (n + 7) // 8
    base = BINOMIAL[n, k - 1] - 1
    nmaps = maps.shape[0]
    order = nmaps + 1
    images = np.zeros(nmaps, dtype=np.uint64)
    above = np.zeros(nchunks, dtype=np.int64)
    c_hi = np.zeros(nchunks, dtype=np.int64)
    c_lo = np.zeros(nchunks, dtype=np.int64)
    p_hi = np.zeros(nchunks, dtype=np.int64)
    lo = np.zeros(nchunks, dtype=np.int64)
    diffs = np.empty(4 * k, dtype=np.uint64)
    n_s = 0
    n_u = 0
    board = _unrank_lex_bb(r0, n, k)
    changed = board  # bits that differ from the previous board
    pending = np.uint64(0)  # bits that differ from the last canonical board (all, at first)
    tb = np.uint64(0)
    for r in range(r0, r1):
        pending ^= changed
        _flip_images(images, maps, changed)
        fixed = 1
        is_canonical = True
        for g in range(nmaps):
            d = images[g] ^ board
            fixed += d == 0
            if images[g] & d & (~d + _ONE):
                is_canonical = False
                break
        if is_canonical:
            x = pending
            while x:
                tb ^= cell_t[ctz(x)]
                x &= x - _ONE
            total_hi = _chunk_sums(board, ctz(pending) >> 3, rank_t, above, c_hi, c_lo, p_hi, lo)
            pending = np.uint64(0)
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
                weight = order // fixed
                bit = _ONE << np.uint64(r & 63)
                out_s[(r >> 6) - w0] |= bit
                n_s += weight
                if k == 2 or (sc == 1 and _index_bit(prev_u, first)):
                    out_u[(r >> 6) - w0] |= bit
                    n_u += weight
        nxt = _increment(board, full, n)
        changed = board ^ nxt
        board = nxt
    counts[0] += n_s
    counts[1] += n_u


@njit(**KERNEL)
def _solve_sym_plain(width, height, k, r0, r1, prev_s, prev_u, out_s, out_u, w0, maps, counts, part):
    """Same contract as ``_solve_sym_fast`` for any board: every board tested with ``canonical``,
    moves by walking cells (``moves._fling``), successors ranked from scratch."""
    n = width * height
    full = (_ONE << np.uint64(n)) - _ONE if n < 64 else ~np.uint64(0)
    board = _unrank_lex_bb(r0, n, k)
    for r in range(r0, r1):
        if canonical(board, maps) == board:
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
                        if (prev_s[cr >> 6] >> np.uint64(cr & 63)) & _ONE:
                            sc += 1
                            first = cr
                            if sc > 1:
                                break
            if sc > 0:
                weight = orbit_size(board, maps)
                bit = _ONE << np.uint64(r & 63)
                out_s[(r >> 6) - w0] |= bit
                counts[0] += weight
                if k == 2 or (sc == 1 and _index_bit(prev_u, first)):
                    out_u[(r >> 6) - w0] |= bit
                    counts[1] += weight
        board = _increment(board, full, n)


# --------------------------------------------------------------------------- public


def canonical_words(width: int, height: int, k: int, word_start: int, word_stop: int) -> tuple[np.ndarray, int]:
    """Words ``[word_start, word_stop)`` of the canonical mask of layer ``k``, and the boards they represent.

    >>> words, boards = canonical_words(7, 8, 1, 0, 1)
    >>> int(words[0]).bit_count(), boards     # 12 orbits of 4 cells, 4 of 2 on the middle column
    (16, 56)
    """
    n = _check_board(width, height)
    total = layer_words(width, height, k)
    if not 0 <= word_start <= word_stop <= total:
        raise ValueError(f"word range [{word_start}, {word_stop}) not within [0, {total}]")
    out = np.zeros(word_stop - word_start, dtype=np.uint64)
    r0, r1 = 64 * word_start, min(64 * word_stop, layer_size(width, height, k))
    boards = int(_canonical_words(n, k, r0, r1, symmetry_maps(width, height), out, word_start)) if r0 < r1 else 0
    return out, boards


def first_layer_symmetric(width: int, height: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Symmetric layer 1: every canonical one-piece board, solvable and unique; counts ``n, n``."""
    words, boards = canonical_words(width, height, 1, 0, layer_words(width, height, 1))
    return words, words.copy(), boards, boards


def orbit_members(width: int, height: int, k: int, unique: BitIndex | np.ndarray, *,
                  part_start: int | None = None) -> BitIndex:
    """The unreduced layer ``k``'s ``unique`` bits from the symmetric layer's: every member of each set orbit.

    Few boards of a deep layer are uniquely solvable, so ranking their orbits
    once per layer costs far less than a lookup per board in every fill task.
    ``unique`` is the whole symmetric layer's, or (``part_start``) the words
    from ``part_start`` on; the index returned covers the whole layer.

    >>> s1, u1, _, _ = first_layer_symmetric(3, 1)        # orbits {0, 2} and {1}
    >>> bin(int(orbit_members(3, 1, 1, u1).dense()[0]))
    '0b111'
    """
    n = _check_board(width, height)
    words = layer_words(width, height, k)
    if part_start is not None and not (isinstance(part_start, int) and 0 <= part_start <= words):
        raise ValueError(f"part_start must be a word of layer {k} ({words} words), got {part_start!r}")
    first = part_start or 0
    given = unique.words if isinstance(unique, BitIndex) else np.shape(unique)[0] if np.ndim(unique) == 1 else -1
    if not 0 <= given <= words - first:
        raise ValueError(f"unique must lie within layer {k}'s {words} words from word {first}, got {given} words")
    ranks = BitIndex(as_index("unique", unique, given)).ranks()
    maps = symmetry_maps(width, height)
    members = np.empty(ranks.shape[0] * (maps.shape[0] + 1), dtype=np.uint64)
    members = members[:_members(ranks, first, n, k, maps, members)]
    members.sort()  # then drop repeats (symmetric boards); np.unique (hashing) is far slower on these
    distinct = np.ones(members.shape[0], dtype=bool)
    np.not_equal(members[1:], members[:-1], out=distinct[1:])
    return from_ranks(members[distinct], words)


def expand_words(width: int, height: int, k: int, solvable: np.ndarray, unique: BitIndex | np.ndarray,
                 word_start: int, word_stop: int, *, part_start: int | None = None,
                 members: BitIndex | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Words ``[word_start, word_stop)`` of the unreduced layer ``k`` from the whole symmetric one:
    each board gets its canonical image's bits. Any split into word ranges gives the same words.

    With ``part_start``, ``solvable``/``unique`` are only the words from
    ``part_start`` on of the symmetric layer, and only boards whose canonical
    image lies in them get bits: ORed over parts covering the layer, the
    results are the words from the whole of it. ``members`` is
    :func:`orbit_members` of the same ``unique`` (and ``part_start``), made
    once by a caller that fills many ranges; made here when not given.

    >>> s1, u1, _, _ = first_layer_symmetric(3, 1)        # orbits {0, 2} and {1}
    >>> bin(int(expand_words(3, 1, 1, s1[:1], u1[:1], 0, 1, part_start=0)[0][0]))
    '0b111'
    """
    n = _check_board(width, height)
    words = layer_words(width, height, k)
    if not (isinstance(word_start, int) and isinstance(word_stop, int)) or not 0 <= word_start <= word_stop <= words:
        raise ValueError(f"word range [{word_start!r}, {word_stop!r}) not within [0, {words}]")
    solvable, unique = check_previous(width, height, k + 1, solvable, unique, part_start)
    if members is None:
        members = orbit_members(width, height, k, BitIndex(unique), part_start=part_start)
    elif not isinstance(members, BitIndex) or members.words != words:
        raise ValueError(f"members must be the BitIndex of layer {k}'s {words} words from orbit_members")
    out_s = np.zeros(word_stop - word_start, dtype=np.uint64)
    r0, r1 = 64 * word_start, min(64 * word_stop, layer_size(width, height, k))
    if r0 < r1:
        _expand(n, k, r0, r1, solvable, out_s, word_start, symmetry_maps(width, height), part_start)
        first = part_start or 0  # the canonical boards' bits: the symmetric layer's words held, as they are
        a, b = max(word_start, first), min(word_stop, first + solvable.shape[0])
        if a < b:
            out_s[a - word_start:b - word_start] |= solvable[a - first:b - first]
    return out_s, members.dense_range(word_start, word_stop)


def expand_layer(width: int, height: int, k: int, solvable: np.ndarray, unique: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The whole unreduced layer ``k`` from the whole symmetric one (:func:`expand_words`)."""
    return expand_words(width, height, k, solvable, unique, 0, layer_words(width, height, k))


def solve_words_symmetric(
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
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Words ``[word_start, word_stop)`` of symmetric layer ``k`` and the boards they represent.

    Returns ``(solvable, unique, solvable boards, unique boards)``; the counts
    include every member of each orbit, so summed over a layer they are the
    unreduced layer's popcounts. ``prev_*`` is the whole layer ``k - 1``
    expanded (:func:`expand_layer`). ``kernel`` and ``part_start`` (then the
    words are the canonical boards' partials and the counts 0; count with
    :func:`orbit_total`) as in :func:`~epcg.games.fling.domain.layers.solve_words`.
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
    out_s = np.zeros(word_stop - word_start, dtype=np.uint64)
    out_u = np.zeros(word_stop - word_start, dtype=np.uint64)
    counts = np.zeros(3, dtype=np.int64)
    maps = symmetry_maps(width, height)
    r0 = 64 * word_start
    r1 = min(64 * word_stop, layer_size(width, height, k))
    if r0 < r1:
        if kernel == "block":
            rows, cols = line_table(width), line_table(height)
            cell_t, scatter = _column_tables(width, height)
            _solve_blocks(width, height, k, r0, r1, prev_solvable, prev_unique, out_s, out_u, word_start,
                          rows.start, rows.result, rows.frm, rows.step, cols.start, cols.result, cols.frm,
                          cols.step, _rank_table(n, k - 1), cell_t, scatter, part_start, where, maps, counts)
        elif kernel == "fast":
            rows, cols = line_table(width), line_table(height)
            cell_t, scatter = _column_tables(width, height)
            _solve_sym_fast(width, height, k, r0, r1, prev_solvable, prev_unique, out_s, out_u, word_start,
                            rows.start, rows.result, cols.start, cols.result,
                            _rank_table(n, k - 1), cell_t, scatter, maps, counts, part_start)
        else:
            _solve_sym_plain(width, height, k, r0, r1, prev_solvable, prev_unique, out_s, out_u, word_start,
                             maps, counts, part_start)
    check_misses(k, counts)
    if part_start is not None:
        counts[:] = 0
    return out_s, out_u, int(counts[0]), int(counts[1])


@njit(**KERNEL)
def _orbit_total(n, k, words, w0, maps):
    total = 0
    for i in range(words.shape[0]):
        x = words[i]
        while x:
            total += orbit_size(_unrank_lex_bb(64 * (w0 + i) + ctz(x), n, k), maps)
            x &= x - _ONE
    return total


def orbit_total(width: int, height: int, k: int, words: np.ndarray, word_start: int) -> int:
    """Boards represented by the canonical boards set in ``words`` (from word ``word_start`` of layer ``k``).

    >>> words, boards = canonical_words(7, 8, 2, 0, 4)
    >>> orbit_total(7, 8, 2, words, 0) == boards
    True
    """
    n = _check_board(width, height)
    words = np.ascontiguousarray(words, dtype=np.uint64)
    if not 0 <= word_start <= word_start + words.shape[0] <= layer_words(width, height, k):
        raise ValueError(f"{words.shape[0]} words from {word_start} are not within layer {k}")
    return int(_orbit_total(n, k, words, word_start, symmetry_maps(width, height)))
