"""Layers solved from slices of the previous layer (only the slices a task's moves reach) equal the layers solved
from all of it: the neighbour sets against every move of every board, the kernels, the driver and whole runs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from epcg.games.fling.domain import layers as kernels
from epcg.games.fling.domain import symmetry
from epcg.games.fling.domain.moves import fling
from epcg.games.fling.domain.slices import SlicedLayer, Slicing
from epcg.games.fling.kind import Config, estimate, fling_space
from epcg.search.retrograde import layer_words, solve_layers, span_words

from tests.conftest import JOBS, epcg

FLING = str(JOBS / "fling.toml")


def boards(n: int, k: int):
    """Every board of ``k`` pieces on ``n`` cells, as bitboards (small boards only)."""
    from itertools import combinations
    for cells in combinations(range(n), k):
        yield sum(1 << c for c in cells)


@pytest.mark.parametrize("width, height, rows", [(4, 3, 1), (4, 3, 2), (3, 4, 3)])
def test_neighbours_hold_every_move(width: int, height: int, rows: int) -> None:
    """Every legal move of every board lands in a neighbour of the board's slice (walking the cells, as the
    rules do)."""
    slicing = Slicing(width, height, rows)
    n, lead = width * height, (1 << slicing.lead) - 1
    for k in range(2, n + 1):
        for board in boards(n, k):
            near = slicing.neighbours(k, board & lead)
            for cell in range(n):
                if board >> cell & 1:
                    for d in range(4):
                        child = fling(board, width, height, cell, d)
                        assert not child or child & lead in near, (k, bin(board), cell, d)


@pytest.mark.parametrize("width, height, rows, top", [(4, 4, 1, 8), (4, 4, 2, 8), (5, 4, 1, 7), (7, 8, 2, 5)])
@pytest.mark.parametrize("symmetric", [False, True])
def test_sliced_kernel_equals_whole(width: int, height: int, rows: int, top: int, symmetric: bool) -> None:
    """Any word range solved from only the slices it reads gives the words (and orbit counts) of the whole layer."""
    slicing, rng = Slicing(width, height, rows), np.random.default_rng(rows * 10 + top)
    s, u = kernels.first_layer(width, height)
    for k in range(2, top + 1):
        words = kernels.layer_words(width, height, k)
        whole = kernels.solve_words(width, height, k, s, u, 0, words)
        orbits = symmetry.solve_words_symmetric(width, height, k, s, u, 0, words)
        cuts = sorted({0, words, *rng.integers(0, words, 6).tolist()})
        for a, b in zip(cuts, cuts[1:]):
            view = SlicedLayer.from_words(slicing, k - 1, slicing.reads(k, a, b), s, u)
            if symmetric:
                got = symmetry.solve_words_symmetric(width, height, k, view.solvable, view.unique, a, b,
                                                     where=view.where)
                part = symmetry.solve_words_symmetric(width, height, k, s, u, a, b)
                assert got[2:] == part[2:]
                expected = [w[a:b] for w in orbits[:2]]
            else:
                got = kernels.solve_words(width, height, k, view.solvable, view.unique, a, b, where=view.where)
                expected = [w[a:b] for w in whole]
            assert all(np.array_equal(x, y) for x, y in zip(got[:2], expected)), (k, a, b)
        s, u = whole


def test_a_slice_not_read_is_an_error() -> None:
    """A move into a slice the task did not read raises, never reads as unsolvable."""
    slicing = Slicing(4, 4, 1)
    s, u = kernels.first_layer(4, 4)
    for k in range(2, 5):
        s, u = kernels.solve_words(4, 4, k, s, u, 0, kernels.layer_words(4, 4, k))
    spans = slicing.reads(5, 0, kernels.layer_words(4, 4, 5))
    assert len(spans) == 1 or span_words(spans) > 1
    short = ((spans[0][0], spans[0][0] + 1),)
    view = SlicedLayer.from_words(slicing, 4, short, s, u)
    with pytest.raises(LookupError, match="slices of layer 4 that were not read"):
        kernels.solve_words(4, 4, 5, view.solvable, view.unique, 0, kernels.layer_words(4, 4, 5), where=view.where)
    with pytest.raises(ValueError, match="block kernel only"):
        kernels.solve_words(4, 4, 5, view.solvable, view.unique, 0, 1, where=view.where, kernel="fast")


@pytest.mark.parametrize("rows", [1, 2, 3])
def test_read_groups_cut_the_layer_and_read_less_than_it(rows: int) -> None:
    """Read groups cover a layer's words in order; on 7x8 layer 8 none reads all of layer 7, and more rows read less."""
    space = fling_space(7, 8, 8, False, "auto", rows)
    bounds = [int(b) for b in space.read_groups(8)]
    assert bounds[0] == 0 and bounds[-1] == layer_words(space, 8) and bounds == sorted(set(bounds))
    largest = max(span_words(space.reads(8, a, b)) for a, b in zip(bounds, bounds[1:]))
    assert largest < layer_words(space, 7)
    assert len(Slicing(7, 8, rows).keys(8)) >= 16


def test_more_rows_read_less() -> None:
    share = []
    for rows in (1, 2, 3):
        space = fling_space(7, 8, 9, False, "auto", rows)
        bounds = space.read_groups(9)
        share.append(max(span_words(space.reads(9, int(a), int(b))) for a, b in zip(bounds[:-1], bounds[1:]))
                     / layer_words(space, 8))
    assert share[0] > share[1] > share[2]


@pytest.mark.parametrize("symmetric", [False, True])
@pytest.mark.parametrize("rows", [1, 2])
def test_driver_with_slices_equals_whole(symmetric: bool, rows: int) -> None:
    whole = solve_layers(fling_space(4, 5, 9, symmetric), chunk_words=3)
    assert solve_layers(fling_space(4, 5, 9, symmetric, "auto", rows), chunk_words=3).rows == whole.rows


def rows_of(run_dir: Path) -> list[dict]:
    data = json.loads((run_dir / "results.json").read_text())
    keep = ("pieces", "boards", "solvable", "unique", "checksum", "full_checksum")
    return [{k: r[k] for k in keep if k in r} for r in data["rows"]]


def records(run_dir: Path, stage: str) -> list[dict]:
    return [json.loads(p.read_text())["record"] for p in sorted((run_dir / "manifest" / stage).glob("*.json"))]


def test_fling_run_with_slices_on_two_workers(tmp_path: Path) -> None:
    """7x8 to 6 pieces, symmetric, on two worker processes, every layer task reading only its slices: the layers
    of the whole-layer driver in this process, no task holding a whole layer, and every read group read once
    (layer 6 in 124 tasks of 4,096 words run as 12 runs, one per read group), as the plan counts and
    ``epcg status`` says."""
    out = tmp_path / "sliced"
    result = epcg("run", FLING, "--out", str(out), "--workers", "2", "--set", "max_pieces=6", "--set",
                  "top_puzzles=0", "--set", "distributions=false", "--set", "slice_rows=2", "--set", "chunk_words=4096")
    assert result.returncode == 0, result.stderr
    whole = solve_layers(fling_space(7, 8, 6, True), chunk_words=1 << 12).rows
    keep = ("solvable", "unique", "checksum", "full_checksum")
    assert rows_of(out) == [{"pieces": r["layer"], "boards": r["states"], **{k: r[k] for k in keep if k in r}}
                            for r in whole]
    space = fling_space(7, 8, 6, True, "auto", 2)
    recs = records(out, "k06")
    assert {r["worker"] for r in recs} and all(r["worker"].startswith("tcp://") for r in recs)
    assert 0 < max(r["result"]["held_words"] for r in recs) < layer_words(space, 5)
    reads = [r["reads"] for r in json.loads((out / "results.json").read_text())["rows"][1:]]
    assert all(x["bytes"] == x["planned"] > 0 for x in reads), reads  # each read group read once, on one worker
    assert sum(r["read_bytes"] for r in recs) == reads[-1]["bytes"]
    status = epcg("status", str(out))
    line = status.stdout.splitlines()[status.stdout.splitlines().index(next(
        x for x in status.stdout.splitlines() if x.startswith("k06 "))) + 1]
    ratio = reads[-1]["bytes"] / reads[-1]["source"]
    assert f"{ratio:.2f}× its source (plan {ratio:.2f}×)" in line and "by host: 127.0.0.1" in line, status.stdout
    assert line.endswith("each)"), line


@pytest.mark.parametrize("sets, message", [
    (("slice_rows=2", "shared_previous=true"), "exclude each other"),
    pytest.param(("slice_rows=2", 'kernel="fast"'), "needs the block kernel", marks=pytest.mark.slow),
    pytest.param(("slice_rows=1", "width=3", "height=1", "max_pieces=2"), "leave a row unkeyed",
                 marks=pytest.mark.slow),  # the same validator as the first; 5 s each in CI
])
def test_bad_slices(tmp_path: Path, sets: tuple[str, ...], message: str) -> None:
    result = epcg("run", FLING, "--out", str(tmp_path / "bad"), *(x for s in sets for x in ("--set", s)))
    assert result.returncode == 2 and message in result.stderr and not (tmp_path / "bad").exists()
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.slow
@pytest.mark.timeout(3 * 3600)
def test_fling_nine_pieces_sliced(tmp_path: Path) -> None:
    """7x8 to 9 pieces, symmetric, slices keyed by two rows (at least 16 slices a layer), on two workers: layers
    bit-identical to whole-layer reads, no layer-9 task holding half of layer 8 at once, and the plan counting less
    memory per worker for layer 9 than for the whole layer. (At 9 pieces a worker's own ~300 MiB outweighs a layer, so a Dask memory
    limit between the two would test the baseline, not the slices.)"""
    common = ("--set", "max_pieces=9", "--set", "top_puzzles=0", "--set", "distributions=false")
    sliced, whole = tmp_path / "sliced", tmp_path / "whole"
    for out, extra in ((sliced, ("--set", "slice_rows=2", "--set", "partitions=4")), (whole, ())):
        result = epcg("run", FLING, "--out", str(out), "--workers", "2", *common, *extra, timeout=3 * 3600)
        assert result.returncode == 0, result.stderr
    assert rows_of(sliced) == rows_of(whole)
    assert all(len(Slicing(7, 8, 2).keys(k)) >= 16 for k in range(2, 10))
    space = fling_space(7, 8, 9, True, "auto", 2)
    held = max(r["result"]["held_words"] for r in records(sliced, "k09"))
    assert 0 < held < layer_words(space, 8) / 2
    config = Config(name="f", domain="fling", max_pieces=9, top_puzzles=0, distributions=False)
    whole_peak = estimate(config)["k09"].peak_memory
    assert estimate(config.model_copy(update={"slice_rows": 2}))["k09"].peak_memory < whole_peak
