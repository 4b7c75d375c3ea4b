"""One way of counting Fling! boards, checked on real runs against a plain solver and mirror images made by hand.

Boards by default (mirror images included) in the layer table, the ratio histograms, ``boards()`` and export;
orbits where asked; the best list shows distinct orbits with the boards each stands for; the tie at the top is
the same in results.json, summary.md, report.html, the API and export, with or without symmetry in the run.
"""

from __future__ import annotations

import json
import tempfile
from functools import cache
from pathlib import Path

import pytest

import epcg
from epcg.combinatorics.binomial import binomial
from epcg.games.fling.domain import evaluate
from epcg.games.fling.domain.rules import Board
from epcg.games.fling.found import FlingBoard
from epcg.runtime.errors import UserError

W, H = 4, 5
DEEPEST = 5
JOB = {"name": "fc", "domain": "fling", "width": W, "height": H, "max_pieces": DEEPEST, "chunk_words": 32,
       "top_puzzles": 6, "evaluate_chunk_words": 32, "keep": [{"min_ratio": 0}]}
"""Every uniquely solvable board is kept, so filters by ratio read the store (tests/test_keep.py recomputes). Layer 5
is 243 words: 8 tasks a stage still merge (8-word tasks took 1.6× as long for the same answers)."""


@cache
def counted(symmetry: bool) -> epcg.Run:
    """A finished 4×5 run to 5 pieces, with or without board symmetry."""
    out = Path(tempfile.mkdtemp(prefix="epcg-count-")) / f"sym-{symmetry}"
    return epcg.run({**JOB, "symmetry": symmetry}, out, progress=False)


def images(k: int, rank: int) -> set[int]:
    """Ranks of the board's orbit: itself, its two mirror images and its half turn, by hand."""
    rows = str(Board.from_rank(W, H, k, rank)).splitlines()
    out = set()
    for grid in (rows,):
        for v in (grid, [r[::-1] for r in grid], grid[::-1], [r[::-1] for r in grid[::-1]]):
            out.add(Board.parse("/".join(v)).rank())
    return out


@cache
def unique_ranks(k: int) -> list[int]:
    count = evaluate.solution_counter(W, H)
    return [r for r in range(binomial(W * H, k)) if count(Board.from_rank(W, H, k, r).bits) == 1]


@cache
def ratio(k: int, rank: int) -> float:
    brute, expert = evaluate.tree_sizes(W, H, Board.from_rank(W, H, k, rank).bits)
    return brute / expert


@pytest.mark.parametrize("symmetry", [pytest.param(True, marks=pytest.mark.slow), False])  # True: 56 s in CI;
# the symmetric run's boards are also checked by the tie test below and tests/test_keep.py
def test_boards_counts_every_board_and_orbits_one_per_orbit(symmetry: bool) -> None:
    run = counted(symmetry)
    for k in range(1, DEEPEST + 1):
        want = unique_ranks(k)
        boards = list(run.boards(k))
        assert sorted(b.rank for b in boards) == want  # the deepest layer too, stored one per orbit
        assert len(boards) == run.results["rows"][k - 1]["unique"]
        if k >= 2:
            assert len(boards) == int(run.ratio_histogram(k).sum())
        orbits = list(run.boards(k, orbits=True))
        assert [b.rank for b in orbits] == sorted({min(images(k, r)) for r in want})
        assert sum(b.orbit_size for b in orbits) == len(boards)
        assert all(b.orbit_size == len(images(k, b.rank)) for b in orbits)


@pytest.mark.parametrize("symmetry", [True, pytest.param(False, marks=pytest.mark.slow)])
def test_the_tie_at_the_top_is_the_same_everywhere(symmetry: bool, tmp_path: Path) -> None:
    run = counted(symmetry)
    ratios = {r: ratio(DEEPEST, r) for r in unique_ranks(DEEPEST)}
    top = max(ratios.values())
    tied = [r for r, x in ratios.items() if x == top]
    tie = run.top()
    assert (tie.ratio, tie.boards, tie.orbits) == (pytest.approx(top), len(tied), len({min(images(DEEPEST, r))
                                                                                      for r in tied}))
    assert tie.boards > tie.orbits  # this board's top is shared by mirror images: the case that was hidden
    # the filter agrees with the tie, counted both ways
    assert len(list(run.boards(DEEPEST, min_ratio=top))) == tie.boards
    assert len(list(run.boards(DEEPEST, min_ratio=top, orbits=True))) == tie.orbits
    # the best orbits, best first, each with the boards it stands for; the best list: the first of each pattern
    best = run.best_boards("orbits")
    canonical = sorted({min(images(DEEPEST, r)) for r in ratios}, key=lambda r: (-ratios[r], r))
    assert [b.rank for b in best] == canonical[:JOB["top_puzzles"]]
    firsts = {}
    for r in sorted(ratios, key=lambda r: (-ratios[r], r)):
        firsts.setdefault(FlingBoard(W, H, DEEPEST, r).pattern, r)
    distinct = run.best_boards()
    assert [b.rank for b in distinct] == list(firsts.values())[:JOB["top_puzzles"]]
    assert [p["boards"] for p in run.results["puzzles"]] == [len(images(DEEPEST, b.rank)) for b in distinct]
    assert [p["copies"] for p in run.results["puzzles"]] == \
        [sum(FlingBoard(W, H, DEEPEST, r).pattern == b.pattern for r in ratios) for b in distinct]
    assert tie.patterns == len({FlingBoard(W, H, DEEPEST, r).pattern for r in tied})
    listed = list(run.boards(DEEPEST, distinct="patterns"))  # every pattern once, its copies every board
    assert len({b.pattern for b in listed}) == len(listed) and sum(b.copies for b in listed) == len(ratios)
    assert len(run.best_boards("boards")) == sum(b.orbit_size for b in best)
    # summary.md and report.html say it in the same words
    sentence = str(tie)
    assert sentence.startswith(f"{tie.boards} boards, {tie.orbits} up to symmetry, {tie.patterns} pattern")
    assert sentence in run.summary
    assert sentence in Path(run.report()).read_text()
    # export: boards by default, orbits where asked
    for where, n in (({}, tie.boards), ({"orbits": True}, tie.orbits)):
        done = run.export(tmp_path / f"e{len(where)}", pictures=None, pieces=DEEPEST, min_ratio=top, **where)
        lines = [json.loads(line) for line in done.read_text().splitlines()]
        assert len(lines) == n and all(x["ratio"] == pytest.approx(top) for x in lines)
        if where:
            assert sum(x["orbit_size"] for x in lines) == tie.boards
        else:
            assert sum(1 / x["orbit_size"] for x in lines) == pytest.approx(tie.orbits)


def test_both_runs_agree() -> None:
    a, b = counted(True), counted(False)
    assert a.results["top_tie"] == b.results["top_tie"]
    assert a.results["puzzles"] == b.results["puzzles"]
    assert a.results["ratio_histograms"] == b.results["ratio_histograms"]


def test_a_mirror_image_has_its_orbits_ratio_and_solution_count() -> None:
    run = counted(True)
    for board in run.boards(DEEPEST):
        assert board.ratio == pytest.approx(ratio(DEEPEST, board.rank))
        assert board.unique


def test_orbits_must_be_a_bool() -> None:
    with pytest.raises(UserError, match="orbits must be True or False"):
        counted(True).boards(3, orbits="yes")
