"""numba's flags for every kernel of epcg, set in this one place (as stumpy sets its own from its config).

A kernel is decorated ``@njit(**KERNEL)``; ``tests/test_numba_flags.py`` refuses flags written out at a
decorator, so a change of policy is a change here.
"""

from __future__ import annotations

from typing import Any

KERNEL: dict[str, Any] = {"cache": True, "nogil": True}
"""A kernel: compiled once and kept in numba's on-disk cache, so a worker process loads it instead of compiling
it again; the GIL released, so a worker's threads run kernels side by side."""

INLINE: dict[str, Any] = {**KERNEL, "inline": "always"}
"""A small helper of kernels (a bit trick, a table lookup, a step of a walk), inlined where it is called."""

UNCACHED: dict[str, Any] = {"nogil": True}
"""A search driver that takes a user's kernels as arguments: numba keys function-typed arguments by object
address, so such a driver cannot be cached on disk."""

UNCACHED_INLINE: dict[str, Any] = {**UNCACHED, "inline": "always"}
"""A helper of such a driver, inlined where it is called."""
