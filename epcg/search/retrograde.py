"""Algorithm 5 driver pieces, domain-free: layer stages, a per-worker layer cache, checksums.

Retrograde analysis fills layer ``k`` from layer ``k-1``. Each layer is a bit
array stored in chunks; one task computes one chunk (a range of whole words).
Every task of layer ``k`` needs random access to all of layer ``k-1``, so a
worker loads it once and keeps it for all its tasks of that layer.

>>> [s.name for s in layer_stages(1, 3, lambda k: 10 * k, 8)]
['k01', 'k02', 'k03']
>>> layer_stages(1, 3, lambda k: 10 * k, 8)[2].after
('k02',)
>>> a = np.arange(10, dtype=np.uint64)
>>> layer_checksum(a, 0) == (layer_checksum(a[:3], 0) + layer_checksum(a[3:], 3)) % 2**64
True
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
from numba import njit

from epcg.runtime.plan import Stage, split_range


def layer_name(level: int) -> str:
    return f"k{level:02d}"


def layer_stages(
    first: int, last: int, words_of: Callable[[int], int], chunk_words: int
) -> tuple[Stage, ...]:
    """One stage per level ``first..last``, each after the one before, tasks of ``chunk_words``."""
    stages = []
    for level in range(first, last + 1):
        name = layer_name(level)
        after = (layer_name(level - 1),) if level > first else ()
        tasks = split_range(name, words_of(level), chunk_words)
        stages.append(Stage(name, tasks, after=after, label=f"layer {level}", size=words_of(level)))
    return tuple(stages)


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


def popcount(words: np.ndarray) -> int:
    """Number of set bits in an array of uint64 words."""
    return int(np.bitwise_count(words).sum(dtype=np.int64))
