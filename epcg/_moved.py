"""Import paths that moved when each built-in game became one package: they still import, with a warning.

``import epcg.domains.fling.rules`` gives the module now at
``epcg.games.fling.domain.rules`` (the same module object, not a copy) and a
``DeprecationWarning`` naming the new path. These aliases stay for one release.

>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     from epcg.domains.fling.rules import Board
>>> Board.__module__, caught[0].category.__name__
('epcg.games.fling.domain.rules', 'DeprecationWarning')
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
import warnings

PACKAGES = {
    "epcg.domains.witness": "epcg.games.witness.domain",
    "epcg.domains.fling": "epcg.games.fling.domain",
    "epcg.domains.dwp": "epcg.games.dwp.domain",
}
"""Old packages whose every submodule moved with them."""

MODULES = {
    "epcg.experiments.witness_kinds": "epcg.games.witness.kinds",
    "epcg.experiments.witness": "epcg.games.witness.scans",
    "epcg.experiments.witness_cover": "epcg.games.witness.unique_cover",
    "epcg.experiments.witness_triple": "epcg.games.witness.triples",
    "epcg.experiments.witness_paper": "epcg.games.witness.paper",
    "epcg.experiments.witness_report": "epcg.games.witness.report",
    "epcg.experiments.fling": "epcg.games.fling.kind",
    "epcg.experiments.fling_evaluate": "epcg.games.fling.evaluation",
    "epcg.experiments.fling_report": "epcg.games.fling.report",
    "epcg.experiments.dwp": "epcg.games.dwp.kind",
    "epcg.experiments.dwp_report": "epcg.games.dwp.report",
    "epcg.experiments.scan": "epcg.kinds.scan",
    "epcg.experiments.retrograde": "epcg.kinds.retrograde",
    "epcg.experiments.base": "epcg.kinds.base",
    "epcg.api.witness": "epcg.games.witness.found",
    "epcg.api.triple": "epcg.games.witness.found",
    "epcg.api.fling": "epcg.games.fling.found",
    "epcg.api.dwp": "epcg.games.dwp.found",
    "epcg.api.designs": "epcg.kinds.designs",
    "epcg.api.found": "epcg.report.found",
    "epcg.api.pictures": "epcg.report.pictures",
    "epcg.figures": "epcg.report.figures",
    "epcg.report_html": "epcg.report.html",
    "epcg.dashboard": "epcg.report.dashboard",
}
"""Old modules and where each is now."""

EMPTY = ("epcg.domains", "epcg.experiments")
"""Old packages that have no successor of their own: they import as empty packages."""


def new_name(old: str) -> str | None:
    """Where the module once imported as ``old`` is now (None if it did not move).

    >>> new_name("epcg.domains.witness.paths"), new_name("epcg.runtime.plan")
    ('epcg.games.witness.domain.paths', None)
    """
    if old in MODULES:
        return MODULES[old]
    for package, moved in PACKAGES.items():
        if old == package or old.startswith(package + "."):
            return moved + old[len(package):]
    return None


class MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old import path first (before the file system) and hands out the module at its new path."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname in EMPTY:
            return importlib.util.spec_from_loader(fullname, self, is_package=True)
        if new_name(fullname) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=fullname in PACKAGES)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if spec.name in EMPTY:
            module = types.ModuleType(spec.name, "Moved: see epcg/_moved.py for where its modules are now.")
            module.__path__ = []
            return module
        new = new_name(spec.name)
        warnings.warn(f"{spec.name} moved to {new}; the old path goes in the next release",
                      DeprecationWarning, stacklevel=2)  # warnings skips importlib's frames
        return importlib.import_module(new)

    def exec_module(self, module: types.ModuleType) -> None:
        """The module at the new path is already executed."""


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedFinder())
