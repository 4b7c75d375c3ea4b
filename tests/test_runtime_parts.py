"""The parts of a run, from its chunks' records and when each session began (runtime/parts.py)."""

from __future__ import annotations

from epcg.runtime.parts import computed_parts, epoch_of


def record(epoch: int | None, ended_at: float, seconds: float = 1.0) -> dict:
    return {"fence": None if epoch is None else f"abc/{epoch}", "ended_at": ended_at, "seconds": seconds}


def test_epoch_of_a_fence() -> None:
    assert epoch_of("0f3a/12") == 12
    assert epoch_of(None) is None and epoch_of("0f3a/") is None and epoch_of(7) is None


def test_each_session_that_computed_is_a_part_and_the_finishing_one_ends_now() -> None:
    records = [record(1, 110), record(1, 120), record(3, 210, seconds=5), record(3, 230), record(None, 50)]
    starts = {1: 100.0, 2: 150.0, 3: 200.0, 4: 300.0}  # epoch 2 (a report, say) finished no chunk
    parts = computed_parts(records, starts, current=3, now=240.0)
    assert parts == [
        {"epoch": 1, "started_at": 100.0, "ended_at": 120.0, "seconds": 20.0, "chunks": 2},
        {"epoch": 3, "started_at": 200.0, "ended_at": 240.0, "seconds": 40.0, "chunks": 2},
    ]


def test_a_session_whose_start_was_not_kept_begins_with_its_first_chunk() -> None:
    parts = computed_parts([record(1, 110, seconds=4), record(1, 130)], {}, current=None, now=500.0)
    assert parts == [{"epoch": 1, "started_at": 106.0, "ended_at": 130.0, "seconds": 24.0, "chunks": 2}]


def test_a_session_that_only_reduces_is_the_last_part() -> None:
    parts = computed_parts([record(1, 110)], {1: 100.0, 2: 300.0}, current=2, now=310.0)
    assert [(p["epoch"], p["chunks"], p["seconds"]) for p in parts] == [(1, 1, 10.0), (2, 0, 10.0)]
