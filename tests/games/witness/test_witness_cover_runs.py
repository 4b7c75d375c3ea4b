"""The unique-cover Witness job through the CLI: same panels for any split and worker count; bad boards refused."""

from __future__ import annotations

import json
from pathlib import Path

import pydantic
import pytest

from epcg.games.witness import unique_cover as witness_cover
from epcg.games.witness.unique_cover import Config, plan
from epcg.runtime.errors import UserError
from epcg.runtime.jobs import validate
from epcg.runtime.registry import job_kind

from tests.conftest import JOBS, epcg

SEARCH_FIELDS = ("nodes", "checked", "paths_discarded_by_bound")
"""Depend on when tasks see each other's improvements; the answer does not."""


def answer(run: Path) -> list[dict]:
    boards = json.loads((run / "results.json").read_text())["boards"]
    return [{k: v for k, v in b.items() if k not in SEARCH_FIELDS and "second" not in k} for b in boards]


def test_plan_covers_every_path_once() -> None:
    config = Config(name="t", domain="witness", kind="unique-cover", boards=["3x3", "4x3"], tasks=7)
    p = plan(config)
    for stage, n in zip(p.stages, (184, 976)):
        assert stage.size == n
        bounds = [(t.start, t.stop) for t in stage.tasks]
        assert bounds[0][0] == 0 and bounds[-1][1] == n
        assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))


def test_witness_kind_dispatches_unique_cover() -> None:
    job = validate({"name": "t", "domain": "witness", "kind": "unique-cover", "boards": ["3x3"], "tasks": 2})
    assert isinstance(job.config, witness_cover.Config)
    witness = job_kind("witness")
    assert [t.stop for t in witness.plan(job.config).tasks()][-1] == 184
    assert witness.estimate(job.config) is None  # the variant estimates nothing: the base's default


def test_the_old_domain_name_is_one_line() -> None:
    with pytest.raises(UserError) as info:
        validate({"name": "t", "domain": "witness-cover", "boards": ["3x3"]})
    assert "'witness'" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("boards", [["3x"], ["6x6"], ["3x3", "3x3"], []])
def test_bad_boards_fail_validation(boards: list[str]) -> None:
    with pytest.raises(pydantic.ValidationError):
        Config(name="t", domain="witness", kind="unique-cover", boards=boards)


def test_bad_board_is_a_user_error(tmp_path: Path) -> None:
    result = epcg("run", str(JOBS / "witness-unique-cover.toml"), "--set", 'boards=["6x6"]',
                  "--out", str(tmp_path / "run"), "--serial")
    assert result.returncode == 2 and result.stderr.startswith("epcg: error:")
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_same_answer_any_split_or_workers(tmp_path: Path) -> None:
    job = str(JOBS / "witness-unique-cover.toml")
    boards = '["3x3", "4x3", "4x4"]'
    serial = tmp_path / "serial"
    assert epcg("run", job, "--set", f"boards={boards}", "--set", "tasks=3", "--out", str(serial),
                "--serial").returncode == 0
    expected = answer(serial)
    assert [(b["k"], b["panels"]) for b in expected] == [(4, 166), (5, 486), (6, 738)]
    two = tmp_path / "two"
    result = epcg("run", job, "--set", f"boards={boards}", "--set", "tasks=9", "--set", "batch=100",
                  "--out", str(two), "--workers", "2")
    assert result.returncode == 0, result.stderr
    assert answer(two) == expected
    assert (serial / "figures" / "unique-cover-4x4.png").is_file()
