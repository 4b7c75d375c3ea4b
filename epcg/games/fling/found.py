"""Fling! boards a run found, decoded lazily from the Zarr layers.

Layer ``k`` is two bit arrays, ``solvable/k`` and ``unique/k`` (bit ``r % 64``
of word ``r // 64`` is the board of rank ``r``). :func:`boards` reads one Zarr
chunk of words at a time and yields the set bits in rank order, so a layer
never sits whole in memory. A board's solution, solution count and expert
ratio are computed when first asked for.

Boards are counted one by one, mirror images included; a board's *orbit* is
the board with its mirror images and half turn (and quarter turns on a
square board), which all have the same solutions and ratio. A symmetric run
stores its deepest layer as one board per orbit (the lowest rank,
*canonical*); :func:`set_ranks` gives every board of it all the same, or only
the canonical ones with ``orbits=True``.

>>> b = FlingBoard(7, 8, 5, 61193)
>>> b.solution, round(b.ratio, 2), b.unique, b.orbit_size
('a1D d3L b3R d1D', 2.6, True, 4)
>>> orbit_ranks(7, 8, 5, 61193)[0] == 61193
True
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from epcg.games.fling.domain import evaluate
from epcg.games.fling.domain.patterns import Pattern, copies
from epcg.games.fling.domain.patterns import pattern as pattern_of
from epcg.games.fling.domain.rules import Board, Move
from epcg.games.fling.domain.symmetry import _image, canonical_words, orbit_size, symmetry_maps
from epcg.report.found import Found
from epcg.runtime.records import Vouched


@dataclass(frozen=True, eq=False)
class FlingBoard(Found):
    """One solvable Fling! board of a run, by its rank in its layer."""

    width: int
    height: int
    pieces: int
    rank: int
    kind: str = field(default="fling-board", init=False)

    @cached_property
    def board(self) -> Board:
        """The board (:class:`epcg.games.fling.domain.rules.Board`)."""
        return Board.from_rank(self.width, self.height, self.pieces, self.rank)

    @cached_property
    def solution_count(self) -> int:
        """1 for a uniquely solvable board, 2 for "two or more", 0 for unsolvable."""
        return min(2, evaluate.solution_counter(self.width, self.height)(self.board.bits))

    @property
    def unique(self) -> bool:
        return self.solution_count == 1

    @cached_property
    def moves(self) -> list[Move]:
        """A solution (the only one on a uniquely solvable board), first move first."""
        if self.unique:
            return evaluate.solution(self.board)
        moves, b, count = [], self.board.copy(), evaluate.solution_counter(self.width, self.height)
        while b.pieces > 1:
            move = next((m for m in b.legal_moves() if count(b.result_bits(m))), None)
            if move is None:
                return []
            b.push(move)
            moves.append(move)
        return moves

    @property
    def solution(self) -> str:
        return " ".join(self.board.move_name(m) for m in self.moves)

    @cached_property
    def _trees(self) -> tuple[int, int]:
        return evaluate.tree_sizes(self.width, self.height, self.board.bits)

    @property
    def ratio(self) -> float | None:
        """Brute-force over expert search-tree size (uniquely solvable boards only, else None)."""
        return self._trees[0] / self._trees[1] if self.unique else None

    @cached_property
    def pattern(self) -> Pattern:
        """The board's pattern: the boards that are the same puzzle (:mod:`~epcg.games.fling.domain.patterns`)."""
        return pattern_of(self.board)

    @cached_property
    def copies(self) -> int:
        """How many boards of this size share the board's pattern (itself included)."""
        return _copies(self.pattern, self.width, self.height)

    @cached_property
    def orbit_size(self) -> int:
        """How many boards this board's orbit holds (itself and its distinct mirror images and turns)."""
        return int(orbit_size(np.uint64(self.board.bits), _maps(self.width, self.height)))

    def ident(self) -> str:
        return f"{self.kind}-{self.pieces}-{self.rank}"

    def caption(self) -> str:
        ratio = f" · ratio {self.ratio:.2f}" if self.unique else " · several solutions"
        images = f" · 1 of {self.orbit_size} alike by symmetry" if self.orbit_size > 1 else ""
        same = f" · its pattern: {self.copies:,} boards" if self.copies > 1 else ""
        return f"{self.pieces} piece{'' if self.pieces == 1 else 's'} · rank {self.rank:,}{ratio}{images}{same}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.kind, "width": self.width, "height": self.height, "pieces": self.pieces,
            "rank": self.rank, "board": str(self.board).splitlines(), "unique": self.unique,
            "ratio": self.ratio, "brute_force_nodes": self._trees[0] if self.unique else None,
            "expert_nodes": self._trees[1] if self.unique else None, "solution": self.solution,
            "orbit_size": self.orbit_size, "pattern": self.pattern.key, "copies": self.copies,
        }

    def figure(self) -> Figure:
        from epcg.games.fling.domain.render import puzzle_figure

        return puzzle_figure(self.board, self.moves, title=self.caption())


_copies = lru_cache(maxsize=1 << 16)(copies)
""":func:`~epcg.games.fling.domain.patterns.copies`, remembered: a layer's boards share few patterns, and a gallery
lists thousands of them."""


@cache
def _maps(width: int, height: int) -> np.ndarray:
    return symmetry_maps(width, height)


def orbit_ranks(width: int, height: int, pieces: int, rank: int) -> list[int]:
    """The ranks of the distinct boards in the orbit of the board of ``rank``, ascending."""
    bits = Board.from_rank(width, height, pieces, rank).bits
    maps = _maps(width, height)
    images = {bits} | {int(_image(np.uint64(bits), maps, g)) for g in range(len(maps))}
    return sorted(Board(width, height, b).rank() for b in images)


def _ranks_in(words: np.ndarray, first_word: int) -> np.ndarray:
    """Ranks of the set bits of ``words`` (word ``i`` is word ``first_word + i`` of the layer), ascending.

    >>> _ranks_in(np.array([0b101, 1 << 63], dtype=np.uint64), 2).tolist()
    [128, 130, 255]
    """
    bits = np.unpackbits(np.ascontiguousarray(words, dtype="<u8").view(np.uint8), bitorder="little")
    return np.flatnonzero(bits) + first_word * 64


def _layer(stored: Vouched, pieces: int, kind: str) -> str:
    """The array holding layer ``pieces``'s ``kind`` bits: the whole layer, or, where a symmetric run kept only
    one board per orbit (its deepest layer), the orbit representatives."""
    name = f"{kind}/{pieces}"
    return name if stored.has(name) or not stored.has(f"orbits/{name}") else f"orbits/{name}"


def orbits_only(stored: Vouched, pieces: int) -> bool:
    """Whether layer ``pieces`` is stored as one canonical board per orbit (a symmetric run's deepest layer)."""
    return not stored.has(f"solvable/{pieces}")


def _words(stored: Vouched, pieces: int, unique: bool | None, start: int, stop: int | None
           ) -> Iterator[tuple[int, np.ndarray]]:
    """``(first word, words)`` of ``[start, stop)`` of the layer, as the records vouch for them."""
    solvable, only = _layer(stored, pieces, "solvable"), _layer(stored, pieces, "unique")
    if unique:
        yield from stored.blocks(only, start, stop)
    elif unique is None:
        yield from stored.blocks(solvable, start, stop)
    else:
        for (at, s), (_, u) in zip(stored.blocks(solvable, start, stop), stored.blocks(only, start, stop)):
            yield at, s[:len(u)] & ~u[:len(s)]


def set_ranks(stored: Vouched, pieces: int, unique: bool | None, orbits: tuple[int, int] | None = None
              ) -> Iterator[int]:
    """Ranks of layer ``pieces`` boards as stored: uniquely solvable (True), solvable but not uniquely
    (False) or solvable (None); in rank order, one chunk's words in memory at a time (an unfinished
    layer is refused when the reading reaches its first missing chunk). With ``orbits`` (the board's width
    and height) only the canonical board of each orbit, also in a layer stored whole."""
    reduced = orbits_only(stored, pieces)
    for at, words in _words(stored, pieces, unique, 0, None):
        if orbits and not reduced:
            words = words & canonical_words(*orbits, pieces, at, at + len(words))[0]
        yield from _ranks_in(words, at).tolist()


def solvable_ranks(stored: Vouched, pieces: int) -> Iterator[tuple[int, bool]]:
    """``(rank, uniquely solvable)`` of every solvable board of layer ``pieces`` as stored (one board per orbit in
    a symmetric run's deepest layer), in rank order, one chunk's words in memory at a time: the stored bits say
    which are unique, so no board is solved again."""
    for (at, solvable), (_, unique) in zip(_words(stored, pieces, None, 0, None), _words(stored, pieces, True, 0, None)):
        ranks, firsts = _ranks_in(solvable, at), _ranks_in(unique, at)
        yield from zip(ranks.tolist(), np.isin(ranks, firsts, assume_unique=True).tolist())


def sample_ranks(stored: Vouched, pieces: int, unique: bool | None, n: int, chunks: int = 4) -> list[int]:
    """About ``n`` ranks spread over the layer: evenly spaced picks from ``chunks`` evenly spaced
    Zarr chunks (a sample of a huge layer without reading all of it), ascending."""
    size, step = stored.size(_layer(stored, pieces, "solvable")), stored.chunk(_layer(stored, pieces, "solvable"))
    starts = sorted({int(s) for s in np.linspace(0, max(size - 1, 0) // step, chunks).round()})
    blocks = [list(_words(stored, pieces, unique, s * step, (s + 1) * step)) for s in starts]
    found = [(b, total) for b in blocks if (total := sum(int(np.bitwise_count(w).sum()) for _, w in b))]
    out: list[int] = []
    for b, total in found:
        take = max(1, n // len(found))
        out += _ranks_at(b, np.linspace(0, total - 1, min(take, total)).round().astype(np.int64))
    return sorted(set(out))[:n]


def _ranks_at(blocks: list[tuple[int, np.ndarray]], picks: np.ndarray) -> list[int]:
    """Ranks of the set bits numbered ``picks`` (ascending, from 0 in rank order) in ``blocks`` (``(first word,
    words)``, consecutive), found through the words' running popcounts, so the millions of set bits of a dense
    chunk are never listed.

    >>> blocks = [(2, np.array([0b101, 0], dtype=np.uint64)), (4, np.array([1 << 63], dtype=np.uint64))]
    >>> _ranks_at(blocks, np.array([0, 2]))
    [128, 319]
    """
    out, before = [], 0
    for at, words in blocks:
        running = np.cumsum(np.bitwise_count(words), dtype=np.int64)
        total = int(running[-1]) if len(running) else 0
        for p in (picks[(picks >= before) & (picks < before + total)] - before).tolist():
            i = int(np.searchsorted(running, p, side="right"))
            word = int(words[i])
            for _ in range(p - (int(running[i - 1]) if i else 0)):  # drop the lower set bits
                word &= word - 1
            out.append((at + i) * 64 + (word & -word).bit_length() - 1)
        before += total
    return out


@dataclass(frozen=True)
class TopRatio:
    """The highest expert ratio of a layer and how many boards, and orbits (boards up to symmetry), share it.

    >>> print(TopRatio(ratio=8.478, boards=264, orbits=66))
    264 boards, 66 up to symmetry, share the top ratio 8.478
    >>> print(TopRatio(ratio=118.9, boards=2, orbits=1))
    2 boards, 1 up to symmetry, share the top ratio 118.9
    >>> print(TopRatio(ratio=6966.5, boards=1, orbits=1))
    1 board has the top ratio 6966.5
    >>> print(TopRatio(ratio=29.1846, boards=32, orbits=8, patterns=5))
    32 boards, 8 up to symmetry, 5 patterns, share the top ratio 29.18
    """

    ratio: float
    boards: int
    orbits: int
    patterns: int | None = None
    """Distinct puzzles among them (:mod:`~epcg.games.fling.domain.patterns`; None: not recorded)."""

    def __str__(self) -> str:
        ratio = f"{self.ratio:.4g}" if self.ratio < 1000 else f"{self.ratio:.1f}"
        if self.boards == 1:
            return f"1 board has the top ratio {ratio}"
        patterns = "" if self.patterns is None else \
            f" {self.patterns:,} pattern{'' if self.patterns == 1 else 's'},"
        return f"{self.boards:,} boards, {self.orbits:,} up to symmetry,{patterns} share the top ratio {ratio}"


def ratio_frame(results: dict[str, Any], pieces: int | None = None):
    """results.json's ``ratio_histograms`` as a pandas DataFrame: ``pieces``, ``ratio`` (a bin's lower edge),
    ``boards``, ``exact`` (False: the boards of a random sample of the layer's blocks, not the whole layer); one
    layer's bins only when ``pieces`` is given."""
    import pandas as pd

    rows = [(h["pieces"], round(int(i) * h["bin_width"], 6), n, h.get("exact", True))
            for h in _by_pieces(results, "ratio_histograms", pieces) for i, n in h["counts"].items()]
    frame = pd.DataFrame(rows, columns=["pieces", "ratio", "boards", "exact"])
    return frame.sort_values(["pieces", "ratio"], ignore_index=True)


def solution_count_frame(results: dict[str, Any], pieces: int | None = None):
    """results.json's Fling! ``solution_counts`` as a pandas DataFrame: ``pieces``, ``solutions``, ``boards``,
    ``exact`` (False: the solvable boards of a uniform sample of the layer, not the whole layer)."""
    import pandas as pd

    rows = [(c["pieces"], int(s), n, c["exact"])
            for c in _by_pieces(results, "solution_counts", pieces) for s, n in c["counts"].items()]
    frame = pd.DataFrame(rows, columns=["pieces", "solutions", "boards", "exact"])
    return frame.sort_values(["pieces", "solutions"], ignore_index=True)


def _by_pieces(results: dict[str, Any], key: str, pieces: int | None) -> list[dict[str, Any]]:
    from epcg.runtime.errors import UserError

    if key not in results:
        raise UserError(f"this run recorded no {key.replace('_', ' ')} (job key distributions = false, or an older run)")
    layers = [h for h in results[key] if pieces is None or h["pieces"] == pieces]
    if not layers:
        raise UserError(f"no {key.replace('_', ' ')} for {pieces} pieces; layers "
                        f"{', '.join(str(h['pieces']) for h in results[key])} have them")
    return layers
