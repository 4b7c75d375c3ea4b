"""Expert-ratio and solution-count distributions of Fling! layers, against the slow reference solver."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import epcg
from epcg.games.fling.domain import distribution
from epcg.games.fling.domain.layers import layer_words
from epcg.games.fling import evaluation as fling_evaluate
from epcg.runtime.errors import UserError
from tests.reference import fling as ref


@pytest.mark.parametrize("width, height, top", [(3, 3, 7), (4, 4, 5), (2, 5, 7), (5, 1, 4)])
def test_solution_counts_match_the_reference(width: int, height: int, top: int) -> None:
    for k in range(1, top + 1):
        expected = [ref.solutions(ref.cells_of(c, width), width, height)
                    for c in itertools.combinations(range(width * height), k)]
        counts, weights = distribution.counts_of_words(width, height, k, 0, layer_words(width, height, k))
        assert counts.tolist() == expected and set(weights.tolist()) == {1}
        counts, weights = distribution.counts_of_words(width, height, k, 0, layer_words(width, height, k),
                                                       symmetric=True)
        weighted = Counter()
        for c, w in zip(counts.tolist(), weights.tolist()):
            weighted[c] += w
        assert weighted == Counter(expected)


def test_tree_sizes_and_weights_match_the_reference() -> None:
    width = height = 4
    for k in range(2, 6):
        combos = list(itertools.combinations(range(16), k))
        unique = [ref.solutions(ref.cells_of(c, width), width, height) == 1 for c in combos]
        words = np.array(ref.pack(unique), dtype=np.uint64)
        ranks, brute, expert, weights = distribution.trees_of_words(width, height, k, words)
        assert ranks.tolist() == [r for r, u in enumerate(unique) if u]
        assert list(zip(brute.tolist(), expert.tolist())) == [ref.tree_sizes(ref.cells_of(combos[r], width),
                                                                             width, height) for r in ranks]
        canonical = ref.canonical_layer(width, height, k)
        sym = [u and c for u, c in zip(unique, canonical)]
        ranks, _b, _e, weights = distribution.trees_of_words(width, height, k, np.array(ref.pack(sym), np.uint64),
                                                             symmetric=True)
        assert weights.tolist() == [len(ref.orbit(combos[r], width, height)) for r in ranks]
        assert sum(weights.tolist()) == sum(unique)


JOB = {"name": "d", "domain": "fling", "width": 4, "height": 4, "max_pieces": 5, "chunk_words": 8,
       "top_puzzles": 2, "evaluate_chunk_words": 8, "exact_counts_up_to": 10_000}


def _reference(width: int, height: int, top: int) -> tuple[dict, dict]:
    """Per layer 2..top: Counter of ratio bins of unique boards, Counter of solution counts of solvable ones."""
    ratios, counts = {}, {}
    for k in range(2, top + 1):
        ratios[k], counts[k] = Counter(), Counter()
        for combo in itertools.combinations(range(width * height), k):
            cells = ref.cells_of(combo, width)
            c = ref.solutions(cells, width, height)
            if c:
                counts[k][c] += 1
            if c == 1:
                ratios[k][distribution.ratio_bin(*ref.tree_sizes(cells, width, height))] += 1
    return ratios, counts


def _tallies(results: dict) -> tuple[dict, dict]:
    ratios = {h["pieces"]: Counter({int(b): n for b, n in h["counts"].items()}) for h in results["ratio_histograms"]}
    counts = {c["pieces"]: Counter({int(s): n for s, n in c["counts"].items()}) for c in results["solution_counts"]}
    return ratios, counts


@pytest.fixture(scope="module")
def symmetric_run(tmp_path_factory) -> epcg.Run:
    return epcg.run(JOB, tmp_path_factory.mktemp("dist") / "sym", progress=False)


def test_exact_distributions_equal_the_reference_and_the_layers(symmetric_run: epcg.Run) -> None:
    results = symmetric_run.results
    assert _tallies(results) == _reference(4, 4, 5)
    for row, h, c in zip(results["rows"][1:], results["ratio_histograms"], results["solution_counts"]):
        assert h["boards"] == row["unique"]  # boards, not orbits
        assert c["exact"] and c["boards"] == row["solvable"] and c["counts"].get("1", 0) == row["unique"]


def test_unreduced_run_and_other_chunks_give_the_same_distributions(symmetric_run: epcg.Run, tmp_path: Path) -> None:
    other = epcg.run(JOB, tmp_path / "plain", progress=False, symmetry=False, evaluate_chunk_words=3)
    for key in ("ratio_histograms", "solution_counts", "puzzles"):
        assert other.results[key] == symmetric_run.results[key]


@pytest.mark.slow
def test_sampled_counts_are_the_draws_counted_and_do_not_depend_on_chunks(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    job = {**JOB, "exact_counts_up_to": 1000, "count_sample": 150, "seed": 7}
    first = epcg.run(job, tmp_path / "a", progress=False)
    monkeypatch.setattr(fling_evaluate, "SAMPLE_CHUNK", 37)
    second = epcg.run(job, tmp_path / "b", progress=False, symmetry=False)
    assert first.results["solution_counts"] == second.results["solution_counts"]
    config = first.config
    for c in first.results["solution_counts"]:
        k = c["pieces"]
        if k <= 3:  # C(16, 3) = 560 boards: counted whole
            assert c["exact"] and "drawn" not in c
            continue
        assert not c["exact"] and c["drawn"] == 150 and c["seed"] == 7
        drawn = [ref.solutions(frozenset((x % 4, x // 4) for x in range(16) if b >> x & 1), 4, 4)
                 for b in (_bits(16, k, int(r)) for r in fling_evaluate.draws(config, k))]
        assert {int(s): n for s, n in c["counts"].items()} == dict(Counter(n for n in drawn if n))
        assert c["boards"] == sum(1 for n in drawn if n)
    other_seed = epcg.run(job, tmp_path / "c", progress=False, seed=8)
    assert other_seed.results["solution_counts"][-1] != first.results["solution_counts"][-1]


@pytest.mark.slow
def test_a_layer_beyond_ratio_sample_is_evaluated_on_its_sampled_blocks(tmp_path: Path) -> None:
    from epcg.combinatorics.bitboard import BitboardCombinations
    from epcg.games.fling.domain.evaluate import tree_sizes
    from epcg.games.fling.domain.patterns import patterns_of
    from epcg.games.fling.domain.symmetry import canonical, symmetry_maps

    job = {**JOB, "width": 5, "height": 5, "ratio_sample": 20_000, "seed": 3, "top_puzzles": 5}
    plain = epcg.run(job, tmp_path / "plain", progress=False, symmetry=False)
    config = plain.config
    assert fling_evaluate.fraction(config, 4) == 1 and 0.3 < fling_evaluate.fraction(config, 5) < 0.4
    block = 64 * fling_evaluate.SAMPLE_BLOCK_WORDS
    kept = fling_evaluate.kept_blocks(config, 5, 0, -(-layer_words(5, 5, 5) // fling_evaluate.SAMPLE_BLOCK_WORDS))
    assert 0 < kept.sum() < len(kept)
    sample = [b for b in plain.boards(5) if kept[b.rank // block]]
    ratio = {b.rank: tree_sizes(5, 5, b.board.bits) for b in sample}
    h5 = plain.results["ratio_histograms"][-1]
    assert not h5["exact"] and h5["fraction"] == fling_evaluate.fraction(config, 5) and h5["seed"] == 3
    assert {int(i): n for i, n in h5["counts"].items()} == Counter(distribution.ratio_bin(*t) for t in ratio.values())
    assert plain.results["ratio_histograms"][-2]["exact"] and plain.results["evaluated"] == len(sample)
    best = max(b / e for b, e in ratio.values())
    maps, lex = symmetry_maps(5, 5), BitboardCombinations(25, 5)
    # the best orbits are named by their lowest-rank boards and the puzzles by their patterns' lowest-rank
    # boards, either of which may lie outside the sampled blocks: each must stand for a sampled board
    sampled_orbits = {lex.rank(int(canonical(_bits(25, 5, r), maps))) for r in ratio}
    assert len(plain.results["best_orbits"]) == 5 and set(plain.results["best_orbits"]) <= sampled_orbits
    sampled_patterns = {p.key for p in patterns_of(5, 5, np.array([_bits(25, 5, r) for r in ratio], np.uint64))}
    assert {p["pattern"] for p in plain.results["puzzles"]} <= sampled_patterns
    assert plain.results["puzzles"][0]["ratio"] == best
    assert "random 3" in plain.summary  # "the N in a random 37.6% of the layer's blocks"
    # with symmetry, an orbit is in the sample when its canonical board's block is: all its boards count
    symmetric = epcg.run(job, tmp_path / "sym", progress=False, evaluate_chunk_words=3)
    in_orbit_sample = [b for b in plain.boards(5) if kept[lex.rank(int(canonical(b.board.bits, maps))) // block]]
    expected = Counter(distribution.ratio_bin(*tree_sizes(5, 5, b.board.bits)) for b in in_orbit_sample)
    h5 = symmetric.results["ratio_histograms"][-1]
    assert {int(i): n for i, n in h5["counts"].items()} == expected and h5["boards"] != len(sample)
    assert symmetric.results["ratio_histograms"][:-1] == plain.results["ratio_histograms"][:-1]


def _bits(n: int, k: int, rank: int) -> int:
    from epcg.combinatorics.bitboard import BitboardCombinations

    return int(BitboardCombinations(n, k).unrank(rank))


def test_api_and_report(symmetric_run: epcg.Run) -> None:
    rows = symmetric_run.results["rows"]
    assert rows[3]["unique"] > 0
    ratios = symmetric_run.ratio_histogram(4)
    assert ratios.sum() == rows[3]["unique"] and ratios.index.min() >= 1.0
    assert set(symmetric_run.ratio_histogram()["pieces"]) <= {2, 3, 4, 5}
    counts = symmetric_run.solution_counts(4)
    assert counts.sum() == rows[3]["solvable"] and counts[1] == rows[3]["unique"] and counts.attrs["exact"]
    table = symmetric_run.solution_counts()
    assert set(table["pieces"]) == {2, 3, 4, 5} and table["exact"].all()
    with pytest.raises(UserError, match="no solution counts for 9 pieces"):
        symmetric_run.solution_counts(9)
    names = {p.name for p in symmetric_run.figures()}
    assert {"distribution-ratios.png", "distribution-solutions.png"} <= names
    assert "## Solution counts per piece count" in symmetric_run.summary
    text = symmetric_run.report().read_text()
    assert "distribution-solutions" in text


def test_warm_up_compiles_the_kernels_the_evaluation_stages_run() -> None:
    """A worker with a cold kernel cache compiles in its warm-up, not halfway through a run; a job without
    evaluation stages compiles none of their kernels."""
    import subprocess
    import sys

    code = ("import sys\nfrom epcg.games.fling.kind import Config, warm_up\nfrom epcg.games.fling.domain import "
            "distribution as d\nwarm_up(Config(name='f', domain='fling', width=4, height=4, max_pieces=4, "
            "top_puzzles=int(sys.argv[1]), distributions=sys.argv[2] == 'yes'))\n"
            "print([bool(f.signatures) for f in (d._trees, d._ranks_of_words, d._counts)])\n")
    seen = {args: subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                                 timeout=600).stdout.strip() for args in (("5", "yes"), ("5", "no"), ("0", "no"))}
    assert seen == {("5", "yes"): "[True, True, True]", ("5", "no"): "[True, False, False]",
                    ("0", "no"): "[False, False, False]"}, seen
