"""The public Python API: run a job, open a run, question and draw what it found.

>>> from epcg.api import Run, open, run
"""

from epcg.api.runs import Run, open, run

__all__ = ["Run", "open", "run"]
