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

import contextlib
import copy
import inspect
import json
import math
import numbers
import os
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from epcg.api.designs import Design, State
from epcg.api.dwp import LevelMap
from epcg.api.fling import FlingBoard, ratio_frame, set_ranks, solution_count_frame
from epcg.api.found import Found
from epcg.api.triple import TripleSet
from epcg.api.witness import WitnessPuzzle, stored, walked
from epcg.runtime.errors import InvalidValue, UserError
from epcg.runtime.jobs import Job, apply_overrides, read_toml, validate
from epcg.runtime.session import open_run
from epcg.runtime.store import RESULTS, SUMMARY, RunDir

__all__ = ["Run", "open", "run"]


def run(job: str | os.PathLike[str] | dict[str, Any], out: str | os.PathLike[str] | None = None,
        client: Any = None, *, progress: bool = True, **overrides: Any) -> Run:
    """Run ``job`` (a job file or its data) in ``out`` (default ``runs/<name>``) and open the result.

    ``client``: a ``distributed.Client``, or a scheduler's address (``"tcp://host:8786"``, as the CLI's
    ``--scheduler``) to connect to for the run; None runs in this process.
    Keyword arguments override job keys, as ``--set`` does (``**{"a.b": 1}`` for a
    nested key). If ``out`` already holds this job, only its unfinished chunks are
    computed (nothing at all when it is finished); if it holds another job, a
    UserError says so.
    """
    from epcg.runtime.progress import TqdmProgress
    from epcg.runtime.session import (
        claimed,
        prepare_new,
        prepare_resume,
        run_plan,
        verify,
    )

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
    with _connected(client) as client:
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


@contextlib.contextmanager
def _connected(client: Any) -> Iterator[Any]:
    """``client`` as a ``distributed.Client``: one given is used as is, an address (like the CLI's --scheduler)
    is connected to for the block; anything else is refused before a run directory is made."""
    if client is None or not isinstance(client, (str, os.PathLike)):
        if client is not None and not callable(getattr(client, "submit", None)):
            raise InvalidValue(f"client must be a distributed.Client or a scheduler address like "
                               f"'tcp://host:8786', got {client!r}")
        yield client
        return
    from epcg.runtime.cluster import SchedulerSpec, connect

    with connect(SchedulerSpec(kind="scheduler", address=str(client))) as connected:
        yield connected


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
        try:
            return json.loads(self.dir.read_text(RESULTS) or "")
        except (ValueError, OSError) as exc:
            raise UserError(f"{self.dir.results_path} cannot be read ({' '.join(str(exc).split())}): "
                            f"'epcg report {self.path}' writes it again") from None

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
        method = {"witness": self.puzzles, "fling": self.boards, "triple": self.triples, "dwp": self.maps,
                  "scan": self.designs, "retrograde": self.states}
        if self.domain not in method:
            raise UserError(f"runs of kind {self.domain!r} have no found objects to list")
        chosen = method[self.domain]
        known = [name for name in inspect.signature(chosen).parameters]
        unknown = [name for name in filters if name not in known]
        if unknown:
            raise InvalidValue(f"{self.domain} runs have no filter {unknown[0]!r}; the filters are {', '.join(known)}")
        items = chosen(**filters)
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
        if _is_int(row):
            if not 0 <= row < len(pairs):
                raise InvalidValue(f"run {self.name} has rows 0..{len(pairs) - 1} ({', '.join(self.rows())}), "
                                   f"not row {row}")
            return [pairs[row]]
        chosen = [(r, res) for (r, res), text in zip(pairs, self.config.rows) if row in (r.name, text)]
        if not chosen:
            raise InvalidValue(f"run {self.name} has no row {row!r}; its rows are {', '.join(self.rows())} "
                               f"(or their indices 0..{len(pairs) - 1})")
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
        _count("solutions", solutions)
        _count("min_length", min_length)
        if length != "longest":
            _count("length", length, "an edge count >= 0 or 'longest'")
        return self._puzzles(kind, self._witness_rows(row), solutions, length, min_length)

    def _puzzles(self, kind: str, rows: list, solutions: int | None, length: int | str | None,
                 min_length: int | None) -> Iterator[WitnessPuzzle]:
        for row_, res in rows:
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
        top = self.config.max_pieces
        if pieces is not None and not (_is_int(pieces) and 1 <= pieces <= top):
            raise InvalidValue(f"pieces must be a piece count 1..{top} (this run's layers), got {pieces!r}")
        if unique not in (True, False, None):
            raise InvalidValue(f"unique must be True, False or None, got {unique!r}")
        if min_ratio is not None and (isinstance(min_ratio, (bool, np.bool_)) or not isinstance(min_ratio, numbers.Real)
                                      or math.isnan(min_ratio)):
            raise InvalidValue(f"min_ratio must be a number (an expert ratio), got {min_ratio!r}")
        return self._boards([pieces] if pieces is not None else range(1, top + 1), unique, min_ratio)

    def _boards(self, layers, unique: bool | None, min_ratio: float | None) -> Iterator[FlingBoard]:
        for k in layers:
            for rank in set_ranks(self.dir, k, unique):
                board = FlingBoard(self.config.width, self.config.height, k, rank)
                if min_ratio is not None and (board.ratio is None or board.ratio < min_ratio):
                    continue
                yield board

    def ratio_histogram(self, pieces: int | None = None):
        """Fling!: how many uniquely solvable boards of layer ``pieces`` fall in each expert-ratio bin (a pandas
        Series indexed by the bin's lower edge, bins 0.1 wide), or every layer's as a DataFrame
        (``pieces``, ``ratio``, ``boards``, ``exact``). Every uniquely solvable board is counted, or, if the job
        sets ``ratio_sample``, in a layer of more than that many boards those of a random sample of its blocks
        (results.json's ``ratio_histograms`` give its ``fraction``)."""
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
        variants = [res["variant"] for res in self.results["rows"]]
        if variant is not None and variant not in variants:
            raise InvalidValue(f"run {self.name} has variants {', '.join(map(repr, variants))}, not {variant!r}")
        return self._triples(variant)

    def _triples(self, variant: str | None) -> Iterator[TripleSet]:
        c = self.config
        for res in self.results["rows"]:
            if variant in (None, res["variant"]):
                for data in res["triples"]:
                    yield TripleSet(res["variant"], c.width, c.height, tuple(c.library), data)

    def maps(self, experiment: int | None = None, run: int | None = None) -> Iterator[LevelMap]:
        """The best map of each run of each experiment (or of the ones asked for)."""
        self._require("dwp")
        experiments = [res["experiment"] for res in self.results["rows"]]
        if experiment is not None and experiment not in experiments:
            raise InvalidValue(f"run {self.name} has experiments {', '.join(map(str, experiments))}, "
                               f"not {experiment!r}")
        _count("run", run)
        return self._maps(experiment, run)

    def _maps(self, experiment: int | None, run: int | None) -> Iterator[LevelMap]:
        for res in self.results["rows"]:
            if experiment not in (None, res["experiment"]):
                continue
            for per_run in res["per_run"]:
                if run not in (None, per_run["run"]):
                    continue
                yield LevelMap(res["experiment"], per_run["run"], per_run["best_fitness"], per_run["rooms"],
                               per_run["seed"], tuple(res["grid"]), self.dir)

    def designs(self, row: str | int | None = None, *, role: str | None = None) -> Iterator[Design]:
        """Designs a scan of a user's space kept, row by row: every rank at the row's lowest score (read from the
        store in rank order), its ``top`` ranks, and with ``max = true`` every rank at its highest score.

        ``row``: a row's name (``"row-001"``) or index; ``role``: ``"min"``, ``"top"`` or ``"max"`` only.
        """
        from epcg.api.designs import ROLES, Design
        from epcg.experiments.scan import space_of

        self._require("scan")
        if role is not None and role not in ROLES:
            raise UserError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
        pairs = list(zip(self.config.rows, self.results["rows"]))
        if row is not None:
            chosen = [pair for i, pair in enumerate(pairs) if row in (i, pair[1]["row"])]
            if not chosen:
                raise UserError(f"run {self.name} has no row {row!r}; its rows are row-000 .. row-{len(pairs) - 1:03d}")
            pairs = chosen
        for params, res in pairs:
            space = space_of(self.config.space, params)

            def design(rank: int, score: int | None, kind: str) -> Design:
                text = str(space.decode(rank)) if space.decode is not None else ""
                return Design(self.name, self.config.space, res["row"], params, int(rank), score, kind, text,
                              space.render, space.decode)

            if role in (None, "min") and res.get("min") is not None:
                yield from (design(r, res["min"], "min") for r in self._ranks(f"{res['row']}/at_min/ranks"))
            if role in (None, "top"):
                yield from (design(t["rank"], t["score"], "top") for t in res.get("top", []))
            if role in (None, "max") and res.get("max") is not None:
                yield from (design(r, res["max"], "max") for r in self._ranks(f"{res['row']}/at_max/ranks"))

    def _ranks(self, name: str) -> Iterator[int]:
        """A stored rank array, one Zarr chunk at a time."""
        if not self.dir.has_array(name):
            return
        array = self.dir.group[name]
        step = max(1, array.chunks[0])
        for start in range(0, array.shape[0], step):
            yield from (int(r) for r in np.asarray(array[start:start + step]))

    def states(self, layer: int | None = None, *, bit: str | None = None,
               row: int | str | None = None) -> Iterator[State]:
        """States of a retrograde run of a user's space that have ``bit`` set (default: the space's first bit, e.g.
        solvable), deepest layer first, in rank order within a layer; or those of layer ``layer`` only; of every
        row of a family, or of row ``row`` (its index, or its name as found.jsonl writes it: ``"r001"``). A reduced
        space's deepest layer lists each class's representative."""
        from epcg.api.designs import State, set_bits
        from epcg.experiments.retrograde import array_prefix

        self._require("retrograde")
        count = len(self.config.rows)
        names = [self.config.row(i) for i in range(count)]
        if isinstance(row, str) and row in names:
            row = names.index(row)
        if row is not None and not (_is_int(row) and 0 <= row < count):
            listed = f" ({', '.join(names)})" if any(names) else ""
            raise UserError(f"run {self.name} has rows 0..{count - 1}{listed}, not {row!r}")
        for i in [row] if row is not None else range(count):
            space, name = self.config.retrograde_space(i), self.config.row(i)
            wanted = space.bits[0] if bit is None else bit
            if wanted not in space.bits:
                raise UserError(f"bit must be one of {', '.join(space.bits)}, got {wanted!r}")
            deepest = self.config.deepest_of(i)
            for k in [layer] if layer is not None else range(deepest, space.first - 1, -1):
                if not space.first <= k <= deepest:
                    raise UserError(f"run {self.name} has layers {space.first}..{deepest}, not {k}")
                prefix = array_prefix(name) + ("" if self.dir.has_array(f"{array_prefix(name)}{wanted}/{k}")
                                               else "orbits/")
                arrays = {b: self.dir.group[f"{prefix}{b}/{k}"] for b in space.bits}
                for rank in set_bits(arrays[wanted]):
                    flags = {b: bool(int(a[rank // 64]) >> (rank % 64) & 1) if b != wanted else True
                             for b, a in arrays.items()}
                    text = space.describe(k, rank) if space.describe is not None else ""
                    yield State(self.name, space.name, k, rank, flags, text, space.render, name)

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

        return export(self, Path(path), limit=limit, pictures=pictures, **filters).path


def _is_int(value: Any) -> bool:
    """An integer (numpy's too), not a boolean."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _count(name: str, value: Any, what: str = "a count >= 0") -> None:
    """Refuse a filter value that is not None and not ``what`` (an integer >= 0)."""
    if value is not None and not (_is_int(value) and value >= 0):
        raise InvalidValue(f"{name} must be {what}, got {value!r}")


def counts_of(value: Any) -> dict[int, int]:
    """A distribution of solution counts as ``{count: puzzles}``, from a dict or ``[count, puzzles]`` pairs.

    >>> counts_of({"1": 945, "2": 10}), counts_of([[1, 945], [2, 10]])
    ({1: 945, 2: 10}, {1: 945, 2: 10})
    """
    pairs = value.items() if isinstance(value, dict) else value
    return {int(k): int(v) for k, v in sorted(pairs, key=lambda kv: int(kv[0]))}
