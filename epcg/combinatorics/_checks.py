"""Input checks shared by the generator classes (the kernels trust their callers)."""

from __future__ import annotations

import operator

import numpy as np

from epcg.combinatorics.binomial import INT64_MAX


def check_size(name: str, value: int, low: int = 0) -> int:
    """Return ``value`` as an int, or raise ValueError if it is not an integer ``>= low``."""
    try:
        value = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return value


def check_fits(max_rank: int, what: str) -> None:
    """Raise ValueError if ranks ``0 .. max_rank-1`` do not fit in int64."""
    if max_rank >= INT64_MAX:
        raise ValueError(f"{what} has {max_rank} states; ranks must fit in int64")


def check_rank(rank: int, max_rank: int) -> int:
    """Return ``rank`` as an int, or raise ValueError unless ``0 <= rank < max_rank``."""
    try:
        rank = operator.index(rank)
    except TypeError:
        raise ValueError(f"rank must be an integer, got {rank!r}") from None
    if not 0 <= rank < max_rank:
        raise ValueError(f"rank {rank} out of range [0, {max_rank})")
    return rank


def check_range(start: int, stop: int, max_rank: int) -> tuple[int, int]:
    """Return ``(start, stop)`` as ints, or raise ValueError unless ``0 <= start <= stop <= max_rank``."""
    start = check_size("start", start)
    stop = check_size("stop", stop)
    if not start <= stop <= max_rank:
        raise ValueError(f"range [{start}, {stop}) not within [0, {max_rank}]")
    return start, stop


def as_items(state, length: int, what: str) -> np.ndarray:
    """``state`` as a 1-D int64 array of ``length`` integers, or ValueError."""
    try:
        items = np.asarray(state)
    except Exception:  # noqa: BLE001 - anything numpy cannot read is a bad state
        raise ValueError(f"{what}: not a sequence of integers: {state!r}") from None
    if items.ndim != 1 or items.shape[0] != length:
        raise ValueError(f"{what}: expected {length} items, got {state!r}")
    if length and not np.issubdtype(items.dtype, np.integer):
        raise ValueError(f"{what}: items must be integers, got {state!r}")
    return items.astype(np.int64)
