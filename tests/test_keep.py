"""The job key ``keep``: score bands stored in full, read back at once by the API, export, summary.md and the
gallery, all agreeing with plain loops over every rank; a question outside them is recomputed as a new run (a
note says so on stderr) and agrees too; a band the cap cut is not served from the store."""

from __future__ import annotations

import json
import math
import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import epcg
from epcg.games.fling.domain import evaluate
from epcg.games.fling.domain.rules import Board
from epcg.games.fling.found import orbit_ranks
from epcg.games.witness.domain import scan
from epcg.games.witness.domain.paths import paths_for
from epcg.search.scan import Kept, Reductions, ScanPartial, scan_range

from .conftest import epcg as cli

BANDS = ((2, 3), (5, 5), (1, 40))


@pytest.mark.parametrize("kind, width, height, k", [("must-cross", 3, 3, 3), ("regions", 3, 3, 4),
                                                     ("joint", 2, 3, (2, 2))])
@pytest.mark.parametrize("cap", [5, 100_000])
def test_the_fused_kernels_keep_what_the_per_rank_evaluator_keeps_whatever_the_cut(kind, width, height, k, cap):
    space = scan.puzzle_space(kind, width, height, k)
    wanted = Reductions(min=True, ignore=0, histogram=True, keep=BANDS, keep_cap=cap)
    slow = scan_range(replace(space, evaluate_range=None), 0, space.max_rank, wanted)
    fused = scan_range(space, 0, space.max_rank, wanted)
    parts = ScanPartial.merge([scan_range(space, a, min(a + 97, space.max_rank), wanted)
                               for a in range(0, space.max_rank, 97)])
    for band, plain, whole, cut in zip(BANDS, slow.kept, fused.kept, parts.kept):
        assert plain.band == band and plain.matched == whole.matched == cut.matched
        assert np.array_equal(plain.ranks, whole.ranks) and np.array_equal(plain.scores, whole.scores)
        assert whole == cut
        assert whole.cut == (whole.matched > cap)
    assert any(kept.matched for kept in fused.kept)


def test_a_band_of_unsolvable_puzzles_is_kept_rank_by_rank() -> None:
    space = scan.puzzle_space("must-cross", 3, 3, 2)
    kept = scan_range(space, 0, space.max_rank, Reductions(min=True, ignore=0, histogram=True, keep=((0, 1),))).kept[0]
    plain = [c for c, _ in _counts("must-cross", 3, 3, 2)]
    assert kept.ranks.tolist() == [r for r, c in enumerate(plain) if c <= 1] and 0 in kept.scores


def test_a_band_keeps_its_lowest_ranks_and_counts_the_rest() -> None:
    kept = Kept.of((1, 2), 3, np.array([9, 4, 7, 1, 5]), np.array([1, 2, 0, 2, 1]))
    assert kept.ranks.tolist() == [1, 4, 5] and kept.scores.tolist() == [2, 2, 1]
    assert kept.matched == 4 and kept.cut
    assert Kept.of((8.0, math.inf), 9, np.array([3, 2]), np.array([8.5, 7.9])).ranks.tolist() == [3]


def _counts(kind: str, width: int, height: int, k: int) -> list[tuple[int, int]]:
    """(solutions, longest) of every puzzle of a row, one at a time: the plain reference."""
    paths = paths_for(width, height)
    out = []
    for rank in range(scan.max_rank(kind, width, height, k)):
        sols = scan.solutions(paths, scan.decode(kind, width, height, k, rank))
        out.append((len(sols), int(paths.length[sols[0]]) if len(sols) else 0))
    return out


@pytest.fixture(scope="module")
def witness_run(tmp_path_factory: pytest.TempPathFactory) -> epcg.Run:
    job = {"name": "kw", "domain": "witness", "kind": "must-cross", "rows": ["3x3:3"], "chunk_size": 1500,
           "keep": [{"solutions": [5, 6]}, {"solutions": 9}], "keep_cap": 40}
    return epcg.run(job, tmp_path_factory.mktemp("keep") / "kw", progress=False)


def test_witness_puzzles_in_a_kept_band_come_from_the_store(witness_run, capsys) -> None:
    counts = _counts("must-cross", 3, 3, 3)
    (row,) = witness_run.results["rows"]
    assert [b["matched"] for b in row["kept"]] == [sum(1 for c, _ in counts if c in (5, 6)),
                                                   sum(1 for c, _ in counts if c == 9)]
    assert [b["cut"] for b in row["kept"]] == [b["matched"] > 40 for b in row["kept"]]
    served = next(i for i, band in enumerate(row["kept"]) if not band["cut"])
    score = row["kept"][served]["band"][0]
    found = list(witness_run.puzzles(0, solutions=score))
    assert [p.rank for p in found] == [r for r, (c, _) in enumerate(counts) if c == score]
    assert [p.longest for p in found] == [n for c, n in counts if c == score]
    assert "recomputing" not in capsys.readouterr().err
    assert f"solutions {score}" in witness_run.summary.replace("..", " ")


def test_witness_counts_outside_the_bands_are_recomputed_and_agree(witness_run, capsys) -> None:
    counts = _counts("must-cross", 3, 3, 3)
    (row,) = witness_run.results["rows"]
    score = next(c for c in sorted({c for c, _ in counts if c}) if c not in (5, 6, 9) and c != row["min_solutions"])
    found = list(witness_run.puzzles("3x3:3", solutions=score))
    assert [p.rank for p in found] == [r for r, (c, _) in enumerate(counts) if c == score]
    err = capsys.readouterr().err
    assert f"did not keep the puzzles of 3x3:3 with {score} solutions: recomputing it" in err
    assert "epcg plan's estimate" in err or "a small job" in err
    if row["kept"][0]["cut"]:  # a band the cap cut is recomputed too, and gives every puzzle
        five = list(witness_run.puzzles(0, solutions=5))
        assert len(five) == sum(1 for c, _ in counts if c == 5)
        assert "recomputing" in capsys.readouterr().err


def test_export_reads_the_same_kept_puzzles(witness_run, tmp_path) -> None:
    (row,) = witness_run.results["rows"]
    band = next(b for b in row["kept"] if not b["cut"] and b["matched"])
    score = band["band"][0]
    done = cli("export", str(witness_run.path), "--where", f"solutions={score}", "--pictures", "none",
               "--out", str(tmp_path / "x"))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in (tmp_path / "x" / "found.jsonl").read_text().splitlines()]
    assert [d["rank"] for d in lines] == [p.rank for p in witness_run.puzzles(0, solutions=score)]
    assert "recomputing" not in done.stderr


TOY = '''
from numba import njit

from epcg.search import ScanSpace


@njit(cache=True)
def score(rank):
    return (rank * 37) % 11


SPACE = ScanSpace(max_rank=300, evaluate=score, name="toy", decode=lambda rank: {"rank": rank})
'''
PLAIN = [(r * 37) % 11 for r in range(300)]
"""TOY's scores, one rank at a time."""


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """TOY importable here and in worker processes, as ``keeptoy:SPACE``."""
    (tmp_path / "keeptoy.py").write_text(TOY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    return "keeptoy:SPACE"


def test_a_users_scan_keeps_score_bands_and_recomputes_others(toy, tmp_path, capsys) -> None:
    job = {"name": "toy", "domain": "scan", "space": toy, "chunk_size": 70, "keep": [{"score": [3, 4]}]}
    run = epcg.run(job, tmp_path / "run", progress=False, serial=True)
    plain = PLAIN
    assert [d.rank for d in run.designs(score=4)] == [r for r, s in enumerate(plain) if s == 4]
    assert [d.rank for d in run.designs(role="kept")] == [r for r, s in enumerate(plain) if s in (3, 4)]
    assert "recomputing" not in capsys.readouterr().err
    assert [d.rank for d in run.designs(score=7)] == [r for r, s in enumerate(plain) if s == 7]
    assert "did not keep the designs of row-000 scoring 7: recomputing" in capsys.readouterr().err
    split = f"(3: {plain.count(3)}, 4: {plain.count(4)})"
    assert f"score 3..4: {plain.count(3) + plain.count(4)} designs {split}, all kept" in run.summary


def _ratios(width: int, height: int, k: int) -> dict[int, float]:
    """Expert ratio of every uniquely solvable board of a layer, one board at a time: the plain reference."""
    count = evaluate.solution_counter(width, height)
    out = {}
    for rank in range(math.comb(width * height, k)):
        bits = Board.from_rank(width, height, k, rank).bits
        if count(bits) == 1:
            brute, expert = evaluate.tree_sizes(width, height, bits)
            out[rank] = brute / expert
    return out


@pytest.mark.parametrize("symmetry", [True, pytest.param(False, marks=pytest.mark.slow)])
def test_fling_boards_by_ratio_agree_with_every_boards_own_ratio(tmp_path, capsys, symmetry: bool) -> None:
    job = {"name": "kf", "domain": "fling", "width": 4, "height": 5, "max_pieces": 5, "chunk_words": 16,
           "symmetry": symmetry, "keep": [{"min_ratio": 2}], "top_puzzles": 3}
    run = epcg.run(job, tmp_path / "kf", progress=False)
    ratios = _ratios(4, 5, 5)
    high = sorted(r for r, x in ratios.items() if x >= 2)
    assert high, "the band must hold boards for the test to mean anything"
    (entry,) = [e for e in run.results["kept"] if e["pieces"] == 5]
    assert entry["boards"] == len(high) and not entry["cut"] and entry["exact"]
    served = list(run.boards(5, min_ratio=2))
    assert sorted(b.rank for b in served) == high
    orbits = list(run.boards(5, min_ratio=2, orbits=True))
    assert entry["orbits"] == (len(orbits) if symmetry else len(high))
    assert sorted(b.rank for b in orbits) == sorted({min(orbit_ranks(4, 5, 5, r)) for r in high})
    assert "recomputing" not in capsys.readouterr().err
    lower = list(run.boards(5, min_ratio=1.5))  # below the band: recomputed
    assert sorted(b.rank for b in lower) == sorted(r for r, x in ratios.items() if x >= 1.5)
    assert "did not keep the 5-piece boards with an expert ratio of at least 1.5: recomputing" in \
        capsys.readouterr().err
    histogram = run.ratio_histogram(5)
    assert int(histogram[histogram.index >= 2].sum()) == len(high)


def test_keep_that_is_not_a_band_is_one_line_and_writes_nothing(tmp_path) -> None:
    cases = [
        ("witness-must-cross.toml", "keep=[{score=3}]", "keep: each band is {solutions = N}"),
        ("witness-paths.toml", "keep=[{solutions=2}]", "a paths job has no puzzles"),
        ("fling.toml", "keep=[{ratio=[9, 8]}]", "a band runs from low to high"),
        ("fling.toml", "keep={min_ratio=2}", "a list of bands, e.g. keep = [{min_ratio = 8}]"),
        ("dwp-study.toml", "keep=[{score=1}]", "this kind of job has no score bands to keep"),
    ]
    for job, setting, message in cases:
        out = tmp_path / "never"
        done = cli("run", str(Path(__file__).parents[1] / "jobs" / job), "--set", setting, "--out", str(out))
        assert done.returncode == 2 and message in done.stderr, (setting, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and not out.exists()


def test_a_count_the_exact_tally_rules_out_is_not_recomputed(witness_run, capsys) -> None:
    counts = {int(c): n for c, n in witness_run.results["rows"][0]["solution_counts"].items()}
    absent = next(c for c in range(1, max(counts)) if c not in counts)
    assert list(witness_run.puzzles(0, solutions=absent)) == []
    assert list(witness_run.puzzles(0, solutions=max(counts) + 1)) == []
    assert "recomputing" not in capsys.readouterr().err


def test_a_role_and_a_score_together_filter_what_the_store_holds(toy, tmp_path, capsys) -> None:
    job = {"name": "toy2", "domain": "scan", "space": toy, "max": True, "keep": [{"score": [3, 4]}]}
    run = epcg.run(job, tmp_path / "run", progress=False, serial=True)
    assert [d.rank for d in run.designs(role="kept", score=4)] == [r for r, s in enumerate(PLAIN) if s == 4]
    assert [d.rank for d in run.designs(role="max", score=10)] == [r for r, s in enumerate(PLAIN) if s == 10]
    assert list(run.designs(role="max", score=7)) == []
    assert "recomputing" not in capsys.readouterr().err
