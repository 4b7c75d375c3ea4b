"""The layers of docs/architecture.md, checked in fresh interpreters: who never imports whom."""

from __future__ import annotations

import subprocess
import sys

import pytest

FORBIDDEN = {
    "epcg.search": ("epcg.runtime", "epcg.experiments", "epcg.domains", "dask", "distributed", "zarr"),
    "epcg.domains.witness, epcg.domains.fling, epcg.domains.dwp": (
        "epcg.runtime", "epcg.experiments", "dask", "distributed", "zarr",
    ),
    "epcg.runtime.session, epcg.runtime.execute, epcg.runtime.jobs, epcg.runtime.registry": (
        "epcg.experiments", "epcg.domains",
    ),
}


@pytest.mark.parametrize("modules", list(FORBIDDEN))
def test_a_layer_never_imports_the_layers_above_it(modules: str) -> None:
    code = (
        f"import sys, importlib\nfor m in {modules.split(', ')!r}: importlib.import_module(m)\n"
        f"print(sorted({{m for m in sys.modules if m.startswith({FORBIDDEN[modules]!r})}}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
