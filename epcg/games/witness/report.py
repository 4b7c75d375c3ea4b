"""summary.md tables (ours beside the paper's) and puzzle galleries for Witness runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from epcg.games.witness import paper
from epcg.games.witness.domain.geometry import MAX_SIDE
from epcg.kinds.keep import kept_lines
from epcg.runtime.store import RunDir


def _n(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_n(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def summary(config: Any, results: dict[str, Any]) -> str:
    rows = results["rows"]
    title = {
        "paths": "Table 1: paths from start to goal",
        "must-cross": "Table 2: must-cross constraints",
        "regions": "Table 3: region constraints",
        "joint": "Joint must-cross and region constraints",
    }[config.kind]
    out = [f"# {config.name}: {title}", ""]
    if config.kind == "paths":
        out.append(_table(
            ["width", "height", "paths", "paper", "how", "seconds"],
            [[r["width"], r["height"], r["paths"], r["paper_paths"], "listed" if r["listed"] else "counted",
              r["seconds"]] for r in rows],
        ))
        counted = [f"{r['width']}x{r['height']}" for r in rows if not r["listed"]]
        if counted:
            out += ["", f"Counted, not listed (boards past {MAX_SIDE}x{MAX_SIDE}, by the frontier programme in "
                    f"`epcg/games/witness/domain/frontier.py`; exact integers): {', '.join(counted)}. "
                    "Listed rows store each path's length under `store.zarr/paths/<board>/length`."]
    elif config.kind == "joint":
        out.append(_table(
            ["board", "k cross+regions", "examined", "examined ×2 (both first colours)", "paper examined",
             "min sol.", "paper min", "at min", "patterns at min", "paper at min", "longest", "at longest",
             "paper at longest", "seconds", "paper seconds"],
            [[f"{r['width']}x{r['height']}", "+".join(map(str, r["k"])), r["examined"], 2 * r["examined"],
              r.get("paper_examined"), r["min_solutions"], r.get("paper_min_solutions"), r["puzzles_at_min"],
              r.get("patterns_at_min"), r.get("paper_puzzles_at_min"), r["longest_solution"], r["puzzles_at_longest"],
              r.get("paper_puzzles_at_longest"), r["seconds"], r.get("paper_seconds")] for r in rows],
        ))
    else:
        out.append(_table(
            ["board", "max", "k", "#", "paper #", "solvable", "min sol.", "paper min", "at min",
             "patterns at min", "longest", "at longest", "seconds", "paper seconds"],
            [[f"{r['width']}x{r['height']}", r["positions"], r["k"], r["puzzles"], r.get("paper_puzzles"),
              r["solvable"], r["min_solutions"], r.get("paper_min_solutions"), r["puzzles_at_min"],
              r.get("patterns_at_min"), r["longest_solution"], r["puzzles_at_longest"], r["seconds"], r.get("paper_seconds")]
             for r in rows],
        ))
    notes = _notes(config.kind, rows)
    if notes:
        out += ["", "## Where we differ from the paper", ""] + [f"- {note}" for note in notes]
    if config.kind != "paths":
        out += ["", "`seconds` is compute time summed over chunks; `at min` puzzles are all stored "
                "(ranks) under `store.zarr/<row>/at_min`; `patterns at min` is how many different puzzles for a "
                "designer they are (solution sets up to the panel's symmetries); `longest` is the longest solution "
                "(edges) among them and `at longest` how many puzzles reach it."]
    kept = [(r, r["kept"]) for r in rows if r.get("kept")]
    if kept:
        out += ["", "## Kept in full (job key `keep`)", "",
                "`epcg export RUN --where solutions=N` and `puzzles(row, solutions=N)` read these at once; any other "
                "count is recomputed.", ""]
        for r, bands in kept:
            k = "+".join(map(str, r["k"])) if isinstance(r["k"], list) else r["k"]
            out += [f"{r['width']}x{r['height']} k={k}:", ""] + kept_lines(bands, "solutions", "puzzles",
                                                                              r.get("solution_counts")) + [""]
    return "\n".join(out).rstrip("\n") + "\n"


def _notes(kind: str, rows: list[dict[str, Any]]) -> list[str]:
    notes = []
    for r in rows:
        k = "+".join(map(str, r["k"])) if isinstance(r.get("k"), list) else r.get("k")
        where = f"{r['width']}x{r['height']}" + (f" k={k}" if k is not None else "")
        if kind == "paths":
            if r["paper_paths"] is not None and r["paths"] != r["paper_paths"]:
                notes.append(f"{where}: {r['paths']:,} paths, the paper lists {r['paper_paths']:,}.")
            continue
        if kind == "regions" and r.get("paper_puzzles") not in (None, r["puzzles"]):
            ratio = r["paper_puzzles"] / r["puzzles"]
            notes.append(
                f"{where}: the paper's # is {r['paper_puzzles']:,}, {ratio:g}× our "
                f"C(wh,k)·2^(k−1) = {r['puzzles']:,} (it counts C(wh,k)·2^k, both colours of the "
                "first square); we scan the symmetry-reduced space the paper's text describes."
            )
        if r.get("paper_min_solutions") not in (None, r["min_solutions"]):
            notes.append(
                f"{where}: we find min {r['min_solutions']} solutions, the paper prints "
                f"{r['paper_min_solutions']}. {paper.EXPLANATIONS.get((kind, where), '')}".rstrip()
            )
        if kind == "joint":
            differences = [
                f"{r[ours]:,} {what} (the paper says {r[theirs]:,})"
                for ours, theirs, what in (
                    ("puzzles_at_min", "paper_puzzles_at_min", "puzzles at the minimum"),
                    ("puzzles_at_longest", "paper_puzzles_at_longest", "of them with the longest solution"),
                )
                if r.get(theirs) not in (None, r[ours])
            ]
            if differences:
                notes.append(f"{where}: {'; '.join(differences)}. "
                             f"{paper.EXPLANATIONS.get((kind, where), '')}".rstrip())
    return notes


def figures(config: Any, results: dict[str, Any], run: RunDir) -> list[Path]:
    """A gallery per row: the puzzles at the minimum, longest solutions first, solved beside."""
    from epcg.games.witness.domain import scan
    from epcg.games.witness.domain.paths import paths_for
    from epcg.games.witness.domain.render import PuzzleView, gallery_figure, save_figure
    from epcg.games.witness.rows import parse_row

    written: list[Path] = []
    if config.figures_per_row == 0:
        return written
    run.outputs.figures_dir.mkdir(parents=True, exist_ok=True)
    for text, result in zip(config.rows, results["rows"]):
        row = parse_row(text, config.kind)
        if not result["puzzles_at_min"]:
            continue
        ranks = run.arrays.read_array(f"{row.name}/at_min/ranks")
        longest = run.arrays.read_array(f"{row.name}/at_min/longest").astype(np.int64)
        order = np.lexsort((ranks, -longest))[: config.figures_per_row]
        paths = paths_for(row.width, row.height)
        views = []
        for i in order:
            rank = int(ranks[i])
            puzzle = scan.decode(config.kind, row.width, row.height, row.kernel_k, rank)
            sols = scan.solutions(paths, puzzle)
            views.append(PuzzleView(
                cross=puzzle.cross, cells=puzzle.cells, colours=puzzle.colours,
                path=paths.path(int(sols[0])),
                caption=f"rank {rank:,} · {len(sols)} sol. · {int(longest[i])} edges",
            ))
        title = (f"{config.kind} {row.width}x{row.height} k={result['k']}: "
                 f"{result['puzzles_at_min']:,} puzzles with {result['min_solutions']} solution(s)"
                 + (f", first {len(views)} shown" if result["puzzles_at_min"] > len(views) else ""))
        fig = gallery_figure(row.geometry, views, columns=4, title=title)
        written += save_figure(fig, run.outputs.figures_dir / f"{config.kind}-{row.name}")
    return written
