"""Witness triple panels (paper Algorithm 6): branch and bound on the cluster, one shared incumbent.

A Witness job with ``kind = "triple"`` (the ``witness`` job kind dispatches
here, :mod:`epcg.games.witness.kinds`).

One stage per variant ("plain", and "separate": each sub-panel's pieces in
different regions of the joint path). A stage's tasks split the first
sub-panel's class index range (classes sorted by solution count, largest
first) into ``tasks`` slices, denser at the front where the work is. Every
worker builds the problem once per process (0.1 s for 3×3, about 20 s for 4×4)
and keeps it; tasks read the shared incumbent at batch boundaries and offer
improvements (:mod:`epcg.search.branch_bound`). The reduction keeps the tasks at
the maximum score, so the answer does not depend on the split, on timing, or on
resume.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pydantic

from epcg.games.witness.domain.piece_panels import check_panel_space, max_rank
from epcg.games.witness.domain.pieces import LIBRARY
from epcg.games.witness.domain.triple import search_range, triple_info
from epcg.games.witness.domain.triple_problem import problem_for
from epcg.kinds.base import JobConfig, stage_records
from epcg.runtime.kind import JobKind
from epcg.runtime.readout import compute_seconds
from epcg.runtime.incumbent import incumbent_name, release, shared_incumbent
from epcg.runtime.plan import Plan, Stage, Task
from epcg.runtime.store import RunDir
from epcg.search.branch_bound import Result, merge

Variant = Literal["plain", "separate"]


class Config(JobConfig):
    """A triple-panel search: sub-panel size, pieces per sub-panel, the piece library, variants."""

    domain: Literal["witness"]
    kind: Literal["triple"]
    width: int = pydantic.Field(3, ge=1, le=5)
    height: int = pydantic.Field(3, ge=1, le=5)
    pieces: int = pydantic.Field(3, ge=1)
    """Piece constraints per sub-panel."""
    library: list[str] = pydantic.Field(default_factory=lambda: list(LIBRARY))
    """Fixed-orientation pieces, rows top to bottom, '#' a cell, '/' between rows."""
    variants: list[Variant] = pydantic.Field(default=["plain", "separate"], min_length=1)
    mode: Literal["all", "first"] = "all"
    """'all': every optimal triple; 'first': the first one in search order."""
    tasks: int = pydantic.Field(16, ge=1, le=100_000)
    """Tasks per variant (slices of the first sub-panel's classes)."""
    batch: int = pydantic.Field(64, ge=1)
    """First classes searched between two reads of the shared incumbent."""
    reported: int = pydantic.Field(8, ge=1, le=1000)
    """Optimal triples decoded in results.json per variant."""

    @pydantic.model_validator(mode="after")
    def _space(self) -> Config:
        check_panel_space(self.width, self.height, self.pieces, tuple(self.library))
        if len(set(self.variants)) != len(self.variants):
            raise ValueError(f"variants repeat: {self.variants}")
        return self

    def problem(self, variant: str):
        return problem_for(self.width, self.height, self.pieces, tuple(self.library), variant == "separate")


def slice_bounds(index: int, slices: int, size: int) -> tuple[int, int]:
    """Bounds of slice ``index`` of ``[0, size)``, cubically denser at the front (the big classes).

    >>> [slice_bounds(i, 4, 64) for i in range(4)]
    [(0, 1), (1, 8), (8, 27), (27, 64)]
    """
    edge = lambda i: size * i**3 // slices**3  # noqa: E731
    return edge(index), edge(index + 1)


def plan(config: Config) -> Plan:
    return Plan(tuple(
        Stage(variant, tuple(Task(variant, i, i, i + 1) for i in range(config.tasks)), label=f"triple {variant}",
              size=config.tasks)
        for variant in config.variants
    ))


BYTES_PER_PANEL = 16
"""Build memory per panel (rank and class id) besides one byte per 64-path word of its bitset (4×4, 3 pieces: 1.4 GB)."""
SEARCH_PER_BUILD = 0.4
"""The branch and bound's compute as a fraction of building the problem (measured on the whole plain search in one
process: 0.37 on 4×4, 3 pieces, 26 s to build; 0.9 on 3×3, where both take under 0.1 s)."""
TASK_SECONDS = 0.05
"""What a task spends on the shared incumbent (reads and offers, each a round trip to the scheduler) and its
record, beyond the search (3×3, 16 tasks per variant on 2 workers: about 1 s for 0.1 s of search)."""
GROUPING = 1.6
"""Building a problem over generating its panels' solution sets (4×4, 3 pieces: 26 s in all, 16 s generating)."""
CALIBRATION_MEMORY = 1 << 30
"""Largest buffer the calibration may allocate: generating one cell set's panels takes two bitsets per
combination of pieces (``2·8·words·types^pieces`` bytes); a space beyond it gets no time estimate, and its memory
figure refuses it anyway."""
CALIBRATION_SETS = 4
"""Cell sets in each of four evenly spaced slices whose panels :func:`build_seconds` times."""


def build_seconds(config: Config) -> float:
    """Seconds one worker takes to build the problem: generating every panel's solution set, timed here on the
    panels of a few cell sets on this machine now, then grouping them into classes (``GROUPING``)."""
    import time

    from epcg.combinatorics.combinations import Combinations
    from epcg.games.witness.domain.piece_panels import solution_sets
    from epcg.runtime.estimate import calibrated

    n = Combinations(config.width * config.height, config.pieces).max_rank
    width = max(1, min(CALIBRATION_SETS, n // 4))

    def measure() -> tuple[float, float]:
        began = time.perf_counter()
        for i in range(4):
            start = n * (2 * i + 1) // 8
            solution_sets(config.width, config.height, config.pieces, config.library, start, min(start + width, n))
        return 4 * width, time.perf_counter() - began

    key = ("witness-triple", config.width, config.height, config.pieces, tuple(config.library))
    return calibrated(key, measure, budget=0.03) * n * GROUPING


def estimate(config: Config) -> dict:
    """Per variant: each worker builds the whole problem once (memory grows with the panel space), then the tasks
    share the search."""
    from epcg.games.witness.domain.paths import paths_for
    from epcg.runtime.estimate import StageCost

    panels = max_rank(config.width, config.height, config.pieces, len(config.library))
    words = (len(paths_for(config.width, config.height)) + 63) // 64
    peak = panels * (BYTES_PER_PANEL + words)
    if 2 * 8 * words * len(config.library) ** config.pieces > CALIBRATION_MEMORY:
        return {variant: StageCost(peak_memory=peak) for variant in config.variants}
    build = build_seconds(config)
    return {variant: StageCost(peak_memory=peak, setup_seconds=build,
                               cpu_seconds=build * SEARCH_PER_BUILD + config.tasks * TASK_SECONDS)
            for variant in config.variants}


def warm_up(config: Config) -> None:
    """Build a tiny problem and search it once (compiles the generation and search kernels)."""
    problem = problem_for(2, 2, 1, ("#",), False)
    search_range(problem, 0, problem.num_sets)


def cleanup(config: Config, run: RunDir) -> None:
    """Delete this session's shared incumbents: they live on the scheduler only while the run does."""
    for stage in plan(config).stages:
        release(incumbent_name(run.cache_key, stage.name))


def run_task(config: Config, task: Task, run: RunDir) -> dict[str, Any]:
    problem = config.problem(task.stage)
    first, last = slice_bounds(task.start, config.tasks, problem.num_sets)
    shared = shared_incumbent(incumbent_name(run.cache_key, task.stage))
    start_score = shared.get()
    result = search_range(problem, first, last, shared, config.batch, config.mode, known=start_score)
    return {
        "first_classes": [first, last],
        "incumbent_at_start": start_score,
        "score": result.score,
        "triples": [list(t) for t in result.sets],
        "nodes": result.nodes,
        "pruned": result.pruned,
        "improvements": result.improvements,
    }


def reduce(config: Config, plan: Plan, records: dict[str, dict], run: RunDir) -> dict[str, Any]:
    rows = []
    for variant in config.variants:
        recs = stage_records(plan, variant, records)
        merged = merge(
            [Result(r["result"]["score"], tuple(tuple(t) for t in r["result"]["triples"]), r["result"]["nodes"],
                    r["result"]["pruned"], r["result"]["improvements"], config.mode) for r in recs],
            config.mode,
        )
        problem = config.problem(variant)
        infos = [triple_info(problem, t) for t in merged.sets]
        rows.append({
            "variant": variant,
            "width": config.width,
            "height": config.height,
            "pieces": config.pieces,
            "library": len(config.library),
            "panels": max_rank(config.width, config.height, config.pieces, len(config.library)),
            "solvable": int(problem.solvable),
            "distinct_solution_sets": int(problem.num_sets),
            "score": merged.score,
            "optimal_triples": len(merged.sets),
            "optimal_arrangements": sum(info.arrangements for info in infos),
            "nodes": merged.nodes,
            "pruned": merged.pruned,
            "improvements": merged.improvements,
            "seconds": round(compute_seconds(recs), 4),
            "triples": [info.to_dict(problem) for info in infos[: config.reported]],
        })
    return {"mode": config.mode, "rows": rows}


def report(config: Config, results: dict[str, Any], run: RunDir) -> tuple[str, list[Path]]:
    from epcg.games.witness.domain.render import save_figure
    from epcg.games.witness.domain.render_pieces import subpanels_figure, triple_figure

    out = [
        f"# {config.name}: Witness triple panels ({config.width}x{config.height} sub-panels, "
        f"{config.pieces} pieces, {len(config.library)} piece types)",
        "",
        "| variant | panels | solvable | distinct solution sets | optimal score | optimal class triples "
        "| ordered panel triples | nodes | pruned | incumbent improvements | seconds | joint solution |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    written: list[Path] = []
    run.outputs.figures_dir.mkdir(parents=True, exist_ok=True)
    for r in results["rows"]:
        moves = r["triples"][0]["moves"] if r["triples"] else "–"
        out.append(f"| {r['variant']} | {r['panels']:,} | {r['solvable']:,} | {r['distinct_solution_sets']:,} "
                   f"| {r['score']} | {r['optimal_triples']:,} | {r['optimal_arrangements']:,} | {r['nodes']:,} "
                   f"| {r['pruned']:,} | {r['improvements']} | {r['seconds']:.2f} | {moves} |")
        if r["triples"]:
            problem = config.problem(r["variant"])
            classes = r["triples"][0]["classes"]
            written += save_figure(triple_figure(problem, classes), run.outputs.figures_dir / f"triple-{r['variant']}")
            written += save_figure(subpanels_figure(problem, classes), run.outputs.figures_dir / f"subpanels-{r['variant']}")
    out += [
        "",
        "Score: the smallest number of joint solutions of any single sub-panel or pair, for triples that exactly "
        "one path solves. Sub-panels sharing a solution set are one class: the search runs over classes "
        "(unordered, largest first), and each optimal class triple expands to its ordered panel triples. "
        "'separate' also requires each sub-panel's pieces to lie in different regions of the joint path.",
        "Node counts depend on the split and on when tasks see each other's improvements; the optimum does not.",
    ]
    return "\n".join(out) + "\n", written


class TriplesKind(JobKind):
    """The ``witness`` kind's triple-panel search (``kind = "triple"``): the functions above as its hooks."""

    Config = Config
    plan = staticmethod(plan)
    run_task = staticmethod(run_task)
    reduce = staticmethod(reduce)
    report = staticmethod(report)
    warm_up = staticmethod(warm_up)
    cleanup = staticmethod(cleanup)
    estimate = staticmethod(estimate)
