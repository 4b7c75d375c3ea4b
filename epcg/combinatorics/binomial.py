"""Binomial coefficients as a table that numba kernels index directly.

>>> int(BINOMIAL[20, 4]), int(BINOMIAL[56, 10])
(4845, 35607051480)
>>> binomial(65, 6)
82598880
"""

from __future__ import annotations

import math

import numpy as np

TABLE_SIZE = 130
"""Rows ``n = 0 .. TABLE_SIZE-1``; enough for every board epcg supports."""

INT64_MAX = np.iinfo(np.int64).max


def _build_table(size: int) -> np.ndarray:
    """Pascal's triangle in int64, saturated at ``INT64_MAX`` where it would overflow."""
    table = np.zeros((size, size), dtype=np.int64)
    for n in range(size):
        for k in range(n + 1):
            table[n, k] = min(math.comb(n, k), INT64_MAX)
    return table


BINOMIAL: np.ndarray = _build_table(TABLE_SIZE)
"""``BINOMIAL[n, k]`` = C(n, k) for ``0 <= k <= n < TABLE_SIZE`` (0 where ``k > n``).

Entries larger than int64 hold ``INT64_MAX``: callers validate that the rank
spaces they use fit in int64 before indexing (``binomial`` does it exactly).
"""


def binomial(n: int, k: int) -> int:
    """Exact C(n, k) as a Python int (0 when ``k < 0`` or ``k > n``)."""
    if k < 0 or n < 0 or k > n:
        return 0
    return math.comb(n, k)
