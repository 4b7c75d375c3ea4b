"""The ``witness`` job kind: the scans of :mod:`epcg.games.witness.scans`, the triple panels of
:mod:`epcg.games.witness.triples`, the unique covers of :mod:`epcg.games.witness.unique_cover` and the
panels of the game's own symbols of :mod:`epcg.games.witness.rule_scans`, chosen by the job file's ``kind``.

A job file with ``domain = "witness"`` and ``kind = "triple"`` is a triple-panel
search (paper Algorithm 6), ``kind = "unique-cover"`` a search for the fewest
must-cross hexagons leaving one solution (branch and bound over paths), ``kind = "rules"``
a scan of panels with any mix of the game's symbols; any
other ``kind`` (paths, must-cross, regions, joint) a scan (Algorithm 1). Each
module is a job kind of its own, with its own schema; :class:`WitnessKind` only picks
one, from the job's data when validating and from the config's type afterwards.

>>> WitnessKind().validate({"name": "t", "domain": "witness", "kind": "unique-cover", "boards": ["3x3"]}).tasks
32
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args

import pydantic

from epcg.games.witness.results import WitnessResults
from epcg.games.witness.rule_scans import RulesKind
from epcg.games.witness.scans import COARSEN, Kind, ScansKind
from epcg.games.witness.triples import TriplesKind
from epcg.games.witness.unique_cover import UniqueCoverKind
from epcg.runtime.kind import JobKind
from epcg.runtime.plan import Plan, Task
from epcg.runtime.store import RunDir

SCANS = ScansKind()
"""The scans: every ``kind`` but those of :data:`VARIANTS`."""
VARIANTS: dict[str, JobKind] = {"triple": TriplesKind(), "unique-cover": UniqueCoverKind(), "rules": RulesKind()}
"""The kinds that are not scans, by the job's ``kind``."""

KINDS = (*get_args(Kind), *VARIANTS)
"""Every ``kind`` a Witness job may name."""


def _chosen(config: Any) -> JobKind:
    """The variant that validated ``config``."""
    return next((k for k in VARIANTS.values() if isinstance(config, k.Config)), SCANS)


class WitnessKind(JobKind):
    """The ``witness`` job kind: each hook is that of the variant the job's ``kind`` names."""

    Config = SCANS.Config
    """The scans' schema (:meth:`schema_for` picks the variant's)."""
    Results = WitnessResults
    """The shape of results.json, for whichever variant the job names."""
    COARSEN = COARSEN
    """Chunk keys the runtime may scale (the scans' and rules'; triple and unique-cover jobs have none of them)."""

    def schema_for(self, data: Any) -> type[pydantic.BaseModel]:
        kind = data.get("kind") if isinstance(data, dict) else None
        if isinstance(kind, str) and kind not in KINDS:
            raise pydantic.ValidationError.from_exception_data("witness", [{
                "type": "literal_error", "loc": ("kind",), "input": kind,
                "ctx": {"expected": ", ".join(repr(k) for k in KINDS[:-1]) + f" or {KINDS[-1]!r}"}}])
        return VARIANTS.get(kind, SCANS).Config if isinstance(kind, str) else SCANS.Config

    def plan(self, config: Any) -> Plan:
        return _chosen(config).plan(config)

    def run_task(self, config: Any, task: Task, run: RunDir) -> dict[str, Any]:
        return _chosen(config).run_task(config, task, run)

    def reduce(self, config: Any, plan: Plan, records: dict[str, dict[str, Any]], run: RunDir) -> dict[str, Any]:
        return _chosen(config).reduce(config, plan, records, run)

    def report(self, config: Any, results: dict[str, Any], run: RunDir) -> tuple[str, list[Path]]:
        return _chosen(config).report(config, results, run)

    def warm_up(self, config: Any) -> None:
        _chosen(config).warm_up(config)

    def prepare(self, config: Any, run: RunDir) -> None:
        _chosen(config).prepare(config, run)

    def cleanup(self, config: Any, run: RunDir) -> None:
        _chosen(config).cleanup(config, run)

    def notes(self, config: Any) -> Sequence[str]:
        return _chosen(config).notes(config)

    def estimate(self, config: Any) -> dict[str, Any] | None:
        return _chosen(config).estimate(config)

    def estimate_basis(self, config: Any) -> str | None:
        return _chosen(config).estimate_basis(config)

    def plan_notes(self, config: Any) -> Sequence[str]:
        return _chosen(config).plan_notes(config)

    def check_slice(self, config: Any) -> None:
        _chosen(config).check_slice(config)
