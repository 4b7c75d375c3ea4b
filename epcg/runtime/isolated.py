"""Run a function of a user's code in a child process, so that a crash (a segfault in a compiled kernel) is an
error of one line in the client, not the client's death.

``call("pkg.mod:function", payload)`` runs ``function(payload)`` (text in, text out) in
``python -m epcg.runtime.isolated`` and returns what it printed. The job kinds of a user's space
time their kernels this way at plan time (``epcg plan`` and ``run``'s checks).
"""

from __future__ import annotations

import signal
import subprocess
import sys

from epcg.runtime.errors import TaskFailed, UserError, one_line

SENTINEL = "\x1eepcg-result\x1e"
"""Marks the start of the function's answer in the child's stdout (the user's code may print too)."""


def call(target: str, payload: str, what: str, timeout: float = 600) -> str:
    """``target(payload)`` in a child process; a UserError or TaskFailed with one line if it fails or dies."""
    child = subprocess.run([sys.executable, "-m", "epcg.runtime.isolated", target],
                           input=payload, capture_output=True, text=True, timeout=timeout)
    if child.returncode < 0:
        name = signal.Signals(-child.returncode).name
        raise TaskFailed(f"{what} killed its process ({name}): a compiled kernel most likely indexes out of bounds "
                         "(numba does not check unless told: compile with @njit(boundscheck=True), or "
                         "'epcg run --check' names the rank)")
    lines = [line for line in child.stderr.strip().splitlines() if line.strip()]
    if child.returncode == 2:
        raise UserError(lines[-1] if lines else f"{what} failed")
    if child.returncode != 0 or SENTINEL not in child.stdout:
        raise TaskFailed(f"{what} failed: {lines[-1] if lines else f'status {child.returncode}'}")
    return child.stdout.split(SENTINEL, 1)[1]


def _main(target: str) -> int:
    from epcg.runtime.registry import load_object, vetted

    try:
        with vetted():  # the client that started this process checked the job's space
            answer = load_object(target)(sys.stdin.read())
    except UserError as exc:
        print(one_line(exc), file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the user's code, reported in one line by the parent
        print(one_line(exc, named=True), file=sys.stderr)
        return 1
    sys.stdout.write(SENTINEL + answer)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1]))
