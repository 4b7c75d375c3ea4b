"""Witness unique covers: the fewest must-cross hexagons that give a panel exactly one solution.

A Witness job with ``kind = "unique-cover"`` (the ``witness`` job kind
dispatches here, :mod:`epcg.games.witness.kinds`).

One stage per board; its tasks are slices of the board's path list (longest
paths first, so the slices are denser at the front where the search is
hardest). Each task runs the branch and bound of
:mod:`epcg.games.witness.domain.cover` on its paths, reading the shared incumbent
(:mod:`epcg.search.branch_bound`, a cover of ``k`` positions scored
``SCORE_BASE - k``) between batches and offering every improvement. A task
keeps the covers at its own smallest ``k``; the reduction keeps the tasks at
the board's smallest ``k``, so the answer depends neither on the split nor on
timing. Every path is searched or discarded by a valid lower bound, so no
panel with fewer hexagons has a single solution.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pydantic

from epcg.games.witness.domain.cover import NO_BOUND, cover_positions, unique_covers
from epcg.games.witness.domain.frontier import count_paths
from epcg.games.witness.domain.geometry import MAX_SIDE, Geometry
from epcg.games.witness.domain.paths import paths_for
from epcg.games.witness.domain.symmetry import orbit_key, position_maps
from epcg.kinds.base import JobConfig, stage_records
from epcg.runtime.kind import JobKind
from epcg.runtime.readout import compute_seconds
from epcg.runtime.incumbent import incumbent_name, release, shared_incumbent
from epcg.runtime.plan import Plan, Stage, Task
from epcg.runtime.store import RunDir

_BOARD = re.compile(r"^(\d+)x(\d+)$")


def parse_board(text: str) -> tuple[int, int]:
    """``'4x3'`` -> ``(4, 3)``.

    >>> parse_board("4x3")
    (4, 3)
    """
    match = _BOARD.match(text.strip())
    if not match:
        raise ValueError(f"board {text!r} is not of the form WxH")
    w, h = int(match[1]), int(match[2])
    if not (1 <= w <= MAX_SIDE and 1 <= h <= MAX_SIDE):
        raise ValueError(f"board {text!r}: boards up to {MAX_SIDE}x{MAX_SIDE} are supported")
    return w, h


class Config(JobConfig):
    """Boards to answer, and how to cut their path lists into tasks."""

    domain: Literal["witness"]
    kind: Literal["unique-cover"]
    boards: list[str] = pydantic.Field(min_length=1)
    tasks: int = pydantic.Field(32, ge=1, le=100_000)
    """Tasks per board (slices of the path list, quadratically denser at the front)."""
    batch: int = pydantic.Field(2048, ge=1)
    """Paths searched between two reads of the shared incumbent."""
    max_k: int | None = pydantic.Field(None, ge=0)
    """Only look for panels of at most this many hexagons (faster); none: no limit."""
    figures: int = pydantic.Field(48, ge=0, le=1000)
    """Panels drawn per board: one per symmetry class, longest solutions first."""
    decoded: int = pydantic.Field(16, ge=0, le=10_000)
    """Symmetry classes written out decoded in results.json per board."""

    @pydantic.field_validator("boards")
    @classmethod
    def _boards(cls, boards: list[str]) -> list[str]:
        parsed = [parse_board(b) for b in boards]
        if len(set(parsed)) != len(parsed):
            raise ValueError(f"boards repeat: {boards}")
        return boards


def _name(w: int, h: int) -> str:
    return f"{w}x{h}"


def slice_bounds(index: int, slices: int, size: int) -> tuple[int, int]:
    """Bounds of slice ``index`` of ``[0, size)``, quadratically denser at the front.

    >>> [slice_bounds(i, 4, 32) for i in range(4)]
    [(0, 2), (2, 8), (8, 18), (18, 32)]
    """
    edge = lambda i: size * i * i // (slices * slices)  # noqa: E731
    return edge(index), edge(index + 1)


def plan(config: Config) -> Plan:
    stages = []
    for text in config.boards:
        w, h = parse_board(text)
        n = count_paths(w, h)
        tasks = tuple(Task(_name(w, h), i, *slice_bounds(i, config.tasks, n)) for i in range(config.tasks))
        stages.append(Stage(_name(w, h), tasks, label=f"unique cover {_name(w, h)}", size=n))
    return Plan(tuple(stages))


def warm_up(config: Config) -> None:
    """Compile the path and cover kernels on a tiny board (numba caches them on disk)."""
    unique_covers(2, 2)


def cleanup(config: Config, run: RunDir) -> None:
    """Delete this session's shared incumbents: they live on the scheduler only while the run does."""
    for stage in plan(config).stages:
        release(incumbent_name(run.cache_key, stage.name))


def run_task(config: Config, task: Task, run: RunDir) -> dict[str, Any]:
    w, h = parse_board(task.stage)
    shared = shared_incumbent(incumbent_name(run.cache_key, task.stage))
    kmax = NO_BOUND if config.max_k is None else config.max_k
    result = unique_covers(w, h, task.start, task.stop, kmax=kmax, incumbent=shared, batch=config.batch)
    if len(result.paths):
        prefix = f"{task.stage}/partial/{task.index:05d}"
        run.arrays.write_array(f"{prefix}/paths", result.paths)
        _write_masks(run, prefix, result.masks)
    return {
        "k": result.k if len(result.paths) else None,
        "covers": int(len(result.paths)),
        "discarded": result.discarded,
        "nodes": result.nodes,
        "checked": result.checked,
        "lazy_sets": result.lazy_sets,
    }


def _write_masks(run: RunDir, prefix: str, masks: np.ndarray) -> None:
    """Cover masks as one 1-D array per uint64 word (the store keeps 1-D arrays)."""
    for w in range(masks.shape[1]):
        run.arrays.write_array(f"{prefix}/mask{w}", masks[:, w].astype(np.uint64))


def _read_masks(run: RunDir, prefix: str) -> np.ndarray:
    return np.stack([run.arrays.read_array(f"{prefix}/mask{w}") for w in range(2)], axis=1)


def reduce(config: Config, plan: Plan, records: dict[str, dict], run: RunDir) -> dict[str, Any]:
    return {"boards": [_reduce_board(config, plan, text, records, run) for text in config.boards]}


def _reduce_board(config: Config, plan: Plan, text: str, records: dict, run: RunDir) -> dict[str, Any]:
    w, h = parse_board(text)
    name = _name(w, h)
    stage = plan.by_name[name]
    recs = stage_records(plan, name, records)
    ks = [r["result"]["k"] for r in recs if r["result"]["k"] is not None]
    k = min(ks) if ks else None
    at_k = [t for t, r in zip(stage.tasks, recs) if r["result"]["k"] == k and k is not None]
    paths_idx = np.concatenate([run.arrays.read_array(f"{name}/partial/{t.index:05d}/paths") for t in at_k]) \
        if at_k else np.zeros(0, np.int64)
    masks = np.concatenate([_read_masks(run, f"{name}/partial/{t.index:05d}") for t in at_k]) \
        if at_k else np.zeros((0, 2), np.uint64)
    g = Geometry(w, h)
    maps = position_maps(g)
    keys = [orbit_key(g, cover_positions(m), maps) for m in masks]
    classes: dict[tuple[int, ...], list[int]] = {}
    for i, key in enumerate(keys):
        classes.setdefault(key, []).append(i)
    ps = paths_for(w, h)
    reps = sorted(classes.values(), key=lambda members: (-int(ps.length[paths_idx[members[0]]]), keys[members[0]]))
    orbit = np.zeros(len(masks), dtype=np.int64)
    for c, members in enumerate(reps):
        orbit[members] = c
    run.arrays.write_array(f"{name}/covers/paths", paths_idx.astype(np.int64))
    _write_masks(run, f"{name}/covers", masks)
    run.arrays.write_array(f"{name}/covers/class", orbit)
    longest = int(ps.length[paths_idx].max()) if len(paths_idx) else None
    return {
        "width": w,
        "height": h,
        "paths": stage.size,
        "positions": g.num_positions,
        "k": k,
        "max_k": config.max_k,
        "panels": int(len(masks)),
        "classes": len(reps),
        "symmetries": len(maps),
        "longest_solution": longest,
        "panels_at_longest": int(np.count_nonzero(ps.length[paths_idx] == longest)) if longest else 0,
        "paths_discarded_by_bound": sum(r["result"]["discarded"] for r in recs),
        "nodes": sum(r["result"]["nodes"] for r in recs),
        "checked": sum(r["result"]["checked"] for r in recs),
        "seconds": round(compute_seconds(recs), 4),
        "store": f"store.zarr/{name}/covers",
        "first": [_decoded(g, ps, int(paths_idx[m[0]]), masks[m[0]], len(m)) for m in reps[: config.decoded]],
    }


def _decoded(g: Geometry, ps, path: int, mask: np.ndarray, members: int) -> dict[str, Any]:
    return {
        "must_cross": [g.position_name(p) for p in cover_positions(mask)],
        "positions": list(cover_positions(mask)),
        "solution": ps.moves(path),
        "solution_edges": int(ps.length[path]),
        "panels_in_class": members,
    }


def report(config: Config, results: dict[str, Any], run: RunDir) -> tuple[str, list[Path]]:
    from epcg.games.witness.domain.render import PuzzleView, gallery_figure, save_figure

    out = [
        f"# {config.name}: fewest must-cross hexagons giving exactly one solution",
        "",
        "| board | paths | positions | k | panels | symmetry classes | longest solution | panels at longest "
        "| paths cut by the interval bound | nodes | nodes checked | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    written: list[Path] = []
    for b in results["boards"]:
        none = b["k"] is None
        out.append(
            f"| {b['width']}x{b['height']} | {b['paths']:,} | {b['positions']} | {'–' if none else b['k']} "
            f"| {b['panels']:,} | {b['classes']:,} | {b['longest_solution'] or '–'} | {b['panels_at_longest']:,} "
            f"| {b['paths_discarded_by_bound']:,} | {b['nodes']:,} | {b['checked']:,} | {b['seconds']:.2f} |"
        )
        if none or config.figures == 0:
            continue
        g = Geometry(b["width"], b["height"])
        name = _name(b["width"], b["height"])
        paths_idx = run.arrays.read_array(f"{name}/covers/paths")
        masks = _read_masks(run, f"{name}/covers")
        orbit = run.arrays.read_array(f"{name}/covers/class")
        ps = paths_for(g.width, g.height)
        views = []
        for c in range(min(b["classes"], config.figures)):
            i = int(np.flatnonzero(orbit == c)[0])
            s = int(paths_idx[i])
            views.append(PuzzleView(
                cross=cover_positions(masks[i]), path=ps.path(s),
                caption=f"class {c} · {int(np.count_nonzero(orbit == c))} panels · {int(ps.length[s])} edges",
            ))
        shown = f", first {len(views)} shown" if b["classes"] > len(views) else ""
        title = (f"{name}: k={b['k']} hexagons, {b['panels']:,} panels with one solution in "
                 f"{b['classes']:,} symmetry classes{shown}")
        written += save_figure(gallery_figure(g, views, columns=4, title=title),
                               run.outputs.figures_dir / f"unique-cover-{name}")
    out += [
        "",
        "k: the fewest must-cross hexagons (on vertices or edges) that leave exactly one solution; every panel "
        "with k hexagons and one solution is listed (`store.zarr/<board>/covers`: the solution's path index, the "
        "positions as a bit mask in two words `mask0`, `mask1`, the symmetry class). The search is exhaustive: "
        "every path either had all its covers of at most the best size searched, or an interval lower bound "
        "above it, so no panel with fewer "
        "than k hexagons has a single solution. Symmetry classes: the half turn (read backwards) and, on square "
        "boards, both diagonal reflections. Node counts depend on the split and on when tasks see each other's "
        "improvements; k and the panels do not."
        + ("" if config.max_k is None else f" With max_k = {config.max_k} only panels of at most that many hexagons "
           "were sought: k '–' means none exists."),
    ]
    return "\n".join(out) + "\n", written


class UniqueCoverKind(JobKind):
    """The ``witness`` kind's unique-cover search (``kind = "unique-cover"``): the functions above as its
    hooks."""

    Config = Config
    plan = staticmethod(plan)
    run_task = staticmethod(run_task)
    reduce = staticmethod(reduce)
    report = staticmethod(report)
    warm_up = staticmethod(warm_up)
    cleanup = staticmethod(cleanup)
