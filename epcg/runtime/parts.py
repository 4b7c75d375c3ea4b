"""The parts a run was computed in, for results.json and report.html.

A run stopped and continued with ``epcg resume`` is computed in several client sessions. Each session is an
epoch of the run (run.json counts them and keeps when each began), and each chunk's record carries the epoch
that wrote it in its fence, so a part is an epoch that finished chunks: from the session's start to its last
chunk (a session under way: to now). Every part ends at its last chunk alike, a session stopped by ``kill -9``
or a lost machine too, so the parts add up to the run's length (:func:`epcg.runtime.readout.length`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypedDict


class Part(TypedDict):
    """One session that computed chunks (epoch seconds)."""

    epoch: int
    started_at: float
    ended_at: float
    seconds: float
    chunks: int


def epoch_of(fence: object) -> int | None:
    """The epoch in a fence (``"<run id>/<epoch>"``); None for no fence (a record written before fences)."""
    if not isinstance(fence, str):
        return None
    epoch = fence.rpartition("/")[2]
    return int(epoch) if epoch.isdigit() else None


def computed_parts(records: Iterable[Mapping[str, Any]], starts: Mapping[int, float], current: int | None,
                   now: float) -> list[Part]:
    """The parts of a run whose chunks have ``records``, in order; ``starts`` is when each epoch began (an
    epoch missing from it began with its first chunk), ``current`` the epoch finishing the run at ``now``."""
    spans: dict[int, list[float]] = {}
    counts: dict[int, int] = {}
    for record in records:
        epoch = epoch_of(record.get("fence"))
        if epoch is None:
            continue
        ended = float(record.get("ended_at", 0))
        began = ended - float(record.get("seconds", 0))
        first, last = spans.get(epoch, (began, ended))
        spans[epoch] = [min(first, began), max(last, ended)]
        counts[epoch] = counts.get(epoch, 0) + 1
    if current is not None and current not in spans and current in starts:
        spans[current], counts[current] = [now, now], 0
    parts: list[Part] = []
    for epoch in sorted(spans):
        first, last = spans[epoch]
        started = min(starts.get(epoch, first), first)
        ended = now if epoch == current else last
        parts.append(Part(epoch=epoch, started_at=round(started, 3), ended_at=round(ended, 3),
                          seconds=round(ended - started, 3), chunks=counts[epoch]))
    return parts
