"""A "do what's possible" study as a Python object: the best map of every run, and its part of report.html.

>>> DwpRun.FOUND, [t.__name__ for t in DwpRun.found_types]
('maps', ['LevelMap'])
"""

from __future__ import annotations

from collections.abc import Iterator

from epcg.api.runs import Run, check_count
from epcg.games.dwp.found import LevelMap
from epcg.report.gallery import Group, Item, share, spread
from epcg.runtime.errors import InvalidValue


class DwpRun(Run):
    """A DWP study: ``maps()``, the best map of each evolutionary run."""

    FOUND = "maps"
    NOTATION = "\n".join([
        "- The table, one row per experiment (a row of the paper's Table I): `exp.` its id; `population` the "
        "machines (self-driving automata) evolved together; `MNM` the most mutations a child gets (1 .. MNM); "
        "`states` the states of each machine; `RRH` whether the recent-room hack is on (a proposal extends one "
        "of the 10 newest rooms); `grid` the map's rows × columns; `rooms` the most rooms a map may hold; "
        "`mating events` the evolution steps of each run; `runs` the evolutionary runs; `median`, `mean`, `min`, "
        "`max` of the fitness of each run's best map; `seconds` compute time summed; `note` where our setting "
        "differs from the paper's.",
        "- Fitness is A²/B: A the cells the rooms and corridors cover, B the area of the box around them. "
        "Pictures: the start room red, rooms grey, corridors blue, obstacles light blue. More: docs/games.md.",
    ])
    WHERE = {"maps": {
        "experiment": ("an experiment's `id`", "the best maps of that experiment's runs (default: every experiment)"),
        "run": ("0, 1, ...", "the best map of that evolutionary run of each experiment"),
    }}
    """The filters of ``maps``: values and what each selects (docs/filters.md)."""
    found_types = (LevelMap,)
    FILTERS = (("experiment", "experiment", "select"), ("states", "states", "select"),
               ("fitness", "fitness at least", "min"))

    def maps(self, experiment: int | None = None, run: int | None = None) -> Iterator[LevelMap]:
        """The best map of each run of each experiment (or of the ones asked for)."""
        experiments = [res["experiment"] for res in self.results["rows"]]
        if experiment is not None and experiment not in experiments:
            raise InvalidValue(f"run {self.name} has experiments {', '.join(map(str, experiments))}, "
                               f"not {experiment!r}")
        check_count("run", run)
        return self._maps(experiment, run)

    def _maps(self, experiment: int | None, run: int | None) -> Iterator[LevelMap]:
        for res in self.results["rows"]:
            if experiment not in (None, res["experiment"]):
                continue
            for per_run in res["per_run"]:
                if run not in (None, per_run["run"]):
                    continue
                yield LevelMap(res["experiment"], per_run["run"], per_run["best_fitness"], per_run["rooms"],
                               per_run["seed"], tuple(res["grid"]), self.stored)

    def gallery(self, items: int) -> list[Group]:
        """Per experiment, maps spread from the fittest to the least fit."""
        rows = self.results["rows"]
        n = share(items, len(rows))
        out = []
        for r in rows:
            maps = sorted(self.maps(experiment=r["experiment"]), key=lambda m: (-m.fitness, m.run))
            group = f"experiment {r['experiment']}"
            out.append(Group(group, len(maps), [
                Item(maps[i], group, {"experiment": r["experiment"], "states": r["states"],
                                      "fitness": round(maps[i].fitness, 1)}) for i in sorted(spread(len(maps), n))]))
        return out
