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


@lru_cache(maxsize=1)
def keep_chunk_buffers() -> bool:
    """Set glibc's thresholds in this process once (called as a process first opens a run's Zarr group, which
    every chunk read or write passes: tasks, verification, reports, export); False where malloc is not glibc's
    (musl, macOS), which is left as it is."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
        libc.gnu_get_libc_version  # noqa: B018 - glibc only: another libc's mallopt takes other parameters
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mapped = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    trimmed = mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    return bool(mapped and trimmed)
