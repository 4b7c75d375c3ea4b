"""Algorithm 5 driver: layers from word ranges equal the whole-layer answer; reduced spaces fill the unreduced
layers bit for bit; Fling! (both forms) through it."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from epcg.games.fling.domain import layers as fling
from epcg.games.fling.kind import fling_space
from epcg.search.retrograde import (
    LayerCache, Line, RetrogradeSpace, Subsets, aligned_groups, group_runs, layer_checksum, layer_plan, solve_layers,
    solve_range, word_ranges,
)


def test_subsets_against_itertools() -> None:
    n = 7
    rows = solve_layers(Subsets(n), chunk_words=1).rows
    expected = [sum(1 for c in itertools.combinations(range(n), k) if c[0] % 2 == 0) for k in range(1, n + 1)]
    assert [r["even"] for r in rows] == expected
    assert [r["states"] for r in rows] == [len(list(itertools.combinations(range(n), k))) for k in range(1, n + 1)]


def test_fling_through_the_driver_equals_the_kernel() -> None:
    space = fling_space(4, 3, 6)
    layers = solve_layers(space, chunk_words=3, keep=True)
    s, u = fling.first_layer(4, 3)
    for k in range(2, 7):
        s, u = fling.solve_words(4, 3, k, s, u, 0, fling.layer_words(4, 3, k))
        assert np.array_equal(layers.words[k][0], s) and np.array_equal(layers.words[k][1], u)
        row = layers.rows[k - 1]
        assert row["solvable"] == int(np.bitwise_count(s).sum()) and row["unique"] == int(np.bitwise_count(u).sum())
        assert row["checksum"] == f"{layer_checksum(s, 0):016x}-{layer_checksum(u, 0):016x}"
    assert layers.rows == solve_layers(space, chunk_words=1 << 10).rows


def test_word_ranges_and_cache() -> None:
    assert word_ranges(5, 2) == ((0, 2), (2, 4), (4, 5))
    cache, calls = LayerCache(), []
    for key in ("a", "a", "b", "a"):
        cache.get(key, lambda key=key: calls.append(key))
    assert calls == ["a", "b", "a"] and cache.loads == 3
    cache.drop()
    cache.get("a", lambda: calls.append("again"))
    assert calls[-1] == "again"


def test_cache_keeps_each_threads_group() -> None:
    """A thread loading a new group of a layer drops only the group it used last; another thread's stays (its next
    task reads it again otherwise), and a new layer drops them all."""
    import threading

    cache, calls = LayerCache(), []

    def get(key: str, layer: str = "L") -> None:
        cache.get(key, lambda: calls.append(key), layer)

    other = threading.Thread(target=get, args=("g0",))
    other.start()
    other.join()
    get("g1")
    get("g2")  # drops g1 (this thread's), keeps g0
    get("g0")
    assert calls == ["g0", "g1", "g2"]
    get("x", "M")
    get("g0")
    assert calls == ["g0", "g1", "g2", "x", "g0"]


def test_a_solve_of_the_wrong_shape_is_named() -> None:
    space = RetrogradeSpace("broken", lambda k: 100, lambda: (np.zeros(2, dtype=np.uint64),),
                            lambda k, prev, a, b: (np.zeros(b - a + 1, dtype=np.uint64),), last=2)
    with pytest.raises(ValueError, match="broken: layer 2 words"):
        solve_range(space, 2, 0, 1, lambda: (np.zeros(2, dtype=np.uint64),), key="t")
    with pytest.raises(ValueError, match="bits must be distinct"):
        RetrogradeSpace("x", len, tuple, tuple, last=1, bits=("a", "a"))


LINE = Line(9)
"""A reduced space by import path, for the job kind."""


@pytest.mark.parametrize("n, chunk_words", [(6, 1), (9, 1), (9, 2), (12, 3)])
def test_reduced_line_fills_the_unreduced_layers(n: int, chunk_words: int) -> None:
    full = solve_layers(Line(n, reduced=False), chunk_words=chunk_words, keep=True)
    halved = solve_layers(Line(n), chunk_words=chunk_words, keep=True)
    counts = [[(r["reach"], r["once"]) for r in layers.rows] for layers in (full, halved)]
    assert counts[0] == counts[1] and counts[0][n // 2][0] > 0
    assert sorted(halved.filled) == list(range(2, n))
    for k, words in halved.filled.items():
        assert all(np.array_equal(a, b) for a, b in zip(words, full.words[k]))
        assert halved.rows[k - 1]["full_checksum"] == full.rows[k - 1]["checksum"]
        # the reduced layer keeps only representatives, so it has fewer bits than it stands for
        assert int(np.bitwise_count(halved.words[k][0]).sum()) < halved.rows[k - 1]["reach"]


def test_reduced_plan_fills_every_layer_but_the_first_and_deepest() -> None:
    names = [(s.name, s.after, s.fill) for s in layer_plan(Line(5), chunk_words=1)]
    assert names == [("k01", (), False), ("k02", ("k01",), False), ("f02", ("k02",), True),
                     ("k03", ("f02",), False), ("f03", ("k03",), True), ("k04", ("f03",), False),
                     ("f04", ("k04",), True), ("k05", ("f04",), False)]
    assert [s.name for s in layer_plan(Line(5), chunk_words=1, last=2)] == ["k01", "k02"]
    with pytest.raises(ValueError, match="come together"):
        RetrogradeSpace("half", len, tuple, tuple, last=1, expand=tuple)


def test_symmetric_fling_through_the_driver_equals_the_unreduced() -> None:
    unreduced = solve_layers(fling_space(4, 4, 7), chunk_words=5, keep=True)
    symmetric = solve_layers(fling_space(4, 4, 7, symmetric=True), chunk_words=5, keep=True)
    assert [(r["solvable"], r["unique"]) for r in symmetric.rows] == [(r["solvable"], r["unique"])
                                                                     for r in unreduced.rows]
    for k, words in symmetric.filled.items():
        assert all(np.array_equal(a, b) for a, b in zip(words, unreduced.words[k]))
    assert sorted(symmetric.filled) == list(range(2, 7))


def test_retrograde_job_of_a_reduced_space(tmp_path: Path) -> None:
    from epcg.runtime.jobs import load_job
    from epcg.runtime.engine import claimed, prepare_new, run_plan

    job_file = tmp_path / "line.toml"
    job_file.write_text('name = "line"\ndomain = "retrograde"\nspace = "tests.test_search_retrograde:LINE"\n'
                        'chunk_words = 1\n')
    planned = prepare_new(load_job(job_file), tmp_path / "run")
    with claimed(planned, new=True):
        results = run_plan(planned)
    expected = solve_layers(LINE, chunk_words=1).rows
    rows = [{k: v for k, v in r.items() if k not in ("tasks", "seconds", "fill_seconds")} for r in results["rows"]]
    assert rows == expected and "full_checksum" in rows[1] and "full_checksum" not in rows[-1]
    assert planned.run.arrays.has_array("orbits/reach/9") and not planned.run.arrays.has_array("reach/9")
    assert planned.run.arrays.has_array("reach/8") and planned.run.arrays.has_array("orbits/reach/8")


def _runs_by_union(bounds: list[int], ranges: list[tuple[int, int]]) -> list[int]:
    """The reference of group_runs: ranges joined whenever they meet one group, numbered in order."""
    parent = list(range(len(ranges)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for a, b in zip(bounds[:-1], bounds[1:]):
        meeting = [i for i, (x, y) in enumerate(ranges) if x < b and a < y]
        for i in meeting[1:]:
            parent[root(i)] = root(meeting[0])
    names: dict[int, int] = {}
    return [names.setdefault(root(i), len(names)) for i in range(len(ranges))]


@pytest.mark.parametrize("seed", range(40))
def test_aligned_groups_give_runs_that_share_no_group(seed: int) -> None:
    """Tasks that meet one aligned read group are in one run, tasks of two runs meet no group in common (against
    joining every pair of tasks that meet a group), and a group moves only down to a task's start."""
    rng = np.random.default_rng(seed)
    words = int(rng.integers(1, 200))
    inner = sorted(set(rng.integers(1, words, int(rng.integers(0, 12))).tolist())) if words > 1 else []
    bounds = [0, *inner, words]
    chunk = int(rng.integers(1, 40))
    ranges = list(word_ranges(words, chunk))
    space = RetrogradeSpace("groups", lambda k: 64 * words, lambda: (), lambda *a: (), last=2,
                            reads=lambda k, a, b: ((a, b),), read_groups=lambda k: bounds)
    aligned = aligned_groups(bounds, chunk).tolist()
    assert aligned[0] == 0 and aligned[-1] == words and all(a < b for a, b in zip(aligned, aligned[1:]))
    assert all(b in bounds or b % chunk == 0 for b in aligned)
    assert group_runs(space, 2, ranges) == _runs_by_union(aligned, ranges)
    assert group_runs(space, 1, ranges) is None
