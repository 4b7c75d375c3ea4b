"""Keep a process's freed chunk buffers for reuse instead of handing them back to the operating system.

A process reading or writing a run's chunks allocates and frees buffers the size
of a chunk or more (decompressed chunks, the words a task computes, the bytes it
compresses). glibc's malloc serves
any block above its mmap threshold (128 KiB, and Dask's nanny fixes it there by
setting ``MALLOC_TRIM_THRESHOLD_``) with fresh pages from the kernel and returns
them on ``free``, so the kernel zeroes every page of every such buffer again:
reading a 4.5 GB layer spent more of its CPU in the kernel clearing pages than in
decompressing (``benchmarks/allocator.py``). With blocks up to ``MMAP_THRESHOLD``
kept in the heap, and its top trimmed only past ``TRIM_THRESHOLD``, a freed buffer
is reused. The process then keeps what its threads once held at one time, up to
``TRIM_THRESHOLD`` a thread arena more. Larger blocks (a whole layer) are still
mapped and unmapped on their own.

What is kept counts as the process's memory. A Dask worker with a memory limit
pauses above a fraction of it and, paused, runs no task that could free
anything, so the kept buffers alone could hold it paused for ever, and kept
buffers beside a task's own can take it past the limit. So a worker that ends a
task above ``GIVE_BACK`` of that fraction gives them back and stops keeping
them (:func:`give_back`): near its limit it allocates as glibc does under Dask's
nanny, every buffer of 128 KiB or more mapped and returned on its own.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import lru_cache

MMAP_THRESHOLD = 32 << 20
"""Bytes from which a block gets its own mapping: the ceiling of glibc's own dynamic threshold, twice a chunk of
2^21 words."""
TRIM_THRESHOLD = 64 << 20
"""Free bytes at the top of a heap (one per thread arena) before malloc gives them back."""
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
RETURNED_FROM = 128 << 10
"""Both thresholds once a worker stops keeping buffers: glibc's default mmap threshold (the nanny sets the trim
threshold lower still, 64 KiB)."""


GIVE_BACK = 0.75
"""The share of the memory at which Dask pauses a worker above which the worker gives its kept buffers back after
a task (0.6 of its limit with Dask's defaults, Dask's own ``target`` fraction)."""


@lru_cache(maxsize=1)
def _glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc's (whose ``mallopt`` and ``malloc_trim`` these calls mean), else None."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        libc.gnu_get_libc_version  # noqa: B018 - glibc only: another libc's mallopt takes other parameters
    except (OSError, AttributeError, TypeError):
        return None
    libc.mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    libc.malloc_trim.argtypes = (ctypes.c_size_t,)
    return libc


@lru_cache(maxsize=1)
def keep_chunk_buffers() -> bool:
    """Set glibc's thresholds in this process once (called as a process first opens a run's Zarr group, which
    every chunk read or write passes: tasks, verification, reports, export); False where malloc is not glibc's
    (musl, macOS), which is left as it is."""
    libc = _glibc()
    if libc is None:
        return False
    mapped = libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    trimmed = libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    return bool(mapped and trimmed)


def give_back(pause_at: int) -> bool:
    """If this process's resident memory is above ``GIVE_BACK`` of ``pause_at`` (the bytes at which its worker
    would be paused), hand the freed buffers it keeps back to the operating system (glibc's ``malloc_trim``) and
    keep none from now on; whether it did."""
    import psutil  # Dask's own measure of a worker's memory (distributed depends on it)

    libc = _glibc()
    if libc is None or psutil.Process().memory_info().rss <= GIVE_BACK * pause_at:
        return False
    libc.mallopt(_M_MMAP_THRESHOLD, RETURNED_FROM)
    libc.mallopt(_M_TRIM_THRESHOLD, RETURNED_FROM)
    libc.malloc_trim(0)
    return True
