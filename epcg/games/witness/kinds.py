"""The ``witness`` job kind: the scans of :mod:`epcg.games.witness.scans`, the triple panels of
:mod:`epcg.games.witness.triples`, the unique covers of :mod:`epcg.games.witness.unique_cover` and the
panels of the game's own symbols of :mod:`epcg.games.witness.rule_scans`, chosen by the job file's ``kind``.

A job file with ``domain = "witness"`` and ``kind = "triple"`` is a triple-panel
search (paper Algorithm 6), ``kind = "unique-cover"`` a search for the fewest
must-cross hexagons leaving one solution (branch and bound over paths), ``kind = "rules"``
a scan of panels with any mix of the game's symbols; any
other ``kind`` (paths, must-cross, regions, joint) a scan (Algorithm 1). Each
module keeps its own schema; this one only picks the module, from the job's
data when validating and from the config's type afterwards.

>>> Config.model_validate({"name": "t", "domain": "witness", "kind": "unique-cover", "boards": ["3x3"]}).tasks
32
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any, get_args

import pydantic

from epcg.games.witness import rule_scans as witness_rules
from epcg.games.witness import scans as witness
from epcg.games.witness import triples as witness_triple
from epcg.games.witness import unique_cover as witness_cover
from epcg.games.witness.results import WitnessResults
from epcg.runtime.plan import Plan, Task
from epcg.runtime.store import RunDir

_MODULES: dict[str, ModuleType] = {"triple": witness_triple, "unique-cover": witness_cover, "rules": witness_rules}
"""The kinds that are not scans, and their modules."""


KINDS = (*get_args(witness.Kind), *_MODULES)
"""Every ``kind`` a Witness job may name."""


def _schema(data: Any) -> type[pydantic.BaseModel]:
    kind = data.get("kind") if isinstance(data, dict) else None
    if isinstance(kind, str) and kind not in KINDS:
        raise pydantic.ValidationError.from_exception_data("witness", [{
            "type": "literal_error", "loc": ("kind",), "input": kind,
            "ctx": {"expected": ", ".join(repr(k) for k in KINDS[:-1]) + f" or {KINDS[-1]!r}"}}])
    return _MODULES.get(kind, witness).Config if isinstance(kind, str) else witness.Config


def _module(config: pydantic.BaseModel) -> ModuleType:
    return next((m for m in _MODULES.values() if isinstance(config, m.Config)), witness)


class Config:
    """The schema of a Witness job: that of the module its ``kind`` names (a scan's for every other kind)."""

    model_fields = {**witness.Config.model_fields, **witness_triple.Config.model_fields,
                    **witness_cover.Config.model_fields, **witness_rules.Config.model_fields}
    """Every key either schema allows (for error messages)."""

    @staticmethod
    def model_validate(data: Any) -> pydantic.BaseModel:
        return _schema(data).model_validate(data)

    schema_for = staticmethod(_schema)
    """The schema a job's data is validated with (its error messages list that schema's keys)."""


Results = WitnessResults
"""The shape of results.json, for whichever kind the job names."""

COARSEN = witness.COARSEN
"""Chunk keys the runtime may scale (the scans'; triple and unique-cover jobs have none of them)."""


def estimate(config: Any) -> dict:
    known = getattr(_module(config), "estimate", None)
    return {} if known is None else known(config)


def cleanup(config: Any, run: RunDir) -> None:
    done = getattr(_module(config), "cleanup", None)
    if done is not None:
        done(config, run)


def notes(config: Any) -> list[str]:
    known = getattr(_module(config), "notes", None)
    return [] if known is None else known(config)


def plan(config: Any) -> Plan:
    return _module(config).plan(config)


def warm_up(config: Any) -> None:
    warm = getattr(_module(config), "warm_up", None)
    if warm is not None:
        warm(config)


def run_task(config: Any, task: Task, run: RunDir) -> dict[str, Any]:
    return _module(config).run_task(config, task, run)


def reduce(config: Any, plan: Plan, records: dict[str, dict], run: RunDir) -> dict[str, Any]:
    return _module(config).reduce(config, plan, records, run)


def report(config: Any, results: dict[str, Any], run: RunDir) -> tuple[str, list[Path]]:
    return _module(config).report(config, results, run)
