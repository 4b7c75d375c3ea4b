"""Small finished runs, made once per test session through the public API, for the workbench tests."""

from __future__ import annotations

import tempfile
from functools import cache
from pathlib import Path

import epcg

JOBS = {
    "witness": {"name": "w", "domain": "witness", "kind": "must-cross", "rows": ["2x2:2", "3x3:3"],
                "chunk_size": 2000, "figures_per_row": 4},
    "fling": {"name": "f", "domain": "fling", "width": 4, "height": 4, "max_pieces": 4, "chunk_words": 8,
              "top_puzzles": 3, "evaluate_chunk_words": 8, "symmetry": False},
    "triple": {"name": "t", "domain": "witness", "kind": "triple", "width": 3, "height": 2, "pieces": 2, "tasks": 2, "reported": 4},
    "dwp": {"name": "d", "domain": "dwp", "runs": 2, "mating_events": 20,
            "experiments": [{"id": 1, "population": 10, "mnm": 1, "states": 4, "grid": [30, 30], "max_rooms": 40},
                            {"id": 2, "population": 10, "mnm": 3, "states": 4, "grid": [30, 30], "max_rooms": 40}]},
}


SLOW = {"triple", "dwp"}
"""Domains whose small run takes long enough (compiling, building the problem) to keep its tests in -m slow."""


@cache
def small_run(domain: str) -> epcg.Run:
    """A finished run of ``domain``'s small job in a fresh temporary directory."""
    return epcg.run(JOBS[domain], Path(tempfile.mkdtemp(prefix="epcg-wb-")) / domain, progress=False)
