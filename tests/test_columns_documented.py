"""Every column of every table in a run's summary.md has its line under report.html's "How to read this"."""

from __future__ import annotations

import re

import pytest

from tests.workbench_runs import SLOW, small_run


def headers(markdown: str) -> set[str]:
    """The header cells of every table in ``markdown``."""
    lines = markdown.splitlines()
    return {cell.strip() for above, below in zip(lines, lines[1:]) if re.fullmatch(r"\|(-+\|)+", below.strip())
            for cell in above.strip().strip("|").split("|")}


def test_headers_are_read_from_tables() -> None:
    assert headers("x\n\n| a | b c |\n|---|---|\n| 1 | 2 |\n") == {"a", "b c"}


@pytest.mark.parametrize("domain", [pytest.param(d, marks=[pytest.mark.slow] if d in SLOW else [])
                                    for d in ["witness", "fling", "dwp", "triple"]])
def test_every_column_is_explained(domain: str) -> None:
    run = small_run(domain)
    columns = headers(run.summary)
    assert len(columns) >= 8
    missing = sorted(c for c in columns if f"`{c}`" not in run.NOTATION)
    assert not missing, f"columns of summary.md without a line in {type(run).__name__}.NOTATION: {missing}"


def test_fling_summary_says_what_the_ratio_is_and_which_figures_are_sampled() -> None:
    from epcg.games.fling.report import RATIO_WORDS, summary

    run = small_run("fling")
    text = summary(run.config, run.results)
    assert RATIO_WORDS in text and ".py" not in text.replace("figures/", "")
    results = {**run.results, "puzzles": [],
               "ratio_histograms": [{**h, "exact": False, "fraction": 0.25, "seed": 7}
                                    for h in run.results["ratio_histograms"]],
               "solution_counts": [{**c, "exact": False, "drawn": 50_000, "seed": 7}
                                   for c in run.results["solution_counts"]]}
    sampled = summary(run.config, results)
    rows = [line for line in sampled.splitlines() if line.startswith("| 4 | sample")]
    assert len(rows) == 2 and all(f"| {n:,} (sample) |" in line for line, n in zip(
        rows, [results["ratio_histograms"][-1]["boards"], results["solution_counts"][-1]["boards"]])), rows
    assert RATIO_WORDS in sampled  # without a best list, the distribution says it


def test_unique_cover_columns_are_explained() -> None:
    import inspect

    from epcg.games.witness import unique_cover
    from epcg.games.witness.run import WitnessRun

    source = inspect.getsource(unique_cover.report)
    header = "".join(re.findall(r'"(\| board \|[^"]*)"\s*"([^"]*)"', source)[0])
    columns = headers(header + "\n|---|\n")
    assert len(columns) == 12 and all(f"`{c}`" in WitnessRun.NOTATION for c in columns), columns
