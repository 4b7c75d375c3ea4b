"""The public API: run and open, tables, and what a run found, against slow references."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

import epcg
from epcg.combinatorics.binomial import binomial
from epcg.games.fling.domain import evaluate
from epcg.games.fling.domain.rules import Board
from epcg.games.witness.domain import scan
from epcg.games.witness.domain.paths import paths_for
from epcg.runtime.errors import UserError
from tests.workbench_runs import JOBS, SLOW, small_run

PNG = b"\x89PNG"


def test_table_has_one_row_per_result_row() -> None:
    run = small_run("witness")
    table = run.table()
    assert list(table["puzzles"]) == [r["puzzles"] for r in run.results["rows"]]
    assert {"min_solutions", "puzzles_at_min", "longest_solution"} <= set(table.columns)


def test_a_run_opens_as_its_kinds_class_and_names_the_kind_of_another_method() -> None:
    run = epcg.open(small_run("witness").path)
    assert type(run).__name__ == "WitnessRun" and isinstance(run, epcg.Run)
    with pytest.raises(UserError, match=r"is a witness run, not a fling run \(it has no boards\(\)\)"):
        run.boards(3)
    assert not hasattr(run, "boards") and hasattr(run, "puzzles")
    assert type(epcg.open(small_run("fling").path)).__name__ == "FlingRun"
    assert epcg.WitnessPuzzle is run.found_types[0] and epcg.FlingBoard.__module__ == "epcg.games.fling.found"


def test_witness_puzzles_at_minimum_match_a_plain_walk() -> None:
    run = small_run("witness")
    paths = paths_for(3, 3)
    counts = [len(scan.solutions(paths, scan.decode("must-cross", 3, 3, 3, r))) for r in range(9880)]
    minimum = min(c for c in counts if c)
    found = list(run.puzzles("3x3:3"))
    assert [p.rank for p in found] == [r for r, c in enumerate(counts) if c == minimum]
    assert all(p.solution_count == minimum and p.row == "3x3:3" for p in found)
    longest = run.results["rows"][1]["longest_solution"]
    assert [p.rank for p in run.puzzles("3x3-k3", length="longest")] == [p.rank for p in found if p.longest == longest]
    assert run.rows() == ["2x2:2", "3x3:3"] and {p.to_dict()["row"] for p in found} == {"3x3:3"}
    assert found[0].ident() == f"witness-puzzle-3x3-k3-{found[0].rank}"  # a file name, as before


def test_witness_other_solution_counts_are_walked() -> None:
    run = small_run("witness")
    five = list(itertools.islice(run.puzzles(1, solutions=5, min_length=12), 4))
    assert len(five) == 4
    for p in five:
        sols = scan.solutions(paths_for(3, 3), scan.decode("must-cross", 3, 3, 3, p.rank))
        assert len(sols) == 5 and paths_for(3, 3).length[sols[0]] >= 12
        assert p.to_dict()["solutions"] == 5


def test_fling_boards_match_the_plain_solver_layer_by_layer() -> None:
    run = small_run("fling")
    count = evaluate.solution_counter(4, 4)
    for k in range(1, 5):
        counts = [min(2, count(Board.from_rank(4, 4, k, r).bits)) for r in range(binomial(16, k))]
        assert [b.rank for b in run.boards(k)] == [r for r, c in enumerate(counts) if c == 1]
        assert [b.rank for b in run.boards(k, unique=False)] == [r for r, c in enumerate(counts) if c == 2]
        assert sum(1 for _ in run.boards(k, unique=None)) == sum(1 for c in counts if c)


def test_fling_ratio_filter_and_best_boards() -> None:
    run = small_run("fling")
    best = run.best_boards()
    assert len(best) == 3 and best[0].rank == run.results["puzzles"][0]["rank"]
    top = best[0].ratio
    assert top == pytest.approx(run.results["puzzles"][0]["ratio"])
    assert {b.rank for b in run.boards(4, min_ratio=top)} >= {b.rank for b in best if b.ratio == top}
    assert all(b.ratio >= top for b in run.boards(4, min_ratio=top))
    board = best[0]
    replay = board.board.copy()
    for move in board.moves:
        replay.push(move)
    assert replay.pieces == 1


@pytest.mark.slow
def test_triples_and_maps() -> None:
    triples = list(small_run("triple").triples("separate"))
    assert triples and all(t.variant == "separate" and t.score == small_run("triple").results["rows"][1]["score"]
                           for t in triples)
    maps = list(small_run("dwp").maps(experiment=2))
    assert [(m.experiment, m.run) for m in maps] == [(2, 0), (2, 1)]
    assert maps[0].grid().shape == (30, 30)
    assert maps[0].fitness == small_run("dwp").results["rows"][1]["fitness"][0]


@pytest.mark.parametrize("domain", [pytest.param(d, marks=[pytest.mark.slow] if d in SLOW else []) for d in sorted(JOBS)])
def test_found_objects_draw_themselves(domain: str) -> None:
    item = next(small_run(domain).found())
    assert item._repr_png_()[:4] == PNG
    assert "<svg" in item.svg()
    json.dumps(item.to_dict())


def test_run_resumes_the_same_job_and_refuses_another(tmp_path: Path) -> None:
    job = {**JOBS["witness"], "rows": ["2x2:2"]}
    first = epcg.run(job, tmp_path / "r", progress=False)
    record = next((tmp_path / "r" / "manifest").glob("*/*.json"))  # a chunk's record
    record.unlink()
    (tmp_path / "r" / "results.json").unlink()
    again = epcg.run(job, tmp_path / "r", progress=False)
    assert again.results["rows"] == first.results["rows"] or again.table().equals(first.table())
    with pytest.raises(UserError, match="holds another job"):
        epcg.run(job, tmp_path / "r", progress=False, chunk_size=5)


def test_a_resumed_run_says_its_check_of_the_chunks_as_the_cli_does(tmp_path: Path, capsys, monkeypatch) -> None:
    job = {**JOBS["witness"], "rows": ["2x2:2"]}
    epcg.run(job, tmp_path / "r", progress=False)
    records = sorted(p for p in (tmp_path / "r" / "manifest").rglob("*.json") if p.name != "plan.json")
    records[0].unlink()
    (tmp_path / "r" / "results.json").unlink()
    monkeypatch.setenv("EPCG_PROGRESS_INTERVAL", "0.000001")  # the check takes longer: at least one line
    capsys.readouterr()
    epcg.run(job, tmp_path / "r")
    said = capsys.readouterr().err
    assert f"checking {len(records) - 1:,} chunks against their records (those written since the last check)" \
        in said and f"checked {len(records) - 1:,} chunks in " in said, said
    assert " checked: " in said and f" of {len(records) - 1:,} (" in said, said


@pytest.mark.parametrize(
    ("job", "overrides", "message"),
    [
        ("jobs/none.toml", {}, "does not exist"),
        ({**JOBS["witness"], "colour": 1}, {}, "unknown key 'colour'"),
        (JOBS["witness"], {"rows": ["9x9:1"]}, "boards up to"),
    ],
)
def test_bad_input_raises_the_cli_message(tmp_path: Path, job, overrides, message: str) -> None:
    with pytest.raises(UserError, match=message):
        epcg.run(job, tmp_path / "r", progress=False, **overrides)
    assert not (tmp_path / "r").exists()


def test_open_refuses_what_is_not_a_run(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not an epcg run directory"):
        epcg.open(tmp_path)


def walk(moves: str, width: int, height: int) -> set[str] | None:
    """The vertex and edge names a move string visits, or None unless it is a self-avoiding path from the
    start (0,0) to the goal (width,height) inside the panel: an independent reading of the notation."""
    x = y = 0
    seen, names = {(0, 0)}, {"vertex (0,0)"}
    for m in moves:
        dx, dy = {"R": (1, 0), "L": (-1, 0), "U": (0, 1), "D": (0, -1)}[m]
        nx, ny = x + dx, y + dy
        if not (0 <= nx <= width and 0 <= ny <= height) or (nx, ny) in seen:
            return None
        a, b = sorted([(x, y), (nx, ny)])
        names |= {f"vertex ({nx},{ny})", f"edge ({a[0]},{a[1]})-({b[0]},{b[1]})"}
        seen.add((nx, ny))
        x, y = nx, ny
    return names if (x, y) == (width, height) else None


def test_a_puzzle_with_few_solutions_lists_and_draws_every_one() -> None:
    for puzzle in small_run("witness").puzzles("3x3:3"):
        data = puzzle.to_dict()
        every = data["every_solution"]
        assert len(every) == len(set(every)) == data["solutions"] == 4 and every[0] == data["solution"]
        for moves in every:
            visited = walk(moves, 3, 3)
            assert visited is not None and set(data["must_cross"]) <= visited
        paths = [a.get_gid() for a in puzzle.figure().axes[0].get_children() if (a.get_gid() or "").endswith("-path")]
        assert len(paths) == 4
