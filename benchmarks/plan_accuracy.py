"""How right the plan and the running time left are: a matrix of jobs run as a user runs them (``epcg run …
--workers 2``, one process each, one after another), each plan against what the run took.

For each job it prints:

- ``plan``: the estimate the run printed before its first chunk ("epcg plan's estimate: about …", the work on
  the workers; from DIR/plan.json's task seconds over the tasks computing at once, unrounded);
- ``actual``: the run's length less its warm-up (results.json ``wall_seconds - warm_up_seconds``: from the
  first task's start to the last chunk, the span the plan estimates);
- ``ratio``: actual / plan (the goal: within 0.67 .. 1.5);
- ``ETA@20%``: the time left the run printed once a fifth of its chunks were done, against the time it really
  had left then (ratio; 1.0 is right).

``--beside`` runs every job beside a second load: a process spinning on one core for the whole matrix, as a
user's other work would.

    python benchmarks/plan_accuracy.py                 # the whole matrix, machine otherwise idle
    python benchmarks/plan_accuracy.py --beside        # the same beside a second job
    python benchmarks/plan_accuracy.py --quick         # smaller rows of the Witness jobs (minutes, not a quarter hour)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAIN_ROWS = 'rows=["3x3:3","3x3:5","3x4:3","3x4:5","4x4:3","4x4:4","4x4:5","4x4:6","5x5:1","5x5:2","5x5:3","5x5:4","5x5:5","5x5:6"]'
QUICK_ROWS = 'rows=["4x4:6","5x5:4","5x5:5"]'


def matrix(quick: bool) -> list[tuple[str, list[str]]]:
    """(name, epcg run arguments) of every job measured."""
    return [
        ("witness main job", [str(ROOT / "jobs" / "witness-must-cross.toml"), "--set",
                              QUICK_ROWS if quick else MAIN_ROWS]),
        ("fling 8 pieces", [str(ROOT / "jobs" / "fling.toml"), "--set", "max_pieces=8"]),
        ("fling 9 pieces", [str(ROOT / "jobs" / "fling.toml"), "--set", "max_pieces=9"]),
        ("user scan (examples/must-cross)", [str(ROOT / "examples" / "must-cross" / "job.toml")]
         + (["--set", 'rows=[{width = 4, height = 4, k = 6}, {width = 4, height = 5, k = 5}]'] if quick else [])),
        ("witness paths", [str(ROOT / "jobs" / "witness-paths.toml")]),
    ]


def planned_seconds(run_dir: Path) -> float | None:
    """The plan's work on the workers: every task's estimated seconds over the tasks computing at once."""
    from epcg.runtime.readout import PLAN_FILE

    data = json.loads((run_dir / PLAN_FILE).read_text())
    seconds = data["task_seconds"]
    if not data.get("slots") or any(v is None for v in seconds.values()):
        return None
    counts: dict[str, int] = {}
    for record in (run_dir / "manifest").glob("*/*.json"):
        counts[record.parent.name] = counts.get(record.parent.name, 0) + 1
    return sum(seconds.get(stage, 0.0) * n for stage, n in counts.items()) / data["slots"]


def eta_at_fifth(stderr: str, end: float) -> float | None:
    """The time left printed once a fifth of the chunks were done, over the time really left then."""
    day = time.localtime()
    for line in stderr.splitlines():
        found = re.search(r"^(\d\d:\d\d:\d\d) progress: ([\d,]+) of ([\d,]+) chunks.*about ([\d.]+) (s|min|h|d) left",
                          line)
        if not found:
            continue
        done, total = (int(found.group(i).replace(",", "")) for i in (2, 3))
        if done < total / 5:
            continue
        clock = time.strptime(found.group(1), "%H:%M:%S")
        at = time.mktime(day[:3] + clock[3:6] + day[6:])
        left = float(found.group(4)) * {"s": 1, "min": 60, "h": 3600, "d": 86400}[found.group(5)]
        return left / max(end - at, 1e-9)
    return None


def run_one(name: str, args: list[str], scratch: Path) -> tuple[str, float | None, float, float | None]:
    out = scratch / re.sub(r"\W+", "-", name)
    env = {**os.environ, "EPCG_PROGRESS_INTERVAL": "2"}
    result = subprocess.run([sys.executable, "-m", "epcg", "run", *args, "--workers", "2", "--out", str(out)],
                            capture_output=True, text=True, env=env, cwd=scratch)
    if result.returncode != 0:
        raise SystemExit(f"{name}: exit {result.returncode}: {result.stderr.strip().splitlines()[-1:]}")
    results = json.loads((out / "results.json").read_text())
    actual = results["wall_seconds"] - results.get("warm_up_seconds", 0.0)
    records = [json.loads(p.read_text())["record"] for p in (out / "manifest").glob("*/*.json")]
    end = max(r["ended_at"] for r in records)
    return name, planned_seconds(out), actual, eta_at_fifth(result.stderr, end)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beside", action="store_true", help="run every job beside a process spinning on a core")
    parser.add_argument("--quick", action="store_true", help="smaller Witness rows")
    parser.add_argument("--only", default="", help="only the jobs whose name contains this")
    options = parser.parse_args()
    load = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if options.beside else None
    try:
        print(f"{'job':<34} {'plan s':>8} {'actual s':>9} {'ratio':>6} {'ETA@20%':>8}"
              + ("   (beside a second job)" if options.beside else "   (machine otherwise idle)"))
        with tempfile.TemporaryDirectory() as scratch:
            for name, args in matrix(options.quick):
                if options.only not in name:
                    continue
                name, plan, actual, eta = run_one(name, args, Path(scratch))
                ratio = f"{actual / plan:.2f}" if plan else "?"
                print(f"{name:<34} {plan or 0:>8.1f} {actual:>9.1f} {ratio:>6} "
                      f"{'?' if eta is None else f'{eta:.2f}':>8}", flush=True)
    finally:
        if load is not None:
            load.kill()


if __name__ == "__main__":
    main()
