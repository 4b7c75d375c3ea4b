"""Run one benchmark side by side on two commits and print the medians and their ratio.

Both commits are checked out into temporary git worktrees (so edits in the
working tree do not leak into the measurement) and each side runs its own copy
of the benchmark with ``PYTHONPATH`` pointed at its tree. After one discarded
warm-up run per side (numba compiles into each tree's cache), the sides
alternate in pairs whose order flips each time (AB BA AB ...), so a slow drift
of the machine's load falls on both equally. Measured per run: wall seconds
and the child's CPU seconds (user + system); with ``--metric REGEX``, also the
first number the regex captures from the benchmark's output (for example its
own total).

    python benchmarks/compare_commits.py 3503be4 benchmarks/witness_triple.py
    python benchmarks/compare_commits.py 3503be4 benchmarks/fling_kernel.py --repeats 5 -- --max-pieces 7
    python benchmarks/compare_commits.py 3503be4 benchmarks/witness_tables.py \
        --head-arg=--paper --head-arg=--set --head-arg=solution_counts=0

A ratio is HEAD's median over the base's: above 1 means HEAD is slower.
"""

from __future__ import annotations

import argparse
import resource
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def checkout(rev: str, where: Path) -> Path:
    """A detached worktree of ``rev`` at ``where``."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(where), rev], check=True)
    return where


def remove(where: Path) -> None:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)], check=False)


def run_once(tree: Path, script: str, args: list[str], metric: re.Pattern | None) -> dict[str, float]:
    """Run the tree's copy of ``script``: its wall seconds (and the metric, if asked)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    began = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(tree / script), *args], cwd=tree, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate()
    wall = time.perf_counter() - began
    if proc.returncode != 0:
        raise SystemExit(f"{script} failed in {tree} (exit {proc.returncode}):\n{err[-2000:]}")
    result = {"wall": wall}
    if metric is not None:
        found = metric.search(out)
        if found is None:
            raise SystemExit(f"--metric {metric.pattern!r} matches nothing in the output of {script} in {tree}")
        result["metric"] = float(found.group(1).replace(",", ""))
    return result


def child_cpu() -> float:
    """CPU seconds (user + system) of every child reaped so far."""

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(tree: Path, script: str, args: list[str], metric: re.Pattern | None) -> dict[str, float]:
    """One run: wall seconds, the child's CPU seconds, the metric."""
    before = child_cpu()
    result = run_once(tree, script, args, metric)
    result["cpu"] = child_cpu() - before
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="the commit to compare against")
    parser.add_argument("script", help="the benchmark, relative to the repository root")
    parser.add_argument("--head", default="HEAD", help="the commit to measure (default HEAD)")
    parser.add_argument("--repeats", type=int, default=5, help="runs per side after the warm-up")
    parser.add_argument("--metric", help="regex whose first group is a number in the benchmark's output")
    parser.add_argument("--head-arg", action="append", default=[], metavar="ARG",
                        help="an argument for the head side only, e.g. an option the base's copy does not know "
                             "that makes both sides do the same work (repeatable)")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    opts = parser.parse_args(argv[:cut])
    opts.args = argv[cut + 1:]
    metric = re.compile(opts.metric) if opts.metric else None
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the worktrees are removed on SIGTERM too

    with tempfile.TemporaryDirectory(prefix="epcg-compare-") as tmp:
        sides = {"base": Path(tmp) / "base", "head": Path(tmp) / "head"}
        try:
            checkout(opts.base, sides["base"])
            checkout(opts.head, sides["head"])
            revs = {name: subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], check=True,
                                         capture_output=True, text=True).stdout.strip()
                    for name, tree in sides.items()}
            print(f"{opts.script} {' '.join(opts.args)} (head also {' '.join(opts.head_arg) or 'nothing'}): base {revs['base']} vs head {revs['head']}, "
                  f"{opts.repeats} runs each after a warm-up", flush=True)
            args = {"base": opts.args, "head": [*opts.args, *opts.head_arg]}
            for name, tree in sides.items():
                measure(tree, opts.script, args[name], metric)
            runs: dict[str, list[dict[str, float]]] = {"base": [], "head": []}
            for i in range(opts.repeats):
                order = ("base", "head") if i % 2 == 0 else ("head", "base")
                for name in order:
                    got = measure(sides[name], opts.script, args[name], metric)
                    runs[name].append(got)
                    shown = " ".join(f"{k} {v:.3f}" for k, v in got.items())
                    print(f"  run {i + 1} {name:<4} {shown}", flush=True)
        finally:
            for tree in sides.values():
                remove(tree)
    for key in runs["base"][0]:
        base = statistics.median(r[key] for r in runs["base"])
        head = statistics.median(r[key] for r in runs["head"])
        print(f"median {key:<6} base {base:9.3f}  head {head:9.3f}  ratio head/base {head / base:.3f}")


if __name__ == "__main__":
    main()
