"""``epcg.run`` and ``epcg.open``: a run directory as a Python object a designer can question.

``run`` has the semantics of ``epcg run``: the job is validated, a new run
directory is laid out, or an existing one holding the same job is resumed, and
bad input raises :class:`~epcg.runtime.errors.UserError` with the message the
CLI prints. Without ``client`` it runs in this process; with a
``distributed.Client`` it runs on that cluster, and its progress shows on the
dashboard at ``/epcg`` (:mod:`epcg.dashboard`).

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

import copy
import json
import os
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Any

from epcg.api.dwp import LevelMap
from epcg.api.fling import FlingBoard, ratio_frame, set_ranks, solution_count_frame
from epcg.api.found import Found
from epcg.api.triple import TripleSet
from epcg.api.witness import WitnessPuzzle, stored, walked
from epcg.runtime.errors import UserError
from epcg.runtime.jobs import Job, apply_overrides, read_toml, validate
from epcg.runtime.session import open_run
from epcg.runtime.store import RESULTS, SUMMARY, RunDir

__all__ = ["Run", "open", "run"]


def run(job: str | os.PathLike[str] | dict[str, Any], out: str | os.PathLike[str] | None = None,
        client: Any = None, *, progress: bool = True, **overrides: Any) -> Run:
    """Run ``job`` (a job file or its data) in ``out`` (default ``runs/<name>``) and open the result.

    Keyword arguments override job keys, as ``--set`` does (``**{"a.b": 1}`` for a
    nested key). If ``out`` already holds this job, only its unfinished chunks are
    computed (nothing at all when it is finished); if it holds another job, a
    UserError says so.
    """
    from epcg.runtime.progress import TqdmProgress
    from epcg.runtime.session import claimed, prepare_new, prepare_resume, run_plan, verify

    if isinstance(job, dict):
        data, source = copy.deepcopy(job), "job"
    else:
        data, source = read_toml(Path(job)), str(job)
    validated = validate(apply_overrides(data, list(overrides.items())), source=source)
    path = out if out is not None else Path("runs") / validated.name
    existing = RunDir(path)
    new = not existing.exists()
    if not new and existing.stored_digest() != validated.digest:
        raise UserError(f"run directory {path} holds another job ({existing.job_path}); "
                        "open it with epcg.open, or pass another out")
    prepared = prepare_new(validated, path) if new else prepare_resume(path)
    if not new and existing.has(RESULTS) and not existing.is_locked():
        if len(existing.done(prepared.plan.tasks())) == prepared.plan.num_tasks:
            return Run(path)
    executor = None
    if client is not None:
        from epcg.runtime.dask_executor import DaskExecutor

        executor = DaskExecutor(client)
    callbacks = [TqdmProgress()] if progress else []
    with claimed(prepared, new):
        if client is not None:
            from epcg.dashboard import register

            register(client, prepared.run.location.where)
        if not new:
            verify(prepared)
        run_plan(prepared, executor, callbacks)
    return Run(path)


def open(path: str | os.PathLike[str]) -> Run:  # noqa: A001 - epcg.open reads like the builtin, for runs
    """Open the run directory ``path`` (finished, or stopped part way)."""
    return Run(path)


class Run:
    """A run directory: its job, its tables, and what it found (iterate, filter, draw, export)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.dir = open_run(path)
        self.job: Job = self.dir.read_job()

    path = property(lambda self: self.dir.path, doc="The run directory.")
    name = property(lambda self: self.job.name, doc="The job's name.")
    config = property(lambda self: self.job.config, doc="The validated job (a pydantic model).")

    @property
    def domain(self) -> str:
        """What the run explores: witness, triple (Witness triple panels), unique-cover (Witness panels with one
        solution, from the paths' side), fling, dwp, or another job kind."""
        kind = getattr(self.config, "kind", None)
        if self.job.domain == "witness" and kind in ("triple", "unique-cover"):
            return kind
        return self.job.domain

    def __repr__(self) -> str:
        state = "finished" if self.finished else "unfinished"
        return f"<epcg.Run {self.name} ({self.domain}) at {self.path}: {state}>"

    @property
    def finished(self) -> bool:
        """True once results.json is written."""
        return self.dir.has(RESULTS)

    @cached_property
    def results(self) -> dict[str, Any]:
        """results.json as plain data."""
        if not self.finished:
            raise UserError(f"run {self.path} has no results yet: finish it with epcg.run or 'epcg resume {self.path}'")
        return json.loads(self.dir.read_text(RESULTS))

    @property
    def summary(self) -> str:
        """summary.md, the paper-style tables."""
        return self.dir.read_text(SUMMARY) or ""

    def figures(self) -> list[Path]:
        """The PNG figures the run's report wrote."""
        return sorted(self.dir.local_figures().glob("*.png"))

    def table(self):
        """results.json's rows as a pandas DataFrame, one row per table row."""
        import pandas as pd

        return pd.DataFrame(self.results["rows"])

    def _repr_html_(self) -> str:
        return f"<p><b>{self.name}</b> ({self.domain}) at <code>{self.path}</code></p>" + self.table()._repr_html_()

    # -- what the run found -------------------------------------------------

    def found(self, limit: int | None = None, **filters: Any) -> Iterator[Found]:
        """Everything the run found, whatever its domain (filters as in the domain's method)."""
        method = {"witness": self.puzzles, "fling": self.boards, "triple": self.triples, "dwp": self.maps}
        if self.domain not in method:
            raise UserError(f"runs of kind {self.domain!r} have no found objects to list")
        items = method[self.domain](**filters)
        for i, item in enumerate(items):
            if limit is not None and i >= limit:
                return
            yield item

    def _require(self, domain: str) -> None:
        if self.domain != domain:
            raise UserError(f"run {self.name} is a {self.domain} run, not a {domain} run")

    def rows(self) -> list[str]:
        """Names of the Witness rows, e.g. ``['3x4-k2+4', '4x4-k3+3']``."""
        self._require("witness")
        return [row.name for row in self.config.parsed_rows()]

    def _witness_rows(self, row: str | int | None) -> list[tuple[Any, dict[str, Any]]]:
        pairs = list(zip(self.config.parsed_rows(), self.results["rows"]))
        if row is None:
            return pairs
        if isinstance(row, int):
            return [pairs[row]]
        chosen = [(r, res) for (r, res), text in zip(pairs, self.config.rows) if row in (r.name, text)]
        if not chosen:
            raise UserError(f"run {self.name} has no row {row!r}; its rows are {', '.join(self.rows())}")
        return chosen

    def puzzles(self, row: str | int | None = None, *, solutions: int | None = None,
                length: int | str | None = None, min_length: int | None = None) -> Iterator[WitnessPuzzle]:
        """Witness puzzles, row by row in rank order.

        ``row``: a row name (``"3x4-k2+4"``), its text in the job (``"3x4:2+4"``) or
        its index; all rows by default. ``solutions``: the solution count
        (default: the row's minimum, read from the store; another count walks the
        row's whole space in this process). ``length``: the longest solution's
        edges, or ``"longest"`` for the row's longest; ``min_length``: at least
        that many edges.
        """
        self._require("witness")
        kind = self.config.kind
        if kind == "paths":
            raise UserError("a paths run stores no puzzles; run must-cross, regions or joint rows")
        for row_, res in self._witness_rows(row):
            want = res["longest_solution"] if length == "longest" else length
            at_min = solutions is None or solutions == res["min_solutions"]
            if at_min:
                items = ((rank, res["min_solutions"], longest) for rank, longest in stored(self.dir, row_))
            else:
                items = walked(kind, row_)
            for rank, count, longest in items:
                if not at_min and count != solutions:
                    continue
                if (want is not None and longest != want) or (min_length is not None and longest < min_length):
                    continue
                yield WitnessPuzzle(kind, row_.width, row_.height, row_.k, int(rank), row=row_.name,
                                    solutions=count, length=longest)

    def solution_counts(self, row: str | int | None = None):
        """How many puzzles of a Witness row (default the first) have each solution count (a pandas Series),
        when the run recorded it.

        Fling!: ``row`` is a piece count; how many solvable boards of that layer have each number of
        solutions (a Series, its ``attrs`` say ``exact``, and for a sample ``drawn`` and ``seed``), or,
        without ``row``, every layer's as a DataFrame (``pieces``, ``solutions``, ``boards``, ``exact``).
        A sampled layer's counts are the solvable boards among ``drawn`` uniform draws, not the layer.
        """
        import pandas as pd

        if self.domain == "fling":
            frame = solution_count_frame(self.results, row)
            if row is None:
                return frame
            (layer,) = [c for c in self.results["solution_counts"] if c["pieces"] == row]
            series = pd.Series(dict(zip(frame["solutions"], frame["boards"])), name="boards").rename_axis("solutions")
            series.attrs.update({k: v for k, v in layer.items() if k in ("exact", "drawn", "seed")})
            return series
        self._require("witness")
        (row_, res), = self._witness_rows(0 if row is None else row)
        counts = res.get("solution_counts")
        if counts is None:
            raise UserError(f"run {self.name} did not record the distribution of solution counts of {row_.name}")
        return pd.Series(counts_of(counts), name="puzzles").rename_axis("solutions")

    def boards(self, pieces: int | None = None, *, unique: bool | None = True,
               min_ratio: float | None = None) -> Iterator[FlingBoard]:
        """Fling! boards in rank order, layer by layer (or only layer ``pieces``).

        ``unique``: True for the uniquely solvable boards, False for those with
        several solutions, None for every solvable board. ``min_ratio`` keeps
        boards whose expert ratio is at least that (computed board by board).
        """
        self._require("fling")
        layers = [pieces] if pieces is not None else range(1, self.config.max_pieces + 1)
        for k in layers:
            if not 1 <= k <= self.config.max_pieces:
                raise UserError(f"run {self.name} has layers 1..{self.config.max_pieces}, not {k}")
            for rank in set_ranks(self.dir, k, unique):
                board = FlingBoard(self.config.width, self.config.height, k, rank)
                if min_ratio is not None and (board.ratio is None or board.ratio < min_ratio):
                    continue
                yield board

    def ratio_histogram(self, pieces: int | None = None):
        """Fling!: how many uniquely solvable boards of layer ``pieces`` fall in each expert-ratio bin (a pandas
        Series indexed by the bin's lower edge, bins 0.1 wide), or every layer's as a DataFrame
        (``pieces``, ``ratio``, ``boards``, ``exact``). Every uniquely solvable board is counted, or in a layer of
        more than the job's ``ratio_sample`` boards those of a random sample of its blocks (results.json's
        ``ratio_histograms`` give its ``fraction``)."""
        import pandas as pd

        self._require("fling")
        frame = ratio_frame(self.results, pieces)
        if pieces is None:
            return frame
        return pd.Series(dict(zip(frame["ratio"], frame["boards"])), name="boards").rename_axis("ratio")

    def best_boards(self) -> list[FlingBoard]:
        """The boards the run ranked best by expert ratio (results.json's ``puzzles``)."""
        self._require("fling")
        c = self.config
        return [FlingBoard(c.width, c.height, c.max_pieces, p["rank"]) for p in self.results.get("puzzles", [])]

    def triples(self, variant: str | None = None) -> Iterator[TripleSet]:
        """The optimal triple-panel sets results.json decodes, per variant."""
        self._require("triple")
        c = self.config
        for res in self.results["rows"]:
            if variant in (None, res["variant"]):
                for data in res["triples"]:
                    yield TripleSet(res["variant"], c.width, c.height, tuple(c.library), data)

    def maps(self, experiment: int | None = None, run: int | None = None) -> Iterator[LevelMap]:
        """The best map of each run of each experiment (or of the ones asked for)."""
        self._require("dwp")
        for res in self.results["rows"]:
            if experiment not in (None, res["experiment"]):
                continue
            for per_run in res["per_run"]:
                if run not in (None, per_run["run"]):
                    continue
                yield LevelMap(res["experiment"], per_run["run"], per_run["best_fitness"], per_run["rooms"],
                               per_run["seed"], tuple(res["grid"]), self.dir)

    # -- leaving epcg ---------------------------------------------------------

    def report(self) -> Path | str:
        """Write DIR/report.html (self-contained: open it in any browser) and return its path or URL."""
        from epcg.report_html import write_report

        return write_report(self)

    def default_export(self) -> Path:
        """Where ``epcg export`` writes without ``--out``: RUN_DIR/export, or ./<job name>-export for a URL run."""
        return self.path / "export" if isinstance(self.path, Path) else Path(f"{self.name}-export")

    def export(self, path: str | os.PathLike[str], *, limit: int | None = None, pictures: str | None = "png",
               **filters: Any) -> Path:
        """Write what the run found as JSON lines (one object per line) plus pictures; see :mod:`epcg.api.export`."""
        from epcg.api.export import export

        return export(self, Path(path), limit=limit, pictures=pictures, **filters)


def counts_of(value: Any) -> dict[int, int]:
    """A distribution of solution counts as ``{count: puzzles}``, from a dict or ``[count, puzzles]`` pairs.

    >>> counts_of({"1": 945, "2": 10}), counts_of([[1, 945], [2, 10]])
    ({1: 945, 2: 10}, {1: 945, 2: 10})
    """
    pairs = value.items() if isinstance(value, dict) else value
    return {int(k): int(v) for k, v in sorted(pairs, key=lambda kv: int(kv[0]))}
