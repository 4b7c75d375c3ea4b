"""The "do what's possible" level-map study: experiments × independent runs, one Dask task per run.

Each task evolves one population (a pure function of the experiment's
parameters and a seed derived from ``(base_seed, experiment, run)``), stores the
best map in Zarr and returns its fitness, so the same job gives the same
results on any worker, in any order, after any resume.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pydantic

from epcg.games.dwp.domain.study import ExperimentParams, run_replicate, seed_for
from epcg.games.dwp.results import DwpResults
from epcg.kinds.base import JobConfig, stage_records
from epcg.runtime.kind import JobKind
from epcg.runtime.readout import compute_seconds
from epcg.runtime.plan import Plan, Stage, Task
from epcg.runtime.store import RunDir

MAX_GRID_SIDE = 4096
"""Largest map side: a map is a grid of cells held per individual."""
MAX_POPULATION = 1_000_000
"""Largest population (and room count) an experiment may ask for."""
WORKING_MEMORY = 80 * 2**20
"""A worker's memory for the map and evolution kernels beyond the runtime's base (measured: 292 MiB peak in all)."""


class ExperimentRow(pydantic.BaseModel):
    """One row of the paper's Table I (keys as in :class:`ExperimentParams`)."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)
    id: int = pydantic.Field(ge=1, le=10_000)
    population: int
    mnm: int
    states: int
    recent_room_hack: bool = False
    grid: tuple[int, int] = (80, 80)
    max_rooms: int = 256
    mating_events: int | None = None
    """Default: the job's ``mating_events``."""
    start: tuple[tuple[int, int, int, int], ...] | None = None
    obstacles: tuple[tuple[int, int, int, int], ...] = ()
    note: str = ""

    @pydantic.field_validator("grid")
    @classmethod
    def _grid_bounded(cls, grid: tuple[int, int]) -> tuple[int, int]:
        if not all(1 <= side <= MAX_GRID_SIDE for side in grid):
            raise ValueError(f"grid sides must be 1..{MAX_GRID_SIDE}, got {list(grid)}")
        return grid

    @pydantic.field_validator("population", "max_rooms")
    @classmethod
    def _size_bounded(cls, value: int, info: pydantic.ValidationInfo) -> int:
        if value > MAX_POPULATION:
            raise ValueError(f"{info.field_name} must be at most {MAX_POPULATION:,}, got {value:,}")
        return value


class Config(JobConfig):
    """A study: experiments (rows of Table I) × ``runs`` independent evolutionary runs."""

    domain: Literal["dwp"]
    runs: int = pydantic.Field(30, ge=1, le=10_000)
    base_seed: int = pydantic.Field(0, ge=0)
    mating_events: int = pydantic.Field(10_000, ge=0)
    """Mating events of every experiment that does not set its own."""
    mating_events_cap: int | None = pydantic.Field(None, ge=0)
    """Cap on every experiment's mating events (quick looks and tests); none by default."""
    experiments: list[ExperimentRow] = pydantic.Field(min_length=1)
    only: list[int] | None = pydantic.Field(None, min_length=1)
    """Run only these experiment ids (default: all)."""
    maps_drawn: int = pydantic.Field(1, ge=0, le=30)
    """Best maps drawn per experiment."""

    @pydantic.model_validator(mode="after")
    def _check(self) -> Config:
        ids = [row.id for row in self.experiments]
        if len(set(ids)) != len(ids):
            raise ValueError(f"experiment ids repeat: {ids}")
        unknown = set(self.only or ()) - set(ids)
        if unknown:
            raise ValueError(f"only names unknown experiments {sorted(unknown)}; the job has {ids}")
        for row in self.experiments:
            self.params(row)  # raises ValueError naming the problem
        return self

    def selected(self) -> list[ExperimentRow]:
        return [row for row in self.experiments if self.only is None or row.id in self.only]

    def params(self, row: ExperimentRow) -> ExperimentParams:
        events = row.mating_events if row.mating_events is not None else self.mating_events
        if self.mating_events_cap is not None:
            events = min(events, self.mating_events_cap)
        try:
            return ExperimentParams(**row.model_dump(exclude={"id", "note", "mating_events"}), mating_events=events)
        except ValueError as exc:
            raise ValueError(f"experiment {row.id}: {exc}") from None



CALIBRATION_MAPS = 16
"""Random machines whose maps :func:`seconds_per_map` builds and scores."""


def seconds_per_map(params: ExperimentParams) -> float:
    """Seconds to build and score one map under ``params``' rules on this machine now (random machines).

    A run builds one map per member of its initial population and two per
    mating event (both children), so that count times this is its compute.
    """
    import time

    from epcg.games.dwp.domain.sda import random_population
    from epcg.games.dwp.domain.study import _context, _fitness
    from epcg.runtime.estimate import calibrated

    context = _context(params)
    machines = random_population(CALIBRATION_MAPS, params.states, np.random.default_rng(0))

    def measure() -> tuple[float, float]:
        began = time.perf_counter()
        for genome in machines:
            _fitness(genome, context)
        return CALIBRATION_MAPS, time.perf_counter() - began

    key = ("dwp", params.states, params.grid, params.max_rooms, params.recent_room_hack, params.start,
           params.obstacles, params.proposals)
    return calibrated(key, measure, budget=0.01)


def estimate(config: Config) -> dict:
    """Per experiment: its runs' compute (maps built, each timed under the experiment's rules), and the maps a
    worker holds (population × grid cells)."""
    from epcg.runtime.estimate import StageCost

    out = {}
    for row in config.selected():
        params = config.params(row)
        cells = params.grid[0] * params.grid[1]
        out[stage_name(row)] = StageCost(
            bytes_written=config.runs * cells * 2,
            peak_memory=WORKING_MEMORY + params.population * (cells + 64 * params.states),
            cpu_seconds=config.runs * (params.population + 2 * params.mating_events) * seconds_per_map(params),
        )
    return out


def table(job_file: Path) -> dict[int, ExperimentParams]:
    """The parameters of every experiment of a study's job file, by id (Table I: ``jobs/dwp-study.toml``)."""
    config = Config.model_validate(tomllib.loads(Path(job_file).read_text()))
    return {row.id: config.params(row) for row in config.experiments}


def stage_name(row: ExperimentRow) -> str:
    return f"exp{row.id:02d}"


Results = DwpResults
"""The shape of results.json."""


def plan(config: Config) -> Plan:
    return Plan(tuple(
        Stage(stage_name(row), tuple(Task(stage_name(row), run, run, run + 1) for run in range(config.runs)),
              label=f"experiment {row.id}", size=config.runs)
        for row in config.selected()
    ))


def warm_up(config: Config) -> None:
    """Compile the SDA, map and evolution kernels with a tiny run."""
    from dataclasses import replace

    params = config.params(config.selected()[0])
    run_replicate(replace(params, mating_events=2, population=8), 0)


def _row(config: Config, stage: str) -> ExperimentRow:
    return next(row for row in config.selected() if stage_name(row) == stage)


def run_task(config: Config, task: Task, run: RunDir) -> dict[str, Any]:
    row = _row(config, task.stage)
    result = run_replicate(config.params(row), seed_for(row.id, task.start, config.base_seed))
    run.arrays.write_array(f"{task.stage}/maps/{task.start:04d}", result.best_map.ravel())
    run.arrays.write_array(f"{task.stage}/rooms/{task.start:04d}", result.best_rooms.ravel())
    return {
        "run": task.start,
        "seed": result.seed,
        "best_fitness": result.best_fitness,
        "rooms": result.rooms,
        "genome": result.best_genome.tolist(),
        "history": [[int(e), float(b)] for e, b in zip(result.history_event, result.history_best)],
    }


def reduce(config: Config, plan: Plan, records: dict[str, dict], run: RunDir) -> dict[str, Any]:
    rows = []
    for row in config.selected():
        recs = stage_records(plan, stage_name(row), records)
        fitness = np.array([r["result"]["best_fitness"] for r in recs])
        best = int(np.argmax(fitness))
        params = config.params(row)
        rows.append({
            "experiment": row.id,
            "population": row.population,
            "mnm": row.mnm,
            "states": row.states,
            "recent_room_hack": row.recent_room_hack,
            "grid": list(params.grid),
            "max_rooms": row.max_rooms,
            "mating_events": params.mating_events,
            "note": row.note,
            "runs": len(recs),
            "median": float(np.median(fitness)),
            "mean": float(fitness.mean()),
            "min": float(fitness.min()),
            "max": float(fitness.max()),
            "best_run": best,
            "fitness": fitness.tolist(),
            "per_run": [r["result"] for r in recs],
            "seconds": round(compute_seconds(recs), 4),
        })
    return {"rows": rows, "findings": findings(rows)}


def superiority(a: list[float], b: list[float]) -> float:
    """P(a run of A beats a run of B), ties counting half (Mann–Whitney U / (n·m)).

    >>> superiority([3, 4], [1, 2]), superiority([1], [1])
    (1.0, 0.5)
    """
    x, y = np.asarray(a)[:, None], np.asarray(b)[None, :]
    return float(((x > y).sum() + 0.5 * (x == y).sum()) / (x.size * y.size))


def findings(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Check the paper's three qualitative findings against our figures, where the rows exist."""
    by = {r["experiment"]: r for r in rows}
    out = []

    def add(claim: str, holds: bool, evidence: str) -> None:
        out.append({"claim": claim, "holds": bool(holds), "evidence": evidence})

    if 2 in by and 16 in by:
        ratio = by[16]["median"] / by[2]["median"]
        p = superiority(by[16]["fitness"], by[2]["fitness"])
        add("the recent-room hack raises best fitness by about half (exp. 16 vs 2)", 1.3 <= ratio and p > 0.7,
            f"median {by[16]['median']:.1f} vs {by[2]['median']:.1f}: ×{ratio:.2f}; P(16 beats 2) = {p:.2f}")
    groups = [[i for i in range(start, start + 5) if i in by] for start in (1, 6, 11)]
    if all(len(g) == 5 for g in groups):
        worst = [min(g, key=lambda i: by[i]["median"]) for g in groups]
        ps = [min(superiority(by[j]["fitness"], by[g[0]]["fitness"]) for j in g[1:]) for g in groups]
        add("population 10 is clearly the worst (exp. 1, 6, 11 within their MNM groups)",
            worst == [g[0] for g in groups] and min(ps) > 0.7,
            f"lowest median per MNM group: experiments {worst}; smallest P(other beats pop 10) = {min(ps):.2f}")
    if all(i in by for i in range(17, 22)):
        others = [by[i]["median"] for i in range(18, 22)]
        p = min(superiority(by[i]["fitness"], by[17]["fitness"]) for i in range(18, 22))
        add("4 states are not enough (exp. 17 vs 18-21)", by[17]["median"] < min(others) and p > 0.7,
            f"median with 4 states {by[17]['median']:.1f}, with 8-20 states {min(others):.1f}..{max(others):.1f}; "
            f"smallest P(more states beats 4) = {p:.2f}")
    return out


def report(config: Config, results: dict[str, Any], run: RunDir) -> tuple[str, list[Path]]:
    from epcg.games.dwp.report import figures, summary

    return summary(config, results), figures(config, results, run)


class DwpKind(JobKind):
    """The ``dwp`` job kind: the functions above as its hooks."""

    Config = Config
    Results = Results
    plan = staticmethod(plan)
    run_task = staticmethod(run_task)
    reduce = staticmethod(reduce)
    report = staticmethod(report)
    warm_up = staticmethod(warm_up)
    estimate = staticmethod(estimate)
