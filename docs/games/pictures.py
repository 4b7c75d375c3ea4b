"""Draw the pictures of docs/games.md with the project's own renderers: ``python docs/games/pictures.py``.

Each is what a run's export or report.html shows for one puzzle or map of that game.
"""

from __future__ import annotations

import sys
from pathlib import Path

from epcg.report.pictures import png_bytes

HERE = Path(__file__).resolve().parent


def figures() -> dict[str, object]:
    """The figures by file stem."""
    from epcg.games.dwp.domain.render import map_figure
    from epcg.games.dwp.domain.study import ExperimentParams, run_replicate, seed_for
    from epcg.games.fling.found import FlingBoard
    from epcg.games.witness.found import WitnessPuzzle

    study = run_replicate(ExperimentParams(population=20, mnm=1, states=12, mating_events=200, max_rooms=40,
                                           grid=(40, 40)), seed_for(1, 0))
    return {
        "fling": FlingBoard(7, 8, 6, 38012).figure(),
        "witness-hexagons": WitnessPuzzle("must-cross", 3, 3, (3,), 1247, row="3x3:3").figure(),
        "witness-squares": WitnessPuzzle("joint", 3, 3, (2, 2), 34545, row="3x3:2+2").figure(),
        "dwp": map_figure(study.best_map, study.best_rooms,
                          title=f"one evolved map: fitness {study.best_fitness:.1f}, {len(study.best_rooms)} rooms"),
    }


def main(out: Path = HERE) -> list[Path]:
    """Write each figure as ``out/<stem>.png``."""
    written = []
    for stem, fig in figures().items():
        path = out / f"{stem}.png"
        path.write_bytes(png_bytes(fig, dpi=60))
        written.append(path)
    return written


if __name__ == "__main__":
    print("\n".join(map(str, main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE))))
