"""``epcg.run`` and ``epcg.open``: a run directory as a Python object a designer can question.

``run`` has the semantics of ``epcg run``: the job is validated, a new run
directory is laid out, or an existing one holding the same job is resumed, and
bad input raises :class:`~epcg.runtime.errors.UserError` with the message the
CLI prints. It runs through the same engine as the command line
(:mod:`epcg.runtime.engine`): a small job in this process, a larger one on the
embedded Dask cluster or the one named, its progress on the dashboard at
``/epcg`` (:mod:`epcg.report.dashboard`).

>>> import tempfile, epcg
>>> out = tempfile.mkdtemp() + "/paths"
>>> job = {"name": "paths", "domain": "witness", "kind": "paths", "rows": ["2x2", "3x3"]}
>>> r = epcg.run(job, out, progress=False)
>>> r.table()[["width", "height", "paths"]].to_dict("records")
[{'width': 2, 'height': 2, 'paths': 12}, {'width': 3, 'height': 3, 'paths': 184}]
>>> epcg.open(out).table().shape[0]
2
>>> epcg.run(job, out, progress=False, rows=["2x2"])
Traceback (most recent call last):
...
epcg.runtime.errors.UserError: run directory ... holds another job ...
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import json
import numbers
import os
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from epcg.api.probe import Probe
from epcg.report.found import Found
from epcg.report.gallery import Group
from epcg.runtime.engine import Engine, Hooks
from epcg.runtime.errors import InvalidValue, NotThisKind, UserError, one_line
from epcg.runtime.jobs import Job
from epcg.runtime.progress import Callback
from epcg.runtime.readout import FINISHED, Readout, outputs_written
from epcg.runtime.registry import kinds_with_run_types, may_import, reading, run_type
from epcg.runtime.shell import command
from epcg.runtime.outputs import RESULTS, SUMMARY
from epcg.runtime.records import Vouched
from epcg.runtime.store import RunDir
from epcg.runtime.text import shown
from epcg.runtime.verification import open_run

__all__ = ["Run", "open", "run"]


def run(job: str | os.PathLike[str] | dict[str, Any], out: str | os.PathLike[str] | None = None,
        client: Any = None, *, progress: bool = True, cluster: str | os.PathLike[str] | None = None,
        workers: int | None = None, serial: bool = False, report: bool = True, **overrides: Any) -> Run:
    """Run ``job`` (a job file or its data) in ``out`` (default ``runs/<name>``) and open the result.

    It is ``epcg run`` (the same engine): the same checks, refusals, notes, memory fit and outputs. Where the
    tasks run is chosen as the command line chooses it: ``client`` (a ``distributed.Client``, or a
    scheduler's address as ``--scheduler`` takes it), ``cluster`` (a cluster file, as ``--cluster``),
    ``workers`` (``--workers``), ``serial=True`` (``--serial``); with none of them a small job runs in this
    process and a larger one on the embedded Dask cluster. Keyword arguments override job keys, as ``--set``
    does (``**{"a.b": 1}`` for a nested key). If ``out`` already holds this job, only its unfinished chunks
    are computed (nothing at all when it is finished); if it holds another job, a UserError says so.
    ``progress=False`` shows no progress bar and prints nothing; ``report=False`` writes no report.html.
    """
    import sys

    from epcg.runtime.engine import NEW, Options, target
    from epcg.runtime.progress import TqdmProgress, interval

    if not isinstance(job, (str, os.PathLike, dict)):
        raise InvalidValue(f"job must be a job file's path or its data as a dict, got {type(job).__name__}")
    for flag, value in (("progress", progress), ("report", report)):
        if not isinstance(value, bool):
            raise InvalidValue(f"{flag} must be True or False, got {value!r}")
    where = target(cluster_file=cluster, workers=workers, serial=serial, client=client)
    say = (lambda line: print(shown(line), file=sys.stderr)) if progress else (lambda line: None)
    runner = engine(say, (), report)
    runner.progress = (lambda done: TqdmProgress(done)) if progress else None
    runner.progress_every = interval() if progress else None
    validated = runner.load(job, list(overrides.items()), where)
    path = out if out is not None else Path("runs") / validated.name
    decision, planned = runner.resolve(validated, path, Options())
    if decision != FINISHED:
        runner.run(planned, decision == NEW, where)
    return Run(path, trust_space=True)


def engine(say: Callable[[str], None] = lambda line: None, callbacks: Sequence[Callback] = (),
           report: bool = True) -> Engine:
    """The run engine as ``epcg.run`` and the command line use it: it writes report.html at the end of a run
    (unless ``report`` is False) and shows the run's progress on the Dask dashboard (what only the layers above
    the runtime can do)."""
    hooks = Hooks(publish=_publish if report else Hooks.publish, dashboard_page=_dashboard_page)
    return Engine(say=say, callbacks=callbacks, hooks=hooks)


def _publish(run_dir: RunDir) -> str:
    from epcg.report.html import write_report

    return str(write_report(Run(run_dir.location.where, trust_space=may_import())))


def _dashboard_page(client: Any, where: str) -> str | None:
    from epcg.report.dashboard import register

    return register(client, where)


def open(path: str | os.PathLike[str], *, trust_space: bool = False) -> Run:  # noqa: A001 - reads like the builtin
    """Open the run directory ``path`` (finished, or stopped part way).

    Opening and reading a run never imports or runs code its job.toml names: what a run of a user's space
    found is listed from the stored data (a design by its rank and score). ``trust_space=True`` is the
    user saying the space is theirs: it is imported as ``epcg run`` imports it (from an installed package or
    ``PYTHONPATH``, never from the current directory Python put on its path itself), so designs are decoded
    and drawn and a retrograde run's states listed."""
    return Run(path, trust_space=trust_space)


class Run:
    """A run directory: its job, its tables, and what it found (iterate, filter, draw, export).

    ``Run(path)`` opens as the class its job kind registers under the ``epcg.runs`` entry-point group
    (a Fling! run is a :class:`~epcg.games.fling.run.FlingRun`, with ``boards()``); a kind without one
    opens as this class. A kind's class names the method that lists what its runs found (``FOUND``), the
    types of those objects (``found_types``), and fills report.html's gallery (``gallery``, ``plots``,
    ``FILTERS``).
    """

    FOUND: str | None = None
    """The method listing everything a run of this kind found (``epcg export`` calls it with ``--where``)."""
    found_types: tuple[type[Found], ...] = ()
    """The types of the objects ``FOUND`` yields."""
    FILTERS: tuple[tuple[str, str, str], ...] = ()
    """report.html's gallery filters: ``(attribute, label, "select" | "min")``."""
    NOTATION: str = ""
    """Markdown that report.html shows under "How to read this": the names its tables and pictures use."""

    dir: RunDir
    job: Job

    def __new__(cls, path: str | os.PathLike[str], trust_space: bool = False) -> Run:
        """Open ``path`` once, reading its job, and make the run an instance of the class its kind registers;
        ``trust_space`` (see :func:`open`) lets its readers import the space its job names."""
        if not isinstance(trust_space, bool):
            raise InvalidValue(f"trust_space must be True or False, got {trust_space!r}")
        run_dir = open_run(path)
        job = run_dir.read_job()
        if cls is Run:
            cls = run_type(job.domain) or Run
        run = super().__new__(cls)
        run.dir, run.job, run._trusted = run_dir, job, trust_space
        return run

    def _reading(self) -> contextlib.AbstractContextManager[None]:
        """The scope of a reader of this run: the space its job names is imported only if it was trusted."""
        return reading(self._trusted)

    path = property(lambda self: self.dir.path, doc="The run directory.")
    trusted = property(lambda self: self._trusted, doc="Whether readers may import the space its job names.")
    name = property(lambda self: self.job.name, doc="The job's name.")
    config = property(lambda self: self.job.config, doc="The validated job (a pydantic model).")

    @property
    def domain(self) -> str:
        """What the run explores: its job kind (witness, fling, dwp, scan, retrograde, or a plugin's), or a
        kind's variant (Witness: triple, unique-cover)."""
        return self.job.domain

    def __repr__(self) -> str:
        state = "finished" if self.finished else "unfinished"
        return f"<epcg.Run {self.name} ({self.domain}) at {self.path}: {state}>"

    def __getattr__(self, name: str) -> Any:
        """A method of another kind's runs (``boards`` on a Witness run) is an error naming both kinds (still an
        AttributeError, so ``hasattr`` is False)."""
        if not name.startswith("_"):
            owners = [kind for kind, cls in kinds_with_run_types() if callable(getattr(cls, name, None))]
            if owners:
                raise NotThisKind(f"run {self.name} is a {self.domain} run, not a {' or '.join(owners)} run "
                                  f"(it has no {name}())")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def finished(self) -> bool:
        """True once results.json, summary.md and report.html are written (the state ``epcg status`` calls
        finished)."""
        return outputs_written(self.dir)

    def readout(self) -> Readout:
        """The run's state, chunks done, CPU seconds, length and time left now: the figures ``epcg status``, the
        terminal and the progress page show."""
        from epcg.runtime.status import run_status

        return run_status(self.dir.location.where).readout

    @cached_property
    def results(self) -> dict[str, Any]:
        """results.json as plain data (there once the run's reduction wrote it, before its report)."""
        if not self.dir.has(RESULTS):
            self.dir.check_present()
            raise UserError(f"run {self.path} has no results yet: finish it with epcg.run or "
                            f"{command('resume', self.path)}")
        from epcg.runtime.registry import job_kind

        try:
            results = self.dir.read_json(RESULTS, job_kind(self.job.domain).Results,
                                         f"{command('report', self.path)} writes it again", {"config": self.job.config})
        except OSError as exc:
            raise UserError(f"{self.dir.outputs.results_path} cannot be read ({one_line(exc)}): "
                            f"{command('report', self.path)} writes it again") from None
        if results is None:
            raise UserError(f"run {self.path} has no results yet: finish it with epcg.run or "
                            f"{command('resume', self.path)}")
        return results

    @cached_property
    def stored(self) -> Vouched:
        """The run's arrays as its records vouch for them: every reader of what the run found reads through this
        (an unfinished layer or row is refused in one line, damaged bytes are one line naming the chunk)."""
        from epcg.runtime.tuning import plan_of_run

        with self._reading():
            plan = plan_of_run(self.dir, self.job)
        return self.dir.records.vouched(plan.tasks())

    @property
    def summary(self) -> str:
        """summary.md, the paper-style tables."""
        return self.dir.read_text(SUMMARY) or ""

    def figures(self) -> list[Path]:
        """The PNG figures the run's report wrote."""
        return sorted(self.dir.outputs.local_figures().glob("*.png"))

    def table(self):
        """results.json's rows as a pandas DataFrame, one row per table row."""
        import pandas as pd

        return pd.DataFrame(self._table_rows())

    def _table_rows(self) -> list[dict[str, Any]]:
        """The rows :meth:`table` shows (a kind whose results.json names them otherwise says so)."""
        return list(self.results["rows"])

    def _repr_html_(self) -> str:
        return f"<p><b>{self.name}</b> ({self.domain}) at <code>{self.path}</code></p>" + self.table()._repr_html_()

    # -- what the run found -------------------------------------------------

    def found(self, limit: int | None = None, **filters: Any) -> Iterator[Found]:
        """Everything the run found, whatever its kind (filters as in the kind's ``FOUND`` method)."""
        if self.FOUND is None:
            raise UserError(f"runs of kind {self.domain!r} have no found objects to list")
        chosen = getattr(self, self.FOUND)
        known = [name for name in inspect.signature(chosen).parameters]
        unknown = [name for name in filters if name not in known]
        if unknown:
            raise InvalidValue(f"{self.domain} runs have no filter {unknown[0]!r}; the filters are {', '.join(known)}")
        yield from itertools.islice(chosen(**filters), limit)

    def _require(self, domain: str) -> None:
        """Refuse a method of one variant of a kind on a run of another (a Witness triple run's ``puzzles``)."""
        if self.domain != domain:
            raise UserError(f"run {self.name} is a {self.domain} run, not a {domain} run")

    def gallery(self, items: int) -> list[Group]:
        """report.html's gallery: about ``items`` found objects in groups (none for this kind)."""
        return []

    def probe(self, puzzle: Any) -> Probe:
        """What this run knows of one puzzle the user gives in the kind's notation (``epcg probe RUN PUZZLE``):
        whether it is solvable, its solution count, score, rank, whether the run kept it, its solutions drawn.
        A puzzle that is not legal is an InvalidValue naming the problem."""
        raise UserError(f"runs of kind {self.domain!r} cannot probe a puzzle")

    def plots(self, groups: list[Group]) -> list[tuple[str, bytes]]:
        """report.html's plots of the run's distributions beyond its figures, as ``(title, PNG)`` (none here)."""
        return []

    @contextlib.contextmanager
    def recomputed(self, changes: dict[str, Any], what: str) -> Iterator[Run]:
        """This run's job with ``changes`` (job keys), run anew in a temporary directory and opened: for a question
        outside what the run kept (``what`` names it). It goes through the same engine as ``epcg run``, on the
        embedded cluster unless the job is small, printing its plan's estimate and its progress on stderr; the
        directory is removed when the block ends."""
        import sys
        import tempfile

        job = {**self.job.to_dict(), **changes}
        with tempfile.TemporaryDirectory(prefix="epcg-recompute-") as tmp:
            print(shown(f"note: run {self.name} did not keep {what}: recomputing it as a new run of its job with "
                  f"{', '.join(f'{k} = {json.dumps(v)}' for k, v in changes.items())} in {tmp} (TMPDIR chooses "
                  "where; removed afterwards; a job's keep = [...] keeps a band for instant queries)"), file=sys.stderr)
            with self._reading():  # the run's job, run again: its space is imported only if it was trusted
                again = run(job, Path(tmp) / self.name, report=False)
            yield again

    # -- leaving epcg ---------------------------------------------------------

    def report(self) -> Path | str:
        """Write DIR/report.html (self-contained: open it in any browser) and return its path or URL."""
        from epcg.report.html import write_report

        with self._reading():
            return write_report(self)

    def default_export(self) -> Path:
        """Where ``epcg export`` writes without ``--out``: RUN_DIR/export, or ./<job name>-export for a URL run."""
        return self.path / "export" if isinstance(self.path, Path) else Path(f"{self.name}-export")

    def export(self, path: str | os.PathLike[str], *, limit: int | None = 1000, pictures: str | None = "png",
               **filters: Any) -> Path:
        """Write what the run found as JSON lines (one object per line) plus pictures; see :mod:`epcg.api.export`.

        At most ``limit`` objects (1,000, as ``epcg export``; None for all of them, a picture each): when more
        match, a warning says so. Returns the path of found.jsonl.
        """
        import warnings

        from epcg.api.export import export

        if not isinstance(path, (str, os.PathLike)):
            raise InvalidValue(f"export needs a directory to write to (a path), got {path!r}")
        with self._reading():
            done = export(self, Path(path), limit=limit, pictures=pictures, **filters)
        if done.cut:
            warnings.warn(f"run {self.name} found more than {limit:,} that match; these are the first {limit:,} "
                          "(limit=N for more, limit=None for all, filters to choose)", stacklevel=2)
        if done.undrawn:
            warnings.warn(f"run {self.name}: its objects are listed by rank, without text, their pictures naming "
                          "them only: the space is the job's code, and reading a run never imports it; "
                          "epcg.open(DIR, trust_space=True) draws them", stacklevel=2)
        return done.path


def is_int(value: Any) -> bool:
    """An integer (numpy's too), not a boolean."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def check_count(name: str, value: Any, what: str = "a count >= 0") -> None:
    """Refuse a filter value that is not None and not ``what`` (an integer >= 0)."""
    if value is not None and not (is_int(value) and value >= 0):
        raise InvalidValue(f"{name} must be {what}, got {value!r}")
