"""A Witness run as a Python object: its puzzles row by row (or a triple run's sets), and its part of report.html.

>>> [t.__name__ for t in WitnessRun.found_types]
['WitnessPuzzle', 'TripleSet', 'RulesPanel']
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from epcg.api.runs import Run, check_count, is_int
from epcg.games.witness import rule_found
from epcg.games.witness.found import TripleSet, WitnessPuzzle, kept_puzzles, stored
from epcg.kinds.keep import MAX_KEPT, band_of, band_text, covering, read_kept
from epcg.report.gallery import Group, Item, plot_axes, share, spread
from epcg.report.pictures import png_bytes
from epcg.runtime.errors import InvalidValue, UserError
from epcg.runtime.store import Vouched

TRIPLES_SHOWN = 6
"""Triples per variant in the gallery at most (each is six panels, slow to draw)."""


class WitnessRun(Run):
    """A Witness run: ``puzzles()`` of its rows, their ``solution_counts()``; a triple run's ``triples()``."""

    found_types = (WitnessPuzzle, TripleSet, rule_found.RulesPanel)
    NOTATION = "\n".join([
        "- A row such as `4x4:5` (`4x4-k5`): 4×4 panels (cells) with k = 5 must-cross hexagons; `3x4:2+4`: "
        "2 hexagons and 4 squares.",
        "- Coordinates are vertices `(x, y)`: x to the right, y up, `(0,0)` the bottom-left corner, where the path "
        "starts (the large circle); the goal is the top-right corner (the nub pointing up).",
        "- `vertex (1,0)`: a hexagon on that vertex; `edge (0,1)-(1,1)`: a hexagon on the edge between those two "
        "vertices; `cell (2,3)`: the cell whose bottom-left corner is vertex (2,3).",
        "- A solution such as `RRUURDD…`: moves from the start, one edge each (`R` right, `U` up, `L` left, "
        "`D` down), ending at the goal. `solutions`: how many paths solve the panel; `longest`: edges of the "
        "longest of them.",
        "- Pictures: the puzzle, then its solution in yellow; a panel with at most 4 solutions is drawn with every "
        "one (`solution 1 of 2`, …), and its export lists them all (`every_solution`).",
        "- Stages in `epcg plan` and `epcg status` are the rows (`4x4-k5`). More: docs/notation.md.",
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
        """Names of the Witness rows, e.g. ``['3x4-k2+4', '4x4-k3+3']``."""
        self._require("witness")
        return [row.name for row in self.config.parsed_rows()]

    def _witness_rows(self, row: str | int | None) -> list[tuple[Any, dict[str, Any]]]:
        pairs = list(zip(self.config.parsed_rows(), self.results["rows"]))
        if row is None:
            return pairs
        if is_int(row):
            if not 0 <= row < len(pairs):
                raise InvalidValue(f"run {self.name} has rows 0..{len(pairs) - 1} ({', '.join(self.rows())}), "
                                   f"not row {row}")
            return [pairs[row]]
        chosen = [(r, res) for (r, res), text in zip(pairs, self.config.rows) if row in (r.name, text)]
        if not chosen:
            raise InvalidValue(f"run {self.name} has no row {row!r}; its rows are {', '.join(self.rows())} "
                               f"(or their indices 0..{len(pairs) - 1})")
        return chosen

    def puzzles(self, row: str | int | None = None, *, solutions: int | None = None,
                length: int | str | None = None, min_length: int | None = None) -> Iterator[WitnessPuzzle]:
        """Witness puzzles, row by row in rank order.

        ``row``: a row name (``"3x4-k2+4"``), its text in the job (``"3x4:2+4"``) or
        its index; all rows by default. ``solutions``: the solution count
        (default: the row's minimum). Puzzles at the minimum, and at a count in a
        band the job kept (``keep = [{solutions = [2, 3]}]``), are read from the
        store; any other count is recomputed: the row runs again as a new run with
        that count kept, on the embedded cluster, its estimate and progress on
        stderr. ``length``: the longest solution's edges, or ``"longest"`` for the
        row's longest; ``min_length``: at least that many edges.
        """
        self._require("witness")
        kind = self.config.kind
        if kind == "paths":
            raise UserError("a paths run stores no puzzles; run must-cross, regions or joint rows")
        check_count("solutions", solutions)
        check_count("min_length", min_length)
        if length != "longest":
            check_count("length", length, "an edge count >= 0 or 'longest'")
        return self._puzzles(kind, self._witness_rows(row), solutions, length, min_length)

    def _puzzles(self, kind: str, rows: list, solutions: int | None, length: int | str | None,
                 min_length: int | None) -> Iterator[WitnessPuzzle]:
        for (row_, res), text in zip(rows, self._row_texts(rows)):
            want = res["longest_solution"] if length == "longest" else length
            with self._at_count(row_, res, text, solutions) as items:
                for rank, count, longest in items:
                    if (want is not None and longest != want) or (min_length is not None and longest < min_length):
                        continue
                    yield WitnessPuzzle(kind, row_.width, row_.height, row_.k, int(rank), row=row_.name,
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
                             f"the puzzles of {row_.name} with {solutions} solutions") as again:
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
            raise UserError(f"run {self.name} did not record the distribution of solution counts of {row_.name}")
        return pd.Series(counts_of(counts), name="puzzles").rename_axis("solutions")

    def panels(self, row: str | int | None = None, *,
               solutions: int | None = None) -> Iterator[rule_found.RulesPanel]:
        """A rules run's panels, row by row in rank order: ``row`` a row name or index (all by default),
        ``solutions`` the solution count (default: each row's minimum; another count if a ``keep`` band holds it)."""
        self._require("rules")
        check_count("solutions", solutions)
        return rule_found.panels(self, row, solutions)

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
            ranks, longest = _longest_and_spread(self.stored, row.name, n)
            k = "+".join(map(str, res["k"])) if isinstance(res["k"], list) else str(res["k"])
            group = f"{res['width']}x{res['height']} k={k}"
            puzzles = [WitnessPuzzle(self.config.kind, row.width, row.height, row.k, rank, row=row.name,
                                     solutions=res["min_solutions"], length=length)
                       for rank, length in zip(ranks, longest)]
            out.append(Group(group, res["puzzles_at_min"], [
                Item(p, group, {"board": f"{p.width}x{p.height}", "k": k, "solutions": p.solution_count,
                                "length": p.longest}) for p in puzzles]))
            for i, band in enumerate(res.get("kept") or []):
                ranks, scores, longest = read_kept(self.stored, row.name, i)
                name = f"{group}, {band_text(band_of(band['band']), 'solutions')} (kept)"
                kept = [WitnessPuzzle(self.config.kind, row.width, row.height, row.k, int(ranks[j]), row=row.name,
                                      solutions=int(scores[j]), length=int(longest[j])) for j in sorted(spread(len(ranks), n))]
                out.append(Group(name, band["matched"], [
                    Item(p, name, {"board": f"{p.width}x{p.height}", "k": k, "solutions": p.solution_count,
                                   "length": p.longest}) for p in kept]))
        return out

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


def _longest_and_spread(data: Vouched, row: str, n: int) -> tuple[list[int], list[int]]:
    """About ``n`` stored puzzles of a row: half with the longest solutions, half spread over the
    ranks, as the reduction's record vouches for them."""
    ranks, longest = data.read(f"{row}/at_min/ranks"), data.read(f"{row}/at_min/longest").astype(np.int64)
    picked = {int(ranks[i]): int(longest[i]) for i in spread(len(ranks), n - n // 2)}
    keep = np.lexsort((ranks, -longest))[: n // 2]
    picked.update(zip(ranks[keep].tolist(), longest[keep].tolist()))
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
