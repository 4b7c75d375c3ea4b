"""epcg: exhaustive procedural content generation as distributed batch jobs.

The Python API (loaded on first use, so ``import epcg.games.fling.domain`` stays light)::

    import epcg
    run = epcg.run("jobs/witness-joint.toml", out="runs/joint")   # like `epcg run`
    run = epcg.open("runs/joint")                                  # a finished run
    run.table()                                                    # results.json as a DataFrame
    next(run.puzzles("3x4:2+4", length="longest"))                 # draws itself in Jupyter

>>> import epcg
>>> epcg.open.__module__
'epcg.api.runs'
"""

from typing import Any

__all__ = ["FlingBoard", "LevelMap", "Run", "TripleSet", "WitnessPuzzle", "open", "run"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        import epcg.api

        return getattr(epcg.api, name)
    raise AttributeError(f"module 'epcg' has no attribute {name!r}")
