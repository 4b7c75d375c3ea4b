"""`epcg plan` against measured runs: tasks exactly, bytes written and peak memory per worker within 25 %."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from epcg.runtime.estimate import WORKER_BASE, figures
from epcg.runtime.jobs import load_job
from epcg.runtime.registry import job_kind
from epcg.runtime.engine import Engine

from .conftest import epcg


def measured(run: Path) -> dict[str, dict]:
    """Per stage: tasks, bytes written and the largest resident memory any task ended with."""
    out: dict[str, dict] = {}
    for path in (run / "manifest").rglob("*.json"):
        if path.name in ("verified.json", "plan.json"):  # the run's own files, not a chunk's record
            continue
        record = json.loads(path.read_text())["record"]
        stage = out.setdefault(record["task"].rsplit("/", 1)[0], {"tasks": 0, "bytes": 0, "rss": 0})
        stage["tasks"] += 1
        stage["bytes"] += record["bytes"]
        stage["rss"] = max(stage["rss"], record["max_rss"])
    return out


@pytest.mark.parametrize("job_text, workers", [
    ('name = "f"\ndomain = "fling"\nwidth = 6\nheight = 6\nmax_pieces = 6\nchunk_words = 1024\ntop_puzzles = 0\n', 1),
    pytest.param('name = "f"\ndomain = "fling"\nwidth = 7\nheight = 8\nmax_pieces = 7\nchunk_words = 4194304\n'
                 'top_puzzles = 0\n', 1, marks=pytest.mark.slow),  # layer 7: 110 MB of data beyond the base
])
def test_plan_matches_a_measured_run(tmp_path: Path, job_text: str, workers: int) -> None:
    """Holds with numba's cache warm or cold (a fresh clone): a worker's base peaks at 225 or 266-272 MiB here,
    both within 25 % of ``WORKER_BASE``; each stage's data beyond the base is compared with the base measured in
    the same run (the first layer's task holds none), so a warm cache does not hide a wrong estimate of data."""
    job_file = tmp_path / "job.toml"
    job_file.write_text(job_text)
    out = tmp_path / "run"
    result = epcg("run", str(job_file), "--out", str(out), "--workers", str(workers))
    assert result.returncode == 0, result.stderr
    tuned = Engine().plan(load_job(job_file), tmp_path / "planned")
    job, plan = tuned.job, tuned.plan
    seen = measured(out)
    base = seen["k01"]["rss"]
    assert abs(base - WORKER_BASE) <= 0.25 * WORKER_BASE, base
    for fig in figures(job_kind(job.domain), job.config, plan, workers):
        got = seen[fig.name]
        assert got["tasks"] == fig.tasks
        assert abs(got["bytes"] - fig.bytes_written) <= 0.25 * max(fig.bytes_written, 1), (fig, got)
        data, planned = got["rss"] - base, fig.peak_memory - WORKER_BASE
        assert abs(data - planned) <= 0.25 * fig.peak_memory, (fig, got, base)
    printed = epcg("plan", str(job_file), "--workers", str(workers))
    assert printed.returncode == 0 and f"{plan.num_tasks:,}" in printed.stdout and "run would accept" in printed.stdout


def test_plan_for_threaded_workers_divides_compute_not_memory(tmp_path: Path) -> None:
    job_file = tmp_path / "job.toml"
    job_file.write_text('name = "f"\ndomain = "fling"\nwidth = 7\nheight = 8\nmax_pieces = 12\ntop_puzzles = 0\n')
    one, many = (epcg("plan", str(job_file), "--workers", "4", "--threads-per-worker", str(t),
                      "--memory-limit", "64GiB", "--out", str(tmp_path / "run")) for t in (1, 16))
    assert one.returncode == 0 and many.returncode == 0, one.stderr + many.stderr
    assert "4 workers x 16 threads" in many.stdout and "4 workers," in one.stdout
    total = lambda out: next(line for line in out.splitlines() if line.startswith("total")).split()  # noqa: E731
    # total, tasks, overhead %, bytes, disk, peak memory per worker process, wall time: each calibrates the
    # compute anew, so the overhead share may differ; tasks, bytes, disk and memory may not, and the wall time must
    kept = lambda fields: [fields[1], *fields[4:10]]  # noqa: E731
    assert kept(total(one.stdout)) == kept(total(many.stdout))
    assert total(one.stdout)[-2:] != total(many.stdout)[-2:]
    assert not (tmp_path / "run").exists()


def test_a_fling_job_gets_a_spare_thread_that_the_estimate_does_not_count_as_a_core(tmp_path: Path) -> None:
    from epcg.runtime.cluster import SPARE_THREADS, computing, default_shape, default_workers

    cores = default_workers()
    assert default_shape(job_kind("witness")) == (cores, 1)
    workers, threads = default_shape(job_kind("fling"))
    assert (workers, threads) == (1, cores + SPARE_THREADS)
    assert computing(workers, threads) == cores and computing(4, 16) == cores
    printed = epcg("plan", str(Path(__file__).parents[1] / "jobs" / "fling.toml"), "--out", str(tmp_path / "run"))
    assert printed.returncode == 0, printed.stderr
    assert f"checked against: 1 workers x {cores + SPARE_THREADS} threads" in printed.stdout


def test_a_workers_setup_adds_to_the_wall_time_whole() -> None:
    from types import SimpleNamespace

    from epcg.runtime.estimate import TASK_OVERHEAD, StageCost
    from epcg.runtime.plan import Plan, Stage, Task

    plan = Plan((Stage("s", tuple(Task("s", i, i, i + 1) for i in range(4))),))
    kind = SimpleNamespace(estimate=lambda config: {"s": StageCost(cpu_seconds=8.0, setup_seconds=3.0)})
    wall = figures(kind, None, plan, workers=2)[0].wall_seconds
    assert wall == pytest.approx((8.0 + 4 * TASK_OVERHEAD) / 2 + 3.0)
    assert figures(kind, None, plan, workers=2, done={t.id for t in plan.tasks()})[0].wall_seconds == 0


def test_plan_raises_partitions_until_the_workers_memory_holds_every_stage(tmp_path: Path) -> None:
    """7×8 to 10 pieces needs about 1.5 GiB per worker in one part (fill 9: layer 9's solvable bits, its unique
    index and the index of the unique boards it writes); under a 700 MiB limit the plan takes more parts."""
    job_file = tmp_path / "job.toml"
    job_file.write_text('name = "f"\ndomain = "fling"\nwidth = 7\nheight = 8\nmax_pieces = 10\ntop_puzzles = 0\n')
    roomy, tight = (epcg("plan", str(job_file), "--workers", "2", "--memory-limit", limit, "--out", str(tmp_path / "r"))
                    for limit in ("16GiB", "700MiB"))
    assert roomy.returncode == 0 and tight.returncode == 0, roomy.stderr + tight.stderr
    assert "using partitions" not in roomy.stdout and "run would accept" in roomy.stdout
    note = next(line for line in tight.stdout.splitlines() if line.startswith("note:") and "using partitions" in line)
    assert "need about 1.5 GiB per worker process" in note and "using partitions=8" in note, note
    assert "run would accept" in tight.stdout
    value, unit = next(line for line in tight.stdout.splitlines() if line.startswith("total")).split()[-4:-2]
    assert unit == "MiB" and float(value) < 1024, (value, unit)
    hopeless = epcg("plan", str(job_file), "--workers", "2", "--memory-limit", "100MiB")
    assert "using partitions" not in hopeless.stdout and "run would refuse" in hopeless.stdout
    forced = epcg("plan", str(job_file), "--workers", "2", "--memory-limit", "700MiB", "--set", "partitions=2")
    assert "using partitions" not in forced.stdout and "run would refuse" in forced.stdout  # the job's own choice is kept


def test_a_stage_must_fit_below_the_point_where_dask_pauses_a_worker(tmp_path: Path, monkeypatch) -> None:
    """A limit at which the worst stage needs 90 % of the memory: Dask would pause the worker at 80 % and never
    start it again, so the plan splits (run refuses a job that cannot); with pausing turned off it fits whole."""
    job_file = tmp_path / "job.toml"
    job_file.write_text('name = "f"\ndomain = "fling"\nwidth = 7\nheight = 8\nmax_pieces = 9\ntop_puzzles = 0\n')
    whole = epcg("plan", str(job_file), "--workers", "2", "--memory-limit", "64GiB", "--set", "partitions=1")
    value, unit = next(line for line in whole.stdout.splitlines() if line.startswith("total")).split()[-4:-2]
    assert unit == "MiB", whole.stdout
    limit = f"{float(value) / 0.9:.0f}MiB"
    paused = epcg("plan", str(job_file), "--workers", "2", "--memory-limit", limit)
    assert "before Dask pauses it" in paused.stdout and "using partitions=2" in paused.stdout, paused.stdout
    refused = epcg("run", str(job_file), "--set", "partitions=1", "--out", str(tmp_path / "r"),
                   "--cluster", str(_local_cluster(tmp_path, limit)))
    assert refused.returncode == 2 and "at which Dask pauses a worker" in refused.stderr, refused.stderr
    assert not (tmp_path / "r").exists()
    monkeypatch.setenv("DASK_DISTRIBUTED__WORKER__MEMORY__PAUSE", "False")
    monkeypatch.setenv("DASK_DISTRIBUTED__WORKER__MEMORY__TERMINATE", "False")
    unpaused = epcg("plan", str(job_file), "--workers", "2", "--memory-limit", limit)
    assert "using partitions" not in unpaused.stdout and "run would accept" in unpaused.stdout, unpaused.stdout


def _local_cluster(tmp_path: Path, memory_limit: str) -> Path:
    path = tmp_path / "local.toml"
    path.write_text(f'kind = "local"\nworkers = 1\nmemory_limit = "{memory_limit}"\n')
    return path


def test_fit_memory_keeps_a_job_that_fits_or_cannot_split(tmp_path: Path) -> None:
    from epcg.runtime.tuning import fit_memory

    job_file = tmp_path / "job.toml"
    job_file.write_text('name = "f"\ndomain = "fling"\nwidth = 7\nheight = 8\nmax_pieces = 9\ntop_puzzles = 0\n')
    planned = Engine().plan(load_job(job_file), tmp_path / "f")
    assert fit_memory(planned, 64 << 30, 2) is planned
    assert fit_memory(planned, None, 2) is planned
    split = fit_memory(planned, 500 << 20, 2)  # 400 MiB before Dask pauses a worker
    assert split.job.config.partitions > 1 and split.notes and split.plan.num_tasks == planned.plan.num_tasks
    witness = tmp_path / "w.toml"
    witness.write_text('name = "w"\ndomain = "witness"\nkind = "must-cross"\nrows = ["3x3:3"]\n')
    small = Engine().plan(load_job(witness), tmp_path / "w")
    assert fit_memory(small, 1, 2) is small
