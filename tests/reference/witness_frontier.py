"""The frontier path counter written plainly in Python: the slow reference of ``epcg.games.witness.domain.frontier``.

The same programme (Knuth's SIMPATH) with states as tuples and counts as
Python ints in a dict: each step is easy to check by eye, and is the
specification the numba kernel is compared with on small boards. See the
library module for the meaning of ``FREE``, ``DONE``, ``S``, ``T`` and the labels.

>>> [count_paths(n, n) for n in range(1, 5)]
[2, 12, 184, 8512]
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator

from epcg.games.witness.domain.frontier import DONE, FREE, S, T, GridGraph

_FIRST_LABEL = 4

State = tuple[int, ...]


def _canonical(state: list[int]) -> State:
    """Renumber the labels ``>= 4`` in order of first appearance."""
    names: dict[int, int] = {}
    out = []
    for x in state:
        if x >= _FIRST_LABEL:
            x = names.setdefault(x, _FIRST_LABEL + len(names))
        out.append(x)
    return tuple(out)


def _use(state: State, i: int, j: int) -> list[int] | None:
    """The state after using the edge between frontier slots ``i`` and ``j``, or None if illegal."""
    a, b = state[i], state[j]
    if a == DONE or b == DONE or max(state) < S:  # a full vertex, or the path is complete
        return None
    out = list(state)
    if a == FREE and b == FREE:  # a new fragment
        out[i] = out[j] = max(max(state) + 1, _FIRST_LABEL)
    elif a == FREE:  # extend the fragment ending at j
        out[i], out[j] = b, DONE
    elif b == FREE:
        out[i], out[j] = DONE, a
    elif a == b:  # both ends of one fragment: a cycle
        return None
    else:
        out[i] = out[j] = DONE
        if {a, b} == {S, T}:  # the path is complete: no other fragment may be open
            return None if max(out) >= S else out
        keep, drop = (a, b) if a < b else (b, a)  # S and T outrank other labels
        out[out.index(drop)] = keep  # the far end of the dropped fragment
    return out


def count_paths_by_step(width: int, height: int, cross: Iterable[int] = ()) -> Iterator[tuple[int, int]]:
    """Run the programme, yielding ``(edges processed, live states)`` after each edge; returns the count.

    Use ``count_paths`` for the count; this generator exists so benchmarks can
    report the frontier's width.
    """
    g = GridGraph(width, height)
    required = set(int(p) for p in cross)
    if any(not 0 <= p < g.num_positions for p in required):
        raise ValueError(f"must-cross positions must be 0..{g.num_positions - 1}, got {sorted(required)}")
    order = g.sweep()
    last: dict[int, int] = {}
    for step, e in enumerate(order):
        for v in g.edge_vertices(e):
            last[v] = step
    frontier: list[int] = []
    states: dict[State, int] = {(): 1}
    for step, e in enumerate(order):
        for v in g.edge_vertices(e):
            if v not in frontier:
                frontier.append(v)
                start = S if v == g.start else T if v == g.goal else FREE
                states = {s + (start,): n for s, n in states.items()}
        a, b = g.edge_vertices(e)
        i, j = frontier.index(a), frontier.index(b)
        must_use = g.num_vertices + e in required
        nxt: dict[State, int] = defaultdict(int)
        for s, n in states.items():
            if not must_use:
                nxt[s] += n
            used = _use(s, i, j)
            if used is not None:
                nxt[_canonical(used)] += n
        for v in (a, b):
            if last[v] != step:
                continue
            k = frontier.index(v)
            allowed = (DONE,) if v in required else (FREE, DONE)
            left: dict[State, int] = defaultdict(int)
            for s, n in nxt.items():
                if s[k] in allowed:
                    left[_canonical(list(s[:k] + s[k + 1:]))] += n
            nxt = left
            frontier.pop(k)
        states = nxt
        yield step + 1, len(states)
    return states.get((), 0)


def count_paths(width: int, height: int, cross: Iterable[int] = ()) -> int:
    """Number of start-to-goal paths on a ``width × height`` panel crossing every position in ``cross``."""
    run = count_paths_by_step(width, height, cross)
    while True:
        try:
            next(run)
        except StopIteration as stop:
            return stop.value
