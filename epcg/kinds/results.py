"""The shape of results.json of a run of a user's space (the ``scan`` and ``retrograde`` kinds), as its readers
use it (``designs()``, ``states()``, summary.md, report.html): checked whenever the file is read back."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StrictInt, StrictStr

from epcg.runtime.schemas import Number, Results, Stored

Count = Annotated[StrictInt, Field(ge=0)]
Score = Annotated[StrictStr, Field(pattern=r"^-?[0-9]+$")]
"""A score as JSON keeps an integer key: ASCII digits."""


class Ranked(Stored):
    rank: Count
    score: StrictInt


class ScanRow(Stored):
    """A row of a scan: its parameters, what it counted, and what it kept."""

    row: StrictStr
    params: dict[str, Any]
    ranks: Count
    count: Count
    ignored: Count
    min: StrictInt | None = None
    at_min: Count | None = None
    first_at_min: list[Count] = []
    max: StrictInt | None = None
    at_max: Count | None = None
    first_at_max: list[Count] = []
    top: list[Ranked] | None = None
    histogram: dict[Score, Count] | None = None
    histogram_above: Count | None = None
    kept: list[dict[str, Any]] | None = None
    seconds: Number = 0


class ScanResults(Results):
    """results.json of a scan."""

    space: StrictStr
    rows: list[ScanRow]  # type: ignore[assignment]  # a kind's results narrow the base's rows to its own


class Layer(Stored):
    """A layer of a retrograde analysis (of one row of a family)."""

    layer: StrictInt
    states: Count
    row: StrictStr = ""


class RetrogradeResults(Results):
    """results.json of a retrograde analysis: its bits, and a row per layer with a count per bit."""

    space: StrictStr
    bits: Annotated[list[StrictStr], Field(min_length=1)]
    rows: list[Layer]  # type: ignore[assignment]  # a kind's results narrow the base's rows to its own
