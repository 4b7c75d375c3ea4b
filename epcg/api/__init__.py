"""The public Python API: run a job, open a run, question and draw what it found.

>>> from epcg.api import Run, open, run
"""

from epcg.api.dwp import LevelMap
from epcg.api.fling import FlingBoard
from epcg.api.runs import Run, open, run
from epcg.api.triple import TripleSet
from epcg.api.witness import WitnessPuzzle

__all__ = ["FlingBoard", "LevelMap", "Run", "TripleSet", "WitnessPuzzle", "open", "run"]
