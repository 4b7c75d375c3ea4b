"""summary.md for Fling! runs: layer counts beside the published figures, throughput, puzzles."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
        "`seconds` is compute time summed over tasks; boards/s per worker divides the layer by it, "
        "boards/s wall by the layer's elapsed time. The checksum does not depend on chunking: "
        "two runs agree bit for bit exactly when their checksums agree.",
    ]
    puzzles = results.get("puzzles") or []
    if puzzles:
        out += ["", f"## Best {len(puzzles)} uniquely solvable boards with {config.max_pieces} pieces", "",
                f"Ranked by the ratio of the brute-force search tree to the expert's tree (after a move the "
                f"expert only tries moves that depend on it; see `epcg/domains/fling/evaluate.py`) among all "
                f"{results['evaluated']:,} uniquely solvable boards"
                f"{' (one per orbit of the board symmetries)' if results.get('symmetry') else ''} "
                f"({results['evaluate_seconds']:.1f} s). "
                f"Pictures: `figures/puzzle-NN.png`.", "",
                "| # | rank | ratio | brute-force nodes | expert nodes | solution |", "|---|---|---|---|---|---|"]
        for i, p in enumerate(puzzles, 1):
            out.append(f"| {i} | {p['rank']:,} | {p['ratio']:.3f} | {p['brute_force_nodes']:,} "
                       f"| {p['expert_nodes']:,} | {p['solution']} |")
    return "\n".join(out) + "\n"


def figures(config: Any, results: dict[str, Any], run: RunDir) -> list[Path]:
    """Each reported puzzle drawn like the paper's Figure 1(c), best first."""
    from epcg.domains.fling import evaluate
    from epcg.domains.fling.render import puzzle_figure, save_figure
    from epcg.domains.fling.rules import Board

    written: list[Path] = []
    puzzles = results.get("puzzles") or []
    if puzzles:
        run.figures_dir.mkdir(parents=True, exist_ok=True)
    for place, p in enumerate(puzzles, 1):
        board = Board.from_rank(config.width, config.height, config.max_pieces, p["rank"])
        title = f"#{place}: rank {p['rank']:,}, ratio {p['ratio']:.2f} ({p['brute_force_nodes']:,} / {p['expert_nodes']:,} nodes)"
        fig = puzzle_figure(board, evaluate.solution(board), title=title)
        written += save_figure(fig, run.figures_dir / f"puzzle-{place:02d}")
    return written
