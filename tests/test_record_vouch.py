"""A record vouches for what made it: each chunk's record carries a digest of its chunk and of the job keys its
output may depend on (records.vouch), and resume, verify and every reader refuse a record made under other
parameters, whatever was edited, repaired or deleted."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import epcg
from epcg.runtime.engine import Engine, target
from epcg.runtime.records import OUTPUT_FREE_KEYS, seal, unseal
from epcg.runtime.store import RunDir

from .conftest import without_timings

FLING = {"name": "small", "domain": "fling", "width": 4, "height": 4, "max_pieces": 4,
         "exact_counts_up_to": 10, "count_sample": 40, "top_puzzles": 3}
PATHS = {"name": "paths", "domain": "witness", "kind": "paths", "rows": ["2x2", "3x3"]}


def run(job: dict[str, Any], out: Path) -> Path:
    epcg.run(job, out, serial=True, progress=False, report=False)
    return out


def records(out: Path) -> dict[str, dict[str, Any]]:
    """Every chunk's record by task id (the reduction's left out)."""
    found = {}
    for path in (out / "manifest").rglob("*.json"):
        record = unseal(path.read_text())
        if record is not None and record.get("task") not in (None, "reduce"):
            found[record["task"]] = record
    return found


def outputs(out: Path) -> dict[str, Any]:
    """What each chunk computed: its result and the digests of the arrays it wrote."""
    return {task: (r["result"], {name: span[2] for name, span in r["data"].items()})
            for task, r in records(out).items()}


def edit_job(out: Path, key: str, value: Any) -> None:
    """Change one key of the run's job.toml, as a user (or anybody) can."""
    import tomli_w
    import tomllib

    data = tomllib.loads((out / "job.toml").read_text())
    data[key] = value
    (out / "job.toml").write_text(tomli_w.dumps(data))


def test_a_chunk_made_under_another_seed_never_counts_after_a_repair(tmp_path: Path) -> None:
    """The finding: seed changed in job.toml, job.sha256 deleted, verify --repair, resume: the sample must be
    the new seed's, as a fresh run of it gives."""
    fresh = without_timings(json.loads((run({**FLING, "seed": 7}, tmp_path / "seven") / "results.json").read_text()))
    out = run(FLING, tmp_path / "run")
    assert without_timings(json.loads((out / "results.json").read_text()))["solution_counts"] != \
        fresh["solution_counts"], "the seed must change the sample for this test to mean anything"
    edit_job(out, "seed", 7)
    (out / "manifest" / "job.sha256").unlink()
    said: list[str] = []
    bad = Engine(say=said.append).verify(out, target(serial=True), everything=False, repair=True)
    stale = [line for line in said if "made under other job parameters" in line]
    assert bad and stale and "all intact" not in " ".join(said), said
    run({**FLING, "seed": 7}, out)
    assert without_timings(json.loads((out / "results.json").read_text())) == fresh


def test_a_changed_sample_size_is_not_accepted_even_with_a_matching_digest(tmp_path: Path) -> None:
    """count_sample changed and job.sha256 rewritten to match: resume recomputes, the answer is the new job's."""
    fresh = without_timings(json.loads((run({**FLING, "count_sample": 20}, tmp_path / "new") / "results.json")
                                       .read_text()))
    out = run(FLING, tmp_path / "run")
    edit_job(out, "count_sample", 20)
    (out / "manifest" / "job.sha256").write_text(hashlib.sha256((out / "job.toml").read_bytes()).hexdigest() + "\n")
    from epcg.runtime.tuning import plan_of_run

    opened = RunDir(out)
    plan = plan_of_run(opened, opened.read_job())
    assert len(opened.records.done(plan.tasks())) < plan.num_tasks
    run({**FLING, "count_sample": 20}, out)
    assert without_timings(json.loads((out / "results.json").read_text())) == fresh


QUICK = {"name", "description", "seed", "rows"}
"""The keys tried in the default run (every key listed with -m slow)."""
CHANGES = [pytest.param(job, key, value, id=f"{job['domain']}-{key}",
                        marks=() if key in QUICK else pytest.mark.slow)
           for job, changes in ((FLING, {"name": "other", "description": "a note", "seed": 3, "count_sample": 25,
                                         "top_puzzles": 2, "symmetry": False, "chunk_words": 1}),
                                (PATHS, {"name": "other", "description": "a note", "rows": ["2x2"]}))
           for key, value in changes.items()]


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict, dict]]:
    """Each kind's small job run once: its chunks' outputs and vouches, by job name."""
    found = {}
    for job in (FLING, PATHS):
        out = run(job, tmp_path_factory.mktemp(job["name"]) / "run")
        found[job["name"]] = outputs(out), {t: r["vouch"] for t, r in records(out).items()}
    return found


@pytest.mark.parametrize(("job", "key", "value"), CHANGES)
def test_which_keys_a_chunk_depends_on(bases, tmp_path: Path, job: dict[str, Any], key: str, value: Any) -> None:
    """Each key changed alone: a chunk whose output changes must get another vouch; the keys the vouch leaves
    out (OUTPUT_FREE_KEYS) must change no chunk's output."""
    base, vouches = bases[job["name"]]
    out = run({**job, key: value}, tmp_path / "run")
    changed, theirs = outputs(out), {t: r["vouch"] for t, r in records(out).items()}
    common = sorted(set(base) & set(changed))
    assert common
    for task in common:
        if base[task] != changed[task]:
            assert vouches[task] != theirs[task], f"chunk {task} changed but vouches the same"
    if key in OUTPUT_FREE_KEYS:
        assert all(base[t] == changed[t] and vouches[t] == theirs[t] for t in common)
    else:
        assert all(vouches[t] != theirs[t] for t in common)


def test_records_of_an_earlier_epcg_count_until_a_repair(tmp_path: Path) -> None:
    """Records written before they vouched (no ``vouch``): job.sha256 vouches for job.toml, so they count; a
    repair that rebuilds job.sha256 cannot tell which job made them, so it forgets them."""
    out = run(FLING, tmp_path / "run")
    for path in (out / "manifest").rglob("*.json"):
        record = unseal(path.read_text())
        if record is not None and "vouch" in record:
            del record["vouch"]
            path.write_text(seal(record))
    opened = RunDir(out)
    from epcg.runtime.tuning import plan_of_run

    plan = plan_of_run(opened, opened.read_job())
    assert len(opened.records.done(plan.tasks())) == plan.num_tasks
    (out / "manifest" / "job.sha256").unlink()
    said: list[str] = []
    Engine(say=said.append).verify(out, target(serial=True), everything=True, repair=True)
    assert any(f"{plan.num_tasks} chunks recorded by an earlier epcg" in line for line in said), said
    assert len(RunDir(out).records.done(plan.tasks())) == 0
