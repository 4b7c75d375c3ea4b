"""summary.md and galleries of a rules job (``kind = "rules"``): Tables 2 and 3's questions for any mix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from epcg.games.witness.report import _table
from epcg.kinds.keep import kept_lines
from epcg.runtime.store import RunDir


def _symbols(result: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in result["symbols"].items()) or "nothing"


def summary(config: Any, results: dict[str, Any]) -> str:
    rows = results["rows"]
    out = [f"# {config.name}: panels with the game's own symbols", ""]
    out.append(_table(
        ["row", "board", "placed", "placements", "solvable", "min sol.", "at min", "longest", "at longest",
         "seconds"],
        [[r["name"], f"{r['width']}x{r['height']}", _symbols(r), r["puzzles"], r["solvable"], r["min_solutions"],
          r["puzzles_at_min"], r["longest_solution"], r["puzzles_at_longest"], r["seconds"]] for r in rows]))
    out += ["", "## Solution counts", ""]
    for r in rows:
        counts = ", ".join(f"{k}: {v:,}" for k, v in r["solution_counts"].items())
        out.append(f"- {r['name']}: {counts}")
    out += ["", "`min sol.` is the fewest solutions of a solvable placement; every placement there is stored "
            "(ranks) under `store.zarr/<row>/at_min`, `longest` is the longest solution (edges) among them and "
            "`at longest` how many reach it. `seconds` is compute time summed over chunks. The rules are in "
            "docs/witness-rules.md."]
    kept = [(r, r["kept"]) for r in rows if r.get("kept")]
    if kept:
        out += ["", "## Kept in full (job key `keep`)", ""]
        for r, bands in kept:
            out += [f"{r['name']}:", ""] + kept_lines(bands, "solutions", "placements", r.get("solution_counts")) + [""]
    return "\n".join(out).rstrip("\n") + "\n"


def figures(config: Any, results: dict[str, Any], run: RunDir) -> list[Path]:
    """A gallery per row: the placements at the minimum, longest solutions first, solved beside."""
    from epcg.games.witness.domain.render import save_figure
    from epcg.games.witness.domain.render_rules import RulesView, rules_gallery
    from epcg.games.witness.domain.rule_scan import solution_path
    from epcg.games.witness.domain.rules import decode

    written: list[Path] = []
    if config.figures_per_row == 0:
        return written
    run.outputs.figures_dir.mkdir(parents=True, exist_ok=True)
    for row, result in zip(config.parsed_rows(), results["rows"]):
        if not result["puzzles_at_min"]:
            continue
        ranks = run.arrays.read_array(f"{row.name}/at_min/ranks")
        longest = run.arrays.read_array(f"{row.name}/at_min/longest").astype(np.int64)
        order = np.lexsort((ranks, -longest))[: config.figures_per_row]
        views = []
        for i in order:
            rank = int(ranks[i])
            path, count = solution_path(row, rank)
            caption = f"rank {rank:,} · {count} sol. · {int(longest[i])} edges"
            views.append(RulesView(decode(row, rank), path, caption))
        title = (f"{row.name}: {result['puzzles_at_min']:,} placements with {result['min_solutions']} solution(s)"
                 + (f", first {len(views)} shown" if result["puzzles_at_min"] > len(views) else ""))
        written += save_figure(rules_gallery(row, views, columns=4, title=title), run.outputs.figures_dir / f"rules-{row.name}")
    return written
