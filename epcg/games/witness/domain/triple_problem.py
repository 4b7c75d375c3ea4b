"""The classes a triple search runs over: distinct solution sets of piece sub-panels.

A triple's score and admissibility depend on its sub-panels only through their
solution sets, and many panels share one (3×3, 3 of 24 pieces: 113,296
solvable panels, 7,316 distinct sets). So the solvable panels are grouped into
**classes** of equal solution sets, the search runs over classes, and a class
lists the panels behind it.

Classes are sorted by solution count, largest first, ties by their lowest
panel rank: a canonical order that does not depend on how the panels were
generated or chunked. Grouping hashes each bitset and compares rows whose
hashes agree, so collisions cost time, never correctness. ``build_problem``
takes the panels in chunks (e.g. one per cell-set range, as workers produce
them) and never holds more than one chunk's bitsets besides the classes.

>>> prob = problem_for(2, 3, 2, ("#", "##/#.", "#./##"))
>>> prob.solvable, prob.num_sets, prob.counts[:4].tolist()
(62, 30, [7, 7, 7, 7])
>>> prob.members(0).tolist(), prob.members(1).tolist()   # panel ranks behind a class
([0], [83, 87])
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np
from numba import njit

from epcg.combinatorics.jit import KERNEL
from epcg.combinatorics import Combinations
from epcg.combinatorics.bits import ctz
from epcg.games.witness.domain.paths import paths_for
from epcg.games.witness.domain.piece_panels import (
    PiecePanel,
    SolutionSets,
    _row_counts,
    check_panel_space,
    decode,
    solution_sets,
)
from epcg.games.witness.domain.pieces import LIBRARY

__all__ = ["TripleProblem", "build_problem", "problem_for"]

_ONE = np.uint64(1)


@njit(**KERNEL)
def _row_hashes(bits):
    """A 64-bit hash of each row (multiply-xorshift over its words)."""
    out = np.zeros(bits.shape[0], dtype=np.uint64)
    for i in range(bits.shape[0]):
        h = np.uint64(0x9E3779B97F4A7C15)
        for w in range(bits.shape[1]):
            h ^= bits[i, w]
            h *= np.uint64(0xBF58476D1CE4E5B9)
            h ^= h >> np.uint64(31)
        out[i] = h
    return out


@njit(**KERNEL)
def _group_rows(bits, hashes, order):
    """``(class of each row, number of classes, first row of each class)``: equal rows share a class.

    ``order`` sorts ``hashes``; rows with equal hashes are compared word by
    word. Classes are numbered in order of first appearance along ``order``.
    """
    n = bits.shape[0]
    words = bits.shape[1]
    cls = np.full(n, -1, dtype=np.int64)
    reps = np.zeros(n, dtype=np.int64)
    classes = 0
    a = 0
    while a < n:
        b = a
        while b < n and hashes[order[b]] == hashes[order[a]]:
            b += 1
        first_class = classes
        for t in range(a, b):
            row = order[t]
            for c in range(first_class, classes):
                r = reps[c]
                same = True
                for w in range(words):
                    if bits[row, w] != bits[r, w]:
                        same = False
                        break
                if same:
                    cls[row] = c
                    break
            if cls[row] < 0:
                cls[row] = classes
                reps[classes] = row
                classes += 1
        a = b
    return cls, classes, reps[:classes]


@njit(**KERNEL)
def _inverted(bits, num_paths):
    """CSR index ``(start, data)``: the classes holding path ``p`` are ``data[start[p]:start[p+1]]``, ascending."""
    start = np.zeros(num_paths + 1, dtype=np.int64)
    for d in range(bits.shape[0]):
        for w in range(bits.shape[1]):
            x = bits[d, w]
            while x != 0:
                start[w * 64 + ctz(x) + 1] += 1
                x &= x - _ONE
    for p in range(num_paths):
        start[p + 1] += start[p]
    fill = start[:-1].copy()
    data = np.zeros(start[num_paths], dtype=np.int64)
    for d in range(bits.shape[0]):
        for w in range(bits.shape[1]):
            x = bits[d, w]
            while x != 0:
                p = w * 64 + ctz(x)
                data[fill[p]] = d
                fill[p] += 1
                x &= x - _ONE
    return start, data


@dataclass(frozen=True, eq=False)
class TripleProblem:
    """Classes of equal solution sets and the panels behind them (arrays read-only)."""

    width: int
    height: int
    k: int
    library: tuple[str, ...]
    separate: bool
    """Figure 4 rule: the joint path must put each sub-panel's symbols in different regions."""
    solvable: int
    """Panels with at least one solution (with ``separate``, also those left out)."""
    bits: np.ndarray
    """``(D, words)`` uint64: the solution set of each class (bit ``s`` = path ``s``)."""
    counts: np.ndarray
    """``(D,)`` int64: solutions of each class, non-increasing."""
    sep: np.ndarray
    """With ``separate``: ``(D, words)`` uint64 paths that separate at least one panel of the class; else ``(0, words)``."""
    member_start: np.ndarray
    """``(D+1,)`` int64: class ``d`` holds ``member_ranks[member_start[d]:member_start[d+1]]``."""
    member_ranks: np.ndarray
    """``(N,)`` int64 panel ranks, ascending within each class."""
    member_sep: np.ndarray
    """With ``separate``: ``(N, words)`` uint64 separating solutions of each member; else ``(0, words)``."""

    @property
    def num_sets(self) -> int:
        return int(self.counts.shape[0])

    @property
    def num_paths(self) -> int:
        return len(paths_for(self.width, self.height))

    @property
    def words(self) -> int:
        return int(self.bits.shape[1])

    @cached_property
    def inverted(self) -> tuple[np.ndarray, np.ndarray]:
        """``(start, data)``: classes holding path ``p`` are ``data[start[p]:start[p+1]]``, ascending (built once)."""
        start, data = _inverted(self.bits, self.num_paths)
        start.flags.writeable = data.flags.writeable = False
        return start, data

    def to_arrays(self) -> tuple[dict, dict[str, np.ndarray]]:
        """``(meta, arrays)``: plain values and numpy arrays to store (e.g. in Zarr) and rebuild with ``from_arrays``."""
        meta = {"width": self.width, "height": self.height, "k": self.k, "library": list(self.library),
                "separate": self.separate, "solvable": self.solvable}
        return meta, {name: getattr(self, name) for name in _ARRAYS}

    @classmethod
    def from_arrays(cls, meta: dict, arrays: dict[str, np.ndarray]) -> TripleProblem:
        """The problem saved by ``to_arrays`` (arrays are copied read-only)."""
        check_panel_space(meta["width"], meta["height"], meta["k"], meta["library"])
        values = {name: np.array(arrays[name], dtype=np.int64 if name in _INT_ARRAYS else np.uint64)
                  for name in _ARRAYS}
        out = cls(int(meta["width"]), int(meta["height"]), int(meta["k"]), tuple(meta["library"]),
                  bool(meta["separate"]), int(meta["solvable"]), **values)
        for a in values.values():
            a.flags.writeable = False
        return out

    def members(self, d: int) -> np.ndarray:
        """Ranks of the panels of class ``d``, ascending."""
        return self.member_ranks[self.member_start[d]:self.member_start[d + 1]]

    def panel(self, rank: int) -> PiecePanel:
        """The panel of a rank."""
        return decode(self.width, self.height, self.k, len(self.library), rank)


_ARRAYS = ("bits", "counts", "sep", "member_start", "member_ranks", "member_sep")
_INT_ARRAYS = ("counts", "member_start", "member_ranks")


def build_problem(width: int, height: int, k: int, library: Sequence[str], separate: bool,
                  chunks: Iterable[SolutionSets]) -> TripleProblem:
    """Group solvable panels, given in any chunking (e.g. ``solution_sets`` of cell-set ranges), into classes.

    The result does not depend on the chunking or the order of the chunks.
    With ``separate``, panels without a separating solution cannot take part
    in an admissible triple and are left out. Memory: the chunk at hand plus
    one row per class (twice, at the final reordering).
    """
    check_panel_space(width, height, k, library)
    words = (len(paths_for(width, height)) + 63) // 64
    parts: list[np.ndarray] = []  # rows of the classes first seen in each chunk
    where_part: list[int] = []  # class id -> its part
    where_row: list[int] = []  # class id -> its row in that part
    by_hash: dict[int, list[int]] = {}
    ranks_parts, class_parts, sep_parts = [], [], []
    solvable = 0
    for chunk in chunks:
        ranks, bits, sep_index, sep = chunk.ranks, chunk.bits, chunk.sep_index, chunk.sep_bits
        if bits.shape[1:] != (words,):
            raise ValueError(f"solution sets have {bits.shape[1:]} words per row, expected ({words},)")
        solvable += len(ranks)
        if separate:
            ranks, bits = ranks[sep_index], bits[sep_index]
        if len(ranks) == 0:
            continue
        bits = np.ascontiguousarray(bits)
        hashes = _row_hashes(bits)
        cls, n, first = _group_rows(bits, hashes, np.argsort(hashes, kind="stable"))
        gid = np.empty(n, dtype=np.int64)
        part = len(parts)
        new_rows: list[int] = []
        for c, row in enumerate(first.tolist()):
            h = int(hashes[row])
            for g in by_hash.get(h, ()):
                p, r = where_part[g], where_row[g]
                if np.array_equal(bits[new_rows[r]] if p == part else parts[p][r], bits[row]):
                    gid[c] = g
                    break
            else:
                gid[c] = len(where_part)
                where_part.append(part)
                where_row.append(len(new_rows))
                new_rows.append(row)
                by_hash.setdefault(h, []).append(int(gid[c]))
        parts.append(bits[new_rows])
        ranks_parts.append(ranks)
        class_parts.append(gid[cls])
        if separate:
            sep_parts.append(sep)
    D = len(where_part)
    ranks = np.concatenate(ranks_parts) if ranks_parts else np.zeros(0, dtype=np.int64)
    cls = np.concatenate(class_parts) if class_parts else np.zeros(0, dtype=np.int64)
    lowest = np.full(D, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(lowest, cls, ranks)
    counts = np.concatenate([_row_counts(rows) for rows in parts]) if parts else np.zeros(0, dtype=np.int64)
    order = np.lexsort((lowest, -counts))  # count desc, then lowest panel rank
    new_id = np.empty(D, dtype=np.int64)
    new_id[order] = np.arange(D)
    bits = np.empty((D, words), dtype=np.uint64)
    start = 0
    while parts:  # reorder part by part, freeing each as it goes
        rows = parts.pop(0)
        bits[new_id[start:start + len(rows)]] = rows
        start += len(rows)
    cls = new_id[cls]
    members = np.lexsort((ranks, cls))
    if separate:
        member_sep = np.concatenate(sep_parts) if sep_parts else np.zeros((0, words), dtype=np.uint64)
        class_sep = np.zeros((D, words), dtype=np.uint64)
        np.bitwise_or.at(class_sep, cls, member_sep)
        member_sep = member_sep[members]
    else:
        class_sep = member_sep = np.zeros((0, words), dtype=np.uint64)
    out = TripleProblem(
        width, height, k, tuple(library), bool(separate), solvable,
        bits=bits,
        counts=counts[order],
        sep=class_sep,
        member_start=np.searchsorted(cls[members], np.arange(D + 1)).astype(np.int64),
        member_ranks=ranks[members],
        member_sep=np.ascontiguousarray(member_sep),
    )
    for name in _ARRAYS:
        getattr(out, name).flags.writeable = False
    return out


_BUILD_LOCK = threading.Lock()


def problem_for(width: int = 3, height: int = 3, k: int = 3, library: Sequence[str] = LIBRARY,
                separate: bool = False, chunk: int = 16) -> TripleProblem:
    """The problem of a panel space, generated and grouped once per process (thread-safe, 4 kept).

    Panels are generated ``chunk`` cell sets at a time, so memory stays at
    one chunk of bitsets plus the classes (4×4: about 3 GB at the peak).
    """
    library = tuple(library)
    check_panel_space(width, height, k, library)
    with _BUILD_LOCK:  # Dask worker threads share the process: build each problem once
        return _problem(int(width), int(height), int(k), library, bool(separate), int(chunk))


@lru_cache(maxsize=4)
def _problem(width: int, height: int, k: int, library: tuple[str, ...], separate: bool, chunk: int) -> TripleProblem:
    n = Combinations(width * height, k).max_rank
    parts = (solution_sets(width, height, k, library, a, min(a + chunk, n)) for a in range(0, n, chunk))
    return build_problem(width, height, k, library, separate, parts)
