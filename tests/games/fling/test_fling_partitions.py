"""Layers solved from parts of the previous layer (each task holds one part at a time) equal the layers
solved from all of it: the kernels' partials, their merge, the driver and whole Fling! runs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from epcg.games.fling.domain import layers as kernels
from epcg.games.fling.domain import symmetry
from epcg.games.fling.domain.moves import LINE_TABLE_MAX
from epcg.games.fling.kind import fling_space
from epcg.search.retrograde import Subsets, partition_ranges, solve_layers

from tests.conftest import JOBS, epcg

FLING = str(JOBS / "fling.toml")


@pytest.mark.parametrize("width, height, top", [(4, 4, 7), (5, 3, 6), (17, 1, 5)])
@pytest.mark.parametrize("kernel", ["auto", "fast", "plain"])
def test_partials_merged_equal_the_whole_layer(width: int, height: int, top: int, kernel: str) -> None:
    """Both forms (every board; canonical boards), every kernel, against the whole-layer plain kernel."""
    if kernel == "fast" and max(width, height) > LINE_TABLE_MAX:
        pytest.skip("the fast kernel needs lines of at most LINE_TABLE_MAX cells")
    s, u = kernels.first_layer(width, height)
    for k in range(2, top + 1):
        words = kernels.layer_words(width, height, k)
        whole = kernels.solve_words(width, height, k, s, u, 0, words, kernel="plain")
        orbits = symmetry.solve_words_symmetric(width, height, k, s, u, 0, words, kernel="plain")
        for parts in (2, 3, 7):
            merged = merged_sym = None
            for a, b in partition_ranges(kernels.layer_words(width, height, k - 1), parts):
                piece = kernels.solve_words(width, height, k, s[a:b], u[a:b], 0, words, kernel=kernel, part_start=a)
                merged = piece if merged is None else kernels.merge_parts(merged, piece)
                piece = symmetry.solve_words_symmetric(width, height, k, s[a:b], u[a:b], 0, words, kernel=kernel,
                                                       part_start=a)[:2]
                merged_sym = piece if merged_sym is None else kernels.merge_parts(merged_sym, piece)
            assert all(np.array_equal(x, y) for x, y in zip(kernels.finish_parts(k, merged), whole))
            finished = kernels.finish_parts(k, merged_sym)
            assert all(np.array_equal(x, y) for x, y in zip(finished, orbits[:2]))
            assert tuple(symmetry.orbit_total(width, height, k, w, 0) for w in finished) == orbits[2:]
        s, u = whole


@pytest.mark.parametrize("width, height, k", [(4, 4, 5), (7, 8, 3), (5, 3, 4)])
def test_fill_in_parts_equals_the_whole_fill(width: int, height: int, k: int) -> None:
    """Each part fills the boards whose canonical image it holds; ORed, the parts give the whole fill."""
    words = kernels.layer_words(width, height, k)
    orbits = symmetry.solve_words_symmetric(width, height, k, *first_layers(width, height, k - 1), 0, words)[:2]
    whole = symmetry.expand_words(width, height, k, *orbits, 0, words)
    for parts in (2, 5, words):  # canonical boards have low ranks: only many parts split them
        got = [np.zeros(words, dtype=np.uint64) for _ in range(2)]
        filling = 0
        for a, b in partition_ranges(words, parts):
            piece = symmetry.expand_words(width, height, k, orbits[0][a:b], orbits[1][a:b], 0, words, part_start=a)
            filling += bool(piece[0].any())
            got = [g | p for g, p in zip(got, piece)]
        assert all(np.array_equal(g, w) for g, w in zip(got, whole))
    assert filling > 1


def first_layers(width: int, height: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Layer ``k`` solved without symmetry from layer 1."""
    s, u = kernels.first_layer(width, height)
    for j in range(2, k + 1):
        s, u = kernels.solve_words(width, height, j, s, u, 0, kernels.layer_words(width, height, j))
    return s, u


def test_one_part_alone_is_not_the_layer() -> None:
    """A partial sees only its part's successors (so the test above can fail)."""
    s, u = kernels.first_layer(4, 4)
    s, u = kernels.solve_words(4, 4, 2, s, u, 0, kernels.layer_words(4, 4, 2))
    words = kernels.layer_words(4, 4, 3)
    whole = kernels.solve_words(4, 4, 3, s, u, 0, words)
    half = kernels.solve_words(4, 4, 3, s[:1], u[:1], 0, words, part_start=0)
    assert int(np.bitwise_count(half[0]).sum()) < int(np.bitwise_count(whole[0]).sum())
    with pytest.raises(ValueError, match="must lie within"):
        kernels.solve_words(4, 4, 3, s, u, 0, words, part_start=1)


def test_merge_is_associative_and_commutative() -> None:
    rng = np.random.default_rng(5)

    def partial() -> tuple[np.ndarray, np.ndarray]:
        some = rng.integers(0, 2**63, 50, dtype=np.uint64)
        return some, some & rng.integers(0, 2**63, 50, dtype=np.uint64)  # "exactly one" only where "some"

    a, b, c = partial(), partial(), partial()
    m = kernels.merge_parts
    assert all(np.array_equal(x, y) for x, y in zip(m(m(a, b), c), m(a, m(b, c))))
    assert all(np.array_equal(x, y) for x, y in zip(m(a, b), m(b, a)))


@pytest.mark.parametrize("symmetric", [False, True])
def test_driver_in_parts_equals_whole(symmetric: bool) -> None:
    space = fling_space(4, 4, 7, symmetric)
    whole = solve_layers(space, chunk_words=5, keep=True)
    for parts in (2, 8):
        assert solve_layers(space, chunk_words=5, partitions=parts).rows == whole.rows
    with pytest.raises(ValueError, match="partitions need"):
        solve_layers(Subsets(5), partitions=2)


def rows(run_dir: Path) -> list[dict]:
    data = json.loads((run_dir / "results.json").read_text())
    keep = ("pieces", "boards", "solvable", "unique", "checksum", "full_checksum")
    return [{k: r[k] for k in keep if k in r} for r in data["rows"]]


@pytest.mark.parametrize("pieces, symmetric, shared", [pytest.param(4, "true", "false", marks=pytest.mark.slow),
                                                      (4, "false", "true")])
def test_fling_run_in_eight_parts(tmp_path: Path, pieces: int, symmetric: str, shared: str) -> None:
    """7x8 to 4 pieces (unreduced: shared) with every layer read in 8 parts: the same layers as in one."""
    runs = {}
    for parts in (1, 8):
        out = tmp_path / f"p{parts}"
        result = epcg("run", FLING, "--out", str(out), "--serial", "--set", f"max_pieces={pieces}",
                      "--set", "top_puzzles=0", "--set", "distributions=false", "--set", "chunk_words=8192",
                      "--set", f"partitions={parts}",
                      "--set", f"symmetry={symmetric}", "--set", f"shared_previous={shared}")
        assert result.returncode == 0, result.stderr
        runs[parts] = rows(out)
    assert runs[8] == runs[1]


@pytest.mark.slow
@pytest.mark.timeout(6 * 3600)
def test_fling_nine_pieces_in_eight_parts(tmp_path: Path) -> None:
    """7x8 to 9 pieces, symmetric, every layer k-1 read in 8 parts: bit-identical layers (checksums)."""
    runs = {}
    for parts in (1, 8):
        out = tmp_path / f"p{parts}"
        result = epcg("run", FLING, "--out", str(out), "--workers", "2", "--set", "max_pieces=9",
                      "--set", "top_puzzles=0", "--set", "distributions=false", "--set", f"partitions={parts}",
                      timeout=6 * 3600)
        assert result.returncode == 0, result.stderr
        runs[parts] = rows(out)
    assert runs[8] == runs[1]
    assert runs[1][8]["solvable"] > 0


def test_bad_partitions(tmp_path: Path) -> None:
    result = epcg("run", FLING, "--out", str(tmp_path / "bad"), "--set", "partitions=0")
    assert result.returncode == 2 and not (tmp_path / "bad").exists()
