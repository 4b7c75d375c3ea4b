"""Algorithm 6, branch and bound, domain-free: the driver over first items and the incumbent it reads.

A branch-and-bound space enumerates sets of items by their first item, in an
order where the bound of a first item never increases; a space kernel
(``search_first``) searches every set below one first item and cuts nodes whose
bound cannot reach the target. :func:`search` walks a range of first items in
batches: between batches it reads the shared :class:`Incumbent` (the best score
any task has offered), and when the range beats it, it offers the improvement.
A stale read only prunes less, so the answer never depends on timing.

Two modes make the answer independent of how the first items are split:

- ``"all"``: nodes are cut only when **strictly** worse than the best known
  score, so a range finds every set of its range at any score that is still
  optimal; :func:`merge` keeps the ranges at the maximum and all their sets.
- ``"first"``: the kernel also cuts ties with the range's *own* best (every
  later set of the range comes later in search order), but only strictly
  worse nodes against the shared score; so each range returns its first set at
  its best score, and :func:`merge` keeps the first set at the maximum.

Node counts (``nodes``, ``pruned``, ``improvements``) are diagnostics: they
depend on the split and on when incumbents arrive.

The incumbent is handed in: :class:`LocalIncumbent` shares it between the
tasks of one process; the runtime provides one shared between worker processes.

>>> best = LocalIncumbent("doc")
>>> best.get(), best.offer(5), best.offer(3), best.get()
(0, 5, 5, 5)
>>> space = Pairs((6, 5, 5, 2))   # sets {i, j}, score min(values), ties kept
>>> r = search(space, 0, 4)
>>> r.score, r.sets
(5, ((0, 1), (0, 2), (1, 2)))
>>> m = merge([search(space, 1, 4), search(space, 0, 1)])   # any split, any order
>>> (m.score, m.sets) == (r.score, r.sets)
True
>>> search(space, 0, 4, mode="first").sets
((0, 1),)
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

import numpy as np

__all__ = ["MODES", "BranchBoundSpace", "Incumbent", "LocalIncumbent", "Pairs", "Result", "merge", "search"]

MODES = ("all", "first")
"""``"all"``: every optimal set; ``"first"``: the first optimal set in search order."""


class Incumbent(Protocol):
    """The best score shared by every task of a search."""

    def get(self) -> int:
        """The best score any task has offered so far (0 before any)."""

    def offer(self, score: int) -> int:
        """Raise the incumbent to ``score`` if it is higher; return the incumbent after."""


_LOCAL: dict[str, int] = {}
_LOCAL_LOCK = threading.Lock()


class LocalIncumbent:
    """An incumbent shared by the tasks of this process, by name (the serial executor)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def get(self) -> int:
        with _LOCAL_LOCK:
            return _LOCAL.get(self.name, 0)

    def offer(self, score: int) -> int:
        with _LOCAL_LOCK:
            _LOCAL[self.name] = max(_LOCAL.get(self.name, 0), int(score))
            return _LOCAL[self.name]

    def delete(self) -> None:
        """Forget this incumbent (its search has ended)."""
        with _LOCAL_LOCK:
            _LOCAL.pop(self.name, None)


class BranchBoundSpace(Protocol):
    """What :func:`search` needs of a space (a content space built for one search).

    ``size`` first items, numbered ``0 .. size-1`` so that ``bound(i)`` never
    increases with ``i``; each set found is a tuple of ``arity`` ints.
    """

    algorithm: ClassVar[str]
    """``"branch_bound"``: the job kind that walks the space."""
    arity: int
    size: int

    def bound(self, first: int) -> int:
        """The highest score any set whose first item is ``first`` can reach."""

    def search_first(self, first: int, best: int, shared: int, first_mode: bool,
                     out: np.ndarray, stats: np.ndarray) -> tuple[int, int]:
        """Every set below ``first`` at score ``>= need``; returns ``(best, n)``.

        ``need = max(best + 1 if first_mode else best, shared, 1)``, raised as
        ``best`` rises. A set above ``best`` raises it (``stats[2] += 1``) and
        restarts the output; sets are written to ``out[:n]`` while they fit (``n``
        may exceed ``len(out)``: the driver reruns with room). ``stats`` is
        ``[nodes evaluated, nodes pruned, improvements]`` and only grows.
        """


@dataclass(frozen=True)
class Result:
    """What a search over a range of first items found."""

    score: int
    """Best score found in the range (0: no set reached the target)."""
    sets: tuple[tuple[int, ...], ...]
    """Sets at ``score``, in search order ("first": at most one)."""
    nodes: int = 0
    """Partial and complete sets evaluated."""
    pruned: int = 0
    """Partial sets cut by the bound, plus sibling sets skipped by the sorted bound."""
    improvements: int = 0
    """Times this range raised its own best score."""
    mode: str = "all"
    first_start: int = 0
    first_stop: int = 0
    meta: dict = field(default_factory=dict, compare=False)
    """Free-form diagnostics (e.g. seconds) that ``merge`` ignores."""


def check_mode(mode: str) -> None:
    """Raise ValueError unless ``mode`` is one of :data:`MODES`."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")


def search(
    space: BranchBoundSpace,
    first_start: int,
    first_stop: int,
    incumbent: Incumbent | None = None,
    batch: int = 64,
    mode: str = "all",
    known: int = 0,
) -> Result:
    """Branch and bound over the sets whose first item lies in ``[first_start, first_stop)``.

    ``known``: a score some set is known to reach (0: none). ``incumbent``, if
    given, is read at the start and every ``batch`` first items (it may raise
    the target), and offered every score by which this range beats what it knows.
    """
    check_mode(mode)
    if not 0 <= first_start <= first_stop <= space.size:
        raise ValueError(f"first-item range [{first_start}, {first_stop}) is not within [0, {space.size}]")
    if batch < 1:
        raise ValueError(f"batch must be at least 1, got {batch}")
    shared = max(int(known), int(incumbent.get()) if incumbent is not None else 0, 0)
    best = 0
    stats = np.zeros(3, dtype=np.int64)
    found: list[tuple[int, ...]] = []
    out = np.zeros((256, space.arity), dtype=np.int64)
    first_mode = mode == "first"
    for i in range(first_start, first_stop):
        if incumbent is not None and i > first_start and (i - first_start) % batch == 0:
            shared = max(shared, int(incumbent.get()))
        if space.bound(i) < max(shared, best + first_mode, 1):
            stats[1] += first_stop - i  # bounds never increase: no later first item reaches the target
            break
        while True:
            before = stats.copy()
            new_best, n = space.search_first(i, best, shared, first_mode, out, stats)
            new_best, n = int(new_best), int(n)
            if n <= out.shape[0]:
                break
            stats[:] = before
            out = np.zeros((2 * n, space.arity), dtype=np.int64)
        if new_best > best:
            found = []
            if incumbent is not None and new_best > shared:
                shared = max(shared, int(incumbent.get()))  # improvements are rare: skip stale offers
                if new_best > shared:
                    shared = max(shared, int(incumbent.offer(new_best)))
            shared = max(shared, new_best)
            best = new_best
        found.extend(map(tuple, out[:n].tolist()))
    return Result(best, tuple(found), int(stats[0]), int(stats[1]), int(stats[2]), mode, first_start, first_stop)


def merge(results: Iterable[Result], mode: str = "all") -> Result:
    """Combine the results of disjoint ranges: the maximum score and its sets, in search order.

    "all" keeps every set at the maximum, "first" the first one. Node counts
    are summed. A range searched twice adds nothing but node counts.
    """
    check_mode(mode)
    results = list(results)
    best = max((r.score for r in results), default=0)
    sets = sorted({s for r in results if r.score == best for s in r.sets}) if best else []
    if mode == "first":
        sets = sets[:1]
    return Result(
        best, tuple(sets),
        sum(r.nodes for r in results), sum(r.pruned for r in results), sum(r.improvements for r in results),
        mode, min((r.first_start for r in results), default=0), max((r.first_stop for r in results), default=0),
    )


class Pairs:
    """A toy space for examples and tests: pairs ``i < j`` of items scored ``min(values[i], values[j])``.

    ``values`` must not increase (so ``bound(i) = values[i]``). A plain Python
    kernel; a real space calls an ``@njit`` kernel from ``search_first``.
    """

    algorithm: ClassVar[str] = "branch_bound"
    arity = 2

    def __init__(self, values: Iterable[int]) -> None:
        self.values = [int(v) for v in values]
        if any(a < b for a, b in zip(self.values, self.values[1:])):
            raise ValueError("values must not increase")
        self.size = len(self.values)

    def bound(self, first: int) -> int:
        return self.values[first]

    def search_first(self, first, best, shared, first_mode, out, stats):
        n = 0
        for j in range(first + 1, self.size):
            need = max(best + 1 if first_mode else best, shared, 1)
            stats[0] += 1
            score = min(self.values[first], self.values[j])
            if score < need:
                stats[1] += 1
                continue
            if score > best:
                best, n = score, 0
                stats[2] += 1
            if n < out.shape[0]:
                out[n] = (first, j)
            n += 1
        return best, n
