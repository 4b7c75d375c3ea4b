"""Self-driving automata (SDA): the evolvable bit source of the DWP map builder.

A genome is an int64 array of shape ``(states, 5)``; row ``s`` is state ``s``:

- ``[s, LEN]``: length of the emitted string, 1 or 2;
- ``[s, BIT0]``, ``[s, BIT1]``: the emitted bits (``BIT1`` is 0 when ``LEN`` is 1);
- ``[s, NEXT0]``, ``[s, NEXT1]``: the next state on input 0 and on input 1.

State 0 is the initial state. The machine's output is its own input
(paper Figure 1). Precisely: the output starts with the initial state's string;
then, repeatedly, the earliest output bit not yet consumed is consumed as input,
the machine moves along that input's transition, and the new state's string is
appended to the output. Every step consumes one bit and appends one or two, so
the machine never runs dry and yields as many bits as asked for,
deterministically.

A machine whose zeros drift ever farther apart: the initial state emits "10";
every input 1 leads to a state emitting "11" and every 0 to one emitting "0", so
a run of k ones followed by a zero, once consumed, appends 2k ones and a zero:

>>> g = sda_from_table([("10", 2, 1), ("11", 2, 1), ("0", 2, 1)])
>>> "".join(map(str, sda_bits(g, 29)))
'10110111101111111101111111111'
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL

__all__ = [
    "BIT0",
    "BIT1",
    "LEN",
    "MAX_STATES",
    "NEXT0",
    "NEXT1",
    "check_sda",
    "random_population",
    "random_sda",
    "sda_bits",
    "sda_from_table",
]

LEN, BIT0, BIT1, NEXT0, NEXT1 = range(5)
MAX_STATES = 256
"""Largest number of states a genome may have (the paper uses at most 20)."""


@njit(**KERNEL)
def _random_state(genome, s, rng):
    """Give state ``s`` of ``genome`` a uniformly random string (length 1 or 2, random bits)."""
    length = rng.integers(1, 3)
    genome[s, LEN] = length
    genome[s, BIT0] = rng.integers(0, 2)
    genome[s, BIT1] = rng.integers(0, 2) if length == 2 else 0


@njit(**KERNEL)
def _random_population(out, rng):
    """Fill ``out`` (members, states, 5) with random machines: per state a string, then two transitions.

    Unchecked: ``out.shape[1] >= 1``.
    """
    n = out.shape[1]
    for m in range(out.shape[0]):
        for s in range(n):
            _random_state(out[m], s, rng)
            out[m, s, NEXT0] = rng.integers(0, n)
            out[m, s, NEXT1] = rng.integers(0, n)


@njit(**KERNEL)
def _tables(genome):
    """Flat tables for the hot loop: ``nxt[2*s + b]`` the next state, ``emit[s]`` = len | bit0 << 2 | bit1 << 3."""
    n = genome.shape[0]
    nxt = np.empty(2 * n, np.int32)
    emit = np.empty(n, np.int32)
    for s in range(n):
        nxt[2 * s] = genome[s, NEXT0]
        nxt[2 * s + 1] = genome[s, NEXT1]
        emit[s] = genome[s, LEN] | (genome[s, BIT0] << 2) | (genome[s, BIT1] << 3)
    return nxt, emit


@njit(**KERNEL)
def _start(emit, buf):
    """Put the initial state's string into ``buf``; return the number of bits written."""
    e = emit[0]
    buf[0] = (e >> 2) & 1
    buf[1] = (e >> 3) & 1
    return e & 3


@njit(**KERNEL)
def _extend(nxt, emit, buf, filled, drive, state, need):
    """Run the machine until ``buf`` holds more than ``need`` bits; return ``(filled, drive, state)``.

    ``filled`` bits of output are in ``buf``, ``drive`` of them have been consumed
    as input, ``state`` is the current state; ``nxt`` and ``emit`` come from
    :func:`_tables`. Unchecked: a valid genome and ``len(buf) >= need + 2``.
    """
    while filled <= need:
        state = nxt[2 * state + buf[drive]]
        drive += 1
        e = emit[state]
        buf[filled] = (e >> 2) & 1
        buf[filled + 1] = (e >> 3) & 1
        filled += e & 3
    return filled, drive, state


@njit(**KERNEL)
def _sda_bits(genome, n):
    """The first ``n`` output bits of ``genome`` as int8. Unchecked: a valid genome, ``n >= 0``."""
    nxt, emit = _tables(genome)
    buf = np.zeros(n + 2, np.int8)
    filled = _start(emit, buf)
    if n > filled:
        _extend(nxt, emit, buf, filled, 0, 0, n - 1)
    return buf[:n]


def check_sda(genome: np.ndarray) -> np.ndarray:
    """Return ``genome`` as a C-contiguous int64 array, or raise ValueError if it is not a valid SDA."""
    g = np.ascontiguousarray(genome, dtype=np.int64)
    if g.ndim != 2 or g.shape[1] != 5 or not 1 <= g.shape[0] <= MAX_STATES:
        raise ValueError(f"an SDA is a (states, 5) array with 1..{MAX_STATES} states, got shape {g.shape}")
    n = g.shape[0]
    if not np.isin(g[:, LEN], (1, 2)).all():
        raise ValueError("SDA string lengths must be 1 or 2")
    if not np.isin(g[:, BIT0:BIT1 + 1], (0, 1)).all() or (g[g[:, LEN] == 1, BIT1] != 0).any():
        raise ValueError("SDA bits must be 0 or 1, and the unused second bit 0")
    if ((g[:, NEXT0:] < 0) | (g[:, NEXT0:] >= n)).any():
        raise ValueError(f"SDA transitions must be states 0..{n - 1}")
    return g


def sda_bits(genome: np.ndarray, n: int) -> np.ndarray:
    """The first ``n`` bits the machine emits, as an int8 array (validates the genome)."""
    if n < 0:
        raise ValueError(f"number of bits must be >= 0, got {n}")
    return _sda_bits(check_sda(genome), int(n))


def sda_from_table(table: Sequence[tuple[str, int, int]]) -> np.ndarray:
    """Build a genome from rows ``(emitted string, next on 0, next on 1)``; row 0 is initial.

    >>> sda_from_table([("1", 0, 1), ("10", 1, 0)]).tolist()
    [[1, 1, 0, 0, 1], [2, 1, 0, 1, 0]]
    """
    rows = []
    for text, n0, n1 in table:
        if len(text) not in (1, 2) or set(text) - {"0", "1"}:
            raise ValueError(f"an emitted string is 1 or 2 bits, got {text!r}")
        bits = [int(c) for c in text] + [0]
        rows.append([len(text), bits[0], bits[1], n0, n1])
    return check_sda(np.array(rows, dtype=np.int64).reshape(-1, 5))


def random_population(members: int, states: int, rng: np.random.Generator) -> np.ndarray:
    """``members`` random machines of ``states`` states, shape ``(members, states, 5)``.

    Each state's string has length 1 or 2 (uniform), then random bits; each
    transition is a uniform state.
    """
    if members < 0:
        raise ValueError(f"number of machines must be >= 0, got {members}")
    if not 1 <= states <= MAX_STATES:
        raise ValueError(f"states must be in 1..{MAX_STATES}, got {states}")
    out = np.zeros((members, states, 5), np.int64)
    _random_population(out, rng)
    return out


def random_sda(states: int, rng: np.random.Generator) -> np.ndarray:
    """One random machine of ``states`` states (see :func:`random_population`)."""
    return random_population(1, states, rng)[0]
