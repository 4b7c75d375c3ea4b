"""What exact expert evaluation costs against a sample, on the stored layers of a finished Fling! run.

For the deepest layer (the ``top`` stage) of a run, times the same evenly
spaced word ranges twice in one process, interleaved: evaluated exact (every
uniquely solvable orbit) and with ``--sample`` (``ratio_sample``: only the
ranges' blocks in the seeded sample). Prints each range's seconds, the ratio
sampled / exact over all ranges, and the whole stage's compute projected from
the exact seconds per word. The layers themselves are not recomputed.

    epcg run jobs/fling.toml --set max_pieces=9 --out runs/fling-9
    python benchmarks/fling_exact.py runs/fling-9 --ranges 6
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from epcg.games.fling import evaluation as fling_evaluate
from epcg.games.fling import kind as fling
from epcg.runtime.jobs import load_job
from epcg.runtime.plan import Task
from epcg.runtime.store import RunDir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a finished Fling! run directory")
    parser.add_argument("--ranges", type=int, default=6, help="word ranges timed (evenly spaced over the layer)")
    parser.add_argument("--words", type=int, default=1 << 18, help="words per range")
    parser.add_argument("--sample", type=float, default=2.0**32, help="ratio_sample of the sampled evaluation")
    args = parser.parse_args()
    run = RunDir(args.run)
    exact = load_job(args.run / "job.toml", []).config.model_copy(update={"ratio_sample": None})
    sampled = exact.model_copy(update={"ratio_sample": int(args.sample)})
    k = exact.max_pieces
    total = exact.words(k)
    arrays = lambda layer: fling._layer_arrays(exact, layer)  # noqa: E731
    fraction = fling_evaluate.fraction(sampled, k)
    print(f"{args.run}: layer {k}, {total:,} words; sample ratio_sample={int(args.sample)}: {fraction:.1%} of blocks")
    for config in (exact, sampled):  # load the compiled kernels before timing
        fling_evaluate.run_task(config, Task(fling_evaluate.EVALUATE, 0, 0, 1), run, arrays)
    spent = {"exact": 0.0, "sampled": 0.0}
    evaluated = {"exact": 0, "sampled": 0}
    for i in range(args.ranges):
        start = total * (2 * i + 1) // (2 * args.ranges) - args.words // 2
        start = max(0, min(start, total - args.words))
        task = Task(fling_evaluate.EVALUATE, i, start, min(start + args.words, total))
        line = [f"words {task.start:>12,}..{task.stop:<12,}"]
        for name, config in (("exact", exact), ("sampled", sampled)):
            began = time.thread_time()
            out = fling_evaluate.run_task(config, task, run, arrays)
            seconds = time.thread_time() - began
            spent[name] += seconds
            evaluated[name] += out["evaluated"]
            line.append(f"{name} {seconds:7.2f} s ({out['evaluated']:,} orbits)")
        print("  ".join(line))
    print(f"sampled / exact compute: {spent['sampled'] / spent['exact']:.3f} "
          f"(orbits evaluated {evaluated['sampled'] / max(evaluated['exact'], 1):.3f})")
    per_orbit = spent["exact"] / max(evaluated["exact"], 1)
    print(f"exact {1e3 * per_orbit:.3f} ms an orbit (one thread, CPU time)")
    results = args.run / "results.json"
    if results.exists() and json.loads(results.read_text()).get("exact"):
        orbits = json.loads(results.read_text())["evaluated"]
        print(f"the whole top stage, projected by orbits ({orbits:,} unique orbits in the run's results): "
              f"{per_orbit * orbits:.0f} s exact, {per_orbit * orbits * spent['sampled'] / spent['exact']:.0f} s "
              "sampled")


if __name__ == "__main__":
    main()
