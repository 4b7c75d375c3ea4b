"""A task process keeps its freed chunk buffers: reallocating one costs no page faults, on a Dask worker too; and
gives them back near the memory at which its worker would be paused."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from epcg.runtime.cluster import LocalSpec, connect

from .conftest import epcg

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc is not glibc's")

CYCLES = 20


def buffer_faults() -> int:
    """Page faults of ``CYCLES`` rounds of allocating, filling and freeing two chunk-sized buffers (8 and 4 MiB),
    after one round that may fault. numpy's advice to back large arrays with huge pages is off meanwhile: where
    the kernel has 2 MiB pages free it would fault once per 2 MiB, and the count would say how fragmented the
    machine's memory is rather than whether the buffers were kept."""
    import resource

    import numpy as np
    from numpy._core.multiarray import _set_madvise_hugepage

    def faults() -> int:
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

    def cycle() -> None:
        a, b = np.ones(1 << 20, dtype=np.uint64), np.ones(1 << 19, dtype=np.uint64)
        del a, b

    advised = _set_madvise_hugepage(False)
    try:
        cycle()
        before = faults()
        for _ in range(CYCLES):
            cycle()
        return faults() - before
    finally:
        _set_madvise_hugepage(advised)


PROBE = """
import sys
from epcg.runtime.allocator import keep_chunk_buffers
from tests.test_runtime_allocator import buffer_faults
if sys.argv[1] == "kept":
    assert keep_chunk_buffers()
if sys.argv[1] == "store":  # a process that only reads a run: verify, report, epcg.open
    import zarr
    from epcg.runtime.arrays import ZARR
    from epcg.runtime.store import RunDir
    zarr.open_group(f"{sys.argv[2]}/{ZARR}", mode="w-")
    RunDir(sys.argv[2]).arrays.group
print(buffer_faults())
"""


def _probe(mode: str, nanny: bool, *args: str) -> int:
    env = {**os.environ, **({"MALLOC_TRIM_THRESHOLD_": "65536"} if nanny else {})}  # as Dask's nanny starts workers
    out = subprocess.run([sys.executable, "-c", PROBE, mode, *args], env=env, cwd=Path(__file__).parents[1],
                         capture_output=True, text=True, check=True)
    return int(out.stdout)


@pytest.mark.parametrize("nanny", [False, True])
def test_kept_buffers_are_reused_without_faults(nanny: bool) -> None:
    kept = _probe("kept", nanny)
    assert kept < CYCLES, kept
    if nanny:
        assert _probe("plain", nanny) > 100 * CYCLES  # every round mapped afresh: thousands of faults


def test_opening_a_runs_store_keeps_the_buffers(tmp_path: Path) -> None:
    assert _probe("store", True, str(tmp_path)) < CYCLES


def test_a_worker_that_ran_a_task_keeps_its_buffers(tmp_path: Path) -> None:
    job = tmp_path / "fling.toml"  # its tasks write chunks (a must-cross job's write only records)
    job.write_text('name = "f"\ndomain = "fling"\nwidth = 4\nheight = 4\nmax_pieces = 5\n')
    with connect(LocalSpec(workers=1, dashboard_address=None)) as client:
        (fresh,) = client.run(buffer_faults).values()
        ran = epcg("run", str(job), "--out", str(tmp_path / "run"), "--scheduler", client.scheduler.address)
        assert ran.returncode == 0, ran.stderr
        (after,) = client.run(buffer_faults).values()
    assert fresh > 100 * CYCLES and after < CYCLES, (fresh, after)


GIVE_BACK_PROBE = """
import sys
import numpy as np
import psutil
from epcg.runtime.allocator import give_back, keep_chunk_buffers
from tests.test_runtime_allocator import buffer_faults
assert keep_chunk_buffers()
held = [np.ones(1 << 19, dtype=np.uint64) for _ in range(48)]  # 48 buffers of 4 MiB at one time
del held[::2]  # every other one freed: 96 MiB between blocks still in use, which no trim of the heap's top reaches
kept = psutil.Process().memory_info().rss
far = give_back(100 * kept)  # far below the pause line: kept
near = give_back(kept)  # at it: given back
print(far, near, kept - psutil.Process().memory_info().rss)
print(buffer_faults())  # and it keeps none after
"""


def test_kept_buffers_are_given_back_near_the_pause_line() -> None:
    """The buffers a task's process keeps (here 96 MiB freed between blocks still in use) stay while the process
    is far below the memory at which its worker would pause, and go back to the system near it; from then on it
    keeps none (every round of buffers faults afresh)."""
    out = subprocess.run([sys.executable, "-c", GIVE_BACK_PROBE], cwd=Path(__file__).parents[1],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out[:2] == ["False", "True"] and int(out[2]) > 80 << 20 and int(out[3]) > 100 * CYCLES, out
