"""A rules row as a :class:`~epcg.search.scan.ScanSpace`: the score of a placement is its number of solutions.

>>> from epcg.search import scan_range
>>> from epcg.games.witness.domain.scan import REDUCTIONS
>>> from epcg.games.witness.domain.rules import RuleRow
>>> row = RuleRow(width=3, height=3, triangles=2)
>>> r = scan_range(puzzle_space(row), 0, row.max_rank, REDUCTIONS)
>>> r.count, r.count - r.ignored, r.argmin.value, len(r.argmin.ranks)
(324, 322, 4, 11)
>>> len(solutions(row, int(r.argmin.ranks[0])))
4
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import numpy as np

from epcg.games.witness.domain.pieces import parse_piece, placement_masks
from epcg.games.witness.domain.rule_kernel import (
    CELL_BITSETS, CHECK, COUNTS, EDGES, GK, HK, N, NCELLS, NPIECES, NPOS, NSP, NXP, SC, SPEC_SIZE, STAR_BITSETS,
    VALUES, XC,
    count_rank, scan_rules, solve_rank)
from epcg.games.witness.domain.rule_tables import Tables, tables_for, universe_for
from epcg.games.witness.domain.rules import Panel, RuleRow, decode
from epcg.games.witness.domain.scan import fused_partial
from epcg.search.scan import Reductions, ScanPartial, ScanSpace

__all__ = ["Compiled", "compiled", "puzzle_space", "solutions"]


class Compiled(NamedTuple):
    """A row as the kernels take it."""

    tables: Tables
    spec: np.ndarray
    radices: np.ndarray
    tri_values: np.ndarray
    voff: np.ndarray
    place: np.ndarray
    vsize: np.ndarray

    def data(self) -> tuple:
        """The kernels' arguments after the rank (``count_rank``, ``solve_rank``)."""
        t = self.tables
        return (t.rows, self.spec, self.radices, self.tri_values, t.offsets, t.pair_index, t.num_paths, t.regions,
                t.touch, self.voff, self.place, self.vsize)


def compiled(row: RuleRow) -> Compiled:
    """The tables, spec and piece placements of a row."""
    g = row.geometry
    tables = tables_for(row.width, row.height, row.start_places, row.exit_places, row.start_count, row.exit_count,
                        together=row.stars > 0 and row.eliminations == 0)
    spec = np.zeros(SPEC_SIZE, dtype=np.int64)
    spec[[NSP, SC, NXP, XC]] = len(row.start_places), row.start_count, len(row.exit_places), row.exit_count
    spec[[EDGES, GK, NPOS, HK, NCELLS, N]] = g.num_edges, row.gaps, g.num_positions, row.hexagons, g.num_cells, \
        row.cell_count
    spec[COUNTS:COUNTS + 6] = row.type_counts
    spec[VALUES:VALUES + 6] = row.type_values
    spec[CELL_BITSETS] = row.eliminations == 0
    spec[CHECK] = bool(row.eliminations or row.tetris or row.negatives)
    spec[STAR_BITSETS] = row.stars > 0 and row.eliminations == 0
    spec[NPIECES] = len(row.pieces)
    variants = [parse_piece(text) for piece in row.piece_variants for text in piece]
    voff = np.cumsum([0] + [len(piece) for piece in row.piece_variants]).astype(np.int64)
    place = placement_masks(variants, row.width, row.height) if variants else np.zeros((0, g.num_cells), np.uint64)
    vsize = np.array([v.size for v in variants], dtype=np.int64)
    return Compiled(tables, spec, np.array(row.radices, dtype=np.int64),
                    np.array(row.triangle_counts, dtype=np.int64), voff, place, vsize)


def solutions(row: RuleRow, rank: int) -> np.ndarray:
    """Indices into the row's path universe (``rule_tables.universe_for``) of the paths solving a placement,
    longest first."""
    c = compiled(row)
    out = np.zeros(c.tables.num_paths, dtype=np.int64)
    n = solve_rank(rank, *c.data(), out)  # type: ignore[call-arg]  # a numba dispatcher takes the kernel's arguments
    return out[:n]


def solution_path(row: RuleRow, rank: int) -> tuple[tuple[int, ...] | None, int]:
    """``(vertices of the longest solution or None, number of solutions)`` of a placement."""
    sols = solutions(row, rank)
    universe = universe_for(row.width, row.height, row.start_places, row.exit_places)
    return (universe.path(int(sols[0])) if len(sols) else None), len(sols)


def puzzle_space(row: RuleRow) -> ScanSpace:
    """The placements of a row as a scan space (per-rank evaluator and the fused range kernel)."""
    c = compiled(row)
    return ScanSpace(max_rank=row.max_rank, evaluate=count_rank, data=c.data(), name=f"witness rules {row.name}",
                     evaluate_range=partial(_fused, c), decode=partial(decode, row), render=partial(render, row))


def _fused(c: Compiled, start: int, stop: int, reductions: Reductions) -> ScanPartial | None:
    t = c.tables

    def kernel(acc, ranks, longs, hist, bands, kept) -> None:
        scan_rules(t.rows, c.spec, c.radices, c.tri_values, t.offsets, t.pair_index, t.num_paths, t.lengths,
                   t.regions, t.touch, c.voff, c.place, c.vsize, start, stop, acc, ranks, longs, hist, bands, kept)

    return fused_partial(t.num_paths, kernel, start, stop, reductions)


def render(row: RuleRow, panel: Panel):
    """A matplotlib figure of a placement with its longest solution (if it has one)."""
    from epcg.games.witness.domain.render_rules import rules_figure

    path, count = solution_path(row, panel.rank)
    return rules_figure(row, panel, path, caption=f"{count} solution(s)")
