"""The public Python API: run a job, open a run, question and draw what it found.

``FlingBoard``, ``LevelMap``, ``TripleSet`` and ``WitnessPuzzle`` are the found
objects of the built-in games, looked up through the registry (each game's
``epcg.runs`` class lists them) on first use.

>>> from epcg.api import Run, open, run
>>> from epcg.api import FlingBoard
>>> FlingBoard.__module__
'epcg.games.fling.found'
"""

from typing import Any

from epcg.api.runs import Run, open, run

FOUND_BY_KIND = {"FlingBoard": "fling", "LevelMap": "dwp", "TripleSet": "witness", "WitnessPuzzle": "witness"}
"""The built-in games' found-object types, by the job kind whose runs find them."""

__all__ = ["FlingBoard", "LevelMap", "Run", "TripleSet", "WitnessPuzzle", "open", "run"]


def __getattr__(name: str) -> Any:
    if name in FOUND_BY_KIND:
        from epcg.runtime.registry import run_type

        return next(t for t in run_type(FOUND_BY_KIND[name]).found_types if t.__name__ == name)
    raise AttributeError(f"module 'epcg.api' has no attribute {name!r}")
