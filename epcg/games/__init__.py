"""The built-in games, each one package laid out the way a plugin is.

A game package (``witness``, ``fling``, ``dwp``) holds

- ``domain/``: its rules as small values, numba kernels and pictures. It imports
  only ``epcg.combinatorics``, ``epcg.search``, ``epcg.report.figures``, numpy,
  numba and matplotlib: never Dask, Zarr, the runtime, the kinds or another game;
- its job kind (``kind.py``; the Witness: ``kinds.py`` and its variants), a
  :class:`~epcg.runtime.kind.JobKind` subclass registered under ``epcg.jobs`` in
  ``pyproject.toml``, and its summary.md and figures (``report.py``);
- what its runs found (``found.py``) and the :class:`~epcg.api.Run` class its runs open
  as (``run.py``: its methods, its report.html gallery and plots), registered under
  ``epcg.runs``.

Outside ``domain/`` a game uses what a plugin can: ``epcg.search``,
``epcg.combinatorics``, ``epcg.kinds``, ``epcg.runtime``'s plan and store, ``epcg.report``
and ``epcg.api.runs``. Nothing outside a game's package imports it; the runtime, the
CLI and the API find it through the registry. ``tests/test_layering.py`` checks all of this.
"""
