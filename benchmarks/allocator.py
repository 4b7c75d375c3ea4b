"""What keeping freed chunk buffers (``epcg.runtime.allocator``) saves a task process: a layer read and chunk writes.

Each setting runs in a fresh process: glibc's own malloc, the setting Dask's
nanny starts every worker with (``MALLOC_TRIM_THRESHOLD_=65536``), and that
setting followed by :func:`~epcg.runtime.allocator.keep_chunk_buffers` as every
task calls it. Each reads a whole bit array of a run directory the way a layer
task loads the previous layer, then writes ``--writes`` chunks the way tasks
store theirs (into a scratch directory, never into the run it read). Printed per
setting: wall seconds of each step, user and system CPU seconds, minor page
faults; then the ratios against the nanny's setting.

    python benchmarks/allocator.py                                  # a synthetic 2^27-word array
    python benchmarks/allocator.py --run RUN --array solvable/10    # a finished run's layer (4.5 GB at 11 pieces)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import zarr
from zarr.storage import LocalStore

from epcg.runtime.allocator import keep_chunk_buffers
from epcg.runtime.arrays import ZARR
from epcg.runtime.store import RunDir

SETTINGS = {"glibc": {}, "nanny": {"MALLOC_TRIM_THRESHOLD_": "65536"}, "kept": {"MALLOC_TRIM_THRESHOLD_": "65536"}}


def _new_run(path: str) -> RunDir:
    """An empty run directory's store, as a task writes into it."""
    zarr.open_group(LocalStore(f"{path}/{ZARR}"), mode="w-")
    return RunDir(path)


def _child(setting: str, run_path: str, array: str, writes: int, scratch_path: str) -> dict[str, float]:
    """One setting's figures, in this fresh process: the read of ``array`` whole, then ``writes`` chunk writes."""
    if setting == "kept":
        keep_chunk_buffers()
    run = RunDir(run_path)
    before = resource.getrusage(resource.RUSAGE_SELF)
    began = time.perf_counter()
    words = run.arrays.read_array(array)
    read = time.perf_counter() - began
    chunk = run.arrays.array(array).chunks[0]
    scratch = _new_run(scratch_path)
    scratch.arrays.group.create_array(setting, shape=(chunk * writes,), dtype="uint64", chunks=(chunk,), fill_value=0)
    began = time.perf_counter()
    for i in range(writes):
        out = np.zeros(chunk, dtype=np.uint64)
        source = words[i * chunk % words.size:][:chunk]
        out[:source.size] |= source
        scratch.arrays.write_slice(setting, i * chunk, out)
    written = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_SELF)
    return {"read": read, "writes": written, "user": after.ru_utime - before.ru_utime,
            "system": after.ru_stime - before.ru_stime, "faults": after.ru_minflt - before.ru_minflt,
            "words": int(words.size), "chunk": int(chunk)}


def _synthetic(path: str, words: int, chunk: int) -> None:
    """A run directory with one array ``layer`` of ``words`` words, about as compressible as a layer."""
    run = _new_run(path)
    run.arrays.group.create_array("layer", shape=(words,), dtype="uint64", chunks=(chunk,), fill_value=0)
    rng = np.random.default_rng(1)
    for start in range(0, words, chunk):
        n = min(chunk, words - start)
        block = rng.integers(0, 2**63, n, dtype=np.uint64) & rng.integers(0, 2**63, n, dtype=np.uint64)
        block[rng.random(n) < 0.5] = 0
        run.arrays.write_slice("layer", start, block)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", help="a run directory to read from (default: a synthetic one in /var/tmp)")
    parser.add_argument("--array", default="layer", help="the bit array read whole")
    parser.add_argument("--words", type=int, default=1 << 27, help="synthetic array: words")
    parser.add_argument("--chunk", type=int, default=1 << 20, help="synthetic array: words per chunk")
    parser.add_argument("--writes", type=int, default=64, help="chunks written after the read")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--scratch", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        print(json.dumps(_child(opts.child, opts.run, opts.array, opts.writes, opts.scratch)))
        return

    with tempfile.TemporaryDirectory(prefix="epcg-allocator-", dir="/var/tmp") as tmp:
        run = opts.run
        if run is None:
            run = f"{tmp}/source"
            _synthetic(run, opts.words, opts.chunk)
        figures = {}
        for setting, extra in SETTINGS.items():
            env = {key: value for key, value in os.environ.items() if not key.startswith("MALLOC_")}
            out = subprocess.run([sys.executable, __file__, "--child", setting, "--run", run, "--array", opts.array,
                                  "--writes", str(opts.writes), "--scratch", f"{tmp}/{setting}"], env={**env, **extra},
                                 capture_output=True, text=True, check=True)
            figures[setting] = f = json.loads(out.stdout)
            print(f"{setting:6s} read {f['read']:6.2f} s, {opts.writes} writes {f['writes']:6.2f} s; "
                  f"CPU user {f['user']:6.2f} s, system {f['system']:6.2f} s; {f['faults']:,} minor faults")
    words, chunk = figures["kept"]["words"], figures["kept"]["chunk"]
    print(f"({words:,} words, {8 * words / 2**30:.2f} GiB, in chunks of {chunk:,} words)")
    for key in ("read", "writes", "system"):
        print(f"kept / nanny, {key}: x{figures['kept'][key] / figures['nanny'][key]:.2f}")


if __name__ == "__main__":
    main()
