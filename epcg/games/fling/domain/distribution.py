"""What the layer counts leave out: expert ratios and solution counts of Fling! boards, as numbers per board.

A board's **solution count** is its number of move sequences down to one
piece, the choice of the last move (between two pieces) counted once, as in
:mod:`~epcg.games.fling.domain.layers`: a board is solvable when the count is at
least 1 and uniquely solvable when it is exactly 1. ``count(b)`` is 1 with one
piece, 1 or 0 with two (some move or none), else the sum of ``count`` over
the board's legal moves. :func:`solution_count` walks that recursion with a
memo of positions (a hash table shared by all the boards of a call), so a
position reached by several move orders or from several boards is counted
once; it needs no stored layer. Counts saturate at :data:`COUNT_CAP`.

A board's **ratio bin** is ``⌊RATIO_BINS · brute / expert⌋`` in integers
(:mod:`~epcg.games.fling.domain.evaluate` defines the two tree sizes), so a board's
bin never depends on floating point and per-task histograms merge exactly.

With ``symmetric = True`` the word-range functions only take the canonical
board of each orbit and return its orbit size as its weight (the symmetries
keep both numbers), so weighted tallies count boards, not orbits.

>>> from epcg.games.fling.domain.rules import Board
>>> solution_count(7, 1, Board.parse("o.o.o..").bits)   # a1R, c1R, c1L, e1L each leave two pieces apart
4
>>> solution_count(7, 8, Board.from_rank(7, 8, 5, 61193).bits)   # uniquely solvable
1
>>> ratio_bin(39, 15)                                    # ratio 2.6
26
"""

from __future__ import annotations

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL
from epcg.combinatorics.bitboard import _unrank_lex_bb
from epcg.combinatorics.bits import ctz
from epcg.games.fling.domain.evaluate import COUNT_CAP, _count, _tree_size, scratch
from epcg.games.fling.domain.layers import _check_board, layer_size, layer_words
from epcg.games.fling.domain.symmetry import canonical, orbit_size, symmetry_maps

__all__ = ["COUNT_CAP", "RATIO_BINS", "counts_of_ranks", "counts_of_words", "ranks_of_words", "ratio_bin",
           "solution_count", "trees_of_words"]

RATIO_BINS = 10
"""Ratio bins per unit of ratio: bin ``i`` holds ratios in ``[i / 10, (i + 1) / 10)``."""


_ONE = np.uint64(1)


def ratio_bin(brute: int, expert: int) -> int:
    """The histogram bin of a board with these tree sizes, ``⌊RATIO_BINS · brute / expert⌋``."""
    return RATIO_BINS * brute // expert


# --------------------------------------------------------------------------- expert ratios


@njit(**KERNEL)
def _trees(width, height, k, words, base, maps, symmetric, out_rank, out_brute, out_expert, out_weight,
           memo, boards, ints, masks, inner):
    """Tree sizes of every board set in ``words`` (words ``base, base+1, ..`` of layer ``k``); returns how many.

    ``memo``, ``boards``, ``ints``, ``masks``, ``inner``: :func:`~epcg.games.fling.domain.evaluate.scratch`.
    """
    n = width * height
    held = 0
    for w in range(words.shape[0]):
        x = words[w]
        while x:
            r = (base + w) * 64 + ctz(x)
            x &= x - _ONE
            board = _unrank_lex_bb(r, n, k)
            out_rank[held] = r
            out_brute[held] = _tree_size(board, width, height, False, memo, boards, ints, masks, inner)
            out_expert[held] = _tree_size(board, width, height, True, memo, boards, ints, masks, inner)
            out_weight[held] = orbit_size(board, maps) if symmetric else 1
            held += 1
    return held


def trees_of_words(width: int, height: int, k: int, words: np.ndarray, word_start: int = 0,
                   symmetric: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(ranks, brute, expert, weights)`` of the boards set in ``words``, words ``word_start..`` of layer ``k``
    (uniquely solvable boards: the expert tree of another board may miss solutions, see ``evaluate``).

    >>> from epcg.games.fling.domain.rules import Board
    >>> r = Board.parse("o..o.../......./...oo../o....../......./......./......./.......").rank()
    >>> words = np.zeros(r // 64 + 1, dtype=np.uint64); words[r // 64] = np.uint64(1) << np.uint64(r % 64)
    >>> [a.tolist() for a in trees_of_words(7, 8, 5, words)]
    [[61193], [39], [15], [1]]
    """
    _check_board(width, height)
    words = np.ascontiguousarray(words, dtype=np.uint64)
    if not 0 <= word_start <= word_start + len(words) <= layer_words(width, height, k):
        raise ValueError(f"words {word_start}..{word_start + len(words)} are not within layer {k}")
    size = int(np.bitwise_count(words).sum())
    out = [np.empty(size, dtype=np.int64) for _ in range(4)]
    held = _trees(width, height, k, words, word_start, symmetry_maps(width, height), symmetric, *out,
                  *scratch(width, height))
    return tuple(a[:held] for a in out)  # type: ignore[return-value]


# --------------------------------------------------------------------------- solution counts


@njit(**KERNEL)
def _counts(width, height, k, ranks, out, memo, boards, ints, masks, inner):
    """``out[i]`` = solution count of the board of rank ``ranks[i]`` in layer ``k``."""
    n = width * height
    for i in range(ranks.shape[0]):
        out[i] = _count(_unrank_lex_bb(ranks[i], n, k), width, height, memo, boards, ints, masks, inner)


@njit(**KERNEL)
def _ranks_of_words(words, base, maps, n, k, symmetric, out_rank, out_weight):
    """Ranks set in ``words`` (all, or only canonical ones with their orbit sizes); returns how many."""
    held = 0
    for w in range(words.shape[0]):
        x = words[w]
        while x:
            r = (base + w) * 64 + ctz(x)
            x &= x - _ONE
            weight = 1
            if symmetric:
                board = _unrank_lex_bb(r, n, k)
                if canonical(board, maps) != board:
                    continue
                weight = orbit_size(board, maps)
            out_rank[held] = r
            out_weight[held] = weight
            held += 1
    return held


def solution_count(width: int, height: int, bits: int) -> int:
    """Solution count of one board (any number of pieces)."""
    n = _check_board(width, height)
    bits = int(bits)
    if bits <= 0 or bits >> n:
        raise ValueError(f"bits {bits:#x} are not a non-empty board of {width} x {height}")
    from epcg.combinatorics.bitboard import BitboardCombinations

    k = bits.bit_count()
    return int(counts_of_ranks(width, height, k, np.array([BitboardCombinations(n, k).rank(bits)]))[0])


def counts_of_ranks(width: int, height: int, k: int, ranks: np.ndarray) -> np.ndarray:
    """Solution counts of the boards of layer ``k`` with these ranks.

    >>> counts_of_ranks(3, 1, 2, np.array([0, 1, 2])).tolist()      # oo. o.o .oo
    [0, 1, 0]
    """
    _check_board(width, height)
    ranks = np.ascontiguousarray(ranks, dtype=np.int64)
    size = layer_size(width, height, k)
    if len(ranks) and not (0 <= ranks.min() and ranks.max() < size):
        raise ValueError(f"ranks must be in [0, {size}) for layer {k}")
    out = np.empty(len(ranks), dtype=np.int64)
    _counts(width, height, k, ranks, out, *scratch(width, height))
    return out


def ranks_of_words(width: int, height: int, k: int, words: np.ndarray, word_start: int = 0,
                   symmetric: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(ranks, weights)`` of the boards set in ``words`` (words ``word_start..`` of layer ``k``): every
    one with weight 1, or only the canonical ones with their orbit sizes.

    >>> ranks_of_words(3, 1, 2, np.array([0b111], dtype=np.uint64), symmetric=True)   # oo. (~ .oo), o.o
    (array([0, 1]), array([2, 1]))
    """
    n = _check_board(width, height)
    words = np.ascontiguousarray(words, dtype=np.uint64)
    if not 0 <= word_start <= word_start + len(words) <= layer_words(width, height, k):
        raise ValueError(f"words {word_start}..{word_start + len(words)} are not within layer {k}")
    size = int(np.bitwise_count(words).sum())
    ranks = np.empty(size, dtype=np.int64)
    weights = np.empty(size, dtype=np.int64)
    held = _ranks_of_words(words, word_start, symmetry_maps(width, height), n, k, symmetric, ranks, weights)
    return ranks[:held], weights[:held]


def counts_of_words(width: int, height: int, k: int, word_start: int, word_stop: int,
                    symmetric: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(counts, weights)``: solution counts of every board of words ``[word_start, word_stop)`` of layer
    ``k`` (solvable or not), or of every canonical one with its orbit size as weight.

    >>> counts, weights = counts_of_words(3, 1, 2, 0, 1, symmetric=True)
    >>> counts.tolist(), weights.tolist()
    ([0, 1], [2, 1])
    """
    _check_board(width, height)
    total = layer_words(width, height, k)
    if not 0 <= word_start <= word_stop <= total:
        raise ValueError(f"word range [{word_start}, {word_stop}) not within [0, {total}]")
    words = np.full(word_stop - word_start, ~np.uint64(0), dtype=np.uint64)
    tail = layer_size(width, height, k) - 64 * (total - 1)
    if word_stop == total and len(words) and tail < 64:
        words[-1] = (_ONE << np.uint64(tail)) - _ONE
    ranks, weights = ranks_of_words(width, height, k, words, word_start, symmetric)
    return counts_of_ranks(width, height, k, ranks), weights
