"""The generic job kinds and what every job kind builds on.

- ``scan`` (:mod:`.scan`) walks any :class:`~epcg.search.ScanSpace` a job names by import path,
  ``retrograde`` (:mod:`.retrograde`) any :class:`~epcg.search.RetrogradeSpace`; both are
  :class:`~epcg.runtime.kind.JobKind` subclasses (``ScanKind``, ``RetrogradeKind``) registered
  in ``pyproject.toml`` under ``epcg.jobs`` exactly as a third-party kind would be, and their runs
  open as :mod:`.runs`' classes (``epcg.runs``), their found objects in :mod:`.designs`.
- Their helpers are public for every kind, built-in game or plugin: :class:`.base.JobConfig`
  (the keys every job has), ``stage_records``, the scan partials' storage
  (``store_partial``, ``merge_stage``, ``histogram_json``) and the retrograde stages, arrays
  and tasks (``stages``, ``create_arrays``, ``solve_task``, ``layer_rows``).
"""
