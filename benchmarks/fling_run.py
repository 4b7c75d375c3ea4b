"""Figures of a Fling! run from its manifest: per stage wall and compute seconds, boards per wall second,
the worker processes' peak RSS, and each layer's counts.

Reads the task records a run (finished, running or interrupted) has written,
so it measures the run itself rather than a rerun: a stage's wall time runs
from its first task's start to its last task's end, and a layer's rate counts
the boards it represents over its own wall time and over that of the fill
before it (which only it needs).

    epcg run jobs/fling.toml --set max_pieces=11 --out runs/fling-11
    python benchmarks/fling_run.py runs/fling-11
"""

from __future__ import annotations

import argparse
import math
from collections import defaultdict
from pathlib import Path

from epcg.runtime.jobs import load_job
from epcg.runtime.records import unseal


def stage_records(run: Path) -> dict[str, list[dict]]:
    """Every readable task record of ``run``, by stage name."""
    out: dict[str, list[dict]] = defaultdict(list)
    for path in sorted((run / "manifest").glob("*/*.json")):
        record = unseal(path.read_text())
        if record is not None:
            out[record["task"].split("/")[0]].append(record)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a Fling! run directory")
    args = parser.parse_args()
    config = load_job(args.run / "job.toml", []).config
    cells = config.width * config.height
    stages = stage_records(args.run)
    span = {name: (min(r["ended_at"] - r["seconds"] for r in rs), max(r["ended_at"] for r in rs))
            for name, rs in stages.items()}
    print(f"{args.run}: {config.width}x{config.height}, max_pieces={config.max_pieces}, symmetry={config.symmetry}, "
          f"kernel={config.kernel!r}")
    print(f"{'stage':<6} {'tasks':>6} {'wall s':>8} {'compute s':>10} {'peak RSS':>9} {'boards':>17} {'solvable':>16} "
          f"{'unique':>12} {'M boards/wall s':>16}")
    first = min((t0 for t0, _ in span.values()), default=0.0)
    last = max((t1 for _, t1 in span.values()), default=0.0)
    for name in sorted(stages, key=lambda s: (not s[1:].isdigit(), int(s[1:]) if s[1:].isdigit() else 0, s[0] == "k")):
        records = stages[name]
        t0, t1 = span[name]
        wall = t1 - t0
        line = (f"{name:<6} {len(records):>6} {wall:>8.1f} {sum(r['seconds'] for r in records):>10.1f} "
                f"{max(r['max_rss'] for r in records) / 2**30:>7.2f}Gi")
        if name[0] == "k" and name[1:].isdigit():
            k = int(name[1:])
            fill = f"f{k - 1:02d}"
            layer_wall = wall + (span[fill][1] - span[fill][0] if fill in span else 0.0)
            boards = math.comb(cells, k)
            line += (f" {boards:>17,} {sum(r['result']['solvable'] for r in records):>16,} "
                     f"{sum(r['result']['unique'] for r in records):>12,} {boards / layer_wall / 1e6:>16.1f}")
        print(line)
    print(f"from the first task's start to the last task's end: {last - first:.1f} s "
          f"({(last - first) / 60:.1f} min); peak RSS of any worker process: "
          f"{max(r['max_rss'] for rs in stages.values() for r in rs) / 2**30:.2f} GiB")
    print("(counts are complete only for stages whose tasks are all recorded: compare `tasks` with `epcg status`)")


if __name__ == "__main__":
    main()
