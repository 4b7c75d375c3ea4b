"""A small question through the whole command line: does the engine answer it at once?

Two comparisons, each command a whole process (start-up, imports, outputs included), run in turn
``--runs`` times, medians printed with their ratio:

1. a small job (``jobs/witness-paths.toml`` with ``rows=["4x4"]``): ``epcg run`` as a user types it
   (the engine runs a small job in-process) against ``epcg run --serial``; the goal is within 1.5x;
2. the 12x12 corner-to-corner path count: ``epcg run`` of that one row, against the library call
   (``frontier_run(12, 12)`` in a bare interpreter) and graphillion's ZDD (if installed: the
   ``peers`` extra); the goal is the command line faster than graphillion.

    python benchmarks/engine_small.py            # 3 runs each (about 3 minutes)
    python benchmarks/engine_small.py --runs 5
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
JOB = str(ROOT / "jobs" / "witness-paths.toml")
LIBRARY = "from epcg.games.witness.domain.frontier import frontier_run; print(frontier_run(12, 12).count)"
GRAPHILLION = """
from graphillion import GraphSet
n = 12
m = n + 1
edges = [(v, v + d) for v in range(1, m * m + 1) for d, ok in ((1, v % m), (m, v <= (m - 1) * m)) if ok]
GraphSet.set_universe(edges, traversal="as-is")
print(GraphSet.paths(1, m * m).len())
"""


def wall(args: list[str]) -> float:
    """Seconds one whole process takes; it must succeed."""
    began = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return seconds


def epcg_run(rows: str, *extra: str) -> list[str]:
    out = tempfile.mkdtemp(prefix="epcg-bench-")
    shutil.rmtree(out)
    return [sys.executable, "-m", "epcg.cli", "run", JOB, "--set", f"rows={rows}", "--out", out, *extra]


def series(commands: dict[str, callable], runs: int) -> dict[str, float]:
    """Each command ``runs`` times, in turn after one warm-up round (numba's cache); the median of each."""
    for make in commands.values():
        wall(make())
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, make in commands.items():
            times[name].append(wall(make()))
    for name, values in times.items():
        print(f"  {name:<34} median {statistics.median(values):6.2f} s  "
              f"(min {min(values):.2f}, max {max(values):.2f}, {runs} runs)")
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    print("small job: epcg run jobs/witness-paths.toml --set 'rows=[\"4x4\"]'")
    small = series({"epcg run": lambda: epcg_run('["4x4"]'),
                    "epcg run --serial": lambda: epcg_run('["4x4"]', "--serial")}, runs)
    print(f"  ratio epcg run / --serial: {small['epcg run'] / small['epcg run --serial']:.2f} (goal: at most 1.5)")
    print("12x12 corner-to-corner paths")
    commands = {"epcg run (rows=[\"12x12\"])": lambda: epcg_run('["12x12"]'),
                "library call (frontier_run)": lambda: [sys.executable, "-c", LIBRARY]}
    if importlib.util.find_spec("graphillion"):
        commands["graphillion (ZDD, as-is order)"] = lambda: [sys.executable, "-c", GRAPHILLION]
    paths = series(commands, runs)
    cli, library = paths['epcg run (rows=["12x12"])'], paths["library call (frontier_run)"]
    print(f"  ratio epcg run / library call: {cli / library:.2f}")
    if "graphillion (ZDD, as-is order)" in paths:
        print(f"  ratio epcg run / graphillion: {cli / paths['graphillion (ZDD, as-is order)']:.2f} "
              "(goal: below 1)")
    else:
        print("  graphillion is not installed (pip install -e '.[peers]'): no comparison")


if __name__ == "__main__":
    main()
