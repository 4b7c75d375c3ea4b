"""Slow, obviously-right enumerations for epcg.combinatorics, built on itertools.

Each function lists every state of a generator in its documented order, so
``states[r]`` is the state of rank ``r``.
"""

from __future__ import annotations

import itertools
import math


def combinations_lex(n: int, k: int) -> list[tuple[int, ...]]:
    """Ascending k-subsets of range(n), lexicographic (paper Table 1 order)."""
    return list(itertools.combinations(range(n), k))


def board(cells) -> int:
    """Bitboard with the given cells set."""
    return sum(1 << c for c in cells)


def bitboards_lex(n: int, k: int) -> list[int]:
    """Bitboards of ``combinations_lex(n, k)``, same order."""
    return [board(c) for c in combinations_lex(n, k)]


def bitboards_colex(n: int, k: int) -> list[int]:
    """Bitboards with k of the low n bits set, in increasing numeric value (colex)."""
    return sorted(bitboards_lex(n, k))


def mirror(bb: int, n: int) -> int:
    """Bitboard with cell c moved to n-1-c."""
    return board(n - 1 - c for c in range(n) if bb >> c & 1)


def permutations_lex(n: int) -> list[tuple[int, ...]]:
    return list(itertools.permutations(range(n)))


def kpermutations_lex(n: int, k: int) -> list[tuple[int, ...]]:
    return list(itertools.permutations(range(n), k))


def multisets_lex(m: int, k: int) -> list[tuple[int, ...]]:
    return list(itertools.combinations_with_replacement(range(m), k))


def digits_lex(p: int, k: int) -> list[tuple[int, ...]]:
    return list(itertools.product(range(p), repeat=k))


def product_lex(*factor_states: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """Flat concatenations, first factor most significant."""
    return [sum(parts, ()) for parts in itertools.product(*factor_states)]


def placements(n: int, k: int, p: int) -> list[tuple[int, ...]]:
    return product_lex(combinations_lex(n, k), digits_lex(p, k))


def myrvold_ruskey_unrank(n: int, r: int) -> tuple[int, ...]:
    """Myrvold & Ruskey (2001) unrank1, recursive as in the paper."""
    perm = list(range(n))

    def unrank1(m: int, r: int) -> None:
        if m > 0:
            perm[m - 1], perm[r % m] = perm[r % m], perm[m - 1]
            unrank1(m - 1, r // m)

    unrank1(n, r)
    return tuple(perm)


def myrvold_ruskey_order(n: int) -> list[tuple[int, ...]]:
    """All permutations of range(n) by Myrvold-Ruskey rank."""
    return [myrvold_ruskey_unrank(n, r) for r in range(math.factorial(n))]
