"""Job files: overrides, validation, one clear message per mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from epcg.runtime.errors import UserError
from epcg.runtime.jobs import load_job, parse_override
from epcg.runtime.plan import Plan, Stage, split_range

from .conftest import JOBS


@pytest.mark.parametrize("name", sorted(p.name for p in JOBS.glob("*.toml")))
def test_shipped_jobs_validate(name: str) -> None:
    job = load_job(JOBS / name)
    assert job.name == name.removesuffix(".toml")


def test_override_replaces_rows() -> None:
    job = load_job(JOBS / "witness-must-cross.toml", ['rows=["4x4:7"]', "chunk_size=5"])
    assert job.config.rows == ["4x4:7"] and job.config.chunk_size == 5


def test_digest_follows_content() -> None:
    a = load_job(JOBS / "witness-must-cross.toml")
    b = load_job(JOBS / "witness-must-cross.toml", ["chunk_size=5"])
    assert a.digest == load_job(JOBS / "witness-must-cross.toml").digest != b.digest


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["colour=1"], "unknown key 'colour'"),
        (["chunk_size='big'"], "chunk_size"),
        (['rows=["4x4:66"]'], "k=66 must be 1..65"),
        (['rows=["9x9:3"]'], "up to 5x5"),
        (['rows=["4x4"]'], "WxH:K"),
        (["rows=[]"], "rows"),
        (['domain="chess"'], "'domain' must be one of"),
        (["chunk_size=0"], "chunk_size"),
    ],
)
def test_bad_values_name_the_problem(overrides: list[str], message: str) -> None:
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace("[", r"\[")):
        load_job(JOBS / "witness-must-cross.toml", overrides)


@pytest.mark.parametrize("text", ["rows", "=3", "x=", "x=foo bar", "a..b=1"])
def test_malformed_override(text: str) -> None:
    with pytest.raises(UserError, match="malformed --set"):
        parse_override(text)


def test_missing_and_broken_files(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        load_job(tmp_path / "nope.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("name = \n")
    with pytest.raises(UserError, match="not valid TOML"):
        load_job(broken)


def test_split_range_covers_exactly() -> None:
    for total, chunk, align in [(0, 5, 1), (1, 5, 1), (100, 7, 1), (1000, 100, 64), (64, 1, 64)]:
        tasks = split_range("s", total, chunk, align)
        assert tasks[0].start == 0 and tasks[-1].stop == total
        assert all(a.stop == b.start for a, b in zip(tasks, tasks[1:]))
        assert all(t.start % align == 0 for t in tasks)


def test_plan_rejects_bad_order() -> None:
    with pytest.raises(ValueError, match="unknown or later"):
        Plan((Stage("b", (), after=("a",)), Stage("a", ())))
