"""Level maps by "do what's possible" (Ashlock & Salge): one game, one package.

- ``domain/``: self-driving automata, the map builder, the study's experiments, pictures
  (never Dask, Zarr or the runtime);
- ``kind.py``: the job kind registered as ``dwp`` (one task per evolutionary run),
  ``report.py`` summary.md and figures;
- ``found.py``: the best maps, ``run.py`` the :class:`~epcg.api.Run` a study opens as.
"""
