"""Algorithm 5, retrograde analysis, domain-free: a space's layers, solved range by range.

A :class:`RetrogradeSpace` numbers the states of layer ``k`` (e.g. boards of
``k`` pieces) ``0 .. layer_size(k) - 1`` and keeps one or more bits per state
(``bits``, e.g. ``("solvable", "unique")``), packed in uint64 words: bit
``r % 64`` of word ``r // 64`` is state ``r``; bits past the layer's size are 0.
Layer ``first`` is given (``first_layer()``); layer ``k > first`` is computed
from the whole of layer ``k - 1`` by ``solve(k, previous, start, stop)``, which
returns words ``[start, stop)`` of each bit array and must not depend on how a
layer is cut into ranges.

A space may also have a *reduced* form (e.g. one state per orbit of a
symmetry): ``solve_reduced(k, previous, start, stop)`` returns words in which
only each class's representative carries bits, and per bit how many states
those bits stand for; ``expand(k, reduced, start, stop)`` then gives every
state its representative's bits, the full layer, which layer ``k + 1`` reads.
The plan adds one fill stage (``fNN``) per reduced layer except the deepest.

A space may also be solved *in parts* of the previous layer, so no task
holds all of it: ``solve_partial(k, part, part_start, start, stop)`` looks up
only successors inside ``part`` (words ``part_start ..`` of layer ``k - 1``),
``merge_partial`` combines the partials of disjoint parts (associative and
commutative) and ``finish_partial`` turns the partial merged over every part
into the layer's words and counts (:func:`solve_part` with ``partitions``).
A reduced space may fill in parts too: ``expand_partial(k, part, part_start,
start, stop)`` gives only the states whose representative lies in ``part`` of
the reduced layer their bits, and the parts' words ORed are the full layer's.

A space may also say which words of layer ``k - 1`` a range of layer ``k``
reads (``reads(k, start, stop)``, e.g. the slices its moves reach) and cut
each layer into read groups (``read_groups(k)``): then a task solves its range
group by group, each from only the words the group reads, as a :class:`Held`
(tasks meeting one group share one load per process), so no task holds a
whole layer, however long its range.

The driver here is what every job runs, on one machine or a cluster:

- :func:`layer_plan`: one layer after another, each cut into word ranges, with
  a fill stage after each reduced layer but the deepest (plain data; the
  runtime turns it into stages of tasks);
- :func:`solve_part`: one word range of one stage, reading the layer it needs
  (the previous full layer, or for a fill the reduced layer) through the
  per-process :class:`LayerCache` (a worker loads it once for all its tasks
  of the stage); :func:`solve_range` is its words for a layer stage;
- :func:`summarize` and :func:`merge_layer`: per-range counts and checksums,
  and their exact, order-independent combination per layer;
- :func:`solve_layers`: all of it in one process (notebooks and tests).

>>> space = Subsets(4)   # layer k: k-subsets of 4 items; "even": the smallest item is even
>>> [row["even"] for row in solve_layers(space, chunk_words=1).rows]
[2, 4, 3, 1]
>>> [(s.name, s.after, s.ranges) for s in layer_plan(space, chunk_words=1, last=2)]
[('k01', (), ((0, 1),)), ('k02', ('k01',), ((0, 1),))]
>>> [(s.name, s.after) for s in layer_plan(Line(6), chunk_words=1, last=3)]   # reduced: fill stages
[('k01', ()), ('k02', ('k01',)), ('f02', ('k02',)), ('k03', ('f02',))]
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

from epcg.combinatorics.jit import KERNEL
from epcg.combinatorics.bits import popcount_words

__all__ = ["Held", "LayerCache", "LayerStage", "Layers", "Line", "RetrogradeSpace", "Spans",
           "Subsets", "aligned_groups", "fill_name", "group_runs", "is_reduced",
           "layer_checksum", "layer_name", "layer_plan", "layer_words",
           "merge_layer", "parse_stage", "partition_ranges", "retrograde_family",
           "solve_layers", "solve_part", "solve_range", "span_words", "summarize", "word_ranges"]

Words = tuple[np.ndarray, ...]
"""One uint64 word array per bit of the space (in the order of ``RetrogradeSpace.bits``)."""
Counts = tuple[int, ...]
"""Per bit of the space, how many states a range's words stand for (its set bits, unless reduced)."""
Spans = tuple[tuple[int, int], ...]
"""Word ranges ``[a, b)`` of a layer, sorted and disjoint."""


class Held(NamedTuple):
    """Some word ranges of a layer as a task holds them: per bit, the words of ``spans`` one after another."""

    spans: Spans
    words: Words



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
    render: Callable[[int, int], Any] | None = None
    """Optional ``render(k, rank)``: a picture of a state (SVG text or a matplotlib figure), for reports."""
    solve_reduced: Callable[[int, Words, int, int], tuple[Words, Counts]] | None = None
    """Optional ``solve_reduced(k, previous, start, stop)``: words ``[start, stop)`` of the reduced layer ``k``
    (only each class's representative carries bits) from all of the full layer ``k - 1``, and per bit the
    number of states those bits stand for (e.g. orbit sizes summed); stored as ``orbits/<bit>/<k>``."""
    expand: Callable[[int, Words, int, int], Words] | None = None
    """``expand(k, reduced, start, stop)``: words ``[start, stop)`` of the full layer ``k`` from all of the
    reduced one, every state getting its representative's bits; given exactly when ``solve_reduced`` is."""
    solve_partial: Callable[[int, Words, int, int, int], Words] | None = None
    """Optional ``solve_partial(k, part, part_start, start, stop)``: words ``[start, stop)`` of layer ``k``
    (reduced, if the space is) as a *partial*, from only ``part``, the words from ``part_start`` on of the
    full layer ``k - 1``: what the successors inside it tell."""
    merge_partial: Callable[[Words, Words], Words] | None = None
    """``merge_partial(a, b)``: the partial of two disjoint parts together; associative and commutative."""
    finish_partial: Callable[[int, Words, int, int], tuple[Words, Counts]] | None = None
    """``finish_partial(k, merged, start, stop)``: the words ``[start, stop)`` of layer ``k`` and the states
    they stand for, from the partial merged over parts covering layer ``k - 1``."""
    expand_partial: Callable[[int, Words, int, int, int], Words] | None = None
    """Optional ``expand_partial(k, part, part_start, start, stop)``: ``expand`` from only ``part``, the words
    from ``part_start`` on of the reduced layer ``k``: the states whose representative lies inside get its bits,
    the others 0, so ORing over parts covering the layer gives ``expand``'s words."""
    reads: Callable[[int, int, int], Spans] | None = None
    """Optional ``reads(k, start, stop)``: the word ranges of layer ``k - 1`` that words ``[start, stop)`` of layer
    ``k`` read (a superset will do); given exactly when ``read_groups`` is."""
    read_groups: Callable[[int], Sequence[int]] | None = None
    """``read_groups(k)``: the first word of each of layer ``k``'s read groups, in order, then its words. A layer
    task solves its range group by group, each from ``reads`` of the group's words (a :class:`Held` as
    ``solve``'s ``previous``), loaded once per process for every task that meets the group."""
    encode: Callable[[str], tuple[int, int]] | None = None
    """Optional ``encode(text)``: the ``(k, rank)`` of a state written as ``describe`` writes it (``epcg probe``
    takes a state so); a ValueError saying what is wrong for text that is no state."""
    algorithm: ClassVar[str] = "retrograde"
    """The job kind that walks a retrograde space."""

    def __post_init__(self) -> None:
        if not self.bits or len(set(self.bits)) != len(self.bits):
            raise ValueError(f"bits must be distinct names, got {self.bits!r}")
        if self.last < self.first:
            raise ValueError(f"last layer {self.last} is before the first, {self.first}")
        if (self.solve_reduced is None) != (self.expand is None):
            raise ValueError(f"{self.name}: solve_reduced and expand come together, got only one")
        partial = (self.solve_partial, self.merge_partial, self.finish_partial)
        if any(f is None for f in partial) and any(f is not None for f in partial):
            raise ValueError(f"{self.name}: solve_partial, merge_partial and finish_partial come together")
        if self.expand_partial is not None and self.expand is None:
            raise ValueError(f"{self.name}: expand_partial needs expand")
        if (self.reads is None) != (self.read_groups is None):
            raise ValueError(f"{self.name}: reads and read_groups come together, got only one")

    @property
    def partitioned(self) -> bool:
        """Layers can be solved from parts of the previous layer (``solve_partial``)."""
        return self.solve_partial is not None

    @property
    def reduced(self) -> bool:
        """Layers after the first are solved in reduced form and filled for the next layer."""
        return self.solve_reduced is not None


def retrograde_family(function: Callable[..., RetrogradeSpace]) -> Callable[..., RetrogradeSpace]:
    """Mark a function of row parameters returning a :class:`RetrogradeSpace` as a retrograde space (for job
    files: ``space = "pkg.mod:function"`` with ``rows = [{...}, ...]``, one analysis per row)."""
    function.algorithm = "retrograde"  # type: ignore[attr-defined]
    return function


def layer_name(level: int) -> str:
    return f"k{level:02d}"


def fill_name(level: int) -> str:
    return f"f{level:02d}"


def parse_stage(name: str) -> tuple[int, bool]:
    """A stage name's level and whether it is a fill stage.

    >>> parse_stage("k07"), parse_stage("f12")
    ((7, False), (12, True))
    """
    if len(name) < 3 or name[0] not in "kf" or not name[1:].isdigit():
        raise ValueError(f"not a retrograde stage name: {name!r}")
    return int(name[1:]), name[0] == "f"


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
    """One stage of a plan: its name, level, size, the stage it waits for, its word ranges, and whether it
    solves layer ``level`` or fills the full layer from the reduced one."""

    name: str
    level: int
    states: int
    words: int
    after: tuple[str, ...]
    ranges: tuple[tuple[int, int], ...]
    fill: bool = False


def layer_plan(space: RetrogradeSpace, chunk_words: int, last: int | None = None) -> tuple[LayerStage, ...]:
    """Layers ``first .. last`` (default ``space.last``), each after the one before, in word ranges.

    A reduced space's layers ``first < k < last`` are each followed by their
    fill stage, which the next layer waits for; the deepest layer stays reduced.
    """
    last = space.last if last is None else last
    out: list[LayerStage] = []
    for k in range(space.first, last + 1):
        words, states = layer_words(space, k), space.layer_size(k)
        ranges = word_ranges(words, chunk_words)
        out.append(LayerStage(layer_name(k), k, states, words, (out[-1].name,) if out else (), ranges))
        if space.reduced and space.first < k < last:
            out.append(LayerStage(fill_name(k), k, states, words, (out[-1].name,), ranges, fill=True))
    return tuple(out)


def partition_ranges(words: int, parts: int) -> tuple[tuple[int, int], ...]:
    """``[0, words)`` cut into ``parts`` word ranges as equal as can be (no empty ones).

    >>> partition_ranges(10, 3), partition_ranges(2, 4)
    (((0, 3), (3, 6), (6, 10)), ((0, 1), (1, 2)))
    """
    if words < 0 or parts < 1:
        raise ValueError(f"bad partition: words={words}, parts={parts}")
    bounds = [words * i // parts for i in range(parts + 1)]
    return tuple((a, b) for a, b in zip(bounds, bounds[1:]) if a < b)


def is_reduced(space: RetrogradeSpace, k: int) -> bool:
    """Layer ``k``'s solve stage writes the reduced form (every layer of a reduced space but the first)."""
    return space.reduced and k > space.first


def aligned_groups(bounds: Sequence[int], align: int) -> np.ndarray:
    """Read-group bounds (``read_groups(k)``) moved so that a layer cut in ranges of ``align`` words (its tasks)
    shares no group between two runs of ranges: in each range that holds a bound, the first moves down to the
    range's start (the others stay, so a long range still solves group by group). Then a range either starts a
    group or lies inside the group the range before it ends in, and a group's ranges are consecutive.

    >>> aligned_groups([0, 5, 9, 10, 23, 30], 4).tolist()
    [0, 4, 8, 10, 20, 30]
    >>> aligned_groups([0, 5, 9, 10, 23, 30], 1).tolist()
    [0, 5, 9, 10, 23, 30]
    """
    out = [int(bounds[0])]
    for b in bounds[1:-1]:
        start = int(b) - int(b) % align
        out.append(start if start > out[-1] else int(b))
    return np.array(out + [int(bounds[-1])], dtype=np.int64)


def group_runs(space: RetrogradeSpace, k: int, ranges: Sequence[tuple[int, int]]) -> list[int] | None:
    """For each of layer ``k``'s word ranges (its tasks, cut every ``ranges[0]`` words), the run of ranges it is
    in: ranges of one run share read groups (:func:`aligned_groups`), ranges of two runs none. None for a layer
    not solved from read groups."""
    if space.read_groups is None or k <= space.first:
        return None
    align = max(ranges[0][1] - ranges[0][0], 1)
    starts = set(aligned_groups(space.read_groups(k), align).tolist())
    runs, run = [], -1
    for a, _b in ranges:  # the first range starts at word 0, a group's start
        run += a in starts
        runs.append(run)
    return runs


class LayerCache:
    """Keeps the most recently used layer of this process in memory, or the parts of it its threads hold.

    ``get(key, load)`` returns the cached value for ``key`` or calls ``load()``
    once, dropping whatever was cached before (a worker works on one layer at a
    time, and the layer before it is no longer needed). ``get(key, load,
    layer)`` keeps one value of ``layer`` per thread (the read group each of a
    worker's threads solves from): a thread loading a new one drops only the
    one it used last, never another thread's, which that thread's next task of
    the same group would otherwise read again.
    Thread-safe: with several threads per worker, one loads and the others wait.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[tuple[Hashable, Hashable, Any, int]] = []  # (layer, key, value, thread that used it last)
        self.loads = 0

    def get(self, key: Hashable, load: Callable[[], Any], layer: Hashable = None) -> Any:
        layer = key if layer is None else layer
        me = threading.get_ident()
        with self._lock:
            hit = next((i for i, entry in enumerate(self._entries) if entry[1] == key), None)
            if hit is not None:
                entry = self._entries.pop(hit)
                self._entries.append((entry[0], entry[1], entry[2], me))
                return entry[2]
            self._entries = [e for e in self._entries if e[0] == layer and e[0] != e[1] and e[3] != me]
            value = load()  # the entries dropped are freed before loading
            self._entries.append((layer, key, value, me))
            self.loads += 1
            return value

    def drop(self) -> None:
        """Forget what is cached (a task that reads its layer in parts needs the memory)."""
        with self._lock:
            self._entries = []


PREVIOUS = LayerCache()
"""The previous layer of this process, shared by every retrograde job it runs."""


def span_words(spans: Spans) -> int:
    """Words the ranges cover."""
    return sum(b - a for a, b in spans)


def solve_part(space: RetrogradeSpace, k: int, start: int, stop: int, load: Callable[[], Words],
               key: Hashable = None, fill: bool = False, partitions: int = 1,
               load_spans: Callable[[Spans], Words] | None = None,
               on_read: Callable[[int], None] | None = None, align: int = 1) -> tuple[Words, Counts]:
    """Words ``[start, stop)`` of every bit array of one stage of layer ``k``, and the states they stand for.

    Layer ``first`` comes from ``first_layer()``; a later layer from
    ``space.solve`` (or ``space.solve_reduced``) on the full layer ``k - 1``;
    a fill (``fill=True``) from ``space.expand`` on the reduced layer ``k``.
    ``load()`` reads that whole layer once per process and ``key`` (e.g. the
    run directory) names it in :data:`PREVIOUS`. Counts are the set bits,
    except those ``solve_reduced`` returns.

    With ``partitions > 1`` a later layer is solved from the previous one in
    that many parts (:func:`partition_ranges`), read one at a time by
    ``load_spans(((a, b),))`` (words ``[a, b)``), never all at once; so is a fill
    from the reduced layer, if the space has ``expand_partial``. A space with
    ``reads`` has a later layer solved read group by read group, each from
    ``load_spans(reads(...))`` of the previous one, cached per process beside
    the other groups its threads hold.
    ``on_read(words)`` hears of each read this call makes (per bit array; a
    layer found in the cache is no read). ``align``: the words per task the
    layer is cut in, so read groups are those of :func:`aligned_groups`.
    """
    if not space.first <= k:
        raise ValueError(f"layer {k} is before the first layer, {space.first}")

    def counted(read: Callable[[], Words], words: int) -> Callable[[], Words]:
        def reading() -> Words:
            value = read()
            if on_read is not None:
                on_read(words)
            return value
        return reading

    load_spans_counted = None if load_spans is None else \
        (lambda spans: counted(lambda: load_spans(spans), span_words(spans))())
    counts = None
    if space.reads is not None and space.read_groups is not None and not fill and k > space.first:
        if load_spans_counted is None:
            raise ValueError(f"{space.name}: a space with reads needs a load_spans")
        words, counts = _over_groups(space, k, start, stop, key, load_spans_counted, align)
    elif partitions > 1 and not fill and k > space.first:
        if not space.partitioned or load_spans is None:
            raise ValueError(f"{space.name}: partitions need the space's solve_partial and a load_spans")
        merged = _over_parts(layer_words(space, k - 1), partitions, load_spans_counted,
                             lambda part, a: space.solve_partial(k, part, a, start, stop), space.merge_partial)
        words, counts = space.finish_partial(k, merged, start, stop)
        words, counts = tuple(words), tuple(int(c) for c in counts)
    elif fill:
        if not is_reduced(space, k):
            raise ValueError(f"{space.name}: layer {k} is not reduced, so it has no fill")
        if partitions > 1 and space.expand_partial is not None and load_spans is not None:
            words = _over_parts(layer_words(space, k), partitions, load_spans_counted,
                                lambda part, a: space.expand_partial(k, part, a, start, stop),
                                lambda x, y: tuple(p | q for p, q in zip(x, y)))
        else:
            words = tuple(space.expand(k, PREVIOUS.get((key, space.name, "reduced", k),
                                                       counted(load, layer_words(space, k))), start, stop))
    elif k == space.first:
        words = tuple(np.ascontiguousarray(w[start:stop], dtype=np.uint64) for w in space.first_layer())
    else:
        previous = PREVIOUS.get((key, space.name, k - 1), counted(load, layer_words(space, k - 1)))
        if space.reduced:
            words, counts = space.solve_reduced(k, previous, start, stop)
            words, counts = tuple(words), tuple(int(c) for c in counts)
        else:
            words = tuple(space.solve(k, previous, start, stop))
    if len(words) != len(space.bits) or any(w.shape != (stop - start,) or w.dtype != np.uint64 for w in words):
        raise ValueError(f"{space.name}: layer {k} words [{start}, {stop}) must be {len(space.bits)} uint64 "
                         f"arrays of {stop - start} words, got {[(w.dtype, w.shape) for w in words]}")
    if counts is None:
        counts = tuple(popcount_words(w) for w in words)
    elif len(counts) != len(space.bits):
        raise ValueError(f"{space.name}: solve_reduced must count {len(space.bits)} bits, got {counts!r}")
    return words, counts


def _over_groups(space: RetrogradeSpace, k: int, start: int, stop: int, key: Hashable,
                 load_spans: Callable[[Spans], Words], align: int) -> tuple[Words, Counts]:
    """Words ``[start, stop)`` of layer ``k`` and their counts, solved read group by read group (see
    :func:`solve_part`)."""
    assert space.reads is not None and space.read_groups is not None
    bounds = aligned_groups(space.read_groups(k), align)
    first = max(int(np.searchsorted(bounds, start, side="right")) - 1, 0)
    pieces: list[Words] = []
    counts = [0] * len(space.bits)
    for g in range(first, len(bounds) - 1):
        a, b = max(start, int(bounds[g])), min(stop, int(bounds[g + 1]))
        if a >= b:
            break

        def load(g: int = g) -> Held:
            spans = space.reads(k, int(bounds[g]), int(bounds[g + 1]))
            return Held(spans, load_spans(spans))

        previous = PREVIOUS.get((key, space.name, k - 1, "group", align, g), load, layer=(key, space.name, k - 1))
        if space.reduced:
            piece, piece_counts = space.solve_reduced(k, previous, a, b)
        else:
            piece = space.solve(k, previous, a, b)
            piece_counts = tuple(popcount_words(w) for w in piece)
        pieces.append(tuple(piece))
        counts = [c + int(n) for c, n in zip(counts, piece_counts)]
    if not pieces:
        return tuple(np.zeros(0, dtype=np.uint64) for _ in space.bits), tuple(counts)
    return tuple(np.concatenate([p[i] for p in pieces]) for i in range(len(space.bits))), tuple(counts)


def _over_parts(words: int, partitions: int, load_spans: Callable[[Spans], Words],
                one: Callable[[Words, int], Words], merge: Callable[[Words, Words], Words]) -> Words:
    """``one(part, first word)`` over the parts of a layer of ``words`` words, read one at a time and merged.

    The process's cached layer is dropped first: reading in parts is for when it does not fit beside one.
    """
    PREVIOUS.drop()
    merged: Words | None = None
    for a, b in partition_ranges(words, partitions):
        piece = tuple(one(load_spans(((a, b),)), a))
        merged = piece if merged is None else tuple(merge(merged, piece))
    assert merged is not None
    return merged


def solve_range(space: RetrogradeSpace, k: int, start: int, stop: int,
                load_previous: Callable[[], Words], key: Hashable = None) -> Words:
    """Words ``[start, stop)`` of every bit array of layer ``k`` (reduced if the space is), as :func:`solve_part`."""
    return solve_part(space, k, start, stop, load_previous, key)[0]


def summarize(space: RetrogradeSpace, words: Words, start: int, counts: Counts | None = None) -> dict[str, int]:
    """A word range's record: states and checksum of each bit array (``<bit>``, ``checksum_<bit>``).

    ``counts`` (default: the set bits) are the states the words stand for.
    """
    out = {}
    for i, (bit, w) in enumerate(zip(space.bits, words)):
        out[bit] = popcount_words(w) if counts is None else counts[i]
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
    """Every layer solved in one process: the rows of :func:`merge_layer`, and the words if kept.

    A reduced space's ``words`` are its reduced layers (the first is full);
    ``filled`` holds the full layers its fill stages made. A filled layer's
    row also has ``full_checksum``, the checksum of the full layer.
    """

    rows: list[dict[str, Any]]
    words: dict[int, Words] = field(default_factory=dict)
    filled: dict[int, Words] = field(default_factory=dict)


def solve_layers(space: RetrogradeSpace, last: int | None = None, chunk_words: int = 1 << 16,
                 keep: bool = False, partitions: int = 1) -> Layers:
    """Algorithm 5 in one process, range by range as a job does (for notebooks and tests).

    ``keep`` keeps every layer's words; otherwise only the layer the next stage reads is held.
    ``partitions``: solve each layer from that many parts of the previous one (:func:`solve_part`).
    """
    rows: list[dict[str, Any]] = []
    kept: dict[int, Words] = {}
    filled: dict[int, Words] = {}
    latest: Words = ()
    token = object()  # this call's own key in the process's layer cache
    def cut(spans: Spans) -> Words:
        return tuple(np.concatenate([w[a:b] for a, b in spans]) for w in latest)

    def whole() -> Words:
        return latest

    for stage in layer_plan(space, chunk_words, last):
        parts = [solve_part(space, stage.level, a, b, whole, key=token, fill=stage.fill,
                            partitions=partitions, load_spans=cut)
                 for a, b in stage.ranges]
        latest = tuple(np.concatenate([p[0][i] for p in parts]) for i in range(len(space.bits)))
        merged = merge_layer(space, [summarize(space, p[0], a, p[1]) for p, (a, _b) in zip(parts, stage.ranges)])
        if stage.fill:
            rows[-1]["full_checksum"] = merged["checksum"]
        else:
            rows.append({"layer": stage.level, "states": stage.states, **merged})
        if keep:
            (filled if stage.fill else kept)[stage.level] = latest
    return Layers(rows, kept, filled)


@njit(**KERNEL)
def _mix(x):
    """splitmix64 finaliser: a well-spread 64-bit hash of one word."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(**KERNEL)
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


def Line(n: int, reduced: bool = True) -> RetrogradeSpace:
    """A toy space with a 2-fold symmetry, for examples and tests of the reduced form.

    Layer ``k`` is the k-subsets of ``n`` cells on a line in colex order; a
    subset's children are it without one cell that lacks a neighbour in it on
    some side (the end of a run). Layer 1: the two end
    cells ``reach`` and are reached ``once``. Later: ``reach`` if some child
    reaches, ``once`` if exactly one child reaches and that one is ``once``.
    The mirror ``i -> n-1-i`` maps children to children, so mirror images have
    the same bits: ``reduced`` solves only the representative of each pair
    (the lower rank), counts both, and ``expand`` copies its bits to the other.

    >>> full, halved = solve_layers(Line(6, reduced=False)), solve_layers(Line(6))
    >>> [(r["reach"], r["once"]) for r in halved.rows]
    [(2, 2), (9, 8), (16, 2), (14, 2), (6, 2), (1, 0)]
    >>> [(r["reach"], r["once"]) for r in full.rows] == [(r["reach"], r["once"]) for r in halved.rows]
    True
    >>> [r.get("full_checksum") == f["checksum"] for r, f in zip(halved.rows, full.rows)]  # fills: layers 2..5
    [False, True, True, True, True, False]
    """
    subsets = {k: sorted((c for c in _combinations(n, k)), key=lambda c: c[::-1]) for k in range(1, n + 1)}
    index = {k: {c: r for r, c in enumerate(cs)} for k, cs in subsets.items()}

    def mirror(k: int, r: int) -> int:
        return index[k][tuple(sorted(n - 1 - i for i in subsets[k][r]))]

    def first_layer() -> Words:
        ends = _pack([c[0] in (0, n - 1) for c in subsets[1]])
        return ends, ends.copy()

    def bits_of(k: int, previous: Words, r: int) -> tuple[bool, bool]:
        c = subsets[k][r]
        children = [index[k - 1][c[:i] + c[i + 1:]] for i in range(k) if not {c[i] - 1, c[i] + 1} <= set(c)]
        reaching = [q for q in children if _bit(previous[0], q)]
        return bool(reaching), len(reaching) == 1 and _bit(previous[1], reaching[0])

    def solve(k: int, previous: Words, start: int, stop: int) -> Words:
        states = [bits_of(k, previous, r) for r in range(len(subsets[k]))]
        return tuple(_pack([s[i] for s in states])[start:stop].copy() for i in range(2))

    def solve_reduced(k: int, previous: Words, start: int, stop: int) -> tuple[Words, Counts]:
        ranks = range(64 * start, min(64 * stop, len(subsets[k])))
        states = {r: bits_of(k, previous, r) for r in ranks if r <= mirror(k, r)}
        words = tuple(_pack([r in states and states[r][i] for r in range(64 * stop)])[start:stop].copy()
                      for i in range(2))
        counts = tuple(sum(2 - (mirror(k, r) == r) for r, s in states.items() if s[i]) for i in range(2))
        return words, counts

    def expand(k: int, reduced: Words, start: int, stop: int) -> Words:
        ranks = range(64 * start, min(64 * stop, len(subsets[k])))
        return tuple(_pack([r in ranks and _bit(w, min(r, mirror(k, r))) for r in range(64 * stop)])[start:stop].copy()
                     for w in reduced)

    return RetrogradeSpace(f"{n} cells on a line", lambda k: math.comb(n, k), first_layer, solve, last=n,
                           bits=("reach", "once"), describe=lambda k, r: str(subsets[k][r]),
                           solve_reduced=solve_reduced if reduced else None, expand=expand if reduced else None)


def _bit(words: np.ndarray, r: int) -> bool:
    return bool(words[r >> 6] >> np.uint64(r & 63) & np.uint64(1))


def _combinations(n: int, k: int) -> Sequence[tuple[int, ...]]:
    from itertools import combinations

    return list(combinations(range(n), k))


def _pack(bits: Sequence[bool]) -> np.ndarray:
    words = np.zeros(-(-len(bits) // 64), dtype=np.uint64)
    for r, b in enumerate(bits):
        if b:
            words[r >> 6] |= np.uint64(1) << np.uint64(r & 63)
    return words
