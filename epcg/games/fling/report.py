"""summary.md and figures for Fling! runs: layer counts beside the published figures, throughput, puzzles,
and the distributions of expert ratios and solution counts per piece count."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from epcg.kinds.keep import band_of, band_text
from epcg.runtime.estimate import size
from epcg.runtime.store import RunDir

PUBLISHED = {  # 7×8, pieces: (solvable, unique) — the reference implementation behind the paper
    2: (267, 267),
    3: (2_720, 2_110),
    4: (35_518, 15_724),
    5: (481_048, 103_324),
}
PAPER_TEXT = {10: "35.6 billion boards, 15 million uniquely solvable", 11: "148.9 billion boards, 4 h 13 min"}


def summary(config: Any, results: dict[str, Any]) -> str:
    seven_by_eight = (config.width, config.height) == (7, 8)
    out = [
        f"# {config.name}: Fling! retrograde analysis on {config.width}x{config.height}",
        "",
        "| pieces | boards | solvable | unique | expected (solvable, unique) | tasks | seconds | boards/s per worker | boards/s wall | checksum |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in results["rows"]:
        expected = PUBLISHED.get(row["pieces"]) if seven_by_eight else None
        if expected:
            mark = "✓" if expected == (row["solvable"], row["unique"]) else "✗"
            expected_text = f"{expected[0]:,}, {expected[1]:,} {mark}"
        else:
            expected_text = (PAPER_TEXT.get(row["pieces"], "–") if seven_by_eight else "–")
        out.append(
            f"| {row['pieces']} | {row['boards']:,} | {row['solvable']:,} | {row['unique']:,} | {expected_text} "
            f"| {row['tasks']} | {row['seconds']:.2f} | {row['boards_per_second'] or 0:,} "
            f"| {row['boards_per_wall_second'] or 0:,} | `{row['checksum']}` |"
        )
    out += [
        "",
        "Every count in this file is of boards, mirror images included (a run with `symmetry = true` solves "
        "one board per orbit and counts each orbit's boards); the best list shows one board per pattern with "
        "the boards it stands for. "
        "`seconds` is compute time (the CPU seconds of the tasks' threads) summed over tasks; boards/s per worker "
        "divides the layer by it, boards/s wall by the layer's elapsed time. The checksum does not depend on chunking: "
        "two runs agree bit for bit exactly when their checksums agree.",
    ]
    out += _reads_table(results["rows"])
    puzzles = results.get("puzzles") or []
    if puzzles and "pattern" in puzzles[0]:
        out += _best_patterns(config, results, puzzles)
    elif puzzles:
        out += ["", f"## Best {len(puzzles)} uniquely solvable boards with {config.max_pieces} pieces, "
                f"up to symmetry", ""]
        if results.get("top_tie"):
            out += [f"**{top_sentence(results['top_tie'])}.**", ""]
        out += [f"Ranked by expert ratio among {_evaluated(results)} ({results['evaluate_seconds']:.1f} s). Each row is one orbit (a board, "
                f"its mirror images and half turn: the same solutions and ratio), shown by its board of lowest "
                f"rank; `boards` is how many boards it stands for. Moves such as `a1D`: column letter, row from "
                f"the top, direction. Pictures: `figures/puzzle-NN.png`.", "", RATIO_WORDS, "",
                "| # | rank | boards | ratio | brute-force nodes | expert nodes | solution |",
                "|---|---|---|---|---|---|---|"]
        for i, p in enumerate(puzzles, 1):
            out.append(f"| {i} | {p['rank']:,} | {p.get('boards', '–')} | {p['ratio']:.3f} "
                       f"| {p['brute_force_nodes']:,} | {p['expert_nodes']:,} | {p['solution']} |")
    if results.get("kept"):
        out += ["", "## Kept in full (job key `keep`)", "",
                "Uniquely solvable boards whose expert ratio is in a band, per layer: `orbits` evaluated (one per "
                "orbit with symmetry), `boards` they stand for. `boards(k, min_ratio=x)` and `epcg export --where "
                "pieces=k --where min_ratio=x` read them at once when a band holds every ratio from x up.", "",
                "| pieces | band | orbits | boards | kept | where |", "|---|---|---|---|---|---|"]
        for e in results["kept"]:
            kept = f"{e['kept']:,}" + (" (cut by `keep_cap`)" if e["cut"] else "") + ("" if e["exact"] else ", a sample")
            out.append(f"| {e['pieces']} | {band_text(band_of(e['band']), 'ratio')} | {e['orbits']:,} "
                       f"| {e['boards']:,} | {kept} | `{e['store']}` |")
    out += _distribution_tables(results)
    return "\n".join(out) + "\n"


def _reads_table(rows: list[dict[str, Any]]) -> list[str]:
    """What each layer stage read of the layer before (raw bytes, as a multiple of that layer: read amplification),
    beside the plan's figure where it has one (a sliced layer: each read group once), and per host."""
    read = [r for r in rows if r.get("reads") and r["reads"]["bytes"]]
    if not read:
        return []
    out = ["", "## Reads of the layer before", "",
           "Bytes (uncompressed, both arrays) each layer's tasks read of the layer before from the store, and as a "
           "multiple of that layer (a worker holding a whole layer reads it once; a sliced layer's read groups each "
           "once, overlapping), beside the plan's figure.", "",
           "| pieces | read | × the layer before | plan | by host |", "|---|---|---|---|---|"]
    for r in read:
        x = r["reads"]
        plan = f"{x['planned'] / x['source']:.2f}×" if x.get("planned") is not None and x["source"] else "–"
        hosts = ", ".join(f"{h}: {size(n)}" for h, n in x["by_host"].items())
        out.append(f"| {r['pieces']} | {size(x['bytes'])} | {x['bytes'] / x['source']:.2f}× | {plan} | {hosts} |")
    return out


RATIO_WORDS = (
    "The expert ratio compares two searches for a board's solution. A brute-force solver tries every legal move "
    "at every position; an expert, after each move, tries only the moves that depend on it (a move that could "
    "have been played before it with the same result is skipped, since the solution of a uniquely solvable board "
    "never holds two such moves in a row). The ratio is the positions the brute-force search visits divided by "
    "those the expert visits (`brute-force nodes` / `expert nodes`): a high ratio is a board that wastes the time "
    "of a player who does not see which moves matter.")
"""The expert ratio in words, for summary.md and report.html."""


def _best_patterns(config: Any, results: dict[str, Any], puzzles: list[dict[str, Any]]) -> list[str]:
    """The best list of a run that kept patterns: one row per distinct puzzle."""
    copies = sum(p["copies"] for p in puzzles)
    out = ["", f"## Best {len(puzzles)} distinct puzzles with {config.max_pieces} pieces "
           f"({copies:,} boards, {len(puzzles)} patterns)", ""]
    if results.get("top_tie"):
        out += [f"**{top_sentence(results['top_tie'])}.**", ""]
    out += [f"Ranked by the ratio of the brute-force search tree to the expert's tree (after a move the expert "
            f"only tries moves that depend on it) among {_evaluated(results)} ({results['evaluate_seconds']:.1f} s). "
            "Each row is one *pattern*: the boards that are the same puzzle (one becomes the other by mirrors, "
            "turns, moving it and closing up or widening empty rows and columns that no move needs: the same "
            "moves, solution and search trees; docs/notation.md), shown by its board of lowest rank; `copies` is "
            "how many boards it stands for, `orbit` how many of them are this board's mirror images. Moves such "
            "as `a1D`: column letter, row from the top, direction. Pictures: `figures/puzzle-NN.png`.", "",
            RATIO_WORDS, "",
            "| # | rank | copies | orbit | ratio | brute-force nodes | expert nodes | solution |",
            "|---|---|---|---|---|---|---|---|"]
    for i, p in enumerate(puzzles, 1):
        out.append(f"| {i} | {p['rank']:,} | {p['copies']:,} | {p['boards']} | {p['ratio']:.3f} "
                   f"| {p['brute_force_nodes']:,} | {p['expert_nodes']:,} | {p['solution']} |")
    return out


def top_sentence(tie: dict[str, Any]) -> str:
    """results.json's ``top_tie`` as a sentence ("264 boards, 66 up to symmetry, share the top ratio 8.478")."""
    from epcg.games.fling.found import TopRatio

    return str(TopRatio(**tie))


def _evaluated(results: dict[str, Any]) -> str:
    """The boards the best were chosen from: all of the layer's unique ones, or a sample's."""
    boards = f"{results['evaluated']:,} uniquely solvable boards"
    if results.get("symmetry"):
        boards = (f"{results['evaluated']:,} orbits of uniquely solvable boards (one board each, for all "
                  f"{results['rows'][-1]['unique']:,} boards)")
    share = results.get("evaluated_fraction", 1)
    if share < 1:
        return f"the {boards} in a random {share:.2%} of the layer's blocks of 4,096 ranks"
    return f"all {boards}"


def quantile(counts: dict[str, int], q: float) -> int:
    """The smallest key (as an int) with at least a share ``q`` of the total at or below it.

    >>> quantile({"1": 5, "2": 3, "7": 2}, 0.5), quantile({"1": 5, "2": 3, "7": 2}, 0.9)
    (1, 7)
    """
    pairs = sorted((int(k), n) for k, n in counts.items())
    total, seen = sum(n for _, n in pairs), 0
    for key, n in pairs:
        seen += n
        if seen >= q * total:
            return key
    raise ValueError("empty histogram")


def _distribution_tables(results: dict[str, Any]) -> list[str]:
    ratios, counts = results.get("ratio_histograms"), results.get("solution_counts")
    if not ratios:
        return []
    which = ("Every uniquely solvable board of every layer (exact)." if all(h.get("exact", True) for h in ratios)
             else "Every uniquely solvable board of the smaller layers, and those in a random sample of the larger "
             "ones' blocks of 4,096 ranks (a **sample**: `ratio_sample`).")
    out = ["", "## Expert ratios per piece count", "",
           which + " Ratio = brute-force nodes / expert nodes, in bins 0.1 wide; a bin is named by its lower edge "
           "(`ratio_histograms` in results.json keys bin i, ratios from i/10 up to (i+1)/10), so the columns below "
           "are bins, not exact ratios; `figures/distribution-ratios.png`.", "",
           *([] if results.get("puzzles") else [RATIO_WORDS, ""]),
           "| pieces | evaluated | uniquely solvable | ratio below 1.1 | median bin | 90th percentile bin "
           "| 99th percentile bin | highest bin |",
           "|---|---|---|---|---|---|---|---|"]
    for h in ratios:
        how = "all" if h.get("exact", True) else f"sample: {h['fraction']:.2%} of blocks (seed {h['seed']})"
        if not h["boards"]:
            out.append(f"| {h['pieces']} | {how} | 0 | – | – | – | – | – |")
            continue
        w = h["bin_width"]
        cells = [f"{quantile(h['counts'], q) * w:.1f}" for q in (0.5, 0.9, 0.99)]
        top = max(int(k) for k in h["counts"]) * w
        sampled = "" if h.get("exact", True) else " (sample)"
        out.append(f"| {h['pieces']} | {how} | {h['boards']:,}{sampled} | {h['counts'].get('10', 0) / h['boards']:.1%} "
                   f"| {' | '.join(cells)} | {top:.1f} |")
    out += ["", "## Solution counts per piece count", "",
            "Move sequences down to one piece (the last move counted once) of solvable boards: every "
            "solvable board of the small layers (exact), and the solvable boards among boards drawn "
            "uniformly at random from the larger ones (a **sample**, not the layer). `solution_counts` in "
            "results.json; `figures/distribution-solutions.png`.", "",
            "| pieces | counted | boards | exactly 1 | median | 90th percentile | mean | highest |",
            "|---|---|---|---|---|---|---|---|"]
    for c in counts:
        how = "all solvable" if c["exact"] else f"sample: solvable of {c['drawn']:,} drawn (seed {c['seed']})"
        if not c["boards"]:
            out.append(f"| {c['pieces']} | {how} | 0 | – | – | – | – | – |")
            continue
        mean = sum(int(k) * n for k, n in c["counts"].items()) / c["boards"]
        sampled = "" if c["exact"] else " (sample)"
        out.append(f"| {c['pieces']} | {how} | {c['boards']:,}{sampled} | {c['counts'].get('1', 0) / c['boards']:.1%} "
                   f"| {quantile(c['counts'], 0.5):,} | {quantile(c['counts'], 0.9):,} | {mean:,.1f} "
                   f"| {max(int(k) for k in c['counts']):,} |")
    return out


def _share_at_least(counts: dict[str, int]) -> tuple[list[int], list[float]]:
    """Keys ascending and the share of the total at or above each (a survival function, exact), then the
    last key + 1 with the last share again, so a post-step plot draws the last bin too.

    >>> _share_at_least({"1": 3, "4": 1})
    ([1, 4, 5], [1.0, 0.25, 0.25])
    """
    pairs = sorted((int(k), n) for k, n in counts.items())
    total = sum(n for _, n in pairs)
    keys, shares, above = [], [], total
    for key, n in pairs:
        keys.append(key)
        shares.append(above / total)
        above -= n
    return keys + [keys[-1] + 1], shares + [shares[-1]]


def _bars(counts: dict[str, int], width: float) -> tuple[list[int], list[float]]:
    """A histogram's non-empty bins as one step outline (``Axes.stairs``): each bin's count between its edges, and
    each run of empty bins between two as one step of 0: one shape to draw, where a deep layer has over 11,000
    bins, too many to draw as bars.

    >>> _bars({"3": 5, "1": 2, "2": 4, "7": 1}, 0.5)
    ([2, 4, 5, 0, 1], [0.5, 1.0, 1.5, 2.0, 3.5, 4.0])
    """
    bins = sorted(int(k) for k in counts)
    values, edges = [], [bins[0] * width]
    for b in bins:
        if b * width > edges[-1]:  # empty bins since the last one
            values.append(0)
            edges.append(b * width)
        values.append(counts[str(b)])
        edges.append((b + 1) * width)
    return values, edges


def _plain_log_axis(axis: Any, subs: tuple[float, ...] = (1.0, 2.0, 5.0)) -> None:
    """Tick labels of a log axis as plain numbers (1, 2, 5, 10, ...) instead of powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator

    axis.set_major_locator(LogLocator(subs=subs))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    axis.set_minor_formatter(FuncFormatter(lambda _v, _pos: ""))


def _boards(h: dict[str, Any]) -> str:
    """The boards a ratio histogram tallies: all of the layer's, or a sample's."""
    if h.get("exact", True):
        return f"all {h['boards']:,} uniquely solvable boards"
    return f"{h['boards']:,} uniquely solvable boards in a {h['fraction']:.1%} sample"


def distribution_figures(results: dict[str, Any]) -> list[tuple[str, Any]]:
    """``(stem, figure)`` of the expert-ratio and solution-count distributions per piece count (none without them)."""
    from matplotlib import colormaps
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    ratios, counts = results.get("ratio_histograms"), results.get("solution_counts")
    if not ratios:
        return []
    palette = colormaps["viridis"]  # one colour per piece count, in order, however many there are
    colours = {h["pieces"]: palette(0.9 * i / max(len(ratios) - 1, 1)) for i, h in enumerate(ratios)}
    out = []
    fig = Figure(figsize=(11, 4), layout="constrained")
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2)
    deepest = ratios[-1]
    if deepest["boards"]:
        values, edges = _bars(deepest["counts"], deepest["bin_width"])
        colour = colours[deepest["pieces"]]  # outlined, so a bin narrower than a pixel still shows
        left.stairs(values, edges, fill=True, facecolor=colour, edgecolor=colour, linewidth=0.6)
    left.set_yscale("log")
    highest = max((int(k) * h["bin_width"] for h in ratios for k in h["counts"]), default=1)
    subs = (1.0, 2.0, 5.0) if highest < 1000 else (1.0, 3.0)  # 1000 and 2000 would overlap
    if highest >= 50:  # a long tail: a log axis shows both the many low ratios and the few high ones
        left.set_xscale("log")
        _plain_log_axis(left.xaxis, subs)
    left.set_xlabel("expert ratio (brute-force nodes / expert nodes), bins 0.1 wide")
    left.set_ylabel("uniquely solvable boards (mirror images included)")
    left.set_title(f"{deepest['pieces']} pieces: {_boards(deepest)}", fontsize=10)
    for h in ratios:
        if h["boards"]:
            keys, shares = _share_at_least(h["counts"])
            right.step([k * h["bin_width"] for k in keys], shares, where="post", color=colours[h["pieces"]],
                       label=f"{h['pieces']} pieces ({h['boards']:,}{'' if h.get('exact', True) else ', sample'})")
    right.set_xscale("log")
    _plain_log_axis(right.xaxis, subs)
    right.set_yscale("log")
    right.set_xlabel("expert ratio r (bin lower edge)")
    right.set_ylabel("share of uniquely solvable boards with ratio ≥ r")
    right.set_title("every piece count", fontsize=10)
    right.legend(fontsize=8)
    out.append(("distribution-ratios", fig))

    fig = Figure(figsize=(11, 4), layout="constrained")
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2)
    for c in counts:
        if not c["boards"]:
            continue
        keys, shares = _share_at_least(c["counts"])
        label = (f"{c['pieces']} pieces, all {c['boards']:,}" if c["exact"]
                 else f"{c['pieces']} pieces, sample of {c['boards']:,}")
        style = "-" if c["exact"] else "--"
        right.step(keys, shares, where="post", linestyle=style, color=colours[c["pieces"]], label=label)
        mean = sum(int(k) * n for k, n in c["counts"].items()) / c["boards"]
        left.bar(c["pieces"], c["counts"].get("1", 0) / c["boards"], color=colours[c["pieces"]],
                 hatch="" if c["exact"] else "//", edgecolor="white")
        left.annotate(f"mean {mean:,.1f} sol.", (c["pieces"], c["counts"].get("1", 0) / c["boards"]),
                      ha="center", va="bottom", fontsize=7)
    left.set_yscale("log")
    left.set_xticks([c["pieces"] for c in counts])
    left.set_xlabel("pieces (hatched: sampled layer)")
    left.set_ylabel("share of solvable boards with exactly 1 solution")
    left.set_title("uniquely solvable among solvable boards", fontsize=10)
    right.set_xscale("log")
    _plain_log_axis(right.xaxis, subs=(1.0,))
    right.set_yscale("log")
    right.set_xlabel("solutions c (move sequences to one piece)")
    right.set_ylabel("share of solvable boards (mirror images incl.) with ≥ c solutions")
    right.set_title("solution counts (dashed: uniform sample, not the whole layer)", fontsize=10)
    right.legend(fontsize=8)
    out.append(("distribution-solutions", fig))
    return out


def figures(config: Any, results: dict[str, Any], run: RunDir) -> list[Path]:
    """The distributions per piece count, then each reported puzzle drawn like the paper's Figure 1(c), best first."""
    from epcg.games.fling.domain import evaluate
    from epcg.games.fling.domain.render import puzzle_figure, save_figure
    from epcg.games.fling.domain.rules import Board

    written: list[Path] = []
    for stem, fig in distribution_figures(results):
        written += save_figure(fig, run.outputs.figures_dir / stem)
    puzzles = results.get("puzzles") or []
    if puzzles:
        run.outputs.figures_dir.mkdir(parents=True, exist_ok=True)
    for place, p in enumerate(puzzles, 1):
        board = Board.from_rank(config.width, config.height, config.max_pieces, p["rank"])
        title = f"#{place}: rank {p['rank']:,}, ratio {p['ratio']:.2f} ({p['brute_force_nodes']:,} / {p['expert_nodes']:,} nodes)"
        if p.get("boards", 1) > 1:
            title += f", 1 of {p['boards']} boards alike by symmetry"
        fig = puzzle_figure(board, evaluate.solution(board), title=title)
        written += save_figure(fig, run.outputs.figures_dir / f"puzzle-{place:02d}")
    return written
