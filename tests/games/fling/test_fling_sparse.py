"""Fling!'s ``unique`` bits held as a compact index: lookups equal the dense words', the kernels give today's words
with either form, and every layer's counts and checksums are those of main at 64b78af (before the index)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from epcg.games.fling.domain import sparse
from epcg.games.fling.domain.layers import first_layer, layer_words, solve_words
from epcg.games.fling.domain.sparse import IndexBuilder, _index_bit, bit_index
from epcg.games.fling.domain.symmetry import expand_words, solve_words_symmetric
from epcg.games.fling.kind import fling_space
from epcg.runtime.arrays import ZARR
from epcg.runtime.store import RunDir
from epcg.search.retrograde import solve_layers

from tests.reference import fling as ref

MAIN_ROWS = json.loads((Path(__file__).parent / "data" / "main_64b78af_rows.json").read_text())
"""``solve_layers(fling_space(w, h, k, symmetric, kernel), chunk_words=257, partitions=p)`` rows at main 64b78af
(``"w,h,k,symmetric,kernel,p"``: ``[layer, solvable, unique, checksum, full_checksum]`` per layer)."""


def random_words(rng: np.random.Generator, words: int, density: int) -> np.ndarray:
    """Words with about one bit in ``2**density`` set (0: all set; -1: none)."""
    if density < 0:
        return np.zeros(words, dtype=np.uint64)
    out = np.full(words, ~np.uint64(0), dtype=np.uint64)
    for _ in range(density):
        out &= rng.integers(0, 1 << 64, words, dtype=np.uint64, endpoint=False)
    return out


def forced(words: np.ndarray, form: str) -> sparse.BitIndex:
    """The index of ``words`` in the form named, whichever is smaller."""
    if form == "dense":
        return sparse._dense(words)
    ranks = np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little")).astype(np.uint64)
    return sparse._sparse(ranks, words.shape[0])


def dense_bit(words: np.ndarray, r: int) -> int:
    return int(words[r >> 6]) >> (r & 63) & 1 if 0 <= r < 64 * words.shape[0] else 0


@pytest.mark.parametrize("density", [-1, 0, 1, 4, 9, 14])
@pytest.mark.parametrize("form", ["dense", "sparse"])
def test_lookups_equal_the_dense_words(density: int, form: str) -> None:
    rng = np.random.default_rng(density + 100)
    words = random_words(rng, 301, density)
    index = forced(words, form)
    assert index.sparse == (form == "sparse") and index.words == 301
    assert index.count() == int(np.unpackbits(words.view(np.uint8)).sum())
    assert np.array_equal(index.dense(), words)
    for r in list(range(-70, 70)) + list(range(64 * 301 - 70, 64 * 301 + 70)) + list(rng.integers(0, 64 * 301, 500)):
        assert int(_index_bit(index.array, int(r))) == dense_bit(words, int(r)), r


@pytest.mark.parametrize("form", ["dense", "sparse"])
@pytest.mark.parametrize("density", [-1, 0, 3, 9])
def test_ranks_and_word_ranges_equal_the_dense_words(density: int, form: str) -> None:
    words = random_words(np.random.default_rng(density + 11), 300, density)
    index = forced(words, form)
    ranks = np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little")).astype(np.uint64)
    assert np.array_equal(index.ranks(), ranks)
    for a, b in [(0, 300), (0, 0), (17, 18), (63, 250), (299, 300), (300, 300)]:
        assert np.array_equal(index.dense_range(a, b), words[a:b]), (a, b)
    assert np.array_equal(sparse.from_ranks(ranks, 300).dense(), words)
    with pytest.raises(ValueError, match="not within"):
        index.dense_range(5, 301)


@pytest.mark.parametrize("density", [-1, 1, 3, 12])
def test_builder_from_pieces_equals_the_index_of_the_whole(density: int) -> None:
    rng = np.random.default_rng(density + 7)
    words = random_words(rng, 1000, density)
    builder = IndexBuilder(1000)
    for a, b in [(0, 1), (1, 300), (300, 301), (301, 1000)]:
        builder.add(words[a:b])
    built, whole = builder.finish(), bit_index(words)
    assert built.sparse == whole.sparse == (density < 0 or density > 6)  # none set, or few
    assert np.array_equal(built.array, whole.array)
    assert built.nbytes == sparse.index_bytes(1000, whole.count())
    with pytest.raises(ValueError, match="exceed"):
        IndexBuilder(3).add(words[:4])
    with pytest.raises(ValueError, match="has 2 of its 3 words"):
        part = IndexBuilder(3)
        part.add(words[:2])
        part.finish()


def test_a_sparse_index_is_smaller_on_a_sparse_layer() -> None:
    """7×8 layer 11 (13,655,136 unique of 148.9 G boards): 0.7 GB, not a bit a board (18.6 GB)."""
    words = -(-148_902_215_280 // 64)
    assert 8 * 13_655_136 < sparse.index_bytes(words, 13_655_136) < 0.7e9 < 8 * words / 25
    assert sparse.index_bytes(100, 6400) == 8 * (sparse.HEADER + 100)  # every bit set: the dense words


def test_a_wrong_unique_is_refused_in_one_line() -> None:
    s, u = first_layer(5, 5)
    with pytest.raises(ValueError, match="prev_unique must be a 1-D uint64 array or a BitIndex of 1 words, "
                                         "got an index of 2 words"):
        solve_words(5, 5, 2, s, bit_index(np.zeros(2, dtype=np.uint64)), 0, 1)
    with pytest.raises(ValueError, match="prev_unique must be .* got int64"):
        solve_words(5, 5, 2, s, u.astype(np.int64), 0, 1)


@pytest.mark.parametrize("kernel", ["block", "fast", "plain"])
def test_kernels_give_the_same_words_from_either_form(kernel: str) -> None:
    """5×5 layers 6 (from 5) and their fill, whole and in parts, unique as dense words, a dense and a sparse
    index: the same words, which on layer 6 match the slow reference solver."""
    w, h = 5, 5
    prev = {1: first_layer(w, h)}
    for k in range(2, 6):
        prev[k] = solve_words(w, h, k, *prev[k - 1], 0, layer_words(w, h, k))
    s5, u5 = prev[5]
    outs = []
    for form in ("words", "dense", "sparse"):
        unique, unique_part = (u5, u5[100:]) if form == "words" else (forced(u5, form), forced(u5[100:], form))
        whole = solve_words(w, h, 6, s5, unique, 0, layer_words(w, h, 6), kernel=kernel)
        sym = solve_words_symmetric(w, h, 6, s5, unique, 3, 40, kernel=kernel)
        part = solve_words(w, h, 6, s5[100:], unique_part, 0, 50, kernel=kernel, part_start=100)
        fill = expand_words(w, h, 5, s5, unique, 0, layer_words(w, h, 5))
        outs.append([*whole, *sym[:2], *part, *fill])
    for other in outs[1:]:
        assert all(np.array_equal(a, b) for a, b in zip(outs[0], other))
    assert int(np.unpackbits(outs[0][1].view(np.uint8)).sum()) > 0


@pytest.fixture(scope="module")
def reference_4x3() -> dict[int, tuple[list[int], list[int]]]:
    return {k: tuple(ref.pack(bits) for bits in ref.layer(4, 3, k)) for k in range(2, 8)}


@pytest.mark.parametrize("kernel", ["block", "fast", "plain"])
def test_layers_from_sparse_indexes_match_the_slow_solver(kernel: str, reference_4x3) -> None:
    """4×3 layers 2..7, each solved from the previous one's unique bits as a sparse index."""
    w, h = 4, 3
    s, u = first_layer(w, h)
    for k in range(2, 8):
        s, u = solve_words(w, h, k, s, forced(u, "sparse"), 0, layer_words(w, h, k), kernel=kernel)
        assert ([int(x) for x in s], [int(x) for x in u]) == reference_4x3[k], k


def _rows(spec: str) -> list[list]:
    w, h, k, sym, kernel, parts = spec.split(",")
    space = fling_space(int(w), int(h), int(k), sym == "1", kernel)
    rows = solve_layers(space, chunk_words=257, partitions=int(parts)).rows
    return [[r["layer"], r["solvable"], r["unique"], r["checksum"], r.get("full_checksum")] for r in rows]


FAST = ["4,4,10,0,auto,1", "4,4,10,1,auto,1", "4,5,9,0,plain,1", "4,5,9,1,plain,1"]


@pytest.mark.parametrize("spec", FAST)
def test_every_layer_as_on_main(spec: str) -> None:
    assert _rows(spec) == MAIN_ROWS[spec]


@pytest.mark.slow
@pytest.mark.parametrize("spec", sorted(set(MAIN_ROWS) - set(FAST)))
def test_every_layer_as_on_main_5x5(spec: str) -> None:
    assert _rows(spec) == MAIN_ROWS[spec]


@pytest.mark.parametrize("spans", [None, ((0, 1000),), ((5, 997),), ((300, 301),), ((129, 700),),
                                   ((3, 90), (129, 300), (640, 999))])
def test_reads_in_steps_equal_the_words_of_the_spans(tmp_path, monkeypatch, spans) -> None:
    """``read_unique``'s index and ``read_layer``'s words, read a few chunks at a time."""
    import zarr

    from epcg.games.fling import kind
    from epcg.kinds import retrograde

    monkeypatch.setattr(retrograde, "READ_STEP_WORDS", 200)  # several reads of two 128-word chunks, spans cut inside
    words = random_words(np.random.default_rng(3), 1000, 10)
    group = zarr.open_group(str(tmp_path / ZARR), mode="w")
    group.create_array("unique/9", shape=(1000,), dtype="uint64", chunks=(128,), fill_value=0)[:] = words
    held = np.concatenate([words[a:b] for a, b in spans or ((0, 1000),)])
    index = kind.read_unique(RunDir(tmp_path), "unique/9", spans)
    assert (index.sparse or len(held) < 10) and np.array_equal(index.array, bit_index(held).array)
    if spans is not None:
        (read,) = retrograde.read_layer(RunDir(tmp_path), ("unique/9",), spans)
        assert np.array_equal(read, held)


@pytest.mark.parametrize("parts", [None, 4])
def test_the_estimate_counts_solvable_and_the_index_and_what_a_machine_shares(monkeypatch, parts) -> None:
    """12 pieces: a layer-12 task holds layer 11's solvable words and an index of its unique boards (at
    ``kind.unique_fraction``), not two bit arrays; with ``shared_previous`` the solvable words are the machine's."""
    from epcg.games.fling import kind

    monkeypatch.setattr(kind, "seconds_per_board", lambda config: 1e-8)
    words = layer_words(7, 8, 11)
    held = {}
    for shared in (False, True):
        config = kind.Config(domain="fling", name="x", max_pieces=12, shared_previous=shared, partitions=parts)
        cost = kind.estimate(config)["k12"]
        part = -(-words // (parts or 1))
        held[shared] = cost.peak_memory
        assert 8 * part < cost.peak_memory < 8 * part * 1.25  # 16 * part before the index
        assert cost.shared_memory == (8 * part if shared else 0)
    assert held[False] == held[True]


def test_sample_picks_equal_the_listed_set_bits() -> None:
    """The gallery's picks through running popcounts are the set bits, listed one by one, at those places."""
    from epcg.games.fling.found import _ranks_at, _ranks_in

    rng = np.random.default_rng(7)
    for density in (1, 3, 8):
        blocks, at = [], 5
        for size in (0, 1, 40, 300):
            words = rng.integers(0, 1 << 64, size, dtype=np.uint64, endpoint=False)
            for _ in range(density - 1):
                words &= rng.integers(0, 1 << 64, size, dtype=np.uint64, endpoint=False)
            blocks.append((at, words))
            at += size
        listed = np.concatenate([_ranks_in(w, first) for first, w in blocks])
        picks = np.unique(rng.integers(0, len(listed), 50))
        assert _ranks_at(blocks, picks) == listed[picks].tolist()
        assert _ranks_at(blocks, np.arange(len(listed))) == listed.tolist()
