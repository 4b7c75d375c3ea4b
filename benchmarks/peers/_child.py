"""Run one measurement in a fresh Python process and read back what it printed (shared by the peer scripts).

Each measurement gets its own process so peak memory (``ru_maxrss``) belongs
to it alone, with one thread (``OMP_NUM_THREADS``, ``NUMBA_NUM_THREADS`` = 1).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path


def peak_mb() -> float:
    """Peak resident memory of this process so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(script: str | Path, *args: str, timeout: float | None = None) -> dict:
    """Run ``python SCRIPT --child ARGS`` single-threaded and return the JSON object it printed last."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
    done = subprocess.run([sys.executable, str(script), "--child", *args], capture_output=True, text=True,
                          env=env, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{Path(script).name} --child {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(**fields) -> None:
    """What a child prints: one JSON line (Python's json keeps integers of any size exact)."""
    print(json.dumps(fields), flush=True)
