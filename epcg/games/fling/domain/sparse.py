"""A layer's ``unique`` bits as a compact index the kernels look up: bucketed sorted ranks, or dense words.

Few boards of a deep Fling! layer are uniquely solvable (7×8 layer 10: 15.3 M
of 35.6 G boards, layer 11: 13.7 M of 148.9 G), so holding their bits as one
bit per board, as ``solvable`` is held, costs as much memory as ``solvable``
for almost nothing. A :class:`BitIndex` holds the set bits of a run of words
in one uint64 array the kernels read:

* header ``[mode, words, shift, buckets]``;
* mode ``SPARSE``: ``buckets + 1`` offsets, then the set ranks in order; the
  ranks of bucket ``b`` (ranks ``b << shift`` up to the next bucket) are
  ``ranks[offset[b]:offset[b + 1]]``. ``shift`` is chosen so a bucket holds
  about ``BUCKET_RANKS`` ranks, so a lookup reads two offsets and scans a few
  consecutive ranks: about 8 + 8/``BUCKET_RANKS`` bytes per set bit;
* mode ``DENSE``: the words themselves, when they are smaller (dense layers:
  7×8 layers up to 7, and small boards).

Ranks are relative to the first word the index covers (word 0 of a whole layer,
or a part's first word), like the dense words they stand for, and a rank
outside those words reads 0.

>>> words = np.zeros(40, dtype=np.uint64)
>>> words[0], words[2] = 0b1010, 1 << 63
>>> index = bit_index(words)
>>> index.words, index.sparse, [int(_index_bit(index.array, r)) for r in (1, 3, 4, 191, 192, -1, 2560)]
(40, True, [1, 1, 0, 1, 0, 0, 0])
>>> bool(np.array_equal(index.dense(), words))
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from epcg.combinatorics.jit import INLINE, KERNEL
from epcg.combinatorics.bits import ctz, popcount

__all__ = ["BitIndex", "IndexBuilder", "as_index", "bit_index", "from_ranks"]

_ONE = np.uint64(1)
HEADER = 4
"""Header words of an index array: mode, words covered, shift, buckets."""
DENSE, SPARSE = 0, 1
BUCKET_RANKS = 4
"""Set ranks per bucket, on average, that the shift aims at: more makes the index smaller (8/``BUCKET_RANKS`` bytes
of offsets per set rank), fewer makes most lookups of a rank that is not set end at its empty bucket's offsets
(``benchmarks/fling_unique.py`` compares)."""


@dataclass(frozen=True)
class BitIndex:
    """The set bits of ``words`` uint64 words, as the kernels read them (``array``; see the module)."""

    array: np.ndarray

    @property
    def words(self) -> int:
        """Words (64 ranks each) the index stands for."""
        return int(self.array[1])

    @property
    def sparse(self) -> bool:
        return int(self.array[0]) == SPARSE

    @property
    def nbytes(self) -> int:
        return int(self.array.nbytes)

    def count(self) -> int:
        """Set bits."""
        if self.sparse:
            return int(self.array.shape[0]) - HEADER - int(self.array[3]) - 1
        return int(_popcount(self.array[HEADER:]))

    def dense(self) -> np.ndarray:
        """The words the index stands for."""
        if not self.sparse:
            return self.array[HEADER:].copy()
        out = np.zeros(self.words, dtype=np.uint64)
        _scatter(self.ranks(), 0, out)
        return out

    def ranks(self) -> np.ndarray:
        """The set ranks, in order (uint64)."""
        if self.sparse:
            return self.array[HEADER + int(self.array[3]) + 1:]
        words = self.array[HEADER:]
        out = np.empty(int(_popcount(words)), dtype=np.uint64)
        _ranks(words, 0, out, 0)
        return out

    def dense_range(self, start: int, stop: int) -> np.ndarray:
        """Words ``[start, stop)`` of the words the index stands for (``0 <= start <= stop <= words``)."""
        if not 0 <= start <= stop <= self.words:
            raise ValueError(f"word range [{start}, {stop}) not within the index's {self.words} words")
        if not self.sparse:
            return self.array[HEADER + start:HEADER + stop].copy()
        ranks = self.ranks()
        lo, hi = np.searchsorted(ranks, np.array([start << 6, stop << 6], dtype=np.uint64))
        out = np.zeros(stop - start, dtype=np.uint64)
        _scatter(ranks[lo:hi], start, out)
        return out


# --------------------------------------------------------------------------- lookups (the kernels')


@njit(**INLINE)
def _index_bit(index, r):
    """Bit of rank ``r`` (relative to the index's first word) in the index array; 0 outside it."""
    if r < 0 or r >= np.int64(index[1]) << 6:
        return np.uint64(0)
    if index[0] == DENSE:
        return (index[HEADER + (r >> 6)] >> np.uint64(r & 63)) & _ONE
    b = r >> np.int64(index[2])
    base = HEADER + np.int64(index[3]) + 1
    for i in range(base + np.int64(index[HEADER + b]), base + np.int64(index[HEADER + b + 1])):
        v = np.int64(index[i])
        if v >= r:
            return np.uint64(v == r)
    return np.uint64(0)


# --------------------------------------------------------------------------- building


@njit(**KERNEL)
def _popcount(words):
    total = 0
    for i in range(words.shape[0]):
        total += popcount(words[i])
    return total


@njit(**KERNEL)
def _ranks(words, first, out, at):
    """Write the set ranks of ``words`` (word 0 = word ``first``) to ``out`` from ``at``; return the new end."""
    for i in range(words.shape[0]):
        x = words[i]
        while x:
            out[at] = np.uint64(((first + i) << 6) + ctz(x))
            at += 1
            x &= x - _ONE
    return at


@njit(**KERNEL)
def _scatter(ranks, first, out):
    """Set the bits of ``ranks`` (relative to word ``first``) in the dense words ``out``."""
    for i in range(ranks.shape[0]):
        r = np.int64(ranks[i]) - (first << 6)
        out[r >> 6] |= _ONE << np.uint64(r & 63)


@njit(**KERNEL)
def _offsets(ranks, shift, out):
    """``out[b]``: index of the first rank of bucket ``b`` (ranks ``>= b << shift``), for every ``b < len(out)``."""
    j = 0
    for b in range(out.shape[0]):
        low = np.uint64(b) << np.uint64(shift)
        while j < ranks.shape[0] and ranks[j] < low:
            j += 1
        out[b] = j


def _shift(words: int, count: int) -> int:
    """Bucket width (log2 ranks) with about ``BUCKET_RANKS`` of ``count`` ranks in each, over ``64 * words`` ranks."""
    return max(0, int(64 * words * BUCKET_RANKS // max(count, 1)).bit_length() - 1)


def sparse_bytes(words: int, count: int) -> int:
    """Bytes of a sparse index of ``count`` set ranks over ``words`` words."""
    return 8 * (HEADER + ((64 * words - 1) >> _shift(words, count)) + 2 + count) if words else 8 * (HEADER + 1)


def index_bytes(words: int, count: int) -> int:
    """Bytes of the index :func:`bit_index` builds for ``count`` set bits in ``words`` words (the smaller form)."""
    return min(8 * (HEADER + words), sparse_bytes(words, count))


def _sparse(ranks: np.ndarray, words: int) -> BitIndex:
    shift = _shift(words, ranks.shape[0])
    buckets = ((64 * words - 1) >> shift) + 1 if words else 0
    array = np.empty(HEADER + buckets + 1 + ranks.shape[0], dtype=np.uint64)
    array[:HEADER] = (SPARSE, words, shift, buckets)
    _offsets(ranks, shift, array[HEADER:HEADER + buckets + 1])
    array[HEADER + buckets + 1:] = ranks
    return BitIndex(array)


def _dense(words: np.ndarray) -> BitIndex:
    array = np.empty(HEADER + words.shape[0], dtype=np.uint64)
    array[:HEADER] = (DENSE, words.shape[0], 0, 0)
    array[HEADER:] = words
    return BitIndex(array)


def from_ranks(ranks: np.ndarray, words: int) -> BitIndex:
    """The index of ``words`` words whose set bits are ``ranks`` (sorted, distinct, below ``64 * words``), in the
    smaller of the two forms."""
    ranks = np.ascontiguousarray(ranks, dtype=np.uint64)
    if index_bytes(words, ranks.shape[0]) == sparse_bytes(words, ranks.shape[0]):
        return _sparse(ranks, words)
    dense = np.zeros(words, dtype=np.uint64)
    _scatter(ranks, 0, dense)
    return _dense(dense)


def bit_index(words: np.ndarray) -> BitIndex:
    """The index of dense words (the smaller of the two forms)."""
    words = np.ascontiguousarray(words, dtype=np.uint64)
    count = int(_popcount(words))
    if index_bytes(words.shape[0], count) == 8 * (HEADER + words.shape[0]):
        return _dense(words)
    ranks = np.empty(count, dtype=np.uint64)
    _ranks(words, 0, ranks, 0)
    return _sparse(ranks, words.shape[0])


def as_index(name: str, bits: BitIndex | np.ndarray, expected: int) -> np.ndarray:
    """The index array of ``bits`` (an index, or dense words, indexed here) of ``expected`` words; ``ValueError``
    naming ``name`` for any other."""
    if isinstance(bits, np.ndarray) and bits.dtype == np.uint64 and bits.ndim == 1 and bits.shape[0] == expected:
        bits = bit_index(bits)
    if not isinstance(bits, BitIndex) or bits.words != expected:
        got = f"an index of {bits.words} words" if isinstance(bits, BitIndex) else \
            f"{getattr(bits, 'dtype', type(bits).__name__)} {getattr(bits, 'shape', '')}"
        raise ValueError(f"{name} must be a 1-D uint64 array or a BitIndex of {expected} words, got {got}")
    return bits.array


class IndexBuilder:
    """Builds the index of ``words`` words from consecutive pieces (a layer read chunk by chunk), holding at most
    about the smaller form: set ranks while they take less than the dense words would, dense words after."""

    def __init__(self, words: int) -> None:
        self.words = words
        self._at = 0
        self._ranks: list[np.ndarray] = []
        self._count = 0
        self._dense: np.ndarray | None = None

    def add(self, piece: np.ndarray) -> None:
        """The next words of the run (in order)."""
        piece = np.ascontiguousarray(piece, dtype=np.uint64)
        if self._at + piece.shape[0] > self.words:
            raise ValueError(f"pieces exceed the index's {self.words} words")
        if self._dense is None:
            count = int(_popcount(piece))
            if sparse_bytes(self.words, self._count + count) < 8 * self.words:
                ranks = np.empty(count, dtype=np.uint64)
                _ranks(piece, self._at, ranks, 0)
                self._ranks.append(ranks)
                self._count += count
            else:
                self._dense = np.zeros(self.words, dtype=np.uint64)
                for ranks in self._ranks:
                    _scatter(ranks, 0, self._dense)
                self._ranks = []
        if self._dense is not None:
            self._dense[self._at:self._at + piece.shape[0]] = piece
        self._at += piece.shape[0]

    def finish(self) -> BitIndex:
        if self._at != self.words:
            raise ValueError(f"the index has {self._at} of its {self.words} words")
        if self._dense is not None:
            return _dense(self._dense)
        ranks = np.concatenate(self._ranks) if self._ranks else np.zeros(0, dtype=np.uint64)
        if index_bytes(self.words, ranks.shape[0]) < sparse_bytes(self.words, ranks.shape[0]):
            dense = np.zeros(self.words, dtype=np.uint64)
            _scatter(ranks, 0, dense)
            return _dense(dense)
        return _sparse(ranks, self.words)
