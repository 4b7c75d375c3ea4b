"""Every batch kind answers everything the engine, the driver, ``cancel`` and ``status`` ask of it, and a
finishing allocation's results list the very end it records."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from epcg.runtime import batch
from epcg.runtime.driver import Driver
from epcg.runtime.engine import prepare_resume
from epcg.runtime.history import History, load
from epcg.runtime.schemas import Batch, Malformed, check, typed
from epcg.runtime.store import RunDir

from .conftest import epcg

DATA = {
    "slurm": {"kind": "slurm", "script": "batch.sh", "walltime_seconds": 600, "signal_lead": 60, "max_requeues": 3,
              "cluster": {"kind": "slurm", "cores": 2, "memory": "4GiB"}},
    "pbs": {"kind": "pbs", "script": "batch.pbs", "walltime_seconds": 600, "signal_lead": 60, "max_requeues": 3,
            "cluster": {"kind": "pbs", "cores": 2, "memory": "4GiB"}},
    "detached": {"kind": "detached", "connect": {}},
}
"""batch.json of each kind, as JSON."""
INFO = {name: typed(data, Batch) for name, data in DATA.items()}
"""The same, as the records the kinds read."""


def test_batch_json_names_only_a_kind_that_exists() -> None:
    assert set(INFO) == set(batch.KINDS)
    for name, info in INFO.items():
        assert batch.kind_of(info) is batch.KINDS[name]
        assert typed(json.loads(info.model_dump_json()), Batch) == info  # written and read back, the same record
    with pytest.raises(Malformed, match="kind"):
        check({"kind": "lsf"}, Batch, "batch.json")
    with pytest.raises(Malformed, match="script"):
        check({k: v for k, v in DATA["slurm"].items() if k != "script"}, Batch, "batch.json")


@pytest.mark.parametrize("name", sorted(INFO))
def test_each_kind_answers_the_driver_and_status(name: str, tmp_path: Path) -> None:
    kind, info = batch.kind_of(INFO[name]), INFO[name]
    run = RunDir(tmp_path)
    end, drain_at = kind.limits(info, None, 1000.0)
    assert (end, drain_at) == ((1600.0, 1540.0) if name != "detached" else (None, None))
    assert kind.grace(info) == (50 if name != "detached" else batch.DETACHED_GRACE)
    assert kind.max_requeues(info) == (3 if name != "detached" else None)
    assert kind.states([]) == {}
    assert kind.head(run, info, 1).startswith(f"submitted: {name}")
    assert ("--detach" if name == "detached" else "--cluster FILE") in batch.continue_command(run, info)
    if name == "detached":  # nothing to continue, cancel or submit: it has no batch jobs
        assert kind.continuation(run, info, None, 1, print) is None
        assert kind.script(None, info, tmp_path, "job") is None
        assert kind.allocation_id() is None


@pytest.fixture(scope="module")
def detached_run(tmp_path_factory) -> Path:
    """A small run as `submit --detach` leaves it before its driver computed the last chunks."""
    folder = tmp_path_factory.mktemp("kinds")
    job = folder / "small.toml"
    job.write_text('name = "small"\ndomain = "witness"\nkind = "must-cross"\nrows = ["2x2:2", "3x3:3"]\n'
                   "chunk_size = 700\nfigures_per_row = 1\n")
    run = folder / "run"
    assert epcg("run", str(job), "--out", str(run), "--serial").returncode == 0
    shutil.rmtree(run / "manifest" / next(p.name for p in (run / "manifest").iterdir() if p.is_dir()))
    (run / "results.json").unlink()
    (run / "batch.json").write_text(json.dumps(DATA["detached"]))
    (run / "allocations.json").write_bytes(History().to_json())
    return run


def test_the_results_list_the_end_the_allocation_records(detached_run: Path) -> None:
    planned = prepare_resume(detached_run)
    listed: list = []

    def run_chunks(_scheduler_file) -> None:
        time.sleep(0.01)
        listed.append(driver.ending(planned.run, planned.run.records.done(planned.plan.tasks())))

    driver = Driver(planned.run, planned.plan.tasks(), INFO["detached"], run_chunks, say=lambda line: None)
    assert driver.drive() == 0
    recorded = load(planned.run).allocations
    assert len(listed[0]) == len(recorded) == 1
    assert listed[0][0]["ended_at"] == recorded[0]["ended_at"] and recorded[0]["why"] == "finished"
    assert listed[0][0]["why"] == "finished"
