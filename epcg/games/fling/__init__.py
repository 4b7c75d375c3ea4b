"""Fling! (Sturtevant & Ota 2018): one game, one package.

- ``domain/``: the rules, the retrograde layer kernels, the symmetry, the expert evaluator
  and pictures (never Dask, Zarr or the runtime);
- ``kind.py``: the job kind registered as ``fling`` (every layer by retrograde analysis),
  ``evaluation.py`` its evaluation stages, ``report.py`` summary.md and figures;
- ``found.py``: the boards a run found, ``run.py`` the :class:`~epcg.api.Run` a Fling! run
  opens as (``boards()``, ``ratio_histogram()``, its part of report.html).
"""
