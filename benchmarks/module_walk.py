"""How often a reader following a job from ``epcg run`` to results.json comes back to a module already left.

The walk is the order in which a serial ``epcg run`` first calls each of epcg's functions (as a reader meets
them, reading each once), as the modules they live in, with a module's consecutive functions taken as one
visit; what runs while a module is imported (decorators, registrations) is not part of it. A *return* is a
visit to a module the walk has already left. It prints the walk, the modules visited
more than once and the count of returns.

    python benchmarks/module_walk.py                           # jobs/witness-paths.toml
    python benchmarks/module_walk.py jobs/fling.toml --set max_pieces=5
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def first_calls(args: list[str]) -> list[str]:
    """The modules of epcg's functions in the order a serial run first calls each."""
    from epcg.cli import main

    seen: set[tuple[str, str]] = set()
    modules: list[str] = []
    importing = 0

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        nonlocal importing
        if frame.f_code.co_name == "<module>":
            importing += {"call": 1, "return": -1}.get(event, 0)
            return
        module = frame.f_globals.get("__name__", "")
        if event != "call" or importing or not module.startswith("epcg"):
            return
        key = (module, frame.f_code.co_qualname)
        if key not in seen:
            seen.add(key)
            modules.append(module)

    sys.setprofile(profile)
    try:
        main(args, standalone_mode=False)
    finally:
        sys.setprofile(None)
    return modules


def visits(modules: list[str]) -> list[str]:
    """``modules`` with consecutive repeats taken as one visit."""
    return [m for i, m in enumerate(modules) if i == 0 or modules[i - 1] != m]


def returns(walk: list[str]) -> int:
    """Visits to a module the walk has already left."""
    left: set[str] = set()
    count = 0
    for before, now in zip(walk, walk[1:], strict=False):
        left.add(before)
        count += now in left
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("job", nargs="?", default=str(ROOT / "jobs" / "witness-paths.toml"))
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sets = [arg for pair in options.overrides for arg in ("--set", pair)]
        modules = first_calls(["run", options.job, *sets, "--serial", "--out", str(Path(tmp) / "run")])
    walk = visits(modules)
    print(f"{len(set(modules))} modules, {len(modules)} functions first called, {len(walk)} visits")
    print("walk: " + " > ".join(m.removeprefix("epcg.") for m in walk))
    again = Counter(walk)
    print("visited more than once: " + ", ".join(f"{m.removeprefix('epcg.')} {n}"
                                                   for m, n in again.most_common() if n > 1))
    print(f"returns to a module already left: {returns(walk)}")


if __name__ == "__main__":
    main()
