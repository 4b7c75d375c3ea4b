"""A Witness run as a Python object: its puzzles row by row (or a triple run's sets), and its part of report.html.

>>> [t.__name__ for t in WitnessRun.found_types]
['WitnessPuzzle', 'TripleSet', 'RulesPanel']
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from epcg.api.probe import Probe
from epcg.api.runs import Run, check_count, is_int
from epcg.games.witness import rule_found
from epcg.games.witness.found import TripleSet, WitnessPuzzle, kept_puzzles, stored
from epcg.games.witness.domain.scan import PATTERNS_COUNTED
from epcg.kinds.keep import MAX_KEPT, band_of, band_text, covering, read_kept
from epcg.report.gallery import Group, Item, plot_axes, share, spread
from epcg.report.pictures import png_bytes
from epcg.runtime.errors import InvalidValue, UserError
from epcg.runtime.records import Vouched

TRIPLES_SHOWN = 6
"""Triples per variant in the gallery at most (each is six panels, slow to draw)."""


class WitnessRun(Run):
    """A Witness run: ``puzzles()`` of its rows, their ``solution_counts()``; a triple run's ``triples()``."""

    found_types = (WitnessPuzzle, TripleSet, rule_found.RulesPanel)
    WHERE = {
        "puzzles": {
            "row": ("`4x4:6`, `4x4-k6` or an index", "that row's puzzles (default: every row)"),
            "solutions": ("a count", "puzzles with that many solutions (default: the row's fewest, stored); a count "
                          "a band of the job's `keep` holds is read at once, any other is recomputed"),
            "length": ("edges, or `longest`", "puzzles whose longest solution has that many edges; `longest`: the "
                       "row's longest (`--where length=longest`)"),
            "min_length": ("edges", "puzzles whose longest solution has at least that many edges"),
            "distinct": ("`patterns`, `orbits`, `boards`", "per row, `patterns`: one puzzle per set of solution "
                         "paths up to the panel's symmetry, its `copies` how many listed puzzles it stands for; "
                         "`orbits`: one per symmetry orbit; `boards` (default): every puzzle"),
        },
        "triples": {"variant": ("a variant's name", "that variant's optimal triples (a triple run)")},
        "panels": {
            "row": ("a row's name or an index", "that row's panels of a rules run (default: every row)"),
            "solutions": ("a count", "panels with that many solutions (default: the row's fewest; another count "
                          "when a band of the job's `keep` holds it)"),
            "distinct": ("`patterns`, `boards`", "per row, `patterns`: one panel per set of solution paths up to "
                         "the row's symmetries, its `copies` how many listed panels it stands for; `boards` "
                         "(default): every panel"),
        },
    }
    """The filters of ``puzzles``, ``triples`` and ``panels``: values and what each selects (docs/filters.md)."""
    NOTATION = "\n".join([
        "- A row such as `4x4:5`: 4×4 panels (cells) with k = 5 must-cross hexagons; `3x4:2+4`: 2 hexagons and "
        "4 squares. Job files, `--where row=`, exports and captions write it so; `epcg plan` and `epcg status` "
        "name its stage `4x4-k5` (which `--where row=` takes too).",
        "- Coordinates are vertices `(x, y)`: x to the right, y up, `(0,0)` the bottom-left corner, where the path "
        "starts (the large circle); the goal is the top-right corner (the nub pointing up).",
        "- `vertex (1,0)`: a hexagon on that vertex; `edge (0,1)-(1,1)`: a hexagon on the edge between those two "
        "vertices; `cell (2,3)`: the cell whose bottom-left corner is vertex (2,3).",
        "- A solution such as `RRUURDD…`: moves from the start, one edge each (`R` right, `U` up, `L` left, "
        "`D` down), ending at the goal. `solutions`: how many paths solve the panel; `longest`: edges of the "
        "longest of them.",
        "- Pictures: the puzzle, then its solution in yellow; a panel with at most 4 solutions is drawn with every "
        "one (`solution 1 of 2`, …), and its export lists them all (`every_solution`).",
        "- The table: `board` the panel's cells (width x height); `max` the places a constraint can take on it "
        "(vertices and edges for hexagons, cells for squares), the most k can be; `k` the hexagons (`k cross+regions`: hexagons + "
        "squares); `#` puzzles in the row (ways to place them; `examined` in a joint row, `examined ×2 (both first "
        "colours)` counting both colours of the first square as the paper does); `solvable` those with a "
        "solution; `min sol.` the fewest solutions a solvable puzzle has; `at min` puzzles with that few; "
        "`patterns at min` how many different puzzles for a designer they are (one per set of solution paths up "
        "to the panel's symmetries, as `--where distinct=patterns` lists them; – when more than "
        f"{PATTERNS_COUNTED:,} are at the minimum, or the run is older); "
        "`longest` the most edges of a solution among them, `at longest` how many reach it; `seconds` compute "
        "time summed over chunks; `paper #`, `paper examined`, `paper min`, `paper at min`, `paper at longest`, "
        "`paper seconds`: the paper's figures for those columns. A paths run: `width`, "
        "`height`, `paths` from start to goal, `paper` its figure, `how` listed one by one or counted.",
        "- A triple run's table: `variant` plain, or separate (each sub-panel's pieces in different regions of the "
        "joint path); `panels` the sub-panels its pieces make, `solvable` those with a solution, `distinct solution "
        "sets` how many different solution sets they have; `optimal score` the best triple's score (the fewest "
        "solutions of any one sub-panel or pair, with exactly one path solving all three); `optimal class triples` "
        "the unordered triples of solution sets reaching it, `ordered panel triples` the ordered triples of panels "
        "behind them; `nodes` the search's nodes, `pruned` those cut by its bound, `incumbent improvements` how "
        "often the shared best score rose; `seconds` compute time summed; `joint solution` the first optimal "
        "triple's path.",
        "- A unique-cover run's table: `board`; `paths` from start to goal; `positions` vertices and edges a "
        "hexagon can take; `k` the fewest hexagons that leave a panel exactly one solution (– for none); `panels` "
        "the panels with k hexagons and one solution, `symmetry classes` the same up to the board's symmetries; "
        "`longest solution` the most edges of their solutions and `panels at longest` how many reach it; `paths cut "
        "by the interval bound` paths discarded without search, `nodes` the search's nodes, `nodes checked` those "
        "checked against every path; `seconds` compute time summed.",
        "- More: docs/notation.md and docs/games.md.",
    ])

    @property
    def domain(self) -> str:
        """witness, or the variant a job's ``kind`` chose: triple (triple panels), unique-cover (panels with one
        solution, from the paths' side), rules (panels with the game's own symbols)."""
        kind = getattr(self.config, "kind", None)
        return kind if kind in ("triple", "unique-cover", "rules") else "witness"

    @property
    def FOUND(self) -> str | None:  # noqa: N802 - the name every Run class gives it
        """``puzzles`` for the scans, ``triples`` for a triple run (a unique-cover run lists none)."""
        return {"witness": "puzzles", "triple": "triples", "rules": "panels"}.get(self.domain)

    @property
    def FILTERS(self) -> tuple[tuple[str, str, str], ...]:  # noqa: N802 - the name every Run class gives it
        """The gallery's filters: board, k, solutions, length; a triple run's variant and score."""
        if self.domain == "triple":
            return (("variant", "variant", "select"), ("score", "score", "select"))
        if self.domain == "rules":
            return (("row", "row", "select"), ("solutions", "solutions", "select"),
                    ("length", "solution length", "select"))
        return (("board", "board", "select"), ("k", "k", "select"), ("solutions", "solutions", "select"),
                ("length", "solution length", "select"))

    def rows(self) -> list[str]:
        """The Witness rows as job files and filters write them, e.g. ``['3x4:2+4', '4x4:3+3']``."""
        self._require("witness")
        return [row.key for row in self.config.parsed_rows()]

    def _witness_rows(self, row: str | int | None) -> list[tuple[Any, dict[str, Any]]]:
        pairs = list(zip(self.config.parsed_rows(), self.results["rows"]))
        if row is None:
            return pairs
        if is_int(row):
            if not 0 <= row < len(pairs):
                raise InvalidValue(f"run {self.name} has rows 0..{len(pairs) - 1} ({', '.join(self.rows())}), "
                                   f"not row {row}")
            return [pairs[row]]
        chosen = [(r, res) for (r, res), text in zip(pairs, self.config.rows) if row in (r.key, r.name, text)]
        if not chosen:
            raise InvalidValue(f"run {self.name} has no row {row!r}; its rows are {', '.join(self.rows())} "
                               f"(or their indices 0..{len(pairs) - 1})")
        return chosen

    def puzzles(self, row: str | int | None = None, *, solutions: int | None = None,
                length: int | str | None = None, min_length: int | None = None,
                distinct: str | None = None) -> Iterator[WitnessPuzzle]:
        """Witness puzzles, row by row in rank order.

        ``row``: a row as the job writes it (``"3x4:2+4"``), its stage name (``"3x4-k2+4"``) or
        its index; all rows by default. ``solutions``: the solution count
        (default: the row's minimum). Puzzles at the minimum, and at a count in a
        band the job kept (``keep = [{solutions = [2, 3]}]``), are read from the
        store; any other count is recomputed: the row runs again as a new run with
        that count kept, on the embedded cluster, its estimate and progress on
        stderr. ``length``: the longest solution's edges, or ``"longest"`` for the
        row's longest; ``min_length``: at least that many edges. ``distinct``:
        ``"patterns"`` gives per row the first puzzle of each pattern (the same set of
        solving paths up to the panel's symmetries: one panel per path shape;
        :mod:`~epcg.games.witness.domain.patterns`), ``"orbits"`` the first of each
        orbit (the panel's mirror images and half turn), each with ``copies``: how many
        of the puzzles listed it stands for; ``"boards"`` (or None) every puzzle.
        """
        self._require("witness")
        kind = self.config.kind
        if kind == "paths":
            raise UserError("a paths run stores no puzzles; run must-cross, regions or joint rows")
        check_count("solutions", solutions)
        if solutions == 0:
            raise InvalidValue("solutions must be 1 or more: constraints nothing solves are not puzzles (the run "
                               "counts them, as solution_counts()[0], but keeps none)")
        check_count("min_length", min_length)
        if length != "longest":
            check_count("length", length, "an edge count >= 0 or 'longest'")
        if distinct is not None and distinct not in DISTINCT:
            raise InvalidValue(f"distinct must be one of {', '.join(DISTINCT)}, got {distinct!r}")
        found = self._puzzles(kind, self._witness_rows(row), solutions, length, min_length)
        return found if distinct in (None, "boards") else _distinct(found, distinct)

    def _puzzles(self, kind: str, rows: list, solutions: int | None, length: int | str | None,
                 min_length: int | None) -> Iterator[WitnessPuzzle]:
        for (row_, res), text in zip(rows, self._row_texts(rows)):
            want = res["longest_solution"] if length == "longest" else length
            with self._at_count(row_, res, text, solutions) as items:
                for rank, count, longest in items:
                    if (want is not None and longest != want) or (min_length is not None and longest < min_length):
                        continue
                    yield WitnessPuzzle(kind, row_.width, row_.height, row_.k, int(rank), row=row_.key,
                                        solutions=count, length=longest)

    def _row_texts(self, rows: list) -> list[str]:
        """The job's text of each of ``rows`` (``"4x4:5"``), as ``rows`` in a job takes it."""
        by_name = {parsed.name: text for parsed, text in zip(self.config.parsed_rows(), self.config.rows)}
        return [by_name[row_.name] for row_, _ in rows]

    @contextlib.contextmanager
    def _at_count(self, row_: Any, res: dict[str, Any], text: str,
                  solutions: int | None) -> Iterator[Iterator[tuple[int, int, int]]]:
        """``(rank, solutions, longest)`` of the row's puzzles with ``solutions`` solutions (default: its minimum):
        from the store when the run kept them, else from a run of the row that keeps them."""
        if solutions is None or solutions == res["min_solutions"]:
            yield ((rank, res["min_solutions"], longest) for rank, longest in stored(self.stored, row_))
            return
        band = covering(res.get("kept"), solutions, solutions)
        if band is not None:
            yield kept_puzzles(self.stored, row_.name, band, solutions)
            return
        counts, cap = res.get("solution_counts"), res.get("solution_counts_cap")
        if counts is not None and (cap is None or solutions <= cap) and not counts.get(str(solutions)):
            yield iter(())  # the row's exact tally has no puzzle with that count: nothing to recompute
            return
        with self.recomputed({"rows": [text], "keep": [{"solutions": solutions}], "keep_cap": MAX_KEPT},
                             f"the puzzles of {row_.key} with {solutions} solutions") as again:
            (res_again,) = again.results["rows"]
            yield kept_puzzles(again.stored, row_.name, 0, solutions) if res_again["kept"][0]["matched"] else iter(())

    def solution_counts(self, row: str | int | None = None):
        """How many puzzles of a Witness row (default the first) have each solution count (a pandas Series),
        when the run recorded it."""
        import pandas as pd

        self._require("witness")
        (row_, res), = self._witness_rows(0 if row is None else row)
        counts = res.get("solution_counts")
        if counts is None:
            raise UserError(f"run {self.name} did not record the distribution of solution counts of {row_.key}")
        return pd.Series(counts_of(counts), name="puzzles").rename_axis("solutions")

    def panels(self, row: str | int | None = None, *, solutions: int | None = None,
               distinct: str | None = None) -> Iterator[rule_found.RulesPanel]:
        """A rules run's panels, row by row in rank order: ``row`` a row name or index (all by default),
        ``solutions`` the solution count (default: each row's minimum; another count if a ``keep`` band holds it),
        ``distinct="patterns"`` one panel per set of solving paths up to the row's symmetries
        (:mod:`~epcg.games.witness.domain.rule_patterns`)."""
        self._require("rules")
        check_count("solutions", solutions)
        return rule_found.panels(self, row, solutions, distinct)

    def triples(self, variant: str | None = None) -> Iterator[TripleSet]:
        """The optimal triple-panel sets results.json decodes, per variant."""
        self._require("triple")
        variants = [res["variant"] for res in self.results["rows"]]
        if variant is not None and variant not in variants:
            raise InvalidValue(f"run {self.name} has variants {', '.join(map(repr, variants))}, not {variant!r}")
        return self._triples(variant)

    def _triples(self, variant: str | None) -> Iterator[TripleSet]:
        c = self.config
        for res in self.results["rows"]:
            if variant in (None, res["variant"]):
                for data in res["triples"]:
                    yield TripleSet(res["variant"], c.width, c.height, tuple(c.library), data)

    # -- report.html ------------------------------------------------------------

    def _table_rows(self) -> list[dict[str, Any]]:
        """A unique-cover run's table is its boards, each named (``4x4``); every other kind's, its rows."""
        if self.config.kind == "unique-cover":
            return [{"board": f"{b['width']}x{b['height']}", **b} for b in self.results["boards"]]
        return super()._table_rows()

    def probe(self, puzzle: str) -> Probe:
        """What the run knows of one panel, written as docs/notation.md names its parts: ``"3x3: vertex (1,0), edge
        (0,1)-(1,1), cell (2,2) white"`` (hexagons, squares; the size may be left out when every row has one):
        its row and rank, solution count and longest solution (counted on the spot), pattern, orbit, whether the
        run kept it, its solutions drawn (:mod:`~epcg.games.witness.probe`); a rules run's panel is written as
        :mod:`~epcg.games.witness.rule_probe` says (``"3x3: cell (0,0) triangle 2, exit (3,3)"``)."""
        from epcg.games.witness.probe import probe

        if self.domain == "rules":
            from epcg.games.witness.rule_probe import probe as probe_rules

            return probe_rules(self, puzzle)
        self._require("witness")
        return probe(self, puzzle)

    def gallery(self, items: int) -> list[Group]:
        """Per row, puzzles at its minimum (half with the longest solutions, half spread over the ranks); per
        variant of a triple run, its first optimal triples."""
        if self.domain == "triple":
            rows = self.results["rows"]
            n = min(TRIPLES_SHOWN, share(items, len(rows)))
            return [Group(f"{r['variant']}: optimal triples", r["optimal_triples"],
                          [Item(t, r["variant"], {"variant": t.variant, "score": t.score})
                           for t in list(self.triples(r["variant"]))[:n]]) for r in rows]
        if self.domain == "rules":
            return rule_found.gallery(self, items)
        if self.domain != "witness" or self.config.kind == "paths":
            return []
        rows = [(row, r) for row, r in zip(self.config.parsed_rows(), self.results["rows"]) if r["puzzles_at_min"]]
        n = share(items, len(rows))
        out = []
        for row, res in rows:
            ranks, longest = _longest_and_spread(self.stored, row.name, n, lambda rank, row=row: WitnessPuzzle(
                self.config.kind, row.width, row.height, row.k, rank, row=row.name).pattern)
            k = "+".join(map(str, res["k"])) if isinstance(res["k"], list) else str(res["k"])
            group = row.key
            puzzles = [WitnessPuzzle(self.config.kind, row.width, row.height, row.k, rank, row=row.key,
                                     solutions=res["min_solutions"], length=length)
                       for rank, length in zip(ranks, longest)]
            at_min = zip(stored(self.stored, row), itertools.repeat(res["min_solutions"]))
            every = self._every(row, group, k, ((rank, solutions, n) for (rank, n), solutions in at_min))
            out.append(Group(group, res["puzzles_at_min"], [_item(p, group, k) for p in puzzles], every=every))
            for i, band in enumerate(res.get("kept") or []):
                ranks, scores, longest = read_kept(self.stored, row.name, i)
                name = f"{group}, {band_text(band_of(band['band']), 'solutions')} (kept)"
                kept = [WitnessPuzzle(self.config.kind, row.width, row.height, row.k, int(ranks[j]), row=row.key,
                                      solutions=int(scores[j]), length=int(longest[j])) for j in sorted(spread(len(ranks), n))]
                out.append(Group(name, band["matched"], [_item(p, name, k) for p in kept],
                                 every=self._every(row, name, k, zip(ranks, scores, longest))))
        return out

    def _every(self, row: Any, group: str, k: str, found: Iterator[tuple[int, int, int]]) -> Iterator[Item]:
        """Gallery items of a row's ``(rank, solutions, longest)``, made as they are read."""
        for rank, solutions, longest in found:
            yield _item(WitnessPuzzle(self.config.kind, row.width, row.height, row.k, int(rank), row=row.key,
                                      solutions=int(solutions), length=int(longest)), group, k)

    def plots(self, groups: list[Group]) -> list[tuple[str, bytes]]:
        """Solution counts per row, when the run recorded them."""
        if self.domain not in ("witness", "rules"):
            return []
        out = []
        for res in self.results["rows"]:
            if res.get("solution_counts") is None:
                continue
            counts = counts_of(res["solution_counts"])
            if sum(1 for c in counts if c > 0) < 2:
                continue  # the job tallied no distribution beyond "no solution" (solution_counts = 0)
            fig, ax = plot_axes()
            ax.bar(list(counts), list(counts.values()), color="#5e81ac")
            ax.set_yscale("log")
            ax.set_xlabel("solutions")
            ax.set_ylabel("puzzles")
            title = f"solution counts, {_row_label(res)}"
            if res.get("solution_counts_above"):
                title += (f" ({res['solution_counts_above']:,} puzzles with more than "
                          f"{res['solution_counts_cap']:,} not shown)")
            ax.set_title(title, fontsize=10)
            out.append((title, png_bytes(fig)))
        return out


def _item(puzzle: WitnessPuzzle, group: str, k: str) -> Item:
    """A puzzle in the gallery, with the values its filters act on."""
    return Item(puzzle, group, {"board": f"{puzzle.width}x{puzzle.height}", "k": k,
                                "solutions": puzzle.solution_count, "length": puzzle.longest})


DISTINCT = ("patterns", "orbits", "boards")
"""What ``distinct=`` may ask for: one puzzle per pattern, one per orbit, or every puzzle."""


def _distinct(puzzles: Iterator[WitnessPuzzle], by: str) -> Iterator[WitnessPuzzle]:
    """Per row, the first puzzle of each pattern (``by="patterns"``) or orbit, in the order listed, each with how
    many of ``puzzles`` it stands for (so a row's puzzles are all read before its first is given)."""
    for _row, group in itertools.groupby(puzzles, key=lambda p: p.row):
        firsts: dict[Any, WitnessPuzzle] = {}
        copies: dict[Any, int] = {}
        for p in group:
            key = p.pattern if by == "patterns" else p.orbit
            firsts.setdefault(key, p)
            copies[key] = copies.get(key, 0) + 1
        for key, p in firsts.items():
            yield dataclasses.replace(p, copies=copies[key])


PATTERNS_SOUGHT = 2_000
"""The most puzzles (longest solutions first) a row's gallery looks through for different patterns."""


def _longest_and_spread(data: Vouched, row: str, n: int, pattern: Callable[[int], str]
                        ) -> tuple[list[int], list[int]]:
    """About ``n`` stored puzzles of a row: half with the longest solutions, one per pattern (the first of each,
    among the first ``PATTERNS_SOUGHT``), half spread over the ranks, as the reduction's record vouches for
    them."""
    ranks, longest = data.read(f"{row}/at_min/ranks"), data.read(f"{row}/at_min/longest").astype(np.int64)
    picked = {int(ranks[i]): int(longest[i]) for i in spread(len(ranks), n - n // 2)}
    seen: set[str] = set()
    for i in np.lexsort((ranks, -longest))[:PATTERNS_SOUGHT].tolist():
        if len(seen) >= n // 2:
            break
        key = pattern(int(ranks[i]))
        if key not in seen:
            seen.add(key)
            picked[int(ranks[i])] = int(longest[i])
    chosen = sorted(picked.items(), key=lambda kv: (-kv[1], kv[0]))
    return [int(r) for r, _ in chosen], [length for _, length in chosen]


def _row_label(res: dict[str, Any]) -> str:
    """A row of results.json as the plots name it: its name (a rules row), or its board and k."""
    if "name" in res:
        return res["name"]
    k = "+".join(map(str, res["k"])) if isinstance(res["k"], list) else res["k"]
    return f"{res['width']}x{res['height']} k={k}"


def counts_of(value: Any) -> dict[int, int]:
    """A distribution of solution counts as ``{count: puzzles}``, from a dict or ``[count, puzzles]`` pairs.

    >>> counts_of({"1": 945, "2": 10}), counts_of([[1, 945], [2, 10]])
    ({1: 945, 2: 10}, {1: 945, 2: 10})
    """
    pairs = value.items() if isinstance(value, dict) else value
    return {int(k): int(v) for k, v in sorted(pairs, key=lambda kv: int(kv[0]))}
