"""What a rules run found: its panels (the stored ones at each row's minimum, or those of a kept band), and
their part of report.html's gallery.

A panel is decoded and solved again from its rank when it is drawn or
exported; counts read from the store are passed in.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from matplotlib.figure import Figure

from epcg.games.witness.domain.rules import Panel, RuleRow, decode
from epcg.games.witness.found import kept_puzzles, stored
from epcg.kinds.keep import band_of, band_text, covering, read_kept
from epcg.report.found import Found
from epcg.report.gallery import Group, Item, share, spread
from epcg.runtime.errors import InvalidValue, UserError


@dataclass(frozen=True, eq=False)
class RulesPanel(Found):
    """One panel of a rules row: its symbols, solution count and longest solution."""

    row: RuleRow
    rank: int
    solutions: int | None = None
    length: int | None = None
    copies: int | None = None
    """Listed with ``distinct="patterns"``: how many of the panels listed share its pattern."""
    kind: str = field(default="witness-rules-panel", init=False)

    @cached_property
    def panel(self) -> Panel:
        return decode(self.row, self.rank)

    @cached_property
    def _solved(self) -> dict[str, Any]:
        from epcg.games.witness.rule_scans import decoded

        return decoded(self.row, self.rank)

    @cached_property
    def pattern(self) -> str:
        """Its pattern: the set of paths solving it, up to the row's symmetries
        (:mod:`~epcg.games.witness.domain.rule_patterns`)."""
        from epcg.games.witness.domain.rule_patterns import pattern
        from epcg.games.witness.domain.rule_scan import solutions
        from epcg.games.witness.domain.rule_tables import universe_for

        row = self.row
        universe = universe_for(row.width, row.height, row.start_places, row.exit_places)
        paths = [universe.path(int(i)) for i in solutions(row, self.rank)]
        return pattern(row.geometry, row.start_places, row.exit_places, paths)

    @property
    def solution_count(self) -> int:
        return self.solutions if self.solutions is not None else self._solved["solutions"]

    @property
    def longest(self) -> int:
        solution = self._solved["solution"]
        return self.length if self.length is not None else (len(solution) - 1 if solution else 0)

    def ident(self) -> str:
        return f"{self.kind}-{self.row.name}-{self.rank}"

    def caption(self) -> str:
        return f"{self.row.name} rank {self.rank:,} · {self.solution_count} sol. · {self.longest} edges"

    def to_dict(self) -> dict[str, Any]:
        out = {"type": self.kind, "row": self.row.name, "width": self.row.width, "height": self.row.height,
               **self._solved, "longest_solution": self.longest, "pattern": self.pattern}
        if self.copies is not None:
            out["copies"] = self.copies
        return out

    def figure(self) -> Figure:
        from epcg.games.witness.domain.render_rules import rules_figure
        from epcg.games.witness.domain.rule_scan import solution_path

        path, _ = solution_path(self.row, self.rank)
        return rules_figure(self.row, self.panel, path, caption=self.caption())


DISTINCT = ("patterns", "boards")
"""What ``distinct=`` may ask of a rules run: one panel per pattern, or every panel."""


def panels(run: Any, row: str | int | None, solutions: int | None,
           distinct: str | None = None) -> Iterator[RulesPanel]:
    """The panels of a run's rows (all by default) with ``solutions`` solutions (default: each row's minimum),
    from the store: at the minimum, or in a band the job kept; with ``distinct="patterns"`` per row the first
    panel of each pattern, its ``copies`` how many of the panels listed share it."""
    if distinct not in (None, *DISTINCT):
        raise InvalidValue(f"distinct must be one of {', '.join(DISTINCT)} for a rules run, got {distinct!r}")
    found = _panels(run, row, solutions)
    return found if distinct in (None, "boards") else _distinct(found)


def _distinct(found: Iterator[RulesPanel]) -> Iterator[RulesPanel]:
    """Per row, the first panel of each pattern, in the order listed, with how many panels share it (a row's
    panels are all read before its first is given)."""
    for _row, group in itertools.groupby(found, key=lambda p: p.row.name):
        firsts: dict[str, RulesPanel] = {}
        copies: dict[str, int] = {}
        for p in group:
            firsts.setdefault(p.pattern, p)
            copies[p.pattern] = copies.get(p.pattern, 0) + 1
        for key, p in firsts.items():
            yield dataclasses.replace(p, copies=copies[key])


def _panels(run: Any, row: str | int | None, solutions: int | None) -> Iterator[RulesPanel]:
    pairs = list(zip(run.config.parsed_rows(), run.results["rows"]))
    if row is not None:
        pairs = [pair for i, pair in enumerate(pairs) if row in (i, pair[0].name)]
        if not pairs:
            names = ", ".join(r.name for r in run.config.parsed_rows())
            raise UserError(f"run {run.name} has no row {row!r}; its rows are {names}")
    for row_, res in pairs:
        if solutions is None or solutions == res["min_solutions"]:
            for rank, longest in stored(run.stored, row_):
                yield RulesPanel(row_, int(rank), res["min_solutions"], int(longest))
            continue
        band = covering(res.get("kept"), solutions, solutions)
        if band is None:
            raise UserError(f"run {run.name} stored the panels of {row_.name} at its minimum "
                            f"({res['min_solutions']}) and in its keep bands, not those with {solutions}: run the "
                            f"job again with keep = [{{solutions = {solutions}}}]")
        for rank, count, longest in kept_puzzles(run.stored, row_.name, band, solutions):
            yield RulesPanel(row_, rank, count, longest)


def gallery(run: Any, items: int) -> list[Group]:
    """Per row, panels at its minimum spread over the ranks, and per kept band some of its panels."""
    rows = [(row, r) for row, r in zip(run.config.parsed_rows(), run.results["rows"]) if r["puzzles_at_min"]]
    n = share(items, max(len(rows), 1))
    out = []
    for row, res in rows:
        at_min = list(stored(run.stored, row))
        chosen = [RulesPanel(row, int(at_min[i][0]), res["min_solutions"], int(at_min[i][1]))
                  for i in sorted(spread(len(at_min), n))]
        out.append(Group(row.name, res["puzzles_at_min"], [_item(p, row.name) for p in chosen]))
        for i, band in enumerate(res.get("kept") or []):
            ranks, scores, longest = read_kept(run.stored, row.name, i)
            name = f"{row.name}, {band_text(band_of(band['band']), 'solutions')} (kept)"
            kept = [RulesPanel(row, int(ranks[j]), int(scores[j]), int(longest[j]))
                    for j in sorted(spread(len(ranks), n))]
            out.append(Group(name, band["matched"], [_item(p, name) for p in kept]))
    return out


def _item(p: RulesPanel, group: str) -> Item:
    return Item(p, group, {"row": p.row.name, "board": f"{p.row.width}x{p.row.height}",
                           "solutions": p.solution_count, "length": p.longest})
