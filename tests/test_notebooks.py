"""The notebooks run top to bottom on their small default settings, in notebooks/ (they read ../jobs/).

A notebook whose metadata says ``{"epcg": {"slow": true}}`` runs with ``-m slow`` only.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def _param(path: Path):
    slow = nbformat.read(path, as_version=4).metadata.get("epcg", {}).get("slow", False)
    return pytest.param(path, id=path.stem, marks=[pytest.mark.slow] if slow else [])


@pytest.mark.parametrize("path", [_param(p) for p in NOTEBOOKS])
def test_notebook_runs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    pictures = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {})]
    assert pictures
