"""Witness puzzle spaces: ranks, decoded puzzles and their solutions.

Three kinds of puzzle, each a rank space (lexicographic combinations, rank 0 =
``{0, .., k-1}``):

- ``"must-cross"``, ``k`` positions: rank = combination rank over ``num_positions``.
  A path solves it when it crosses every position.
- ``"regions"``, ``k`` cells of two colours, the lowest cell black:
  rank = ``cells_rank * 2**(k-1) + colour_bits``, bit ``i`` of ``colour_bits`` the
  colour of the ``(i+1)``-th cell (1 = white). A path solves it when no region
  holds cells of both colours.
- ``"joint"``, ``k = (k_cross, k_regions)``:
  rank = ``(cross_rank * C(cells, k_regions) + cells_rank) * 2**(k_regions-1) + colour_bits``.

>>> max_rank("must-cross", 3, 3, 3), max_rank("regions", 4, 4, 6), max_rank("joint", 3, 4, (2, 4))
(9880, 256256, 5049000)
>>> from epcg.games.witness.domain.paths import paths_for
>>> p = decode("regions", 2, 2, 2, 1)
>>> p.cells, p.colours
((0, 1), (0, 1))
>>> [paths_for(2, 2).moves(int(i)) for i in solutions(paths_for(2, 2), p)]
['UURDDRUU', 'RULURR', 'URDRUU', 'RURU', 'RUUR']
>>> encode("regions", p)
1
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from epcg.combinatorics.binomial import binomial
from epcg.combinatorics.combinations import Combinations
from epcg.games.witness.domain.geometry import Geometry
from epcg.games.witness.domain.paths import PathSet

KINDS = ("must-cross", "regions", "joint")

__all__ = ["KINDS", "Puzzle", "decode", "encode", "max_rank", "parse_k", "solutions"]


@dataclass(frozen=True)
class Puzzle:
    """One puzzle: must-cross positions and coloured cells (0 black, 1 white), all ascending."""

    width: int
    height: int
    cross: tuple[int, ...] = ()
    cells: tuple[int, ...] = ()
    colours: tuple[int, ...] = ()

    @property
    def geometry(self) -> Geometry:
        return Geometry(self.width, self.height)


def parse_k(kind: str, width: int, height: int, k) -> tuple[int, int]:
    """Validate a kind and its ``k``; return ``(k_cross, k_regions)``.

    >>> parse_k("joint", 3, 4, (2, 4))
    (2, 4)
    """
    g = Geometry(width, height)
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    try:
        if kind == "joint":
            kc, kr = (operator.index(x) for x in k)
        else:
            kc, kr = (operator.index(k), 0) if kind == "must-cross" else (0, operator.index(k))
    except (TypeError, ValueError):
        raise ValueError(f"bad k for {kind}: {k!r}") from None
    if kind != "regions" and not 1 <= kc <= g.num_positions:
        raise ValueError(f"k_cross must be 1..{g.num_positions}, got {kc}")
    if kind != "must-cross" and not 1 <= kr <= g.num_cells:
        raise ValueError(f"k_regions must be 1..{g.num_cells}, got {kr}")
    return kc, kr


def _sizes(kind: str, width: int, height: int, k) -> tuple[Geometry, int, int, int, int]:
    """``(geometry, k_cross, k_regions, cross combinations, regions puzzles per cross set)``."""
    kc, kr = parse_k(kind, width, height, k)
    g = Geometry(width, height)
    ncross = binomial(g.num_positions, kc)
    nreg = binomial(g.num_cells, kr) << (kr - 1) if kr else 1
    return g, kc, kr, ncross, nreg


def max_rank(kind: str, width: int, height: int, k) -> int:
    """Number of puzzles of this kind (ranks are ``0 .. max_rank-1``)."""
    _, _, _, ncross, nreg = _sizes(kind, width, height, k)
    return ncross * nreg


def decode(kind: str, width: int, height: int, k, rank: int) -> Puzzle:
    """The puzzle of a rank."""
    g, kc, kr, ncross, nreg = _sizes(kind, width, height, k)
    rank = operator.index(rank)
    if not 0 <= rank < ncross * nreg:
        raise ValueError(f"rank {rank} out of range [0, {ncross * nreg})")
    cross_rank, rest = divmod(rank, nreg)
    cross = Combinations(g.num_positions, kc).unrank(cross_rank) if kc else ()
    cells: tuple[int, ...] = ()
    colours: tuple[int, ...] = ()
    if kr:
        cells_rank, bits = divmod(rest, 1 << (kr - 1))
        cells = Combinations(g.num_cells, kr).unrank(cells_rank)
        colours = (0,) + tuple((bits >> i) & 1 for i in range(kr - 1))
    return Puzzle(width, height, cross, cells, colours)


def encode(kind: str, puzzle: Puzzle) -> int:
    """The rank of a puzzle (inverse of ``decode``)."""
    k = {"must-cross": len(puzzle.cross), "regions": len(puzzle.cells),
         "joint": (len(puzzle.cross), len(puzzle.cells))}[kind]
    g, kc, kr, ncross, nreg = _sizes(kind, puzzle.width, puzzle.height, k)
    rank = Combinations(g.num_positions, kc).rank(puzzle.cross) * nreg if kc else 0
    if kr:
        if puzzle.colours[0] != 0 or len(puzzle.colours) != kr:
            raise ValueError("the lowest cell must be black (colour 0), one colour per cell")
        bits = sum(int(c) << i for i, c in enumerate(puzzle.colours[1:]))
        rank += Combinations(g.num_cells, kr).rank(puzzle.cells) * (1 << (kr - 1)) + bits
    return rank


def solutions(paths: PathSet, puzzle: Puzzle) -> np.ndarray:
    """Indices of the paths solving ``puzzle``, longest first then path index (int64)."""
    if (paths.geometry.width, paths.geometry.height) != (puzzle.width, puzzle.height):
        raise ValueError("puzzle and path set are for different boards")
    ok = np.ones(len(paths), dtype=bool)
    for p in puzzle.cross:
        ok &= ((paths.cross_mask[:, p >> 6] >> np.uint64(p & 63)) & np.uint64(1)).astype(bool)
    for i, (a, ca) in enumerate(zip(puzzle.cells, puzzle.colours)):
        for b, cb in zip(puzzle.cells[i + 1:], puzzle.colours[i + 1:]):
            if ca != cb:
                ok &= paths.regions[:, a] != paths.regions[:, b]
    return np.flatnonzero(ok)  # paths are stored longest first
