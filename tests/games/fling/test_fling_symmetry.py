"""Fling! layers reduced by board symmetry against the slow solver and the unreduced kernel."""

from __future__ import annotations

import functools
import gc
import itertools
import random
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from epcg.combinatorics.bitboard import _rank_lex_bb, _unrank_lex_bb
from epcg.games.fling.domain.layers import _decided_lead, first_layer, layer_size, layer_words, solve_words
from epcg.games.fling.domain.symmetry import (
    canonical,
    canonical_words,
    expand_layer,
    expand_words,
    first_layer_symmetric,
    orbit_members,
    orbit_size,
    solve_words_symmetric,
    symmetry_maps,
)
from epcg.games.fling.kind import LastMade

from tests.reference import fling as ref


def popcount(words: np.ndarray) -> int:
    return int(np.bitwise_count(words).sum(dtype=np.int64))


def symmetric_layers(width: int, height: int, kmax: int, kernel: str = "auto") -> dict[int, tuple]:
    """``k -> (orbit solvable, orbit unique, solvable boards, unique boards, expanded solvable, expanded unique)``."""
    s, u, ns, nu = first_layer_symmetric(width, height)
    out = {1: (s, u, ns, nu, *expand_layer(width, height, 1, s, u))}
    for k in range(2, kmax + 1):
        s, u, ns, nu = solve_words_symmetric(width, height, k, *out[k - 1][4:], 0, layer_words(width, height, k),
                                             kernel=kernel)
        out[k] = (s, u, ns, nu, *expand_layer(width, height, k, s, u))
    return out


def unreduced_layers(width: int, height: int, kmax: int) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    out = {1: first_layer(width, height)}
    for k in range(2, kmax + 1):
        out[k] = solve_words(width, height, k, *out[k - 1], 0, layer_words(width, height, k))
    return out


@pytest.mark.parametrize(("width", "height"), [(7, 8), (4, 4), (5, 5), (3, 4), (1, 6), (1, 1)])
def test_maps_form_a_group(width: int, height: int) -> None:
    maps = symmetry_maps(width, height)
    n = width * height
    perms = {tuple(range(n))} | {tuple(int(m[c]).bit_length() - 1 for c in range(n)) for m in maps}
    for p, q in itertools.product(perms, repeat=2):
        assert tuple(p[q[c]] for c in range(n)) in perms
    assert len(maps) + 1 == (8 if width == height else 4)


@pytest.mark.parametrize(("width", "height"), [(3, 4), (4, 4), (7, 8)])
def test_canonical_and_orbit_size_match_reference(width: int, height: int) -> None:
    maps = symmetry_maps(width, height)
    rng = random.Random(3)
    n = width * height
    for _ in range(300):
        combo = tuple(sorted(rng.sample(range(n), rng.randrange(1, n))))
        bits = sum(1 << c for c in combo)
        images = ref.orbit(combo, width, height)
        assert int(canonical(np.uint64(bits), maps)) == sum(1 << c for c in min(images))
        assert orbit_size(np.uint64(bits), maps) == len(images)


@functools.cache
def reference_layer(width: int, height: int, k: int) -> tuple[list[bool], list[bool], list[bool]]:
    return (*ref.layer(width, height, k), ref.canonical_layer(width, height, k))


@pytest.mark.parametrize(("width", "height", "kmax"), [(3, 3, 9), (3, 4, 12), (4, 4, 5), (2, 5, 10), (5, 1, 5)])
@pytest.mark.parametrize("kernel", ["block", "fast", "plain"])
def test_every_board_matches_slow_solver(width: int, height: int, kmax: int, kernel: str) -> None:
    """Orbit layers = the slow solver's layers at canonical ranks (0 elsewhere), counts over every board,
    and the expanded layers = the slow solver's layers."""
    got = symmetric_layers(width, height, kmax, kernel)
    for k in range(1, kmax + 1):
        solvable, unique, first = reference_layer(width, height, k)
        s, u, ns, nu, es, eu = got[k]
        assert s.tolist() == ref.pack([a and b for a, b in zip(solvable, first)]), (k, "solvable")
        assert u.tolist() == ref.pack([a and b for a, b in zip(unique, first)]), (k, "unique")
        assert (ns, nu) == (sum(solvable), sum(unique)), k
        assert es.tolist() == ref.pack(solvable) and eu.tolist() == ref.pack(unique), k
        assert canonical_words(width, height, k, 0, len(s))[0].tolist() == ref.pack(first)


@pytest.mark.parametrize(("width", "height", "k"), [(4, 4, 5), (3, 5, 4), (4, 3, 6), (7, 2, 4)])
def test_decided_leads_hold_for_every_board_beginning_with_them(width: int, height: int, k: int) -> None:
    """The block kernel passes over every board beginning with a prefix's decided lead: the lead is the shortest
    leading part ``S`` with, for some symmetry ``g``, the lowest cell where ``S`` and ``g(S)`` differ in ``g(S)``
    and below ``S``'s highest cell, and no board beginning with it is canonical."""
    n, maps = width * height, symmetry_maps(width, height)
    canonical_boards = [b for b in (sum(1 << c for c in combo) for combo in itertools.combinations(range(n), k))
                        if int(canonical(np.uint64(b), maps)) == b]

    def image(cells: tuple[int, ...], g: int) -> int:
        return sum(int(maps[g, c]) for c in cells)

    def shortest_lead(cells: tuple[int, ...]) -> int:
        for j in range(1, len(cells) + 1):
            lead = sum(1 << c for c in cells[:j])
            for g in range(len(maps)):
                lowest_diff = (lead ^ image(cells[:j], g)) & -(lead ^ image(cells[:j], g))
                if image(cells[:j], g) & lowest_diff and lowest_diff < 1 << cells[j - 1]:
                    return lead
        return 0

    skipped = 0
    for combo in itertools.combinations(range(n - 1), k - 1):
        prefix = sum(1 << c for c in combo)
        images = np.array([image(combo, g) for g in range(len(maps))], dtype=np.uint64)
        lead = int(_decided_lead(np.uint64(prefix), combo[-1], images, maps))
        assert lead == shortest_lead(combo), combo
        if lead:
            below = (1 << lead.bit_length()) - 1  # the lead's cells and the cells between them
            assert not any(b & below == lead for b in canonical_boards), combo
            skipped += lead != prefix
    assert skipped > 0


def test_long_lines_use_plain_kernel() -> None:
    got = symmetric_layers(17, 1, 4)
    for k in range(2, 5):
        solvable, unique = ref.layer(17, 1, k)
        assert got[k][4].tolist() == ref.pack(solvable) and got[k][5].tolist() == ref.pack(unique)
        assert got[k][2:4] == (sum(solvable), sum(unique))


def check_against_unreduced(width: int, height: int, kmax: int) -> None:
    sym = symmetric_layers(width, height, kmax)
    full = unreduced_layers(width, height, kmax)
    for k in range(1, kmax + 1):
        s, u, ns, nu, es, eu = sym[k]
        fs, fu = full[k]
        mask, boards = canonical_words(width, height, k, 0, layer_words(width, height, k))
        assert boards == layer_size(width, height, k)
        assert (ns, nu) == (popcount(fs), popcount(fu)), k
        assert (s == fs & mask).all() and (u == fu & mask).all(), k
        assert (es == fs).all() and (eu == fu).all(), k


@pytest.mark.parametrize(("width", "height", "kmax"), [(7, 8, 6), (5, 5, 8), (6, 6, 5), (8, 8, 4), (16, 4, 4)])
def test_same_layers_as_unreduced(width: int, height: int, kmax: int) -> None:
    check_against_unreduced(width, height, kmax)


@pytest.mark.slow
def test_same_layers_as_unreduced_7x8_to_8() -> None:
    check_against_unreduced(7, 8, 8)


def test_any_word_split_gives_same_words() -> None:
    sym = symmetric_layers(7, 8, 4)
    total = layer_words(7, 8, 4)
    rng = random.Random(7)
    cuts = sorted({0, total, *(rng.randrange(total) for _ in range(6)), 1, total - 1})
    parts = [solve_words_symmetric(7, 8, 4, *sym[3][4:], a, b) for a, b in zip(cuts, cuts[1:])]
    assert (np.concatenate([p[0] for p in parts]) == sym[4][0]).all()
    assert (np.concatenate([p[1] for p in parts]) == sym[4][1]).all()
    assert (sum(p[2] for p in parts), sum(p[3] for p in parts)) == sym[4][2:4]
    filled = [expand_words(7, 8, 4, *sym[4][:2], a, b) for a, b in zip(cuts, cuts[1:])]
    assert (np.concatenate([p[0] for p in filled]) == sym[4][4]).all()
    assert (np.concatenate([p[1] for p in filled]) == sym[4][5]).all()
    assert all(part.shape == (0,) for part in solve_words_symmetric(7, 8, 4, *sym[3][4:], 5, 5)[:2])


@pytest.mark.parametrize(("width", "height", "k"), [(4, 4, 5), (7, 8, 3), (5, 3, 4), (6, 6, 2)])
def test_orbit_members_are_the_boards_whose_canonical_image_is_set(width: int, height: int, k: int) -> None:
    """Board by board: a rank is a member when its canonical image's rank is among the orbit ranks given; the
    members of parts of the orbit layer, ORed, are the whole layer's, and the words ``expand_words`` fills."""
    n, maps, words = width * height, symmetry_maps(width, height), layer_words(width, height, k)
    mask, _ = canonical_words(width, height, k, 0, words)
    rng = np.random.default_rng(k)
    orbit = mask & rng.integers(0, 1 << 64, words, dtype=np.uint64, endpoint=False)
    chosen = {r for r in range(layer_size(width, height, k)) if orbit[r >> 6] >> np.uint64(r & 63) & np.uint64(1)}
    expected = np.zeros(words, dtype=np.uint64)
    for r in range(layer_size(width, height, k)):
        if int(_rank_lex_bb(canonical(_unrank_lex_bb(r, n, k), maps), n, k)) in chosen:
            expected[r >> 6] |= np.uint64(1) << np.uint64(r & 63)
    assert chosen and (orbit_members(width, height, k, orbit).dense() == expected).all()
    cuts = [0, words // 3, words // 2, words]
    parts = [orbit_members(width, height, k, orbit[a:b], part_start=a).dense() for a, b in zip(cuts, cuts[1:])]
    assert (np.bitwise_or.reduce(parts) == expected).all()
    assert (expand_words(width, height, k, mask, orbit, 0, words)[1] == expected).all()
    with pytest.raises(ValueError, match="within layer"):
        orbit_members(width, height, k, orbit, part_start=1)


def test_a_layers_derived_index_is_made_once_and_dropped_with_the_layer() -> None:
    """Threads asking at once for the same layer's value wait for one make; another layer replaces it, and it
    is freed when its layer is."""
    made: list[int] = []

    class Layer:
        pass

    def make(layer: Layer, k: int) -> np.ndarray:
        made.append(k)
        return np.full(4, k)

    last = LastMade(make)
    first = Layer()
    with ThreadPoolExecutor(4) as pool:
        values = list(pool.map(lambda _: last(first, 1), range(16)))
    assert made == [1] and all(v is values[0] for v in values)
    second = Layer()
    assert int(last(second, 2)[0]) == 2 and made == [1, 2]
    value = weakref.ref(last(second, 2))
    del second
    gc.collect()
    assert value() is None and made == [1, 2]
