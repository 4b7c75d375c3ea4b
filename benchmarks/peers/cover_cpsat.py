"""epcg's unique-cover branch and bound beside OR-Tools CP-SAT: the fewest must-cross hexagons leaving one solution.

The question, per board: the smallest k such that some k must-cross positions
(vertices and edges, numbered as in ``geometry.py``) are crossed by exactly one
start-to-goal path, and every panel (set of positions) of that size that does it.

- epcg: ``epcg.games.witness.domain.cover.unique_covers`` (numba branch and bound),
  timed with the path list and its bitset tables built first (in the timing).
- CP-SAT (one worker), given the same path list: a Boolean ``x_s`` per position
  and ``y_P`` per path; exactly one ``y`` is true; ``x_s <= sum of y_P over the
  paths P through s`` (the chosen positions lie on the chosen path); for every
  path ``Q``, ``y_Q or some x_s with s off Q`` (every other path misses a
  chosen position). Phase 1 minimises ``sum x``; phase 2 fixes ``sum x = k``
  and enumerates every solution (each is one panel: its path is forced).

Each system runs in its own fresh process, one thread. The script checks that
k and the set of panels are equal; a CP-SAT phase that hits ``--time-limit``
(wall seconds: CP-SAT has no CPU-time limit) is printed as a lower bound on
its CPU seconds, and its partial answer is checked to be consistent (its lower
bound not above epcg's k, no panel smaller than epcg's k, every panel it found
among epcg's).

    python benchmarks/peers/cover_cpsat.py                       # 3x3 and 4x4, CP-SAT 120 s a phase (~5 min)
    python benchmarks/peers/cover_cpsat.py --boards 5x4 --time-limit 600
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _child import measure, peak_mb, report  # noqa: E402

HERE = Path(__file__).resolve()


def epcg_child(w: int, h: int) -> None:
    from epcg.games.witness.domain.bitsets import bitsets_for
    from epcg.games.witness.domain.cover import cover_positions, unique_covers
    from epcg.games.witness.domain.paths import paths_for

    unique_covers(2, 2)  # load the compiled kernels
    t, c = time.perf_counter(), time.process_time()
    paths_for(w, h)
    bitsets_for(w, h)
    r = unique_covers(w, h)
    cpu, wall = time.process_time() - c, time.perf_counter() - t
    report(k=r.k, panels=sorted(cover_positions(m) for m in r.masks), cpu=cpu, wall=wall, mb=peak_mb())


def _model(w: int, h: int):
    """The CP-SAT model of one board and its position variables."""
    import numpy as np
    from ortools.sat.python import cp_model

    from epcg.games.witness.domain.paths import paths_for

    ps = paths_for(w, h)
    npos = ps.geometry.num_positions
    bits = np.array([[(int(ps.cross_mask[i, p >> 6]) >> (p & 63)) & 1 for p in range(npos)] for i in range(len(ps))],
                    dtype=bool)
    model = cp_model.CpModel()
    x = [model.new_bool_var(f"x{s}") for s in range(npos)]
    y = [model.new_bool_var(f"y{q}") for q in range(len(ps))]
    model.add_exactly_one(y)
    for s in range(npos):
        model.add(x[s] <= sum(y[q] for q in np.flatnonzero(bits[:, s])))
    for q in range(len(ps)):
        model.add_bool_or([y[q], *(x[s] for s in np.flatnonzero(~bits[q]))])
    return model, x


def cpsat_child(w: int, h: int, limit: float) -> None:
    from ortools.sat.python import cp_model

    t, c = time.perf_counter(), time.process_time()
    model, x = _model(w, h)
    build = time.process_time() - c

    def solver() -> cp_model.CpSolver:
        s = cp_model.CpSolver()
        s.parameters.num_workers = 1
        s.parameters.max_time_in_seconds = limit
        return s

    c = time.process_time()
    model.minimize(sum(x))
    first = solver()
    status = first.solve(model)
    min_cpu = time.process_time() - c
    proved = status == cp_model.OPTIMAL
    k = int(round(first.objective_value)) if status in (cp_model.OPTIMAL, cp_model.FEASIBLE) else None
    bound = int(round(first.best_objective_bound))
    panels: list[tuple[int, ...]] = []
    list_cpu, complete = 0.0, False
    if proved:
        model.clear_objective()
        model.add(sum(x) == k)

        class Collect(cp_model.CpSolverSolutionCallback):
            def on_solution_callback(self) -> None:
                panels.append(tuple(s for s, v in enumerate(x) if self.boolean_value(v)))

        c = time.process_time()
        second = solver()
        second.parameters.enumerate_all_solutions = True
        complete = second.solve(model, Collect()) == cp_model.OPTIMAL
        list_cpu = time.process_time() - c
    report(k=k, proved=proved, bound=bound, panels=sorted(panels), complete=complete, build=build,
           min_cpu=min_cpu, list_cpu=list_cpu, wall=time.perf_counter() - t, mb=peak_mb())


def compare(boards: list[str], limit: float, out=print) -> list[dict]:
    """Answer every board with both systems; one row per board."""
    rows = []
    out(f"{'board':>5} {'k':>3} {'panels':>7} {'epcg s':>8} {'CP-SAT model s':>14} {'CP-SAT min s':>13} "
        f"{'ratio':>8} {'CP-SAT list s':>14} {'ratio':>8}")
    for text in boards:
        w, h = map(int, text.split("x"))
        ours = measure(HERE, "epcg", str(w), str(h))
        theirs = measure(HERE, "cpsat", str(w), str(h), str(limit))
        ours_panels = {tuple(p) for p in ours["panels"]}
        their_panels = {tuple(p) for p in theirs["panels"]}
        if theirs["proved"] and theirs["k"] != ours["k"]:
            raise SystemExit(f"{text}: epcg finds k={ours['k']}, CP-SAT proves k={theirs['k']}")
        if theirs["bound"] > ours["k"] or (theirs["k"] or ours["k"]) < ours["k"] or not their_panels <= ours_panels:
            raise SystemExit(f"{text}: CP-SAT's answer contradicts epcg's")
        if theirs["complete"] and their_panels != ours_panels:
            raise SystemExit(f"{text}: CP-SAT lists {len(their_panels)} panels, epcg {len(ours_panels)}")
        e = max(ours["cpu"], 1e-9)
        mark = "" if theirs["proved"] else ">"
        lmark = "" if theirs["complete"] else ">"
        list_s = f"{lmark}{theirs['list_cpu']:.2f}" if theirs["proved"] else "–"
        list_r = f"{lmark}{(theirs['min_cpu'] + theirs['list_cpu']) / e:.0f}x" if theirs["proved"] else "–"
        out(f"{text:>5} {ours['k']:>3} {len(ours_panels):>7,} {ours['cpu']:>8.3f} {theirs['build']:>14.2f} "
            f"{mark + format(theirs['min_cpu'], '.2f'):>13} {mark + format(theirs['min_cpu'] / e, '.0f') + 'x':>8} "
            f"{list_s:>14} {list_r:>8}")
        if not theirs["complete"]:
            found = "no panel found" if theirs["k"] is None else f"best panel found: k = {theirs['k']}"
            state = "k proved" if theirs["proved"] else f"k not proved ({found}, lower bound {theirs['bound']})"
            out(f"{'':>5} CP-SAT within {limit:g} wall seconds a phase: {state}, {len(their_panels):,} of the "
                f"{len(ours_panels):,} panels listed (all of them among epcg's)")
        rows.append({"board": text, "epcg": ours, "cpsat": theirs})
    out("epcg s: CPU seconds of listing the paths, building the bitsets and the branch and bound; CP-SAT: CPU "
        "seconds of building the model (not in the ratios), proving the minimum, and listing every panel at it "
        "(the second ratio: minimum + list against epcg's whole answer). '>': stopped at the time limit.")
    return rows


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        w, h = int(sys.argv[3]), int(sys.argv[4])
        return epcg_child(w, h) if sys.argv[2] == "epcg" else cpsat_child(w, h, float(sys.argv[5]))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", nargs="+", default=["3x3", "4x4"], help="boards up to 5x5, e.g. 4x4 5x4")
    parser.add_argument("--time-limit", type=float, default=120.0, help="CP-SAT seconds per phase (default 120)")
    args = parser.parse_args()
    compare(args.boards, args.time_limit)


if __name__ == "__main__":
    main()
