"""``epcg probe RUN PUZZLE`` and ``Run.probe``: one puzzle a designer drew, as a run sees it."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from numba import njit

import epcg
from epcg.cli import main
from epcg.games.fling.domain.rules import Board
from epcg.runtime.errors import InvalidValue
from epcg.runtime.registry import Untrusted
from epcg.search.retrograde import Line, solve_layers
from epcg.search.scan import ScanSpace
from tests.conftest import JOBS, epcg as cli
from tests.reference import fling as ref

FLING = {"name": "small", "domain": "fling", "width": 5, "height": 4, "max_pieces": 5, "top_puzzles": 5}


@pytest.fixture(scope="module")
def fling_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("probe") / "fling"
    epcg.run(FLING, out, progress=False, serial=True, report=False)
    return out


def test_a_board_of_the_best_list_probes_to_its_row(fling_run):
    run = epcg.open(fling_run)
    best = run.results["puzzles"][0]
    board = Board.parse("\n".join(best["board"]))
    probe = run.probe("/".join(best["board"]))
    facts = probe.to_dict()
    assert facts["rank"] == best["rank"] and facts["solutions"] == 1 and facts["stored"]["unique"]
    assert (facts["brute_force_nodes"], facts["expert_nodes"]) == (best["brute_force_nodes"], best["expert_nodes"])
    assert facts["kept"] == ["its pattern is #1 of the best list"]
    assert facts["solution"] == [best["solution"]]
    cells = " ".join(f"{'abcde'[c % 5]}{c // 5 + 1}" for c in board.cells())
    assert run.probe(cells).to_dict() == facts
    assert "uniquely solvable, ratio" in str(probe) and "end" in str(probe)


def test_probes_agree_with_the_reference_solver_and_the_stored_layer(fling_run):
    """Every 3-piece board of a few: the solution count is the reference's, the stored layer agrees."""
    import itertools

    run = epcg.open(fling_run)
    for combo in itertools.islice(itertools.combinations(range(20), 3), 0, 1140, 37):
        board = Board(5, 4, sum(1 << c for c in combo))
        facts = run.probe(str(board)).to_dict()
        count = ref.solutions(ref.cells_of(combo, 5), 5, 4)
        assert facts["solutions"] == count
        assert facts["stored"] == {"solvable": count > 0, "unique": count == 1}


def test_a_board_deeper_than_the_run_is_computed(fling_run):
    facts = epcg.open(fling_run).probe("a1 c1 e1 a3 c3 e3").to_dict()
    assert "stored" not in facts
    assert facts["solutions"] == ref.solutions(ref.cells_of((0, 2, 4, 10, 12, 14), 5), 5, 4)


MALFORMED = [
    ("", "the board is empty"),
    ("a1 1a", "'1a' is not a cell"),
    ("a1 f1", "cell f1 is off the board: columns run a to e"),
    ("a1 a5", "cell a5 is off the board: rows run 1 to 4"),
    ("a0 b1", "cell a0 is off the board: rows run 1 to 4"),
    ("a1 b2 a1", "cell a1 is given twice"),
    ("o..../.o.../.....", "the picture has 3 rows; this run's board has 4"),
    ("o..../.o.../...../....", "row 4 of the picture is 4 cells wide; this run's board is 5"),
    ("o..../.x.../...../.....", "row 2 of the picture holds 'x'"),
    ("...../...../...../.....", "the picture has no piece"),
]


@pytest.mark.parametrize("puzzle, says", MALFORMED)
def test_a_malformed_board_is_one_line_and_exit_2(fling_run, tmp_path, puzzle, says):
    with pytest.raises(InvalidValue, match=says.replace("(", r"\(")):
        epcg.open(fling_run).probe(puzzle)
    picture = tmp_path / "p.png"
    done = CliRunner().invoke(main, ["probe", str(fling_run), puzzle, "--out", str(picture)])
    assert done.exit_code == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and says in done.stderr
    assert not picture.exists()


def test_the_command_prints_draws_and_gives_json(fling_run, tmp_path):
    best = epcg.open(fling_run).results["puzzles"][0]
    picture = tmp_path / "p.png"
    done = cli("probe", str(fling_run), "/".join(best["board"]), "--out", str(picture))
    assert done.returncode == 0, done.stderr
    assert "uniquely solvable" in done.stdout and best["solution"] in done.stdout
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    done = cli("probe", str(fling_run), "/".join(best["board"]), "--json")
    assert json.loads(done.stdout)["rank"] == best["rank"]
    done = CliRunner().invoke(main, ["probe", str(fling_run), "-"], input="\n".join(best["board"]) + "\n")
    assert done.exit_code == 0 and best["solution"] in done.stdout


@pytest.mark.slow
def test_the_seven_piece_run_probes_the_best_board(tmp_path):
    """The acceptance: on the 7-piece run, a1 f2 c3 f4 c5 f7 a8 is uniquely solvable, ratio 29.185 (1,897 / 65)."""
    out = tmp_path / "fling7"
    assert cli("run", str(JOBS / "fling.toml"), "--set", "max_pieces=7", "--out", str(out)).returncode == 0
    done = cli("probe", str(out), "a1 f2 c3 f4 c5 f7 a8")
    assert done.returncode == 0, done.stderr
    assert "uniquely solvable, ratio 29.185 (1,897 / 65" in done.stdout
    assert "solution: a8U a2R f7U c5R e5U c3R" in done.stdout
    assert epcg.open(out).probe("a1 f2 c3 f4 c5 f7 a8").to_dict()["ratio"] == pytest.approx(1897 / 65)


@pytest.fixture(scope="module")
def witness_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("probe") / "witness"
    epcg.run({"name": "w", "domain": "witness", "kind": "must-cross", "rows": ["3x3:3", "3x4:3"]}, out,
             progress=False, report=False)
    return out


def test_the_notation_example_probes_to_the_count_the_scan_gives(witness_run):
    """docs/notation.md's panel (vertex (1,0), edge (0,1)-(1,1), edge (1,1)-(1,2)) on 3x3: the probe's count is the
    row's minimum, which the scan found, and the run kept it; every stored puzzle of the row probes the same."""
    run = epcg.open(witness_run)
    res = run.results["rows"][0]  # the job's first row, 3x3:3
    facts = run.probe("3x3: vertex (1,0), edge (0,1)-(1,1), edge (1,1)-(1,2)").to_dict()
    assert facts["row"] == "3x3-k3" and facts["rank"] == 1247
    assert facts["solutions"] == res["min_solutions"] == 4 and facts["kept"]
    for p in itertools.islice(run.puzzles("3x3:3"), 0, 400, 40):
        text = "3x3: " + ", ".join(p.to_dict()["must_cross"])
        got = run.probe(text).to_dict()
        assert (got["rank"], got["solutions"], got["longest_solution"], got["kept"]) == \
            (p.rank, p.solution_count, p.longest, True)
    other = run.probe("3x3: vertex (0,1), vertex (1,1), vertex (2,1)").to_dict()
    assert other["solutions"] > res["min_solutions"] and not other["kept"]


WITNESS_MALFORMED = [
    ("", "the panel is empty"),
    ("3x3: vertex (1,0), vertex (1,0), vertex (2,2)", "vertex (1,0) is given twice"),
    ("3x3: vertex (4,0), vertex (1,1), vertex (2,2)", "off the 3x3 panel"),
    ("3x3: edge (0,0)-(1,1), vertex (1,1), vertex (2,2)", "an edge joins two neighbouring vertices"),
    ("3x3: hexagon (0,0), vertex (1,1), vertex (2,2)", "is not a hexagon or a square"),
    ("5x5: vertex (0,1), vertex (1,1), vertex (2,2)", "no row of 5x5 panels"),
    ("3x3: vertex (0,1)", "no row of 3x3 panels with k = 1"),
    ("vertex (0,1), vertex (1,1), vertex (2,2)", "name the board first"),
    ("3x3: vertex (0,1), vertex (1,1), cell (1,1) black", "hold hexagons only"),
]


@pytest.mark.parametrize("panel, says", WITNESS_MALFORMED)
def test_a_malformed_panel_is_one_line_and_exit_2(witness_run, panel, says):
    done = CliRunner().invoke(main, ["probe", str(witness_run), panel])
    assert done.exit_code == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and says in done.stderr


@njit
def _pair_score(rank):
    return (rank // 10 + rank % 10) % 7


PAIRS = ScanSpace(max_rank=1000, evaluate=_pair_score, name="pairs", decode=lambda r: [r // 10, r % 10],
                  encode=lambda pair: 10 * pair[0] + pair[1] if 0 <= pair[1] < 10 else -1,
                  pattern=lambda r: (r // 10 + r % 10) % 7)
"""A user's space: pairs (a, b), a < 100, b < 10, scored (a + b) mod 7; designs of one score are one pattern."""


@pytest.fixture(scope="module")
def space_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("probe") / "pairs"
    epcg.run({"name": "pairs", "domain": "scan", "space": "tests.test_probe:PAIRS", "top": 3}, out,
             progress=False, serial=True, report=False)
    return out


def test_a_design_probes_by_rank_and_by_its_object(space_run):
    run = epcg.open(space_run, trust_space=True)
    by_rank = run.probe("123").to_dict()
    assert by_rank == run.probe("[12, 3]").to_dict() == run.probe(123).to_dict()
    assert by_rank["score"] == (12 + 3) % 7 and by_rank["text"] == "[12, 3]"
    at_min = next(run.designs(role="min"))
    assert run.probe(str(at_min.rank)).to_dict()["kept"] == ["min"]
    assert run.probe("1").to_dict()["kept"] == []


@pytest.mark.parametrize("puzzle, says", [("1000", "rank 1000 is past the space: its ranks run 0 to 999"),
                                          ("-1", "rank -1 is past the space"),
                                          ("[1, 12]", "rank -1 is past the space"),
                                          ("pair", "'pair' is neither a rank nor an object in JSON"),
                                          ("[1]", "space pairs cannot rank [1]")])
def test_a_rank_past_the_space_is_one_line_and_exit_2(space_run, puzzle, says):
    done = CliRunner().invoke(main, ["probe", str(space_run), "--trust-space", "--", puzzle])
    assert done.exit_code == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and says in done.stderr


def test_a_users_space_lists_one_design_per_pattern_it_defines(space_run):
    with pytest.raises(Untrusted, match="trust-space"):
        list(epcg.open(space_run).designs(role="min", distinct="patterns"))
    run = epcg.open(space_run, trust_space=True)
    every = list(run.designs(role="min"))
    firsts = list(run.designs(role="min", distinct="patterns"))
    assert len(firsts) == 1 and firsts[0].copies == len(every) > 1 and firsts[0].rank == every[0].rank
    assert firsts[0].to_dict()["copies"] == len(every)
    with pytest.raises(InvalidValue, match="it has no orbits"):
        list(run.designs(distinct="orbits"))


LINE = Line(9)
"""A user's retrograde space in reduced form (mirror images share their bits): its deepest layer is stored one
state per pair."""


@pytest.fixture(scope="module")
def line_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("probe") / "line"
    epcg.run({"name": "line", "domain": "retrograde", "space": "tests.test_probe:LINE", "last": 6}, out,
             progress=False, serial=True, report=False)
    return out


def test_every_state_of_a_reduced_space_probes_to_the_full_solver(line_run):
    """Every state of every layer the run solved, the deepest stored one per mirror pair: its bits are the ones
    the unreduced space computes; a layer past the run says the run did not solve it."""
    full = solve_layers(Line(9, reduced=False), last=6, keep=True)
    run = epcg.open(line_run, trust_space=True)
    assert not run.stored.has("reach/6") and run.stored.has("orbits/reach/6")
    for k in range(1, 7):
        for rank in range(LINE.layer_size(k)):
            facts = run.probe(f"{k} {rank}").to_dict()
            bits = {b: bool(int(full.words[k][i][rank // 64]) >> rank % 64 & 1) for i, b in enumerate(LINE.bits)}
            assert facts["bits"] == bits and facts["reach"] == bits["reach"] and facts["kept"], (k, rank)
    past = run.probe("layer 7, rank 3")
    assert past.to_dict()["kept"] is False and past.to_dict()["bits"] is None
    assert "solved layers 1 to 6" in str(past)


def test_a_users_space_is_probed_only_when_trusted(line_run, space_run):
    """Reading a run never imports the code its job names: probing a user's space asks for --trust-space."""
    for run_dir, puzzle in ((line_run, "3 1"), (space_run, "12")):
        with pytest.raises(Untrusted, match="trust-space"):
            epcg.open(run_dir).probe(puzzle)
        done = CliRunner().invoke(main, ["probe", str(run_dir), "--", puzzle])
        assert done.exit_code == 2 and done.stdout == "" and done.stderr.count("\n") == 1
