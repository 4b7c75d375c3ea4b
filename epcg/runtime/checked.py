"""Checked mode: a user's numba kernels compiled with bounds checks, so an index out of bounds is an error
naming where it happened instead of a crashed worker or silent garbage.

numba does not check indices unless told (``@njit(boundscheck=True)``, or
``NUMBA_BOUNDSCHECK=1``). :func:`enable` tells it for everything compiled
from then on in this process, and keeps what it compiles in a cache directory
of its own, so the unchecked (fast) machine code of a normal run and the
checked code never mix. ``epcg run --serial`` of a job that names a user's
``space`` runs in checked mode; ``epcg run --check`` runs a job kind's
``check_slice(config)`` (a first slice of each stage, and a few slices
spread over it) in a checked subprocess before the run starts.

    python -m epcg.runtime.checked DOMAIN JOB_JSON    # exit 0, or 1 with one line on stderr
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from epcg.runtime.errors import TaskFailed, UserError, one_line

CACHE = Path(tempfile.gettempdir()) / f"epcg-numba-checked-{os.getuid()}"
"""Where checked machine code is cached (never beside the unchecked code of the same functions)."""


def enable() -> None:
    """Compile every numba function defined from now on with bounds checks, cached in :data:`CACHE`.

    Functions already compiled, or decorated before this call, are not affected: call it before the
    user's module is imported.
    """
    from numba.core import config

    config.BOUNDSCHECK = 1  # type: ignore[attr-defined]  # numba's config sets its options at run time
    config.CACHE_DIR = str(CACHE)  # type: ignore[attr-defined]


def names_space(data: dict[str, Any]) -> bool:
    """A job's plain data names a user's space (``space = "pkg.mod:NAME"``), so it runs user kernels."""
    return isinstance(data.get("space"), str)


def check_first_slices(domain: str, job_json: str, timeout: float = 600) -> None:
    """Run the job kind's ``check_slice`` in a checked subprocess; a failure is a TaskFailed with its one line."""
    result = subprocess.run([sys.executable, "-m", "epcg.runtime.checked", domain, job_json],
                            capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        lines = [line for line in result.stderr.strip().splitlines() if line.strip()]
        raise TaskFailed(f"--check: {lines[-1] if lines else f'the checked run ended with status {result.returncode}'}")


def _main(domain: str, job_json: str) -> int:
    enable()
    from epcg.runtime.registry import job_kind, vetted

    kind = job_kind(domain)
    try:
        with vetted():  # the client that started this process checked the job's space
            kind.check_slice(kind.validate(json.loads(job_json)))
    except (UserError, TaskFailed) as exc:
        print(one_line(exc), file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - a user kernel's error, reported in one line
        print(one_line(exc, named=True), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1], sys.argv[2]))
