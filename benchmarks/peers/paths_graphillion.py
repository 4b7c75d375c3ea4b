"""epcg's frontier path counter beside graphillion's ZDD: corner-to-corner paths of n×n boards.

The question: how many self-avoiding paths join opposite corners of a board of
n×n cells (OEIS A007764)? epcg counts them with its frontier programme
(``epcg.games.witness.domain.frontier.count_paths``, numba); graphillion builds the
ZDD of all such paths (``GraphSet.paths``, C++) with the edge order named by
``--orders`` and counts it (``len()``). Every measurement runs in its own fresh
process, one thread, the two systems alternating board by board; the script
stops if two counts differ. Printed per board: the count, CPU seconds of each
(process time, so other load on the machine inflates it less than wall time),
the ratio graphillion / epcg, and the peak resident memory of each process
above what it held after its imports (MB).

    python benchmarks/peers/paths_graphillion.py                      # 4x4 .. 10x10, as-is order (~1 min)
    python benchmarks/peers/paths_graphillion.py --sizes 11 12        # ~1 GB and a minute for graphillion at 12
    python benchmarks/peers/paths_graphillion.py --orders as-is bfs   # graphillion's other edge orders too
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _child import measure, peak_mb, report  # noqa: E402

HERE = Path(__file__).resolve()


def grid_edges(n: int) -> list[tuple[int, int]]:
    """The edges of an n×n-cell grid for graphillion, vertices 1..(n+1)^2 row by row (as ``tutorial.grid``)."""
    m = n + 1
    edges = []
    for v in range(1, m * m + 1):
        if v % m:
            edges.append((v, v + 1))
        if v <= (m - 1) * m:
            edges.append((v, v + m))
    return edges


def child(system: str, n: int) -> None:
    """Count in this process and print ``{count, cpu, wall, mb}``."""
    if system == "epcg":
        from epcg.games.witness.domain.frontier import frontier_run

        frontier_run(2, 2)  # load the compiled kernels
        base = peak_mb()
        t, c = time.perf_counter(), time.process_time()
        count = frontier_run(n, n).count
    else:
        from graphillion import GraphSet

        base = peak_mb()
        t, c = time.perf_counter(), time.process_time()
        GraphSet.set_universe(grid_edges(n), traversal=system)
        count = GraphSet.paths(1, (n + 1) ** 2).len()
    report(count=count, cpu=time.process_time() - c, wall=time.perf_counter() - t, mb=peak_mb() - base)


def compare(sizes: list[int], orders: list[str], out=print) -> list[dict]:
    """Count every board with both systems; one row per board and graphillion order."""
    rows = []
    out(f"{'board':>7} {'paths':>42} {'system':>18} {'cpu s':>8} {'wall s':>8} {'MB':>7} {'ratio':>7}")
    for n in sizes:
        ours = measure(HERE, "epcg", str(n))
        out(f"{n}x{n:<5} {ours['count']:>42,} {'epcg':>18} {ours['cpu']:>8.3f} {ours['wall']:>8.3f} "
            f"{ours['mb']:>7.1f}")
        for order in orders:
            theirs = measure(HERE, order, str(n))
            if theirs["count"] != ours["count"]:
                raise SystemExit(f"{n}x{n}: epcg counts {ours['count']}, graphillion ({order}) {theirs['count']}")
            ratio = theirs["cpu"] / max(ours["cpu"], 1e-9)
            out(f"{'':>7} {'(equal)':>42} {'graphillion ' + order:>18} {theirs['cpu']:>8.3f} "
                f"{theirs['wall']:>8.3f} {theirs['mb']:>7.1f} {ratio:>6.1f}x")
            rows.append({"n": n, "order": order, "count": ours["count"], "epcg": ours, "graphillion": theirs,
                         "ratio": ratio})
    out("ratio: graphillion CPU seconds / epcg CPU seconds, each in a fresh single-threaded process; "
        "MB: peak resident memory above the process's after-import peak.")
    return rows


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        return child(sys.argv[2], int(sys.argv[3]))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(range(4, 11)), help="cells a side")
    parser.add_argument("--orders", nargs="+", default=["as-is"], choices=["as-is", "bfs", "dfs", "greedy"],
                        help="graphillion's edge orders (traversal=); greedy fails on odd sizes past 8")
    args = parser.parse_args()
    compare(args.sizes, args.orders)


if __name__ == "__main__":
    main()
