"""k-combinations of n <= 64 cells as 64-bit bitboards (bit ``c`` set = piece on cell ``c``).

Two orders are provided:

* **lexicographic** (``rank``/``unrank``/``increment``): the order of
  :class:`~epcg.combinatorics.combinations.Combinations` (paper Algorithm 4),
  so rank 0 is cells ``{0..k-1}`` = ``0b11..1``. This is the order of the Fling
  layers: bit ``r % 64`` of word ``r // 64`` is the board of lexicographic rank ``r``.
* **colex** (``rank_colex``/``unrank_colex``/``increment_colex``): increasing
  numeric value of the bitboard, stepped by Gosper's hack. The colex rank of
  cells ``t_1 < ... < t_k`` is ``sum_j C(t_j, j)``.

The two are related by mirroring the board (cell ``c`` <-> cell ``n-1-c``,
:func:`~epcg.combinatorics.bits.reverse_bits`)::

    lex_rank(b) == C(n, k) - 1 - colex_rank(reverse_bits(b, n))

so the lex successor of ``b`` is ``reverse(colex predecessor of reverse(b))``.

>>> g = BitboardCombinations(20, 4)
>>> bin(g.unrank(0)), g.unrank(1) == 0b10111, g.rank(0b1111 << 16)
('0b1111', True, 4844)
>>> g.rank(0b10111) == g.max_rank - 1 - g.rank_colex(g.reverse(0b10111))
True
>>> bin(g.increment_colex(0b10111)), g.increment(0b1111 << 16) is None
('0b11011', True)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL
from epcg.combinatorics._checks import check_fits, check_range, check_rank, check_size
from epcg.combinatorics.binomial import BINOMIAL, binomial
from epcg.combinatorics.bits import WORD_BITS, ctz, low_mask, msb, popcount, reverse_bits

__all__ = ["BitboardCombinations"]

_ONE = np.uint64(1)


@njit(**KERNEL)
def _unrank_lex_bb(rank, n, k):
    """The bitboard of lexicographic ``rank`` (paper Algorithm 2 setting bits), O(n).

    Unchecked: ``0 <= rank < C(n, k)``, ``0 <= k <= n <= 64``.
    """
    board = np.uint64(0)
    cell = 0
    for i in range(k):
        while True:
            b = BINOMIAL[n - cell - 1, k - i - 1]
            if rank < b:
                break
            rank -= b
            cell += 1
        board |= _ONE << np.uint64(cell)
        cell += 1
    return board


@njit(**KERNEL)
def _rank_lex_bb(board, n, k):
    """Lexicographic rank of a bitboard: ``C(n,k) - 1 - sum_i C(n-1-a_i, k-i)``, O(k).

    Unchecked: ``board`` has exactly ``k`` bits, all below bit ``n``.
    """
    x = np.uint64(board)
    total = BINOMIAL[n, k] - 1
    i = 0
    while x:
        total -= BINOMIAL[n - 1 - ctz(x), k - i]
        i += 1
        x &= x - _ONE
    return total


@njit(**KERNEL)
def _increment_lex_bb(board, n, k):
    """The bitboard of the next lexicographic rank, or 0 if ``board`` is the last.

    Algorithm 3 with bit tricks: the pieces packed against cell ``n-1`` form the
    top run; the highest piece ``p`` below it moves to ``p+1`` and the top run
    is re-packed right behind it. O(1). 0 is never a successor (it has k >= 1
    bits). Unchecked: ``board`` has exactly ``k`` bits below bit ``n``.
    """
    x = np.uint64(board)
    empty = ~x & low_mask(n)
    if empty == 0:
        return np.uint64(0)
    q = msb(empty)
    rest = x & low_mask(q)
    if rest == 0:
        return np.uint64(0)
    p = msb(rest)
    run = n - 1 - q
    return (rest ^ (_ONE << np.uint64(p))) | (low_mask(run + 1) << np.uint64(p + 1))


@njit(**KERNEL)
def _unrank_colex_bb(rank, n, k):
    """The bitboard of colex ``rank`` (greedy: highest cell first), O(n).

    Unchecked: ``0 <= rank < C(n, k)``, ``0 <= k <= n <= 64``.
    """
    board = np.uint64(0)
    t = n - 1
    for j in range(k, 0, -1):
        while BINOMIAL[t, j] > rank:
            t -= 1
        board |= _ONE << np.uint64(t)
        rank -= BINOMIAL[t, j]
        t -= 1
    return board


@njit(**KERNEL)
def _rank_colex_bb(board):
    """Colex rank of a bitboard: ``sum_j C(t_j, j)`` over its cells ``t_1 < t_2 < ...``, O(k)."""
    x = np.uint64(board)
    total = 0
    j = 1
    while x:
        total += BINOMIAL[ctz(x), j]
        j += 1
        x &= x - _ONE
    return total


@njit(**KERNEL)
def _increment_colex_bb(board, n, k):
    """The next bitboard with k bits in numeric (colex) order, or 0 if ``board`` is the last.

    Gosper's hack. Unchecked: ``board`` has exactly ``k`` bits below bit ``n``.
    """
    x = np.uint64(board)
    if x == low_mask(k) << np.uint64(n - k):
        return np.uint64(0)
    low = x & (~x + _ONE)
    ripple = x + low
    return (((ripple ^ x) >> np.uint64(2)) // low) | ripple


@njit(**KERNEL)
def _unrank_range_lex_bb(start, count, n, k, out):
    """``out[i]`` = bitboard of lexicographic rank ``start + i`` for ``i < count``.

    Unchecked: ``start + count <= C(n, k)``, ``len(out) >= count``.
    """
    if count == 0:
        return
    board = _unrank_lex_bb(start, n, k)
    out[0] = board
    for i in range(1, count):
        board = _increment_lex_bb(board, n, k)
        out[i] = board


@njit(**KERNEL)
def _rank_rows_lex_bb(boards, n, k, out):
    """``out[i] = _rank_lex_bb(boards[i], n, k)``. Unchecked like ``_rank_lex_bb``."""
    for i in range(boards.shape[0]):
        out[i] = _rank_lex_bb(boards[i], n, k)


class BitboardCombinations:
    """The C(n, k) bitboards with ``k`` of the low ``n`` bits set (``n <= 64``).

    Single states are Python ints; ranges are uint64 arrays.

    >>> [bin(b) for b in BitboardCombinations(4, 2).unrank_range(0, 3)]
    ['0b11', '0b101', '0b1001']
    """

    def __init__(self, n: int, k: int) -> None:
        self.n = check_size("n", n)
        self.k = check_size("k", k)
        if self.n > WORD_BITS:
            raise ValueError(f"bitboards hold at most {WORD_BITS} cells, got n={self.n}")
        self.max_rank: int = binomial(self.n, self.k)
        """Number of states, C(n, k) (0 when k > n)."""
        check_fits(self.max_rank, repr(self))

    def __repr__(self) -> str:
        return f"BitboardCombinations({self.n}, {self.k})"

    def check_state(self, board: int) -> np.uint64:
        """``board`` as uint64, or ValueError unless it has exactly k bits below bit n."""
        board = check_size("board", board)
        if board >> self.n or popcount(board) != self.k:
            raise ValueError(f"{self!r}: {board:#x} is not {self.k} bits below bit {self.n}")
        return np.uint64(board)

    def unrank(self, rank: int) -> int:
        """The bitboard of lexicographic ``rank``."""
        return int(_unrank_lex_bb(check_rank(rank, self.max_rank), self.n, self.k))

    def rank(self, board: int) -> int:
        """Lexicographic rank of ``board``."""
        return int(_rank_lex_bb(self.check_state(board), self.n, self.k))

    def increment(self, board: int) -> int | None:
        """The bitboard of the next lexicographic rank, or None after the last."""
        nxt = int(_increment_lex_bb(self.check_state(board), self.n, self.k))
        return nxt or None

    def unrank_colex(self, rank: int) -> int:
        """The bitboard of colex ``rank`` (the ``rank``-th smallest k-bit number below 2**n)."""
        return int(_unrank_colex_bb(check_rank(rank, self.max_rank), self.n, self.k))

    def rank_colex(self, board: int) -> int:
        """Colex rank of ``board``."""
        return int(_rank_colex_bb(self.check_state(board)))

    def increment_colex(self, board: int) -> int | None:
        """The next bitboard in colex order (Gosper's hack), or None after the last."""
        nxt = int(_increment_colex_bb(self.check_state(board), self.n, self.k))
        return nxt or None

    def reverse(self, board: int) -> int:
        """``board`` mirrored, cell ``c`` -> ``n-1-c``; maps lex rank r to colex rank ``max_rank-1-r``."""
        bits = self.check_state(board)
        return int(reverse_bits(bits, self.n)) if self.n else 0

    def unrank_range(self, start: int, stop: int) -> np.ndarray:
        """Bitboards of lexicographic ranks ``start .. stop-1`` as a uint64 array."""
        start, stop = check_range(start, stop, self.max_rank)
        out = np.empty(stop - start, dtype=np.uint64)
        _unrank_range_lex_bb(start, stop - start, self.n, self.k, out)
        return out

    def rank_rows(self, boards) -> np.ndarray:
        """Lexicographic ranks of an array of bitboards (int64)."""
        boards = np.asarray(boards, dtype=np.uint64).reshape(-1)
        for board in boards:
            self.check_state(int(board))
        out = np.empty(boards.shape[0], dtype=np.int64)
        _rank_rows_lex_bb(boards, self.n, self.k, out)
        return out

    @staticmethod
    def from_items(items) -> int:
        """The bitboard with the given cells set.

        >>> bin(BitboardCombinations.from_items((0, 2, 3)))
        '0b1101'
        """
        board = 0
        for cell in items:
            board |= 1 << check_size("cell", cell)
        return board

    @staticmethod
    def to_items(board: int) -> tuple[int, ...]:
        """The ascending cells set in ``board``.

        >>> BitboardCombinations.to_items(0b1101)
        (0, 2, 3)
        """
        board = check_size("board", board)
        return tuple(c for c in range(board.bit_length()) if board >> c & 1)
