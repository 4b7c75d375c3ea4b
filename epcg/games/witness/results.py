"""The shape of results.json of a Witness run, for each of its kinds, as its readers use it (``top()``,
``found()``, ``probe()``, summary.md, report.html): checked whenever the file is read back.

A Witness job's ``kind`` picks the shape: a scan (paths, must-cross, regions, joint, rules) has a row per row of
the job, a triple search a row per variant, a unique-cover search a board per board. The job's config (the
context every reader passes) says which, and how many rows the file must hold: readers pair the job's rows with
the file's, so a row missing is a damaged file, not a shorter table.
"""

from __future__ import annotations

from typing import Annotated, Any

import pydantic
from pydantic import Field, StrictBool, StrictInt, StrictStr

from epcg.runtime.schemas import Number, Results, Stored

Count = Annotated[StrictInt, Field(ge=0)]


class PathsRow(Stored):
    """A row of the paths kind: a board and its number of paths."""

    width: Count
    height: Count
    paths: Count
    listed: StrictBool = False
    seconds: Number = 0


class PanelRow(Stored):
    """A row of a panel scan (must-cross, regions, joint, rules): what it counted and what it kept."""

    width: Count
    height: Count
    puzzles: Count
    examined: Count
    solvable: Count
    min_solutions: Count
    puzzles_at_min: Count
    longest_solution: Count
    puzzles_at_longest: Count
    seconds: Number = 0
    store: StrictStr | None = None
    first: list[dict[str, Any]] = []
    solution_counts: dict[Annotated[StrictStr, Field(pattern=r"^[0-9]+$")], Count] | None = None
    kept: list[dict[str, Any]] | None = None


class ScanRow(PanelRow):
    """A row of must-cross, regions or joint: its symbol count (a joint row's hexagons and squares) and positions."""

    k: Count | tuple[Count, Count]
    positions: Count


class RulesRow(PanelRow):
    """A row of the game's own symbols: its name and what it places."""

    name: StrictStr
    symbols: dict[StrictStr, Any]


class TripleRow(Stored):
    """A variant of a triple-panel search and its best triples."""

    variant: StrictStr
    width: Count
    height: Count
    optimal_triples: Count
    triples: list[dict[str, Any]]
    seconds: Number = 0


class CoverBoard(Stored):
    """A board of a unique-cover search: the fewest hexagons leaving one solution, and its panels."""

    width: Count
    height: Count
    k: Count | None
    classes: Count
    seconds: Number = 0
    first: list[dict[str, Any]] = []


_ROWS: dict[str, type[Stored]] = {"paths": PathsRow, "must-cross": ScanRow, "regions": ScanRow, "joint": ScanRow,
                                  "rules": RulesRow, "triple": TripleRow}
"""Each kind's row (a unique-cover search has boards instead)."""


class WitnessResults(Results):
    """results.json of a Witness run: ``rows`` of the job's kind (one per job row, or per triple variant), or the
    ``boards`` of a unique-cover search."""

    rows: list[dict[str, Any]] | None = None  # type: ignore[assignment]  # a unique-cover search has boards
    boards: list[CoverBoard] | None = None

    @pydantic.model_validator(mode="after")
    def _of_its_kind(self, info: pydantic.ValidationInfo) -> Any:
        config = (info.context or {}).get("config")
        kind = getattr(config, "kind", None)
        if kind == "unique-cover":
            _expect(self.boards, "boards", len(config.boards))  # type: ignore[union-attr]
        elif kind in _ROWS:
            expected = len(config.variants) if kind == "triple" else len(config.rows)  # type: ignore[union-attr]
            _expect(self.rows, "rows", expected)
            try:
                pydantic.TypeAdapter(list[_ROWS[kind]]).validate_python(self.rows)  # type: ignore[valid-type]
            except pydantic.ValidationError as exc:
                error = exc.errors(include_url=False)[0]
                raise ValueError(f"rows.{'.'.join(map(str, error['loc']))}: {error['msg']}") from None
        elif self.rows is None and self.boards is None:
            raise ValueError("neither rows nor boards")
        return self


def _expect(items: list[Any] | None, key: str, count: int) -> None:
    if items is None:
        raise ValueError(f"{key}: Field required")
    if len(items) != count:
        raise ValueError(f"{key}: {len(items)} where the job has {count}")
