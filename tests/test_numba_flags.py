"""numba's flags are set in one place (epcg/combinatorics/jit.py): no kernel of epcg writes its own."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "epcg"
DECORATOR = re.compile(r"^\s*@(?:numba\.)?n?jit\b(.*)$", re.M)


def test_every_kernel_takes_its_flags_from_one_place() -> None:
    written = []
    for path in sorted(ROOT.rglob("*.py")):
        for match in DECORATOR.finditer(path.read_text()):
            flags = match.group(1).split("#")[0].strip()
            if not re.fullmatch(r"\(\*\*(KERNEL|INLINE|UNCACHED|UNCACHED_INLINE)\)", flags):
                written.append(f"{path.relative_to(ROOT.parent)}: @njit{flags}")
    assert not written, "flags written at a decorator (use epcg.combinatorics.jit):\n" + "\n".join(written)

