"""Fling! boards and moves as small values, python-chess style.

A :class:`Board` is ``width`` x ``height`` cells (at most 64) with a bitmask
``bits`` of occupied cells, cell ``y * width + x``. Text shows one row per
line from ``y = 0`` (``o`` piece, ``.`` empty); :meth:`Board.parse` also
takes ``/`` between rows. Directions: ``R`` (+x), ``L`` (-x), ``D`` (+y, down
the text), ``U`` (-y). The rules are in :mod:`epcg.games.fling.domain.moves`.

>>> board = Board.parse("o.o.o..")
>>> [board.move_name(m) for m in board.legal_moves()]
['a1R', 'c1R', 'c1L', 'e1L']
>>> print(board.apply(Move(0, R)))
.o.o...
>>> print(Board.parse("o.oo.o.").apply(Move(0, R)))
.oo.o..
>>> board = Board.parse("o./../.o")     # 2 wide, 3 tall
>>> board.legal_moves()
[]
>>> b = Board.parse("o./../o.")
>>> b.push(b.parse_move("a1D")); print(b)
..
o.
..
>>> b.pop(), b.bits
(Move(cell=0, direction=2), 17)
"""

from __future__ import annotations

from dataclasses import dataclass


from epcg.combinatorics.bitboard import BitboardCombinations
from epcg.combinatorics.bits import check_board
from epcg.games.fling.domain.moves import fling

__all__ = ["DIRECTION_NAMES", "Board", "D", "L", "Move", "R", "U"]

R, L, D, U = 0, 1, 2, 3
DIRECTION_NAMES = "RLDU"
"""Letter of each direction number."""


@dataclass(frozen=True, order=True)
class Move:
    """Fling the piece on ``cell`` in ``direction`` (0..3 = R, L, D, U)."""

    cell: int
    direction: int


class Board:
    """A Fling! position. ``push``/``pop`` change it in place; ``apply`` returns a new board.

    .. warning:: ``push`` checks legality (it raises ``ValueError``); the
       numba kernels in :mod:`~epcg.games.fling.domain.layers` do not.
    """

    def __init__(self, width: int = 7, height: int = 8, bits: int = 0) -> None:
        if not (isinstance(width, int) and isinstance(height, int)) or width < 1 or height < 1:
            raise ValueError(f"board size must be positive integers, got {width!r} x {height!r}")
        check_board(width, height)
        bits = int(bits)
        if bits < 0 or bits >> (width * height):
            raise ValueError(f"bits {bits:#x} do not fit a {width} x {height} board")
        self.width = width
        """Cells per row."""
        self.height = height
        """Rows."""
        self.bits = bits
        """Bitmask of occupied cells, bit ``y * width + x``."""
        self.move_stack: list[tuple[Move, int]] = []
        """Moves pushed so far with the bits before each (for ``pop``)."""

    # ----------------------------------------------------------------- text

    @classmethod
    def parse(cls, text: str) -> Board:
        """The board drawn by ``text``: rows of ``o``/``.`` separated by newlines or ``/``."""
        rows = [row.strip() for row in text.replace("/", "\n").strip().splitlines() if row.strip()]
        if not rows or any(len(row) != len(rows[0]) for row in rows):
            raise ValueError(f"rows must be non-empty and equally long: {text!r}")
        width, bits = len(rows[0]), 0
        for y, row in enumerate(rows):
            for x, ch in enumerate(row):
                if ch not in "o.":
                    raise ValueError(f"unexpected {ch!r} in {text!r} (use 'o' and '.')")
                if ch == "o":
                    bits |= 1 << (y * width + x)
        return cls(width, len(rows), bits)

    def __str__(self) -> str:
        return "\n".join(
            "".join("o" if self.bits >> (y * self.width + x) & 1 else "." for x in range(self.width))
            for y in range(self.height)
        )

    def __repr__(self) -> str:
        return f"Board({self.width}, {self.height}, {self.bits:#x})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Board):
            return NotImplemented
        return (self.width, self.height, self.bits) == (other.width, other.height, other.bits)

    def __hash__(self) -> int:
        return hash((self.width, self.height, self.bits))

    def copy(self) -> Board:
        """The same position with an empty move stack."""
        return Board(self.width, self.height, self.bits)

    def move_name(self, move: Move) -> str:
        """``move`` as column letter, row number (from 1) and direction, e.g. ``a1R``."""
        x, y = move.cell % self.width, move.cell // self.width
        return f"{chr(ord('a') + x)}{y + 1}{DIRECTION_NAMES[move.direction]}"

    def parse_move(self, name: str) -> Move:
        """Inverse of :meth:`move_name` (the move need not be legal)."""
        try:
            x = ord(name[0]) - ord("a")
            y = int(name[1:-1]) - 1
            d = DIRECTION_NAMES.index(name[-1])
        except (IndexError, ValueError):
            raise ValueError(f"not a move name: {name!r}") from None
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise ValueError(f"{name!r} is off a {self.width} x {self.height} board")
        return Move(y * self.width + x, d)

    # ----------------------------------------------------------------- rules

    @property
    def pieces(self) -> int:
        """Number of pieces."""
        return self.bits.bit_count()

    def cells(self) -> tuple[int, ...]:
        """Occupied cells, ascending."""
        return tuple(c for c in range(self.width * self.height) if self.bits >> c & 1)

    def is_solved(self) -> bool:
        """One piece left."""
        return self.pieces == 1

    def result_bits(self, move: Move) -> int:
        """Bits after ``move``, or 0 if it is illegal."""
        if not (0 <= move.cell < self.width * self.height and 0 <= move.direction < 4):
            return 0
        return fling(self.bits, self.width, self.height, move.cell, move.direction)

    def is_legal(self, move: Move) -> bool:
        return self.result_bits(move) != 0

    def legal_moves(self) -> list[Move]:
        """Legal moves ordered by cell, then direction R, L, D, U."""
        return [Move(c, d) for c in self.cells() for d in range(4) if self.result_bits(Move(c, d))]

    def push(self, move: Move) -> None:
        """Play ``move`` on this board (``ValueError`` if illegal)."""
        bits = self.result_bits(move)
        if not bits:
            raise ValueError(f"illegal move {move} on\n{self}")
        self.move_stack.append((move, self.bits))
        self.bits = bits

    def pop(self) -> Move:
        """Undo the last pushed move and return it."""
        move, self.bits = self.move_stack.pop()
        return move

    def apply(self, move: Move) -> Board:
        """A new board after ``move`` (``ValueError`` if illegal)."""
        board = self.copy()
        board.push(move)
        return board

    # ----------------------------------------------------------------- ranks

    def rank(self) -> int:
        """Lexicographic rank among boards of this size and piece count (the layer index).

        >>> Board.parse("ooo....").rank(), Board.parse("....ooo").rank()
        (0, 34)
        """
        return BitboardCombinations(self.width * self.height, self.pieces).rank(self.bits)

    @classmethod
    def from_rank(cls, width: int, height: int, pieces: int, rank: int) -> Board:
        """The board of ``pieces`` pieces with lexicographic ``rank``.

        >>> print(Board.from_rank(3, 2, 2, 1))
        o.o
        ...
        """
        n = width * height
        if not 0 <= pieces <= n:
            raise ValueError(f"pieces must be in [0, {n}], got {pieces}")
        return cls(width, height, BitboardCombinations(n, pieces).unrank(rank))

