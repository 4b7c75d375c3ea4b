"""The Witness (Sturtevant, Exploring EPCG in The Witness): one game, one package.

- ``domain/``: the rules, numba kernels and pictures (never Dask, Zarr or the runtime);
- ``kinds.py``: the job kind registered as ``witness`` (its variants: ``scans.py``, ``triples.py``,
  ``unique_cover.py``), ``paper.py`` the paper's columns, ``report.py`` summary.md and figures;
- ``found.py``: what a run found (puzzles, triple sets), ``gallery.py`` their part of report.html,
  ``run.py`` the :class:`~epcg.api.Run` a Witness run opens as.

For spaces of one's own on Witness panels (``examples/must-cross``): :func:`crossing_bitsets`,
:func:`must_cross_figure`.
"""

from epcg.games.witness.domain.must_cross import crossing_bitsets, must_cross_figure

__all__ = ["crossing_bitsets", "must_cross_figure"]
