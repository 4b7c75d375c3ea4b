"""Experiments: the glue between a job's domain, a search driver and the runtime.

Each module here names a job ``domain`` and provides the :class:`Experiment`
interface. The runtime knows experiments only through it; domains know nothing
of either.
"""

from __future__ import annotations

import importlib
from types import ModuleType

_MODULES = {
    "witness": "epcg.experiments.witness",
    "witness-cover": "epcg.experiments.witness_cover",
    "fling": "epcg.experiments.fling",
    "dwp": "epcg.experiments.dwp",
    "triple": "epcg.experiments.triple",
}


def known_domains() -> tuple[str, ...]:
    return tuple(_MODULES)


def experiment_for(domain: str) -> ModuleType:
    """The experiment module of ``domain`` (imported on first use)."""
    return importlib.import_module(_MODULES[domain])
