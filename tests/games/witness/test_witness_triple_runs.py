"""Triple panels as a job: the same optimum in process, on 1 and 2 workers; the incumbent shared
between real worker processes; bad input."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import JOBS, epcg, load_results

TRIPLE = str(JOBS / "witness-triple.toml")


def optimum(run_dir: Path) -> list[tuple]:
    return [(r["variant"], r["score"], r["optimal_triples"], r["optimal_arrangements"],
             [t["classes"] for t in r["triples"]]) for r in load_results(run_dir)["rows"]]


@pytest.mark.slow
def test_same_optimum_in_process_and_on_workers(tmp_path: Path) -> None:
    runs = {}
    for name, args in [("serial", ["--serial"]), ("one", ["--workers", "1"]),
                       ("two", ["--workers", "2", "--set", "tasks=7"])]:
        out = tmp_path / name
        result = epcg("run", TRIPLE, "--out", str(out), *args)
        assert result.returncode == 0, result.stderr
        runs[name] = optimum(out)
    assert runs["serial"] == runs["one"] == runs["two"]
    plain, separate = runs["serial"]
    assert plain[:2] == ("plain", 7) and separate[:2] == ("separate", 2)
    rows = load_results(tmp_path / "serial")["rows"]
    assert rows[0]["solvable"] == 113_296 and rows[0]["panels"] == 1_161_216
    figures = {p.name for p in (tmp_path / "serial" / "figures").iterdir()}
    assert {"triple-plain.png", "subpanels-separate.svg"} <= figures


def _offer(name: str, score: int) -> tuple[int, int]:
    from epcg.runtime.incumbent import shared_incumbent

    return os.getpid(), shared_incumbent(name).offer(score)


def _read(name: str) -> tuple[int, int]:
    from epcg.runtime.incumbent import shared_incumbent

    return os.getpid(), shared_incumbent(name).get()


def test_incumbent_shared_across_worker_processes() -> None:
    from epcg.runtime.cluster import LocalSpec, connect

    with connect(LocalSpec(workers=2, dashboard_address=None)) as client:
        a, b = sorted(client.scheduler_info()["workers"])
        pid_a, after = client.submit(_offer, "t", 5, workers=[a], pure=False).result()
        pid_b, seen = client.submit(_read, "t", workers=[b], pure=False).result()
        assert pid_a != pid_b and after == 5 and seen == 5
        offers = [client.submit(_offer, "t", s, workers=[(a, b)[s % 2]], pure=False) for s in range(40)]
        client.gather(offers)
        assert client.submit(_read, "t", workers=[a], pure=False).result()[1] == 39
        assert client.submit(_offer, "t", 3, workers=[b], pure=False).result()[1] == 39  # never lowered


@pytest.mark.parametrize(
    "override, message",
    [
        ('library=["#", "#x"]', "x"),
        ("library=[]", "library"),
        ("pieces=10", "pieces per panel must be 1..9"),
        ('variants=["plain", "plain"]', "variants repeat"),
    ],
)
def test_bad_input(tmp_path: Path, override: str, message: str) -> None:
    out = tmp_path / "bad"
    result = epcg("run", TRIPLE, "--out", str(out), "--set", override)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert not out.exists()
