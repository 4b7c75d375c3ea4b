"""The shape of results.json of a do-what's-possible study, as its readers use it (``maps()``, the gallery,
summary.md, the figures): checked whenever the file is read back, with a row per experiment the job selects."""

from __future__ import annotations

from typing import Annotated, Any

import pydantic
from pydantic import Field, StrictBool, StrictInt, StrictStr

from epcg.runtime.schemas import Number, Results, Stored

Count = Annotated[StrictInt, Field(ge=0)]


class MapRun(Stored):
    """One evolutionary run: its seed, its best map's fitness and rooms."""

    run: Count
    seed: StrictInt
    best_fitness: Number
    rooms: Count


class Experiment(Stored):
    """One experiment of the study: its parameters, every run's best fitness, and the runs."""

    experiment: StrictInt
    population: Count
    mnm: Count
    states: Count
    recent_room_hack: StrictBool
    grid: tuple[Annotated[StrictInt, Field(gt=0)], Annotated[StrictInt, Field(gt=0)]]
    max_rooms: Count
    mating_events: Count
    note: StrictStr
    runs: Count
    median: Number
    mean: Number
    min: Number
    max: Number
    fitness: list[Number]
    per_run: list[MapRun]
    seconds: Number = 0

    @pydantic.model_validator(mode="after")
    def _one_fitness_per_run(self) -> Experiment:
        if not len(self.fitness) == len(self.per_run) == self.runs:
            raise ValueError(f"{self.runs} runs, {len(self.fitness)} fitness values, {len(self.per_run)} run records")
        return self


class Finding(Stored):
    """A finding of the paper, checked against the study's figures."""

    claim: StrictStr
    holds: StrictBool
    evidence: StrictStr


class DwpResults(Results):
    """results.json of a study: an experiment per selected row, and the findings it could check."""

    rows: list[Experiment]  # type: ignore[assignment]  # a kind's results narrow the base's rows to its own
    findings: list[Finding]

    @pydantic.model_validator(mode="after")
    def _every_experiment(self, info: pydantic.ValidationInfo) -> Any:
        config = (info.context or {}).get("config")
        if config is not None and len(self.rows) != len(config.selected()):
            raise ValueError(f"rows: {len(self.rows)} where the job has {len(config.selected())}")
        return self
