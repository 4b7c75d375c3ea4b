"""Each peer benchmark (benchmarks/peers/) answers a tiny case with both systems and they agree.

Skipped, with the reason, where the optional ``peers`` extra is not installed.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

PEERS = Path(__file__).resolve().parents[1] / "benchmarks" / "peers"


def script(name: str, needs: str):
    """Import ``benchmarks/peers/NAME.py`` once ``needs`` is importable (else skip)."""
    pytest.importorskip(needs, reason=f"{needs} is not installed (pip install -e '.[peers]')")
    sys.path.insert(0, str(PEERS))
    try:
        spec = importlib.util.spec_from_file_location(f"peers_{name}", PEERS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(PEERS))
    return module


def test_paths_agree_with_graphillion() -> None:
    peers = script("paths_graphillion", "graphillion")
    lines: list[str] = []
    rows = peers.compare([4], ["as-is"], out=lines.append)
    assert [(r["n"], r["count"], r["graphillion"]["count"]) for r in rows] == [(4, 8512, 8512)]
    assert rows[0]["ratio"] > 0 and "(equal)" in "\n".join(lines)


def test_unique_covers_agree_with_cp_sat() -> None:
    peers = script("cover_cpsat", "ortools")
    (row,) = peers.compare(["3x3"], 120.0, out=lambda line: None)
    ours, theirs = row["epcg"], row["cpsat"]
    assert theirs["proved"] and theirs["complete"]
    assert ours["k"] == theirs["k"] == 4
    assert sorted(map(tuple, ours["panels"])) == sorted(map(tuple, theirs["panels"])) and len(ours["panels"]) == 166


@pytest.mark.slow  # 30 runs of each EA
def test_evolved_maps_match_deap_in_distribution() -> None:
    script("dwp_deap", "scipy")
    peers = script("dwp_deap", "deap")
    result = peers.compare(runs=8, events=60, population=10, mnm=2, states=6, alpha=0.05, out=lambda line: None)
    assert len(result["epcg"]) == len(result["deap"]) == 8
    assert all(x > 0 for x in result["epcg"] + result["deap"])
    assert result["same"], result["pvalue"]
