"""examples/peg-solitaire, a plugin package, run as a user runs it: `epcg run` on the embedded
cluster and through a scheduler address, with the package on PYTHONPATH; its layers equal the
driver's in-process answer (which the example's own tests check against a recursive solver)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, epcg, load_results
from .test_real_cluster import Cluster

EXAMPLE = ROOT / "examples" / "peg-solitaire"
JOB = EXAMPLE / "jobs" / "triangle5.toml"


@pytest.fixture
def on_path(monkeypatch: pytest.MonkeyPatch):
    """The example importable here and in every subprocess (CLI, scheduler, workers)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(EXAMPLE), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.syspath_prepend(str(EXAMPLE))
    sys.modules.pop("peg_solitaire", None)


def expected_rows() -> list[dict]:
    from epcg.search.retrograde import solve_layers
    from peg_solitaire import TRIANGLE5

    return solve_layers(TRIANGLE5).rows


def layers(run: Path) -> list[dict]:
    return load_results(run)["rows"]


def test_serial(on_path, tmp_path: Path) -> None:
    out = tmp_path / "serial"
    result = epcg("run", str(JOB), "--out", str(out), "--serial")
    assert result.returncode == 0, result.stderr
    assert layers(out) == expected_rows()


@pytest.mark.slow
def test_embedded_cluster(on_path, tmp_path: Path) -> None:
    expected = expected_rows()
    assert expected[-1]["solvable"] == 15 and expected[0]["solvable"] == 15
    local = tmp_path / "local"
    result = epcg("run", str(JOB), "--out", str(local), "--workers", "2")
    assert result.returncode == 0, result.stderr
    assert layers(local) == expected
    assert "| 14 | 15 | 15 |" in (local / "summary.md").read_text()


@pytest.mark.slow
def test_scheduler_address(on_path, tmp_path: Path) -> None:
    expected = expected_rows()
    cluster = Cluster(tmp_path)
    try:
        cluster.wait_for_workers(2)
        remote = tmp_path / "remote"
        result = epcg("run", str(JOB), "--out", str(remote), "--scheduler", cluster.address,
                      "--set", "chunk_words=7")
        assert result.returncode == 0, result.stderr
        assert layers(remote) == expected
    finally:
        cluster.close()


@pytest.mark.parametrize("space, message", [
    ("peg_solitaire:NOPE", "has no attribute 'NOPE'"),
    ("peg_solitair:TRIANGLE5", "cannot import 'peg_solitair'"),
    ("peg_solitaire:peg_space", "not an epcg space"),
])
def test_bad_space(on_path, tmp_path: Path, space: str, message: str) -> None:
    out = tmp_path / "bad"
    result = epcg("run", str(JOB), "--out", str(out), "--set", f'space="{space}"')
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert not out.exists()


def test_summary_lists_every_layer_and_says_none(on_path, tmp_path: Path) -> None:
    """A line of 11 holes: summary.md gives the first solvable positions of every layer, the solver's own, and
    the full layer with none says so instead of a header over nothing."""
    import numpy as np

    from epcg.search.retrograde import solve_layers
    from peg_solitaire import LINE11

    out = tmp_path / "line"
    result = epcg("run", str(EXAMPLE / "jobs" / "line11.toml"), "--out", str(out), "--serial")
    assert result.returncode == 0, result.stderr
    summary = (out / "summary.md").read_text()
    solved = solve_layers(LINE11, keep=True)
    assert solved.rows[-1]["solvable"] == 0
    assert "Layer 10: none of its 11 states is solvable." in summary
    blocks = summary.split("\nLayer ")[1:]
    assert [int(b.split(maxsplit=1)[0].rstrip(":,")) for b in blocks] == list(range(10, 0, -1))
    for block, row in zip(blocks[1:], reversed(solved.rows[:-1])):
        k = row["layer"]
        ranks = np.flatnonzero(np.unpackbits(solved.words[k][0].view(np.uint8), bitorder="little"))[:5]
        listed = [line for line in block.splitlines() if line.startswith("- rank ")]
        assert listed == [f"- rank {r}: `{LINE11.describe(k, int(r))}`" for r in ranks], block
        assert f"the first 5 of its {row['solvable']} solvable states" in block.splitlines()[0]
    from epcg.kinds.runs import RetrogradeRun

    from .test_columns_documented import headers

    assert headers(summary) == {"layer", "states", "solvable", "checksum", "tasks", "seconds"}
    assert all(f"`{c}`" in RetrogradeRun.NOTATION for c in headers(summary))


def _recursive_solvable(holes: int) -> dict[str, bool]:
    """Every position of a line of ``holes`` holes (as ``describe`` writes it, ``o`` a peg) and whether it can be
    played down to one peg, by trying every jump recursively."""
    import itertools
    from functools import cache

    @cache
    def solvable(pegs: str) -> bool:
        if pegs.count("o") == 1:
            return True
        for i in range(holes):
            for d in (1, -1):
                j, k = i + d, i + 2 * d
                if 0 <= k < holes and pegs[i] == pegs[j] == "o" and pegs[k] == ".":
                    after = list(pegs)
                    after[i], after[j], after[k] = ".", ".", "o"
                    if solvable("".join(after)):
                        return True
        return False

    return {"".join("o" if c in on else "." for c in range(holes)): solvable(
        "".join("o" if c in on else "." for c in range(holes)))
        for n in range(1, holes) for on in itertools.combinations(range(holes), n)}


@pytest.fixture(scope="module")
def line_run(tmp_path_factory):
    """examples/peg-solitaire's line of 11 holes, run once for the module (the example on the path while it lasts)."""
    import epcg

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", os.pathsep.join([str(EXAMPLE), os.environ.get("PYTHONPATH", "")]))
        mp.syspath_prepend(str(EXAMPLE))
        sys.modules.pop("peg_solitaire", None)
        out = tmp_path_factory.mktemp("line") / "line"
        epcg.run(EXAMPLE / "jobs" / "line11.toml", out, progress=False, serial=True, report=False)
        yield out


def test_probe_of_every_state_of_the_line_agrees_with_the_recursive_solver(line_run: Path) -> None:
    """A user's retrograde space probes by the state as describe writes it (the space's encode) and by 'LAYER
    RANK': every state of every layer, its solvable bit read from the run as a recursive solver has it."""
    import epcg

    run = epcg.open(line_run, trust_space=True)
    expected = _recursive_solvable(11)
    for i, (text, solvable) in enumerate(expected.items()):
        facts = run.probe(text).to_dict()
        assert facts["solvable"] is solvable and facts["kept"] and facts["text"] == text, (text, facts)
        if i % 16 == 0:
            assert run.probe(f"{facts['layer']} {facts['rank']}").to_dict() == facts
    assert len(expected) == 2 ** 11 - 2 and any(expected.values()) and not all(expected.values())
    assert "solvable: yes" in str(run.probe("oo.........")) and "solvable: no" in str(run.probe("o.o........"))


@pytest.mark.parametrize("state, says", [
    ("", "the state is empty"),
    ("0 0", "layer 0 is not a layer of peg solitaire, a line of 11 holes: its layers run 1 to 10"),
    ("11 0", "layer 11 is not a layer"),
    ("ooooooooooo", "layer 11 is not a layer"),
    ("3 165", "rank 165 is past layer 3: its ranks run 0 to 164"),
    ("3 -1", "cannot read '3 -1'"),
    ("oo.x.......", "cannot read 'oo.x.......': a position is 11 holes written o (a peg) or . (empty)"),
    ("oo.o", "cannot read 'oo.o'"),
    ("...........", "a position has at least one peg"),
    ("5", "cannot read '5'"),
])
def test_a_malformed_state_is_one_line_and_exit_2(line_run: Path, state: str, says: str) -> None:
    from click.testing import CliRunner

    from epcg.cli import main

    done = CliRunner().invoke(main, ["probe", str(line_run), "--trust-space", "--", state])
    assert done.exit_code == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr
