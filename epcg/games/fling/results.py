"""The shape of a Fling! run's results.json, as its readers use it (``run.top()``, ``best_boards()``, the
distributions, summary.md and report.html): checked whenever the file is read back."""

from __future__ import annotations

from typing import Annotated, Any

import pydantic
from pydantic import Field, StrictBool, StrictInt, StrictStr

from epcg.runtime.schemas import Number, Results, Stored

Count = Annotated[StrictInt, Field(ge=0)]
Key = Annotated[StrictStr, Field(pattern=r"^-?[0-9]+$")]
"""A histogram's bin or a solution count, as JSON keeps an integer key: ASCII digits."""
Bound = Number | None


class Layer(Stored):
    """A row of the table: one layer (boards with ``pieces`` pieces)."""

    pieces: Count
    boards: Count
    solvable: Count
    unique: Count


class Puzzle(Stored):
    """One of the best boards: its rank in its layer and how the expert scored it."""

    rank: Count
    ratio: Number
    brute_force_nodes: Count
    expert_nodes: Count
    solution: StrictStr
    boards: Count | None = None
    pattern: StrictStr | None = None
    copies: Count | None = None


class Tie(pydantic.BaseModel):
    """The highest ratio of the deepest layer, and the boards and orbits that share it (exactly these keys:
    ``run.top()`` is made of them)."""

    model_config = pydantic.ConfigDict(extra="forbid")

    ratio: Number
    boards: Count
    orbits: Count
    patterns: Count | None = None
    """Distinct puzzles among them (docs/notation.md); absent where a task's tie was too large to list."""


class Histogram(Stored):
    """A layer's expert ratios (bins of ``bin_width``) or solution counts, over ``boards`` boards."""

    pieces: Count
    exact: StrictBool = True
    boards: Count
    counts: dict[Key, Count]
    bin_width: Annotated[Number, Field(gt=0)] | None = None


class Kept(Stored):
    """A band of a layer kept in full (job key ``keep``)."""

    pieces: Count
    band: tuple[Bound, Bound]
    kept: Count
    cut: StrictBool
    exact: StrictBool
    orbits: Count
    boards: Count
    store: StrictStr


class FlingResults(Results):
    """results.json of a Fling! run. An evaluated run (``evaluated``) whose job asked for the best boards
    (``top_puzzles``) has them: without ``puzzles`` the file is damaged, not a run that found none."""

    rows: list[Layer]  # type: ignore[assignment]  # a kind's results narrow the base's rows to its own
    evaluated: Count | None = None
    evaluated_fraction: Number | None = None
    evaluate_seconds: Number | None = None
    puzzles: list[Puzzle] | None = None
    top_tie: Tie | None = None
    ratio_histograms: list[Histogram] | None = None
    solution_counts: list[Histogram] | None = None
    kept: list[Kept] | None = None

    @pydantic.model_validator(mode="after")
    def _evaluated(self, info: pydantic.ValidationInfo) -> Any:
        config = (info.context or {}).get("config")
        asked = getattr(config, "top_puzzles", None)
        if self.evaluated is not None and asked and self.puzzles is None:
            raise ValueError("an evaluated run's best boards ('puzzles') are missing")
        if self.ratio_histograms and any(h.bin_width is None for h in self.ratio_histograms):
            raise ValueError("a ratio histogram has no bin_width")
        return self
