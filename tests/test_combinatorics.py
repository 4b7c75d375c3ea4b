"""epcg.combinatorics against the itertools references in tests/reference/combinatorics.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from epcg.combinatorics import (
    BitboardCombinations,
    Combinations,
    Digits,
    KPermutations,
    Multisets,
    MyrvoldRuskeyPermutations,
    Permutations,
    PiecePlacements,
    Product,
)
from epcg.combinatorics import bits
from epcg.combinatorics.combinations import _increment_lex, _rank_lex, _unrank_lex
from tests.reference import combinatorics as ref

fast = settings(deadline=None, max_examples=60)

# name -> (constructor, reference enumeration, closed form, small-parameter strategy)
FAMILIES = {
    "combinations": (Combinations, ref.combinations_lex, math.comb,
                     st.tuples(st.integers(0, 9), st.integers(0, 10))),
    "permutations": (Permutations, ref.permutations_lex, math.factorial, st.tuples(st.integers(0, 6))),
    "myrvold_ruskey": (MyrvoldRuskeyPermutations, ref.myrvold_ruskey_order, math.factorial,
                       st.tuples(st.integers(0, 6))),
    "kpermutations": (KPermutations, ref.kpermutations_lex, math.perm,
                      st.tuples(st.integers(0, 7), st.integers(0, 8))),
    "multisets": (Multisets, ref.multisets_lex, lambda m, k: 1 if k == 0 else math.comb(m + k - 1, k),
                  st.tuples(st.integers(0, 6), st.integers(0, 5))),
    "digits": (Digits, ref.digits_lex, lambda p, k: p**k, st.tuples(st.integers(0, 4), st.integers(0, 5))),
    "placements": (PiecePlacements, ref.placements, lambda n, k, p: math.comb(n, k) * p**k,
                   st.tuples(st.integers(0, 7), st.integers(0, 4), st.integers(0, 3))),
    "product": (lambda n, k, m: Product(Combinations(n, k), Multisets(m, 2), Digits(2, 1)),
                lambda n, k, m: ref.product_lex(ref.combinations_lex(n, k), ref.multisets_lex(m, 2),
                                                ref.digits_lex(2, 1)),
                lambda n, k, m: math.comb(n, k) * math.comb(m + 1, 2) * 2,
                st.tuples(st.integers(0, 6), st.integers(0, 3), st.integers(0, 3))),
}


@pytest.mark.parametrize("name", FAMILIES)
@fast
@given(data=st.data())
def test_generator_matches_reference(name, data):
    """Order, max_rank, rank, unrank, increment and the array forms all equal the reference."""
    make, enumerate_all, closed_form, params = FAMILIES[name]
    args = data.draw(params)
    gen, states = make(*args), enumerate_all(*args)
    assert gen.max_rank == closed_form(*args) == len(states)
    assert isinstance(gen.max_rank, int)
    assert [gen.unrank(r) for r in range(gen.max_rank)] == states
    assert [gen.rank(s) for s in states] == list(range(len(states)))
    assert [gen.increment(s) for s in states] == states[1:] + [None] * bool(states)
    table = np.array(states, dtype=np.int64).reshape(len(states), gen.width)
    assert np.array_equal(gen.unrank_range(0, gen.max_rank), table)
    assert np.array_equal(gen.unrank_rows(np.arange(gen.max_rank)[::-1]), table[::-1])
    assert np.array_equal(gen.rank_rows(table), np.arange(len(states)))


def test_paper_table_1():
    c = Combinations(20, 4)
    assert c.max_rank == 4845
    assert [c.unrank(r) for r in range(3)] == [(0, 1, 2, 3), (0, 1, 2, 4), (0, 1, 2, 5)]
    assert [c.unrank(r) for r in range(4841, 4845)] == [
        (15, 16, 17, 19), (15, 16, 18, 19), (15, 17, 18, 19), (16, 17, 18, 19)]
    assert [c.rank(s) for s in [(0, 1, 2, 3), (16, 17, 18, 19)]] == [0, 4844]
    assert np.array_equal(c.unrank_range(4841, 4845), [[15, 16, 17, 19], [15, 16, 18, 19],
                                                      [15, 17, 18, 19], [16, 17, 18, 19]])


LARGE = [
    Combinations(56, 10), Combinations(129, 7), Combinations(64, 32),
    Permutations(20), MyrvoldRuskeyPermutations(20), KPermutations(64, 10), KPermutations(20, 14),
    Multisets(20, 12), Digits(3, 39), PiecePlacements(25, 4, 3),
    Product(Combinations(30, 3), Permutations(5), Digits(4, 3)),
]


@pytest.mark.parametrize("gen", LARGE, ids=repr)
@fast
@given(fraction=st.fractions(0, 1))
def test_round_trip_and_increment_on_large_spaces(gen, fraction):
    """rank(unrank(r)) == r and increment(unrank(r)) == unrank(r+1), across the whole int64 rank space."""
    r = min(int(fraction * gen.max_rank), gen.max_rank - 1)
    state = gen.unrank(r)
    assert gen.rank(state) == r
    nxt = gen.increment(state)
    assert nxt == (gen.unrank(r + 1) if r + 1 < gen.max_rank else None)
    lo = max(0, r - 3)
    rows = gen.unrank_range(lo, min(gen.max_rank, lo + 7))
    assert [tuple(row) for row in rows.tolist()] == [gen.unrank(x) for x in range(lo, lo + len(rows))]
    assert np.array_equal(gen.rank_rows(rows), np.arange(lo, lo + len(rows)))


def test_closed_forms_on_large_spaces():
    assert Combinations(56, 10).max_rank == 35607051480
    assert Permutations(20).max_rank == math.factorial(20)
    assert KPermutations(64, 10).max_rank == math.perm(64, 10)
    assert Multisets(20, 12).max_rank == math.comb(31, 12)
    assert PiecePlacements(25, 4, 3).max_rank == math.comb(25, 4) * 81
    assert Combinations(3, 5).max_rank == 0 and KPermutations(3, 5).max_rank == 0


# --- bitboards -------------------------------------------------------------------

@fast
@given(n=st.integers(0, 10), data=st.data())
def test_bitboards_match_reference(n, data):
    k = data.draw(st.integers(0, n + 1))
    g, lex, colex = BitboardCombinations(n, k), ref.bitboards_lex(n, k), ref.bitboards_colex(n, k)
    assert g.max_rank == math.comb(n, k) == len(lex)
    assert [g.unrank(r) for r in range(g.max_rank)] == lex
    assert [g.rank(b) for b in lex] == list(range(len(lex)))
    assert [g.increment(b) for b in lex] == lex[1:] + [None] * bool(lex)
    assert [g.unrank_colex(r) for r in range(g.max_rank)] == colex
    assert [g.rank_colex(b) for b in colex] == list(range(len(colex)))
    assert [g.increment_colex(b) for b in colex] == colex[1:] + [None] * bool(colex)
    assert g.unrank_range(0, g.max_rank).tolist() == lex
    assert g.rank_rows(np.array(lex, dtype=np.uint64)).tolist() == list(range(len(lex)))
    assert [g.to_items(b) for b in lex] == ref.combinations_lex(n, k)


def _bitboard_space(n_max=64):
    return st.integers(1, n_max).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n)))


@fast
@given(nk=_bitboard_space(), fraction=st.fractions(0, 1))
def test_bitboard_lex_colex_relation(nk, fraction):
    """lex_rank(b) == C(n,k) - 1 - colex_rank(mirror(b)), and lex order equals Combinations."""
    n, k = nk
    g = BitboardCombinations(n, k)
    r = min(int(fraction * g.max_rank), g.max_rank - 1)
    b = g.unrank(r)
    assert g.to_items(b) == Combinations(n, k).unrank(r)
    assert g.reverse(b) == ref.mirror(b, n)
    assert g.rank_colex(g.reverse(b)) == g.max_rank - 1 - r
    assert g.unrank_colex(g.max_rank - 1 - r) == g.reverse(b)
    assert g.rank(b) == r
    nxt = g.increment(b)
    assert nxt == (g.unrank(r + 1) if r + 1 < g.max_rank else None)
    c = g.unrank_colex(r)
    assert g.rank_colex(c) == r
    assert g.increment_colex(c) == (g.unrank_colex(r + 1) if r + 1 < g.max_rank else None)


def test_bitboard_fling_board_size():
    g = BitboardCombinations(56, 10)
    assert g.max_rank == 35607051480
    assert g.unrank(0) == 0b1111111111 and g.rank(0b1111111111 << 46) == g.max_rank - 1
    assert g.increment(0b1111111111 << 46) is None and g.increment_colex(0b1111111111 << 46) is None


@fast
@given(x=st.integers(0, 2**64 - 1), n=st.integers(1, 64))
def test_bit_primitives_in_numba_equal_python(x, n):
    word = np.uint64(x)
    assert (_bits_jit(word, n)) == (bin(x).count("1"), (x & -x).bit_length() - 1 if x else 64,
                                   x.bit_length() - 1, ref.mirror(x & (2**n - 1), n))
    assert (bits.popcount(x), bits.ctz(x), bits.msb(x)) == _bits_jit(word, n)[:3]


@njit
def _bits_kernel(w, n):
    return bits.popcount(w), bits.ctz(w), bits.msb(w), bits.reverse_bits(w & bits.low_mask(n), n)


def _bits_jit(word, n):
    return tuple(int(v) for v in _bits_kernel(word, n))


@njit
def _sum_prefetched(words, order):
    total = np.uint64(0)
    for i in order:
        bits.prefetch(words, i)
    for i in order:
        total += words[i]
    return total


def test_prefetch_is_only_a_hint():
    words = np.arange(1 << 16, dtype=np.uint64)
    order = np.random.default_rng(0).integers(0, words.shape[0], 1000)
    assert int(_sum_prefetched(words, order)) == int(words[order].sum())
    assert bits.prefetch(words, 3) is None  # plain Python: nothing happens


# --- the kernels other modules import ----------------------------------------------

@fast
@given(n=st.integers(0, 12), data=st.data())
def test_lex_kernels_directly(n, data):
    k = data.draw(st.integers(0, n))
    states = ref.combinations_lex(n, k)
    r = data.draw(st.integers(0, len(states) - 1))
    out = np.full(k + 2, -7, dtype=np.int64)
    _unrank_lex(np.int64(r), np.int64(n), np.int64(k), out)
    assert tuple(out[:k]) == states[r] and list(out[k:]) == [-7, -7]
    assert _rank_lex(out[:k], n, k) == r
    items = np.array(states[r], dtype=np.int64)
    assert _increment_lex(items, n, k) == (r + 1 < len(states))
    assert tuple(items) == states[min(r + 1, len(states) - 1)]


# --- validation ---------------------------------------------------------------------

@pytest.mark.parametrize("gen, bad", [
    (Combinations(5, 2), [(1, 1), (2, 1), (0, 5), (-1, 2), (0, 1, 2), ("a", "b"), (0.5, 1)]),
    (Permutations(3), [(0, 0, 1), (0, 1, 3), (0, 1)]),
    (MyrvoldRuskeyPermutations(3), [(0, 0, 1), (2, 1)]),
    (KPermutations(5, 2), [(1, 1), (0, 5)]),
    (Multisets(3, 2), [(1, 0), (0, 3)]),
    (Digits(3, 2), [(0, 3), (-1, 0)]),
    (PiecePlacements(5, 2, 2), [(1, 0, 0, 0), (0, 1, 0, 2), (0, 1, 0)]),
    (Product(Combinations(4, 2), Digits(2, 1)), [(1, 0, 0), (0, 1, 2), (0, 1)]),
    (BitboardCombinations(5, 2), [0b111, 0b100001, -1, 1.5]),
])
def test_bad_states_raise(gen, bad):
    for state in bad:
        with pytest.raises(ValueError):
            gen.rank(state)
        with pytest.raises(ValueError):
            gen.increment(state)


@pytest.mark.parametrize("gen", [Combinations(5, 2), Permutations(3), MyrvoldRuskeyPermutations(3),
                                 KPermutations(5, 2), Multisets(3, 2), Digits(3, 2), PiecePlacements(5, 2, 2),
                                 Product(Combinations(4, 2), Digits(2, 1)), BitboardCombinations(5, 2)], ids=repr)
def test_bad_ranks_raise(gen):
    for rank in (-1, gen.max_rank, 2**70, 1.0, "3"):
        with pytest.raises(ValueError, match="rank"):
            gen.unrank(rank)
    with pytest.raises(ValueError):
        gen.unrank_range(0, gen.max_rank + 1)
    with pytest.raises(ValueError):
        gen.unrank_range(3, 2)
    assert gen.unrank_range(2, 2).shape[0] == 0
    assert gen.rank(gen.unrank(np.int64(1))) == 1


@pytest.mark.parametrize("make", [
    lambda: Combinations(130, 2), lambda: Combinations(129, 64), lambda: Combinations(-1, 2),
    lambda: Combinations(5, 1.5), lambda: Permutations(21), lambda: KPermutations(65, 1),
    lambda: Multisets(100, 40), lambda: Digits(2, 63), lambda: BitboardCombinations(65, 1),
    lambda: Product(), lambda: Product(Permutations(20), Digits(2, 4)),
])
def test_bad_parameters_raise(make):
    with pytest.raises(ValueError):
        make()
