"""Algorithm 5, retrograde analysis, domain-free: a space's layers, solved range by range.

A :class:`RetrogradeSpace` numbers the states of layer ``k`` (e.g. boards of
``k`` pieces) ``0 .. layer_size(k) - 1`` and keeps one or more bits per state
(``bits``, e.g. ``("solvable", "unique")``), packed in uint64 words: bit
``r % 64`` of word ``r // 64`` is state ``r``; bits past the layer's size are 0.
Layer ``first`` is given (``first_layer()``); layer ``k > first`` is computed
from the whole of layer ``k - 1`` by ``solve(k, previous, start, stop)``, which
returns words ``[start, stop)`` of each bit array and must not depend on how a
layer is cut into ranges.

The driver here is what every job runs, on one machine or a cluster:

- :func:`layer_plan`: one layer after another, each cut into word ranges
  (plain data; the runtime turns it into stages of tasks);
- :func:`solve_range`: one word range of one layer, reading the previous layer
  through the per-process :class:`LayerCache` (a worker loads it once for all
  its tasks of the layer);
- :func:`summarize` and :func:`merge_layer`: per-range counts and checksums,
  and their exact, order-independent combination per layer;
- :func:`solve_layers`: all of it in one process (notebooks and tests).

>>> space = Subsets(4)   # layer k: k-subsets of 4 items; "even": the smallest item is even
>>> [row["even"] for row in solve_layers(space, chunk_words=1).rows]
[2, 4, 3, 1]
>>> [(s.name, s.after, s.ranges) for s in layer_plan(space, chunk_words=1, last=2)]
[('k01', (), ((0, 1),)), ('k02', ('k01',), ((0, 1),))]
>>> a = np.arange(10, dtype=np.uint64)
>>> layer_checksum(a, 0) == (layer_checksum(a[:3], 0) + layer_checksum(a[3:], 3)) % 2**64
True
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import numpy as np
from numba import njit

from epcg.combinatorics.bits import popcount_words

__all__ = ["LayerCache", "LayerStage", "Layers", "RetrogradeSpace", "Subsets", "layer_checksum", "layer_name",
           "layer_plan", "layer_words", "merge_layer", "solve_layers", "solve_range", "summarize", "word_ranges"]

Words = tuple[np.ndarray, ...]
"""One uint64 word array per bit of the space (in the order of ``RetrogradeSpace.bits``)."""


@dataclass(frozen=True)
class RetrogradeSpace:
    """A content space solved by retrograde analysis (paper Algorithm 5): the public interface.

    ``solve`` is usually a thin wrapper around an ``@njit(cache=True, nogil=True)``
    kernel over a rank range; it gets the whole previous layer (one array per
    bit) and returns fresh arrays of ``stop - start`` words. ``first_layer``
    returns every word of layer ``first``. A job names a space by import path
    (``space = "mypkg.game:SPACE"``) and the ``retrograde`` job kind walks it.
    """

    name: str
    """What a person calls the space, e.g. ``'peg solitaire, triangle of side 5'``."""
    layer_size: Callable[[int], int]
    """States in layer ``k``."""
    first_layer: Callable[[], Words]
    """Every word of layer ``first``."""
    solve: Callable[[int, Words, int, int], Words]
    """``solve(k, previous, start, stop)``: words ``[start, stop)`` of layer ``k`` from all of layer ``k - 1``."""
    last: int
    """Deepest layer a job solves unless it asks for fewer."""
    first: int = 1
    bits: tuple[str, ...] = ("solvable",)
    """Names of the bit arrays of every layer; stored as ``<bit>/<k>``."""
    describe: Callable[[int, int], str] | None = None
    """Optional ``describe(k, rank)``: a state as text, for reports."""
    algorithm: ClassVar[str] = "retrograde"
    """The job kind that walks a retrograde space."""

    def __post_init__(self) -> None:
        if not self.bits or len(set(self.bits)) != len(self.bits):
            raise ValueError(f"bits must be distinct names, got {self.bits!r}")
        if self.last < self.first:
            raise ValueError(f"last layer {self.last} is before the first, {self.first}")


def layer_name(level: int) -> str:
    return f"k{level:02d}"


def layer_words(space: RetrogradeSpace, k: int) -> int:
    """uint64 words of one bit array of layer ``k``, ``ceil(layer_size(k) / 64)``."""
    return -(-space.layer_size(k) // 64)


def word_ranges(words: int, chunk_words: int) -> tuple[tuple[int, int], ...]:
    """``[0, words)`` cut into ranges of ``chunk_words`` (one empty range for an empty layer).

    >>> word_ranges(10, 4), word_ranges(0, 4)
    (((0, 4), (4, 8), (8, 10)), ((0, 0),))
    """
    if words < 0 or chunk_words < 1:
        raise ValueError(f"bad word split: words={words}, chunk_words={chunk_words}")
    bounds = list(range(0, words, chunk_words)) + [words] if words else [0, 0]
    return tuple(zip(bounds, bounds[1:]))


class LayerStage(NamedTuple):
    """One layer of a plan: its stage name, level, size, the stage it waits for, its word ranges."""

    name: str
    level: int
    states: int
    words: int
    after: tuple[str, ...]
    ranges: tuple[tuple[int, int], ...]


def layer_plan(space: RetrogradeSpace, chunk_words: int, last: int | None = None) -> tuple[LayerStage, ...]:
    """Layers ``first .. last`` (default ``space.last``), each after the one before, in word ranges."""
    last = space.last if last is None else last
    out = []
    for k in range(space.first, last + 1):
        words = layer_words(space, k)
        after = (layer_name(k - 1),) if k > space.first else ()
        out.append(LayerStage(layer_name(k), k, space.layer_size(k), words, after, word_ranges(words, chunk_words)))
    return tuple(out)


class LayerCache:
    """Keeps the most recently used layer of this process in memory.

    ``get(key, load)`` returns the cached value for ``key`` or calls ``load()``
    once, dropping whatever was cached before (a worker works on one layer at a
    time, and the layer before it is no longer needed). Thread-safe: with
    several threads per worker, one loads and the others wait.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: Hashable | None = None
        self._value: Any = None
        self.loads = 0

    def get(self, key: Hashable, load: Callable[[], Any]) -> Any:
        with self._lock:
            if self._key != key:
                self._key, self._value = None, None  # free the old layer before loading
                self._value = load()
                self._key = key
                self.loads += 1
            return self._value


PREVIOUS = LayerCache()
"""The previous layer of this process, shared by every retrograde job it runs."""


def solve_range(space: RetrogradeSpace, k: int, start: int, stop: int,
                load_previous: Callable[[], Words], key: Hashable = None) -> Words:
    """Words ``[start, stop)`` of every bit array of layer ``k``.

    Layer ``first`` comes from ``first_layer()``; a later layer from
    ``space.solve`` on layer ``k - 1``, which ``load_previous()`` reads once
    per process and ``key`` (e.g. the run directory) names in :data:`PREVIOUS`.
    """
    if not space.first <= k:
        raise ValueError(f"layer {k} is before the first layer, {space.first}")
    if k == space.first:
        words = tuple(np.ascontiguousarray(w[start:stop], dtype=np.uint64) for w in space.first_layer())
    else:
        previous = PREVIOUS.get((key, space.name, k - 1), load_previous)
        words = tuple(space.solve(k, previous, start, stop))
    if len(words) != len(space.bits) or any(w.shape != (stop - start,) or w.dtype != np.uint64 for w in words):
        raise ValueError(f"{space.name}: layer {k} words [{start}, {stop}) must be {len(space.bits)} uint64 "
                         f"arrays of {stop - start} words, got {[(w.dtype, w.shape) for w in words]}")
    return words


def summarize(space: RetrogradeSpace, words: Words, start: int) -> dict[str, int]:
    """A word range's record: set bits and checksum of each bit array (``<bit>``, ``checksum_<bit>``)."""
    out = {}
    for bit, w in zip(space.bits, words):
        out[bit] = popcount_words(w)
        out[f"checksum_{bit}"] = layer_checksum(w, start)
    return out


def merge_layer(space: RetrogradeSpace, records: Iterable[dict[str, int]]) -> dict[str, Any]:
    """One layer from its ranges' :func:`summarize` records: counts summed, checksums added mod 2^64.

    ``checksum`` joins the bit arrays' checksums in hex (``"…-…"``); neither
    depends on how the layer was cut.
    """
    records = list(records)
    out: dict[str, Any] = {bit: sum(r[bit] for r in records) for bit in space.bits}
    out["checksum"] = "-".join(
        "{:016x}".format(sum(r[f"checksum_{bit}"] for r in records) % 2**64) for bit in space.bits
    )
    return out


@dataclass(frozen=True)
class Layers:
    """Every layer solved in one process: the rows of :func:`merge_layer`, and the words if kept."""

    rows: list[dict[str, Any]]
    words: dict[int, Words] = field(default_factory=dict)


def solve_layers(space: RetrogradeSpace, last: int | None = None, chunk_words: int = 1 << 16,
                 keep: bool = False) -> Layers:
    """Algorithm 5 in one process, range by range as a job does (for notebooks and tests).

    ``keep`` keeps every layer's words; otherwise only the previous one is held.
    """
    rows, kept = [], {}
    previous: Words = ()
    token = object()  # this call's own key in the process's layer cache
    for stage in layer_plan(space, chunk_words, last):
        parts = [solve_range(space, stage.level, a, b, lambda: previous, key=token)
                 for a, b in stage.ranges]
        words = tuple(np.concatenate([p[i] for p in parts]) for i in range(len(space.bits)))
        records = [summarize(space, p, a) for p, (a, _b) in zip(parts, stage.ranges)]
        rows.append({"layer": stage.level, "states": stage.states, **merge_layer(space, records)})
        previous = words
        if keep:
            kept[stage.level] = words
    return Layers(rows, kept)


@njit(cache=True, nogil=True)
def _mix(x):
    """splitmix64 finaliser: a well-spread 64-bit hash of one word."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True)
def _checksum(words, first_index):
    total = np.uint64(0)
    for i in range(words.shape[0]):
        total += _mix(words[i] ^ _mix(np.uint64(first_index + i)))
    return total


def layer_checksum(words: np.ndarray, first_index: int) -> int:
    """Sum over words of hash(word, index) mod 2^64.

    Adding the checksums of consecutive pieces gives the checksum of the whole,
    so a layer's checksum does not depend on how it was chunked, yet any changed
    bit changes it (with overwhelming probability).
    """
    return int(_checksum(np.ascontiguousarray(words, dtype=np.uint64), np.uint64(first_index)))


def Subsets(n: int) -> RetrogradeSpace:
    """A toy space for examples and tests: layer ``k`` is the k-subsets of ``n`` items in colex order.

    Bit ``even``: the subset's smallest item is even. Solved "retrogradely":
    a subset's bit is that of the subset without its largest item (layer 1 is
    given). A plain Python ``solve``; a real space calls an ``@njit`` kernel.
    """
    subsets = {k: sorted((c for c in _combinations(n, k)), key=lambda c: c[::-1]) for k in range(1, n + 1)}
    index = {k: {c: r for r, c in enumerate(cs)} for k, cs in subsets.items()}

    def first_layer() -> Words:
        return (_pack([c[0] % 2 == 0 for c in subsets[1]]),)

    def solve(k: int, previous: Words, start: int, stop: int) -> Words:
        bits = [bool(previous[0][r >> 6] >> np.uint64(r & 63) & np.uint64(1))
                for r in (index[k - 1][c[:-1]] for c in subsets[k])]
        return (_pack(bits)[start:stop].copy(),)

    return RetrogradeSpace(f"{n} items", lambda k: math.comb(n, k), first_layer, solve, last=n, bits=("even",),
                           describe=lambda k, r: str(subsets[k][r]))


def _combinations(n: int, k: int) -> Sequence[tuple[int, ...]]:
    from itertools import combinations

    return list(combinations(range(n), k))


def _pack(bits: Sequence[bool]) -> np.ndarray:
    words = np.zeros(-(-len(bits) // 64), dtype=np.uint64)
    for r, b in enumerate(bits):
        if b:
            words[r >> 6] |= np.uint64(1) << np.uint64(r & 63)
    return words
