"""summary.md for the level-map study: medians per experiment, the paper's findings checked, pictures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from epcg.runtime.store import RunDir

PAPER_FIGURES = {  # which of the paper's figures each group of experiments mirrors
    "population-mnm": ("Figure 3", range(1, 16)),
    "states": ("Figure 5", range(16, 22)),
}


def summary(config: Any, results: dict[str, Any]) -> str:
    out = [
        f"# {config.name}: evolved level maps (do what's possible)",
        "",
        "| exp. | population | MNM | states | RRH | grid | rooms | mating events | runs | median | mean | min | max | seconds | note |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results["rows"]:
        out.append(
            f"| {r['experiment']} | {r['population']} | {r['mnm']} | {r['states']} | "
            f"{'yes' if r['recent_room_hack'] else 'no'} | {r['grid'][0]}×{r['grid'][1]} | {r['max_rooms']} | "
            f"{r['mating_events']:,} | {r['runs']} | {r['median']:.1f} | {r['mean']:.1f} | {r['min']:.1f} | "
            f"{r['max']:.1f} | {r['seconds']:.1f} | {r['note']} |"
        )
    out += ["", "Fitness is A²/B (A: cells covered by rooms and corridors, B: their bounding box), "
            "the best of each run's final population.", "", "## The paper's findings, checked against ours", ""]
    if not results["findings"]:
        out.append("- (the experiments a finding compares are not all in this job)")
    for f in results["findings"]:
        out.append(f"- **{'holds' if f['holds'] else 'does not hold'}**: {f['claim']} — {f['evidence']}")
    return "\n".join(out) + "\n"


def figures(config: Any, results: dict[str, Any], run: RunDir) -> list[Path]:
    from epcg.games.dwp.domain.render import box_plot, map_figure, save_figure

    run.outputs.figures_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    rows = results["rows"]
    for group, (paper_figure, ids) in PAPER_FIGURES.items():
        chosen = {r["experiment"]: r["fitness"] for r in rows if r["experiment"] in ids}
        if len(chosen) > 1:
            fig = box_plot(chosen, title=f"Best fitness per experiment ({paper_figure} of the paper)")
            written += save_figure(fig, run.outputs.figures_dir / f"box-{group}")
    for r in rows:
        order = np.argsort(-np.asarray(r["fitness"]), kind="stable")[: config.maps_drawn]
        for place, i in enumerate(order):
            stage = f"exp{r['experiment']:02d}"
            grid = run.arrays.read_array(f"{stage}/maps/{int(i):04d}").reshape(r["grid"])
            rooms = run.arrays.read_array(f"{stage}/rooms/{int(i):04d}").reshape(-1, 5)
            title = (f"experiment {r['experiment']}, run {int(i)}: fitness {r['fitness'][int(i)]:.1f}, "
                     f"{r['per_run'][int(i)]['rooms']} rooms")
            written += save_figure(map_figure(grid, rooms, title=title), run.outputs.figures_dir / f"map-{stage}-{place}")
    return written
