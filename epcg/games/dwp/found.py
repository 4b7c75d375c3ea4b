"""Level maps a DWP study found: the best map of every run of every experiment."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from epcg.report.found import Found
from epcg.runtime.records import Vouched


@dataclass(frozen=True, eq=False)
class LevelMap(Found):
    """The best map of one evolutionary run (grid and rooms read from the store when drawn)."""

    experiment: int
    run: int
    fitness: float
    rooms: int
    seed: int
    grid_shape: tuple[int, int]
    store: Vouched
    kind: str = field(default="dwp-map", init=False)

    @property
    def _stage(self) -> str:
        return f"exp{self.experiment:02d}"

    def grid(self) -> np.ndarray:
        """Cells: 0 empty, 1 room, 2 corridor, 3 start room, 4 obstacle (``rows × cols`` int8)."""
        return self.store.read(f"{self._stage}/maps/{self.run:04d}").reshape(self.grid_shape)

    def room_list(self) -> np.ndarray:
        """One row per room or corridor: ``(row, col, height, width, kind)``."""
        return self.store.read(f"{self._stage}/rooms/{self.run:04d}").reshape(-1, 5)

    def ident(self) -> str:
        return f"{self.kind}-{self.experiment}-{self.run}"

    def caption(self) -> str:
        return f"experiment {self.experiment} · run {self.run} · fitness {self.fitness:.1f} · {self.rooms} rooms"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "experiment": self.experiment, "run": self.run, "fitness": self.fitness,
                "rooms": self.rooms, "seed": self.seed, "grid": ["".join(map(str, row)) for row in self.grid().tolist()],
                "room_list": self.room_list().tolist()}

    def figure(self) -> Figure:
        from epcg.games.dwp.domain.render import map_figure

        return map_figure(self.grid(), self.room_list(), title=self.caption(), size=4.0)
