"""Fling! retrograde analysis: one stage per piece count, then the expert evaluator.

Layer ``k`` is two Zarr arrays, ``solvable/k`` and ``unique/k``, of packed bits
in uint64 words (bit ``r % 64`` of word ``r // 64`` is the board of
lexicographic rank ``r``). One task computes one Zarr chunk of both arrays from
the whole of layer ``k-1``, which each worker loads once and keeps
(:class:`~epcg.search.retrograde.LayerCache`). The board is a
:class:`~epcg.search.retrograde.RetrogradeSpace` (``fling_space``) and every
layer and fill stage goes through the generic driver
(:mod:`epcg.kinds.retrograde`) like any other retrograde space; this
module adds the evaluation stages (:mod:`~epcg.games.fling.evaluation`:
the best boards by expert ratio, ratio histograms and solution counts per piece
count), the shared loader and its own results rows.

With ``symmetry = true`` (:mod:`~epcg.games.fling.domain.symmetry`) the space is
reduced: stage ``kNN`` solves only the canonical board of each orbit, into
``orbits/solvable/k`` and ``orbits/unique/k`` (other bits 0), and counts every
board of the orbit; stage ``fNN`` then fills ``solvable/k`` and ``unique/k``,
bit for bit the unreduced layer, from the whole orbit layer, for stage
``kNN+1`` to look successors up in. The deepest layer is not filled: the
evaluation reads its orbit layer, so it evaluates and reports one board per
orbit.

Peak memory per worker, layer ``k``: the previous layer, its ``solvable`` bits,
``C(n,k-1)/8`` bytes, and its ``unique`` bits as a compact index
(:mod:`~epcg.games.fling.domain.sparse`: the ranks of the few unique boards, read
chunk by chunk by :func:`read_unique`), plus twice the task's output,
``2·8·chunk_words`` bytes, plus one Zarr chunk being compressed. For 7×8 and
k = 10: C(56,9)/8 = 0.95 GB + 12.0 M unique boards' index 0.12 GB + 2·8·2^18 = 4 MB
(the plan counts the index at :func:`unique_fraction` of the boards). A fill task
(stage ``fNN``) holds the orbit layer ``k`` instead, and the index of the unique
boards it writes (every member of the unique orbits, ranked once per worker).
On disk ``unique`` stays one bit per board, in compressed chunks (3 % of its
raw size on deep layers).
With ``shared_previous = true`` the ``solvable`` bits a task reads are a
read-only map of a raw file, so the processes of one machine share one copy in
the page cache (each holds its own small index of ``unique``; the estimate
says so in ``StageCost.shared_memory``). With ``partitions = P`` a task reading the
largest layer any stage reads holds 1/P of it: it reads that layer (a fill task
the orbit layer) in P word ranges, one at a time. A stage reading a smaller layer
is split only as far as it must be to hold no more than that (:meth:`Config.parts_for`):
every part costs a whole pass, since each task then reads all of the layer from the
store and ranks every successor (a fill task every board's canonical image) once per
part (:mod:`epcg.search.retrograde`, solving in parts). When a job leaves
``partitions`` unset, ``epcg run`` and ``epcg plan`` choose it
(``SPLIT_FOR_MEMORY``) so that each stage fits the workers' memory.
With ``slice_rows = R`` a layer task reads only the slices of the layer
before that its boards' moves reach (:mod:`~epcg.games.fling.domain.slices`),
read group by read group, so it holds a bounded share of that layer however
many boards it solves; fills still read the orbit layer whole or in parts.
"""

from __future__ import annotations

import fcntl
import math
import os
import shutil
import threading
import weakref
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
import pydantic

from epcg.combinatorics.binomial import binomial
from epcg.combinatorics.bits import check_board
from epcg.combinatorics.bits import popcount_words as popcount
from epcg.games.fling import evaluation as fling_evaluate
from epcg.games.fling.domain import distribution, evaluate, patterns, sparse, symmetry
from epcg.games.fling.domain import layers as kernels
from epcg.games.fling.domain.moves import LINE_TABLE_MAX
from epcg.games.fling.domain.rules import Board
from epcg.games.fling.domain.slices import MAX_LEAD_CELLS, Slicing
from epcg.games.fling.domain.sparse import BitIndex, IndexBuilder
from epcg.games.fling.results import FlingResults
from epcg.kinds import retrograde
from epcg.kinds.base import JobConfig, stage_records
from epcg.kinds.keep import Keeps
from epcg.runtime.kind import JobKind
from epcg.runtime.readout import compute_seconds
from epcg.runtime.plan import Plan, Task
from epcg.runtime.reads import stage_reads
from epcg.runtime.store import RunDir
from epcg.search.retrograde import (
    Held,
    RetrogradeSpace,
    Spans,
    Words,
    aligned_groups,
    fill_name,
    layer_checksum,
    layer_name,
    parse_stage,
    span_words,
)

MAX_BOARDS = 1 << 43
"""Largest layer a job may name (C(56, 14) = 5.8e12 fits); whether it fits the workers is the plan's check."""


class LastMade:
    """``make(key, *args)`` for the ``key`` last asked about, made once and kept while ``key`` lives.

    A worker's tasks of one layer share the layer's arrays (``LayerCache``), so
    what is derived from them once (an index, a fill's unique orbits) is kept
    beside them and dropped with them; threads asking at once wait for one make.
    """

    def __init__(self, make: Callable[..., Any]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._last: tuple[weakref.ref, Any] | None = None

    def __call__(self, key: Any, *args: Any) -> Any:
        with self._lock:
            if self._last is not None and self._last[0]() is key:
                return self._last[1]
            self._last = None  # the value for the object before is freed before the next is made
            value = self._make(key, *args)
            self._last = weakref.ref(key, self._forget), value
            return value

    def _forget(self, ref: weakref.ref) -> None:
        last = self._last
        if last is not None and last[0] is ref:
            self._last = None


@lru_cache(maxsize=8)
def fling_space(width: int, height: int, max_pieces: int, symmetric: bool = False,
                kernel: str = "auto", slice_rows: int = 0) -> RetrogradeSpace:
    """Fling! on a ``width × height`` board as a retrograde space: layer ``k`` = boards of ``k`` pieces.

    ``symmetric``: reduced to one board per orbit of the board's symmetries
    (:mod:`~epcg.games.fling.domain.symmetry`), filled for the next layer. ``kernel``:
    as in :func:`~epcg.games.fling.domain.layers.solve_words`. ``slice_rows``: a layer
    task reads only the slices of the previous layer its moves reach, slices keyed by
    the first ``slice_rows`` rows (:mod:`~epcg.games.fling.domain.slices`); 0: all of it.

    >>> s = fling_space(3, 1, 3)
    >>> [s.layer_size(k) for k in (1, 2, 3)], s.bits, s.reduced, fling_space(3, 1, 3, True).reduced
    ([3, 3, 1], ('solvable', 'unique'), False, True)
    """

    index_of = LastMade(sparse.bit_index)
    members_of = LastMade(lambda unique, k, part_start=None: symmetry.orbit_members(
        width, height, k, unique, part_start=part_start))
    slicing = Slicing(width, height, slice_rows) if slice_rows else None

    def indexed(layer: Words) -> Words:
        """``layer`` with its unique bits as an index: as given by the job's loader, or indexed once here for
        every range of a layer handed over as words (``solve_layers``, plan-time checks)."""
        solvable, unique = layer
        return solvable, index_of(unique) if isinstance(unique, np.ndarray) else unique

    def previous_layer(k: int, previous: Words | Held) -> dict[str, Any]:
        """The kernels' arguments for the layer before ``k``: all of it, or the slices a task holds."""
        if isinstance(previous, Held):
            assert slicing is not None
            solvable, unique = indexed(previous.words)
            return {"prev_solvable": solvable, "prev_unique": unique, "where": slicing.where(k - 1, previous.spans)}
        solvable, unique = indexed(previous)
        return {"prev_solvable": solvable, "prev_unique": unique}

    def solve(k: int, previous: Words | Held, start: int, stop: int) -> Words:
        return kernels.solve_words(width, height, k, word_start=start, word_stop=stop, kernel=kernel,
                                   **previous_layer(k, previous))

    def solve_reduced(k: int, previous: Words | Held, start: int, stop: int) -> tuple[Words, tuple[int, int]]:
        s, u, solvable, unique = symmetry.solve_words_symmetric(width, height, k, word_start=start, word_stop=stop,
                                                                kernel=kernel, **previous_layer(k, previous))
        return (s, u), (solvable, unique)

    def expand(k: int, orbits: Words, start: int, stop: int) -> Words:
        solvable, unique = indexed(orbits)
        return symmetry.expand_words(width, height, k, solvable, unique, start, stop,
                                     members=members_of(unique, k))

    def expand_partial(k: int, part: Words, part_start: int, start: int, stop: int) -> Words:
        solvable, unique = part
        return symmetry.expand_words(width, height, k, solvable, unique, start, stop, part_start=part_start,
                                     members=members_of(unique, k, part_start))

    def solve_partial(k: int, part: Words, part_start: int, start: int, stop: int) -> Words:
        if symmetric:
            return symmetry.solve_words_symmetric(width, height, k, *part, start, stop, kernel=kernel,
                                                  part_start=part_start)[:2]
        return kernels.solve_words(width, height, k, *part, start, stop, kernel=kernel, part_start=part_start)

    def finish_partial(k: int, merged: Words, start: int, stop: int) -> tuple[Words, tuple[int, ...]]:
        words = kernels.finish_parts(k, merged)
        if symmetric:
            return words, tuple(symmetry.orbit_total(width, height, k, w, start) for w in words)
        return words, tuple(popcount(w) for w in words)

    return RetrogradeSpace(
        f"Fling! {width}x{height}",
        layer_size=lambda k: kernels.layer_size(width, height, k),
        first_layer=lambda: kernels.first_layer(width, height),
        solve=solve,
        last=max_pieces,
        bits=("solvable", "unique"),
        solve_reduced=solve_reduced if symmetric else None,
        expand=expand if symmetric else None,
        expand_partial=expand_partial if symmetric else None,
        solve_partial=solve_partial,
        merge_partial=kernels.merge_parts,
        finish_partial=finish_partial,
        reads=slicing.reads if slicing is not None else None,
        read_groups=slicing.groups if slicing is not None else None,
    )


class Config(JobConfig, Keeps):
    """A Fling! job: board size, deepest layer, task size, how many puzzles to report, expert-ratio bands to keep."""

    domain: Literal["fling"]
    width: int = pydantic.Field(7, ge=1, le=64)
    height: int = pydantic.Field(8, ge=1, le=64)
    max_pieces: int = pydantic.Field(8, ge=1)
    """Deepest layer: boards with 1..max_pieces pieces are solved."""
    chunk_words: int = pydantic.Field(1 << 18, ge=1, le=1 << 26)
    """uint64 words (64 boards each) per task and per Zarr chunk."""
    top_puzzles: int = pydantic.Field(20, ge=0, le=1000)
    """Uniquely solvable boards of the deepest layer to report, best ratio first (0: none)."""
    distributions: bool = True
    """Tally the expert ratios and the solution counts of layers 2..max_pieces (:mod:`~epcg.games.fling.evaluation`)."""
    exact_counts_up_to: int = pydantic.Field(4_000_000, ge=0)
    """Layers of at most this many boards get every solvable board's solution count; larger ones a sample."""
    count_sample: int = pydantic.Field(50_000, ge=0, le=1 << 24)
    """Boards drawn (uniformly, with replacement) from a larger layer for its sampled solution counts."""
    seed: int = pydantic.Field(0, ge=0)
    """Seed of the sampled solution counts."""
    ratio_sample: int | None = pydantic.Field(None, ge=1)
    """Unset (the default): every uniquely solvable board of every layer is evaluated by expert ratio, so the
    deepest layer's best boards are the best of all. Set, a layer of more than this many boards has only those
    in a random sample of about this many of its boards evaluated, in blocks of 4,096 consecutive ranks
    (:mod:`~epcg.games.fling.evaluation`); ``epcg plan`` says what a sample saves."""
    evaluate_chunk_words: int = pydantic.Field(1 << 18, ge=1, le=1 << 26)
    """Words per task of an expert-ratio stage (of a sampled layer, this many words' worth of its sample)."""
    symmetry: bool = True
    """Solve one board per orbit of the board's symmetries (false: every board)."""
    kernel: Literal["auto", "block", "fast"] = "auto"
    """Layer kernel (:func:`~epcg.games.fling.domain.layers.solve_words`): ``block`` solves together the boards of a
    layer that differ only in their highest piece (``auto`` on boards with lines of at most 16 cells); ``fast``,
    one board at a time, is the baseline the benchmarks compare with."""
    shared_previous: bool = False
    """Workers map one read-only copy per machine of the ``solvable`` bits of the layer their tasks read (a raw file
    under the run directory's ``shared/``, so the page cache holds it once) instead of each loading its own."""
    slice_rows: int = pydantic.Field(0, ge=0, le=3)
    """A layer task reads only the slices of the previous layer that its boards' moves reach, a slice being the boards
    that agree on their first ``slice_rows`` rows (:mod:`~epcg.games.fling.domain.slices`); tasks of neighbouring
    slices share one read and one worker. 0: every task's worker holds the whole previous layer."""
    partitions: int | None = pydantic.Field(None, ge=1, le=1 << 16)
    """A layer (or fill) task reads the layer it needs in this many parts, one at a time, so it holds 1/partitions
    of it (every task reads all of it, and ranks every successor once per part). Unset: ``epcg run`` and ``epcg
    plan`` take the fewest (a power of two) with which every stage fits the workers' memory, 1 if it fits whole."""
    KEEP_EXAMPLE: ClassVar[str] = "{min_ratio = 8}"

    @classmethod
    def parse_keep(cls, keep: list[dict[str, Any]]) -> tuple[tuple[float, float], ...]:
        """Expert-ratio bands (``keep``) whose uniquely solvable boards are stored, one per orbit, in every layer
        the run evaluates: ``[{min_ratio = 8}]`` or ``[{ratio = [8, 9]}]``. ``boards(k, min_ratio=x)`` and ``epcg
        export --where min_ratio=x`` read them at once when a band holds every ratio from x up."""
        return fling_evaluate.ratio_bands(keep)

    @pydantic.model_validator(mode="after")
    def _fits(self) -> Config:
        cells = check_board(self.width, self.height)
        if self.kernel != "auto" and max(self.width, self.height) > LINE_TABLE_MAX:
            raise ValueError(f"kernel={self.kernel!r} needs rows and columns of at most {LINE_TABLE_MAX} cells, "
                             f"got {self.width}x{self.height} (use kernel='auto')")
        if self.slice_rows:
            if self.shared_previous:
                raise ValueError("slice_rows and shared_previous exclude each other: a machine shares a whole layer, "
                                 "a sliced task reads only part of it")
            if max(self.width, self.height) > LINE_TABLE_MAX or self.kernel == "fast":
                raise ValueError(f"slice_rows needs the block kernel (kernel='auto' or 'block', rows and columns of at "
                                 f"most {LINE_TABLE_MAX} cells), got kernel={self.kernel!r} on {self.width}x{self.height}")
            if not self.slice_rows < self.height or self.slice_rows * self.width > MAX_LEAD_CELLS:
                raise ValueError(f"slice_rows must leave a row unkeyed and key at most {MAX_LEAD_CELLS} cells, got "
                                 f"{self.slice_rows} rows of {self.width} on a {self.width}x{self.height} board")
        if self.max_pieces > cells:
            raise ValueError(f"max_pieces must be 1..{cells} on a {self.width}x{self.height} board, got {self.max_pieces}")
        if binomial(cells, self.max_pieces) > MAX_BOARDS:
            raise ValueError(
                f"max_pieces={self.max_pieces} gives {binomial(cells, self.max_pieces):,} boards; "
                f"at most 2^43 per layer are supported"
            )
        return self

    def words(self, k: int) -> int:
        return kernels.layer_words(self.width, self.height, k)

    def parts_for(self, k: int) -> int:
        """Parts a task reads layer ``k`` in (a layer stage ``k + 1`` the full layer, a fill ``k`` its orbit layer):
        the fewest power of two that holds no more of it than ``partitions`` parts hold of the largest layer a
        stage reads, 1 when ``partitions`` is unset.

        >>> c = Config(name="f", domain="fling", max_pieces=12, partitions=4)
        >>> [c.parts_for(k) for k in (9, 10, 11)]
        [1, 1, 4]
        """
        largest = max(self.words(j) for j in range(1, self.max_pieces))
        if not self.partitions or self.max_pieces == 1:
            return 1
        share = self.partitions * self.words(k) / largest
        return min(self.partitions, 1 << max(0, math.ceil(math.log2(share))) if share > 1 else 1)

    @property
    def space(self) -> RetrogradeSpace:
        return fling_space(self.width, self.height, self.max_pieces, self.symmetry, self.kernel, self.slice_rows)


EVALUATE = fling_evaluate.EVALUATE
SHARED = "shared"
"""Scratch directory of the raw layer files of ``shared_previous`` (in the run on a filesystem, in each machine's
temp directory for an object store); cleared by each session's prepare."""


def _layer_arrays(config: Config, k: int) -> tuple[str, ...]:
    """Where stage ``kNN`` writes layer ``k``: the orbit arrays when symmetric, else the full ones."""
    return retrograde.written_by(config.space, layer_name(k))


COARSEN = ("chunk_words", "evaluate_chunk_words")
"""Keys the runtime may scale up to bound the task count: results do not depend on them."""
THREADS_SHARE_READS = True
"""A worker process's threads share the layer its tasks read (``LayerCache``; the kernels release the GIL), so the
embedded cluster runs one process with a thread per core (and ``cluster.SPARE_THREADS`` more): layer 9 of a
9-piece run at the speed of one process per core, with half their peak memory on 2 cores
(``benchmarks/fling_layers.py``, docs/scaling.md)."""
SPLIT_FOR_MEMORY = ("partitions",)
"""Keys the runtime sets, when a job leaves them unset, so that the workers' memory holds every stage: results do
not depend on them."""
CALIBRATION_LAYER = 8
"""Deepest layer whose kernel :func:`seconds_per_board` times (its previous layer, 58 MB on 7×8, is made up)."""
CALIBRATION_DENSITY = (2, 6)
"""Random words ANDed into the made-up previous layer's solvable and unique bits: 1/4 and 1/64 of them set
(7×8 layers 5–9: 13–29 % of boards solvable, 0.3–2.7 % unique)."""


def seconds_per_board(config: Config) -> float:
    """Seconds per board of a layer stage's kernel (symmetric or not) on the job's board, on this machine now.

    Four evenly spaced word slices of layer ``L = min(max_pieces, CALIBRATION_LAYER)`` are timed against a
    previous layer of random bits of its real size: the kernel's speed depends on how far apart its lookups land in
    that layer (deep layers no longer fit the caches) far more than on which bits are set.
    """
    import time

    from epcg.runtime.estimate import calibrated

    w, h = config.width, config.height
    top = max(2, min(config.max_pieces, CALIBRATION_LAYER, w * h))
    if top > w * h:
        return 0.0
    rng = np.random.default_rng(0)
    prev = []
    for density in CALIBRATION_DENSITY:
        words = rng.integers(0, 1 << 64, config.words(top - 1), dtype=np.uint64, endpoint=False)
        for _ in range(density - 1):
            words &= rng.integers(0, 1 << 64, config.words(top - 1), dtype=np.uint64, endpoint=False)
        prev.append(words)
    prev[1] = sparse.bit_index(prev[1])

    def measure() -> tuple[float, float]:
        total, width = config.words(top), max(1, min(config.words(top) // 4, 512))
        began = time.perf_counter()
        for i in range(4):
            start = total * (2 * i + 1) // 8
            if config.symmetry:
                symmetry.solve_words_symmetric(w, h, top, *prev, start, min(start + width, total), kernel=config.kernel)
            else:
                kernels.solve_words(w, h, top, *prev, start, min(start + width, total), kernel=config.kernel)
        return 4 * width * 64, time.perf_counter() - began

    return calibrated(("fling", w, h, top, config.symmetry, config.kernel), measure, budget=0.03)


COMPRESSED = (0.5, 0.03)
"""On-disk fraction of the raw solvable and unique arrays (measured, 7×8 layers 9 and 10: 0.40–0.54, 0.01–0.03)."""
FILL_RATES = ((178e6, 65.1e6), (947e6, 51.4e6), (4.45e9, 44.7e6), (18.6e9, 31.8e6))
"""Boards per task-second a fill task writes, by the bytes of ``solvable`` it reads them from (a scattered read per
board: the deeper the layer, the further past the caches and the TLB's reach): 7×8 fills 8 to 11 of the real layers,
10 tasks spread over each, 2 threads, nothing else running (``benchmarks/fling_fill_scale.py --run`` on the 12-piece
run, medians of 2 or 3 runs, 2026-11-27, ``docs/scaling.md``)."""
EVALUATE_SECONDS = fling_evaluate.RATIO_SECONDS
"""Expert evaluation per board of the deepest layer (of its sample, when sampled) with symmetry: the ``top`` stage
is an expert-ratio stage that also keeps the best boards."""


PART_COST = 1.3
"""Compute of each part beyond the first, as a fraction of a whole pass. Every part ranks every successor again,
and within one part a board rarely meets the second solvable successor that ends its search early, so a part costs
about a whole pass: in 8 parts on 2 workers the task CPU of 7×8 layer 7 was 10.0×, its fill 9.1× and layer 8
13.2× that in one (a run to 9 pieces, 2026-11-23)."""


READ_PER_SECOND = (1.7e8, 6.0e8)
"""Raw bytes per CPU second a task reads back from the store and decompresses, of ``solvable`` (zstd, about half
its raw size) and ``unique`` (about 3 %): 7×8 layer 9 read with ``retrograde.read_layer`` and ``read_unique`` took
5.7 and 1.6 CPU s for 0.95 GB each (zstd alone decodes ``solvable`` at 0.5 GB/s; the rest is Zarr's), on a loaded
machine (2026-11-26)."""


def fill_per_second(read_bytes: float) -> float:
    """Boards per task-second of a fill reading ``read_bytes`` of ``solvable``: :data:`FILL_RATES` interpolated on
    log scales, the smallest rate below the smallest layer, and past the largest the last slope carried on.

    >>> [f"{fill_per_second(b) / 1e6:.1f}" for b in (1e6, 947e6, 2e9, 18.6e9, 74.4e9)]
    ['65.1', '51.4', '48.0', '31.8', '22.9']
    """
    sizes, rates = (np.log([p[i] for p in FILL_RATES]) for i in (0, 1))
    x = math.log(max(read_bytes, 1.0))
    if x <= sizes[-1]:
        return float(math.exp(np.interp(x, sizes, rates)))
    slope = (rates[-1] - rates[-2]) / (sizes[-1] - sizes[-2])
    return float(math.exp(rates[-1] + slope * (x - sizes[-1])))


def reread_seconds(config: Config, k: int) -> float:
    """What each task of a stage reading layer ``k`` in parts spends reading and decompressing all of it from the
    store (a task holding it whole shares one load per worker process, counted nowhere)."""
    if k < 1 or config.parts_for(k) == 1:
        return 0.0
    return sum(8 * config.words(k) / rate for rate in READ_PER_SECOND)


def parts_cost(config: Config, k: int) -> float:
    """How many times a whole pass a stage reading layer ``k`` in ``config.parts_for(k)`` parts costs."""
    return 1.0 + PART_COST * (min(config.parts_for(k), config.words(k)) - 1) if k >= 1 else 1.0


def unique_fraction(k: int) -> float:
    """Uniquely solvable boards of layer ``k``, as a fraction of its boards, that the plan counts memory for: 0.2 %
    to layer 9, then 0.3 times the layer before (7×8 layers 9, 10 and 11 measured 0.16 %, 0.043 % and 0.0092 %,
    1.3 to 2 times below; smaller layers are small). An index of fewer boards is smaller.

    >>> [f"{unique_fraction(k):.4%}" for k in (9, 10, 11)]
    ['0.2000%', '0.0600%', '0.0180%']
    """
    return 0.002 * 0.3 ** max(0, k - 9)


def held_bytes(config: Config, k: int) -> int:
    """Bytes a task holds of layer ``k`` (full, or its orbit layer for a fill) that it reads: ``solvable``'s words
    and ``unique``'s index (at :func:`unique_fraction`), of one of ``config.parts_for(k)`` parts."""
    parts = config.parts_for(k)
    words = -(-config.words(k) // parts)
    boards = kernels.layer_size(config.width, config.height, k)
    return 8 * words + sparse.index_bytes(words, min(64 * words, -(-round(boards * unique_fraction(k)) // parts)))


def members_bytes(config: Config, k: int) -> int:
    """Bytes of the index a fill of layer ``k`` makes of the unique boards it writes (``symmetry.orbit_members`` of
    the unique orbits of one of ``config.parts_for(k)`` parts), at :func:`unique_fraction`."""
    boards = kernels.layer_size(config.width, config.height, k)
    return sparse.index_bytes(config.words(k), -(-round(boards * unique_fraction(k)) // config.parts_for(k)))


GROUPS_HELD = 2
"""Read groups of the layer before that a worker process solving a sliced layer is planned to hold: one per thread
(``LayerCache``), two threads."""


def sliced_reads(config: Config, k: int) -> tuple[int, int, int]:
    """A sliced layer stage ``k``'s reads of layer ``k - 1``: words of its largest read group, words of all its groups
    (each read once: a group's tasks run together on one worker), and how many groups (as the tasks of
    ``chunk_words`` words meet them, :func:`~epcg.search.retrograde.aligned_groups`)."""
    space = config.space
    assert space.reads is not None and space.read_groups is not None
    bounds = aligned_groups(space.read_groups(k), config.chunk_words)
    sizes = [span_words(space.reads(k, int(a), int(b))) for a, b in zip(bounds[:-1], bounds[1:])]
    return max(sizes), sum(sizes), len(sizes)


def group_bytes(config: Config, k: int, words: int) -> int:
    """Bytes a process holds of ``words`` words of layer ``k``: ``solvable``'s and ``unique``'s index."""
    boards = min(64 * words, kernels.layer_size(config.width, config.height, k))
    return 8 * words + sparse.index_bytes(words, round(boards * unique_fraction(k)))


def shared_bytes(config: Config, k: int) -> int:
    """Of :func:`held_bytes`, what one machine holds once for all its workers: ``solvable``'s words (of one part)
    with ``shared_previous`` (a mapped file), else nothing."""
    return 8 * -(-config.words(k) // config.parts_for(k)) if config.shared_previous else 0


def estimate(config: Config) -> dict:
    """Per stage: bytes written, memory per worker beyond its base, compute (see the module docstring)."""
    from epcg.runtime.estimate import StageCost

    out = {}
    per_board = seconds_per_board(config)
    for k in range(1, config.max_pieces + 1):
        words = config.words(k)
        chunk = min(config.chunk_words, words)
        tasks = -(-words // chunk)
        boards = kernels.layer_size(config.width, config.height, k)
        if config.slice_rows and k > 1:
            largest, total, groups = sliced_reads(config, k)
            out[layer_name(k)] = StageCost(
                bytes_written=2 * 8 * words, disk_bytes=round(8 * words * sum(COMPRESSED)),
                peak_memory=GROUPS_HELD * group_bytes(config, k - 1, largest) + 4 * 8 * chunk
                + Slicing(config.width, config.height, config.slice_rows).table_bytes,
                cpu_seconds=boards * per_board + sum(8 * total / rate for rate in READ_PER_SECOND),
                read_bytes=round(8 * total * sum(COMPRESSED)), read_whole=True,
                read_objects=2 * (-(-total // config.chunk_words) + groups), objects_per_task=2)
        else:
            previous = held_bytes(config, k - 1) if k > 1 else 0
            before = config.words(k - 1) if k > 1 else 0
            out[layer_name(k)] = StageCost(
                bytes_written=2 * 8 * words,
                disk_bytes=round(8 * words * sum(COMPRESSED)),
                peak_memory=previous + 4 * 8 * chunk, shared_memory=shared_bytes(config, k - 1) if k > 1 else 0,
                cpu_seconds=boards * per_board * parts_cost(config, k - 1) + tasks * reread_seconds(config, k - 1),
                read_bytes=round(8 * before * sum(COMPRESSED)), read_objects=2 * -(-before // config.chunk_words),
                read_per_task=k > 1 and config.parts_for(k - 1) > 1, objects_per_task=2,
            )
        if config.symmetry and 1 < k < config.max_pieces:
            out[fill_name(k)] = StageCost(bytes_written=2 * 8 * words, disk_bytes=round(8 * words * sum(COMPRESSED)),
                                          peak_memory=held_bytes(config, k) + members_bytes(config, k)
                                          + 4 * 8 * chunk,
                                          shared_memory=shared_bytes(config, k),
                                          cpu_seconds=kernels.layer_size(config.width, config.height, k)
                                          / fill_per_second(8 * -(-words // config.parts_for(k)))
                                          * parts_cost(config, k) + tasks * reread_seconds(config, k),
                                          read_bytes=round(8 * words * sum(COMPRESSED)),
                                          read_objects=2 * -(-words // config.chunk_words),
                                          read_per_task=config.parts_for(k) > 1, objects_per_task=2)
    if config.top_puzzles or config.distributions or config.keep:
        boards = kernels.layer_size(config.width, config.height, config.max_pieces)
        out[EVALUATE] = StageCost(peak_memory=8 * fling_evaluate.task_words(config, config.max_pieces),
                                  cpu_seconds=boards * fling_evaluate.fraction(config, config.max_pieces) *
                                  fling_evaluate.ratio_seconds(config.max_pieces) *
                                  (1 if config.symmetry else fling_evaluate.symmetries(config.width, config.height)))
    out.update(fling_evaluate.estimate(config))
    return out


SUGGESTED_SAMPLE = 1 << 32
"""The ``ratio_sample`` whose cost ``epcg plan`` compares with the exact evaluation."""


def slice_notes(config: Config) -> list[str]:
    """What the slices of a sliced job hold and read, for ``epcg plan``: the deepest layer's largest read group
    against the whole layer before it, and the bytes every layer stage reads from the store per board it solves."""
    from epcg.runtime.estimate import size

    if not config.slice_rows or config.max_pieces < 2:
        return []
    k = config.max_pieces
    largest, _, groups = sliced_reads(config, k)
    read = sum(sliced_reads(config, j)[1] for j in range(2, k + 1))
    boards = sum(kernels.layer_size(config.width, config.height, j) for j in range(2, k + 1))
    slices = len(Slicing(config.width, config.height, config.slice_rows).keys(k))
    return [(f"slices keyed by the first {config.slice_rows} row{'s' if config.slice_rows > 1 else ''}: layer {k} in "
             f"{slices:,} slices and {groups:,} read groups, the largest reading "
             f"{size(group_bytes(config, k - 1, largest))} of layer {k - 1} (all of it: "
             f"{size(group_bytes(config, k - 1, config.words(k - 1)))}); the layer stages read "
             f"{2 * 8 * read / boards:.2f} bytes per board solved ({size(2 * 8 * read)} raw)")]


def plan_notes(config: Config) -> list[str]:
    """What the slices hold and read, what the expert evaluation costs exact and with a sample, for ``epcg plan``.

    Compute is the estimate's (per board of a layer, measured at 8 pieces; deeper layers cost less per board, as
    their unique boards thin out faster than their trees grow, so deep exact figures are upper bounds).
    """
    if not (config.top_puzzles or config.distributions):
        return slice_notes(config)

    def cost(c: Config) -> float:
        names = {s.name for s in fling_evaluate.stages(c) if s.name == EVALUATE or s.name.startswith("r")}
        return sum(v.cpu_seconds or 0.0 for k, v in estimate(c).items() if k in names)

    exact = config.model_copy(update={"ratio_sample": None})
    sample = config.model_copy(update={"ratio_sample": config.ratio_sample or SUGGESTED_SAMPLE})
    whole, part = cost(exact), cost(sample)
    sampled = [k for k in range(2, config.max_pieces + 1) if fling_evaluate.fraction(sample, k) < 1]
    return slice_notes(config) + _evaluation_notes(config, whole, part, sampled, sample)


def _evaluation_notes(config: Config, whole: float, part: float, sampled: list[int], sample: Config) -> list[str]:
    from epcg.runtime.estimate import duration

    if config.ratio_sample is None:
        head = f"expert evaluation: exact, every uniquely solvable board, about {duration(whole)} of compute"
        if not sampled:
            return [head + f" (every layer has at most {SUGGESTED_SAMPLE:,} boards: a sample would save nothing)"]
        shares = ", ".join(f"{fling_evaluate.fraction(sample, k):.1%} of layer {k}" for k in sampled)
        return [head + f"; --set ratio_sample={SUGGESTED_SAMPLE} would evaluate {shares} instead, about "
                f"{duration(part)} (saving {duration(whole - part)}, answers from a sample)"]
    if not sampled:
        return [f"expert evaluation: exact (no layer has more than ratio_sample boards), about {duration(whole)}"]
    shares = ", ".join(f"{fling_evaluate.fraction(sample, k):.1%} of layer {k}" for k in sampled)
    return [f"expert evaluation: a sample ({shares}), about {duration(part)} of compute; exact (ratio_sample "
            f"unset) would take about {duration(whole)}"]


def plan(config: Config) -> Plan:
    stages = list(retrograde.stages(config.space, config.chunk_words))
    stages += fling_evaluate.stages(config)
    return Plan(tuple(stages))


def prepare(config: Config, run: RunDir) -> None:
    """Create every layer's arrays (empty) before any task writes a chunk; drop raw layer files of
    earlier sessions (a resumed run may have recomputed a damaged chunk since)."""
    shutil.rmtree(run.outputs.scratch(SHARED), ignore_errors=True)
    retrograde.create_arrays(config.space, run, config.chunk_words, config.max_pieces)


def warm_up(config: Config) -> None:
    """Compile the layer kernels on a 3×3 board (for read-only inputs too, as memory maps are), and the
    evaluation's: a worker with a cold kernel cache (a new node) compiles them all here, not halfway through."""
    def read_only(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
        for a in arrays:
            a.setflags(write=not config.shared_previous)
        return arrays

    evaluated = {stage.name for stage in fling_evaluate.stages(config)}
    s, u = read_only(*kernels.first_layer(3, 3))
    for k in (2, 3):
        if config.symmetry:
            orbits = symmetry.solve_words_symmetric(3, 3, k, s, u, 0, kernels.layer_words(3, 3, k),
                                                    kernel=config.kernel)[:2]
            symmetry.expand_words(3, 3, k, *read_only(*orbits), 0, 1)
        s, u = read_only(*kernels.solve_words(3, 3, k, s, u, 0, kernels.layer_words(3, 3, k), kernel=config.kernel))
        if EVALUATE in evaluated:
            distribution.trees_of_words(3, 3, k, u, 0, symmetric=config.symmetry)
        if fling_evaluate.count_name(2) in evaluated:
            ranks, _ = distribution.ranks_of_words(3, 3, k, s, 0, symmetric=config.symmetry)
            distribution.counts_of_ranks(3, 3, k, ranks)
    layer_checksum(s, 0)


def _drop_shared_before(directory: Path, name: str) -> None:
    """Delete the raw files no later stage reads once ``name`` is needed: every earlier layer, and the
    orbit layer that the full layer of the same size was filled from (processes still mapping a deleted
    file keep their pages)."""
    layer = int(name.split(".")[0].rsplit("-", 1)[1])
    for old in directory.glob("*.u64"):
        old_layer = int(old.stem.rsplit("-", 1)[1])
        if old_layer < layer or (old_layer == layer and old.name.startswith("orbits-") and
                                 not name.startswith("orbits-")):
            old.unlink(missing_ok=True)


def _map_shared(run: RunDir, names: tuple[str, ...], spans: Spans | None = None) -> Words:
    """The arrays of a finished layer (or the words of one span of them) as read-only maps of one raw file each,
    written once per machine (the driver's loader with ``shared_previous``; slices exclude it, parts give one
    span)."""
    directory = run.outputs.scratch(SHARED) / run.cache_key.replace("/", "-")  # a machine's copy of this session's layers
    directory.mkdir(parents=True, exist_ok=True)
    maps = []
    for name in names:
        path = directory / (name.replace("/", "-") + ".u64")
        with open(directory / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one process per machine writes it, the others wait
            if not path.exists():
                _drop_shared_before(directory, path.name)
                partial = path.with_suffix(".partial")
                run.arrays.read_array(name).tofile(partial)
                os.replace(partial, path)
        words = np.memmap(path, dtype=np.uint64, mode="r")
        maps.append(words if spans is None else words[spans[0][0]:spans[0][1]])
    return tuple(maps)


def read_unique(run: RunDir, name: str, spans: Spans | None = None) -> BitIndex:
    """The ``unique`` array ``name`` (or the words of ``spans``, one after another) as a
    :class:`~epcg.games.fling.domain.sparse.BitIndex`, read a few chunks at a time, so the process never holds its
    dense words (few boards are unique)."""
    array = run.arrays.array(name)
    spans = spans if spans is not None else ((0, array.shape[0]),)
    builder = IndexBuilder(span_words(spans))
    for lo, hi in retrograde.read_steps(array, spans):
        builder.add(run.arrays.read_slice(name, lo, hi))
    return builder.finish()


def load_layer(config: Config) -> retrograde.Loader:
    """The loader of a layer a task reads (``solvable``, ``unique``): ``solvable`` as dense words (a map of one copy
    per machine with ``shared_previous``), ``unique`` as the index the kernels look it up in."""
    def load(run: RunDir, names: tuple[str, ...], spans: Spans | None) -> Words:
        solvable, unique = names
        (words,) = (_map_shared if config.shared_previous else retrograde.read_layer)(run, (solvable,), spans)
        return words, read_unique(run, unique, spans)

    return load


def run_task(config: Config, task: Task, run: RunDir) -> dict[str, Any]:
    if fling_evaluate.owns(task.stage):
        return fling_evaluate.run_task(config, task, run, lambda k: _layer_arrays(config, k))
    k, fill = parse_stage(task.stage)
    parts = 1 if config.slice_rows and not fill else config.parts_for(k if fill else k - 1)
    return retrograde.solve_task(config.space, task, run, partitions=parts, load=load_layer(config))


def _best_puzzles(config: Config, records: list[dict]) -> tuple[list[dict[str, Any]], list[int]]:
    """The best distinct puzzles, decoded (one board per pattern, or per orbit for records made before patterns
    were kept), and the best boards one per orbit (ranks), both by (ratio desc, rank asc)."""
    orbits = fling_evaluate.best_ranks(config, records)
    chosen = fling_evaluate.best_patterns(config, records)
    return [_puzzle(config, rank) for rank in orbits] if chosen is None else \
        [_puzzle(config, rank, key) for rank, key in chosen], orbits


def _puzzle(config: Config, rank: int, key: str | None = None) -> dict[str, Any]:
    """One best board as results.json's ``puzzles`` lists it; with its pattern's ``key``, the pattern and how many
    boards it stands for (``copies``)."""
    board = Board.from_rank(config.width, config.height, config.max_pieces, int(rank))
    ev = evaluate.evaluate(board)
    out = {
        "rank": int(rank),
        "boards": int(symmetry.orbit_size(np.uint64(board.bits), symmetry.symmetry_maps(config.width, config.height))),
        "ratio": ev.ratio,
        "brute_force_nodes": ev.brute,
        "expert_nodes": ev.expert,
        "solution": " ".join(board.move_name(m) for m in ev.solution),
        "board": str(board).splitlines(),
    }
    if key is not None:
        out.update({"pattern": key, "copies": patterns.copies(patterns.Pattern.from_key(key), config.width,
                                                                 config.height)})
    return out


def _checksum(results: list[dict]) -> str:
    """A layer's checksum from its tasks' (independent of the chunking)."""
    return "{:016x}-{:016x}".format(sum(r["checksum_solvable"] for r in results) % 2**64,
                                    sum(r["checksum_unique"] for r in results) % 2**64)


Results = FlingResults
"""The shape of results.json, checked when it is read back."""


def reduce(config: Config, plan: Plan, records: dict[str, dict], run: RunDir) -> dict[str, Any]:
    layers = []
    for k in range(1, config.max_pieces + 1):
        recs = stage_records(plan, layer_name(k), records)
        results = [r["result"] for r in recs]
        # with symmetry, layer k also costs the fill of layer k-1 that its lookups need
        fill = stage_records(plan, fill_name(k - 1), records) if fill_name(k - 1) in plan.by_name else []
        seconds = compute_seconds(recs + fill)
        boards = kernels.layer_size(config.width, config.height, k)
        wall = max(r["ended_at"] for r in recs) - min(r["ended_at"] - r["seconds"] for r in recs + fill)
        row = {
            "pieces": k,
            "boards": boards,
            "solvable": sum(r["solvable"] for r in results),
            "unique": sum(r["unique"] for r in results),
            "checksum": _checksum(results),
            "tasks": len(recs),
            "seconds": round(seconds, 4),
            "fill_seconds": round(compute_seconds(fill), 4),
            "boards_per_second": round(boards / seconds) if seconds else None,
            "wall_seconds": round(wall, 4),
            "boards_per_wall_second": round(boards / wall) if wall > 0 else None,
        }
        if fill_name(k) in plan.by_name:
            row["full_checksum"] = _checksum([r["result"] for r in stage_records(plan, fill_name(k), records)])
        if k > 1:
            reads = stage_reads(plan.by_name[layer_name(k)], records)
            row["reads"] = {"bytes": reads.read, "planned": reads.planned, "source": reads.source,
                            "by_host": reads.by_host}
        layers.append(row)
    results: dict[str, Any] = {"width": config.width, "height": config.height, "symmetry": config.symmetry,
                               "rows": layers}
    if EVALUATE in plan.by_name:
        recs = stage_records(plan, EVALUATE, records)
        results["evaluated"] = sum(r["result"]["evaluated"] for r in recs)
        results["evaluated_fraction"] = fling_evaluate.fraction(config, config.max_pieces)
        results["exact"] = results["evaluated_fraction"] == 1
        results["evaluate_seconds"] = round(compute_seconds(recs), 4)
        if config.top_puzzles:
            results["puzzles"], results["best_orbits"] = _best_puzzles(config, recs)
            results["top_tie"] = fling_evaluate.top_tie(recs)
    if config.keep:
        results["kept"] = fling_evaluate.store_kept_layers(config, plan, records, run)
    results.update(fling_evaluate.reduce(config, plan, records))
    return results


def report(config: Config, results: dict[str, Any], run: RunDir) -> tuple[str, list[Path]]:
    from epcg.games.fling.report import figures, summary

    return summary(config, results), figures(config, results, run)


class FlingKind(JobKind):
    """The ``fling`` job kind: the functions and settings above as its hooks."""

    Config = Config
    COARSEN = COARSEN
    SPLIT_FOR_MEMORY = SPLIT_FOR_MEMORY
    THREADS_SHARE_READS = THREADS_SHARE_READS
    Results = Results
    plan = staticmethod(plan)
    run_task = staticmethod(run_task)
    reduce = staticmethod(reduce)
    report = staticmethod(report)
    warm_up = staticmethod(warm_up)
    prepare = staticmethod(prepare)
    estimate = staticmethod(estimate)
    plan_notes = staticmethod(plan_notes)
