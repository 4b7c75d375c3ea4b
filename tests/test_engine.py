"""One run engine: `epcg run`, `epcg.run()` and the batch driver (`epcg submit --detach`) give the same refusals,
notes, tuned job and results for the same job."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import epcg
from epcg.runtime.errors import UserError

ROOT = Path(__file__).resolve().parents[1]


def epcg_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "epcg.cli", *args], capture_output=True, text=True, timeout=600,
                          cwd=cwd)


def refusal(text: str) -> str:
    lines = [line for line in text.splitlines() if line.startswith("epcg: error: ")]
    assert len(lines) == 1, text
    return lines[0].removeprefix("epcg: error: ")


def wait_for_driver(run: Path, seconds: float = 300) -> str:
    """The detached driver's output once its allocation has ended."""
    log = run / "driver.log"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        text = log.read_text() if log.exists() else ""
        if "allocation ended" in text or "epcg: error" in text:
            return text
        time.sleep(0.5)
    raise AssertionError(f"the detached driver did not end in {seconds} s: {log.read_text()}")


BAD_JOBS = {
    "unknown key": ("jobs/witness-paths.toml", {"colour": "red"}, None),
    "14 pieces (disk)": ("jobs/fling.toml", {"max_pieces": 14}, None),
    "memory": ("jobs/fling.toml", {"max_pieces": 6}, 'kind = "local"\nworkers = 1\nmemory_limit = "64MiB"\n'),
}


@pytest.mark.parametrize("case", [pytest.param(case, marks=[pytest.mark.slow] if case == "14 pieces (disk)" else [])
                                  for case in sorted(BAD_JOBS)])  # 14 pieces: a plan of 1.7 M tasks, 40 s
def test_a_bad_job_is_refused_alike_by_the_cli_the_api_and_the_driver(tmp_path: Path, case: str) -> None:
    job, overrides, cluster = BAD_JOBS[case]
    sets = [arg for key, value in overrides.items() for arg in ("--set", f"{key}={json.dumps(value)}")]
    extra = []
    if cluster:
        (tmp_path / "cluster.toml").write_text(cluster)
        extra = ["--cluster", str(tmp_path / "cluster.toml")]
    began = time.monotonic()
    cli = epcg_cli("run", str(ROOT / job), "--out", str(tmp_path / "cli"), *sets, *extra, cwd=tmp_path)
    cli_seconds = time.monotonic() - began
    assert cli.returncode == 2
    detached = epcg_cli("submit", str(ROOT / job), "--detach", "--out", str(tmp_path / "detached"), *sets, *extra,
                        cwd=tmp_path)
    assert detached.returncode == 2
    began = time.monotonic()
    with pytest.raises(UserError) as api:
        epcg.run(ROOT / job, tmp_path / "api", progress=False, cluster=extra[1] if extra else None, **overrides)
    seconds = time.monotonic() - began
    messages = {refusal(cli.stderr).replace(str(tmp_path / "cli"), "OUT"),
                refusal(detached.stderr).replace(str(tmp_path / "detached"), "OUT"),
                " ".join(str(api.value).split()).replace(str(tmp_path / "api"), "OUT")}
    free = re.compile(r"only [\d.]+ [KMGT]?i?B is free")  # other processes write meanwhile: the figure is live
    assert len({free.sub("only … is free", m) for m in messages}) == 1, messages
    assert seconds < 2 * cli_seconds + 5, f"epcg.run took {seconds:.0f} s to refuse, epcg run {cli_seconds:.0f} s"
    assert sorted(p.name for p in tmp_path.iterdir()) == (["cluster.toml"] if cluster else [])


@pytest.mark.slow  # 50 s; the refusals alike stay in the default run
def test_a_small_job_runs_alike_from_the_cli_the_api_and_the_driver(tmp_path: Path) -> None:
    job = ROOT / "jobs" / "fling.toml"
    sets = {"max_pieces": 5, "width": 6, "height": 6}
    args = [arg for key, value in sets.items() for arg in ("--set", f"{key}={value}")]
    cli = epcg_cli("run", str(job), "--out", str(tmp_path / "cli"), *args, cwd=tmp_path)
    assert cli.returncode == 0, cli.stderr
    submitted = epcg_cli("submit", str(job), "--detach", "--out", str(tmp_path / "detached"), *args, cwd=tmp_path)
    assert submitted.returncode == 0, submitted.stderr
    driver = wait_for_driver(tmp_path / "detached")
    epcg.run(job, tmp_path / "api", progress=False, **sets)
    runs = [tmp_path / name for name in ("cli", "detached", "api")]
    jobs = {(run / "job.toml").read_text() for run in runs}
    assert len(jobs) == 1  # the same tuned job: chunk sizes and partitions
    rows = [[{k: v for k, v in row.items() if "second" not in k}  # timings differ, counts and checksums not
             for row in json.loads((run / "results.json").read_text())["rows"]] for run in runs]
    assert rows[0] == rows[1] == rows[2]
    def said(text: str) -> list[str]:  # the notes and the way the job ran (estimates timed anew: numbers masked)
        return [re.sub(r"[0-9.]+ s\b", "N s", line) for line in text.splitlines()
                if line.startswith(("note:", "a small job"))]

    assert said(cli.stdout) and said(cli.stdout) == said(driver), (cli.stdout, driver)


@pytest.mark.slow  # 16 s; the small-job rule is tested on the plan in tests/test_runtime_plan.py too
def test_plan_says_which_way_a_job_runs(tmp_path: Path) -> None:
    small = epcg_cli("plan", str(ROOT / "jobs" / "witness-paths.toml"), "--set", 'rows=["4x4"]', cwd=tmp_path)
    large = epcg_cli("plan", str(ROOT / "jobs" / "fling.toml"), cwd=tmp_path)
    assert "in this process, without Dask" in small.stdout
    assert "in this process" not in large.stdout
    ran = epcg_cli("run", str(ROOT / "jobs" / "witness-paths.toml"), "--set", 'rows=["4x4"]', "--out",
                   str(tmp_path / "run"), cwd=tmp_path)
    assert ran.returncode == 0 and "running it in this process" in ran.stdout and "Dask dashboard" not in ran.stdout
    named = epcg_cli("run", str(ROOT / "jobs" / "witness-paths.toml"), "--set", 'rows=["4x4"]', "--out",
                     str(tmp_path / "dask"), "--workers", "1", cwd=tmp_path)
    assert named.returncode == 0 and "Dask dashboard" in named.stdout, named.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="the lock of another user is what the engine refuses here")
def test_a_lock_that_is_a_directory_is_one_line(tmp_path: Path) -> None:
    job = tmp_path / "job.toml"
    job.write_text('name = "p"\ndomain = "witness"\nkind = "paths"\nrows = ["2x2"]\n')
    run = tmp_path / "run"
    assert epcg_cli("run", str(job), "--out", str(run), "--serial", cwd=tmp_path).returncode == 0
    (run / ".lock").unlink()
    (run / ".lock").mkdir()
    for command in ("resume", "verify", "report"):
        done = epcg_cli(command, str(run), cwd=tmp_path)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert ".lock" in refusal(done.stderr)


def test_report_keeps_the_timing_of_the_execution_that_finished_the_run(tmp_path: Path) -> None:
    job = tmp_path / "job.toml"
    job.write_text('name = "p"\ndomain = "witness"\nkind = "paths"\nrows = ["2x2"]\n')
    run = tmp_path / "run"
    assert epcg_cli("run", str(job), "--out", str(run), "--serial", cwd=tmp_path).returncode == 0
    ran = json.loads((run / "results.json").read_text())
    assert ran["wall_seconds"] > 0 and "warm_up_seconds" in ran
    reported = epcg_cli("report", str(run), cwd=tmp_path)
    assert reported.returncode == 0, reported.stderr
    assert json.loads((run / "results.json").read_text()) == ran


def test_a_fitted_plan_carries_each_stages_estimate_for_the_time_left(tmp_path: Path) -> None:
    """Fitting a run to its workers puts epcg plan's seconds per task on each stage, which the progress lines
    weigh chunks by: Fling!'s layer stages are estimated, a deep fill above a shallow one."""
    from epcg.api.runs import engine
    from epcg.runtime.engine import Options

    runner = engine(say=lambda line: None)
    job = runner.load(ROOT / "jobs" / "fling.toml", ["max_pieces=7", "width=5", "height=5"])
    planned = runner.start(job, tmp_path / "run")
    assert all(stage.task_seconds is None for stage in planned.plan.stages)
    fitted = runner.fit(planned, True, 2, None, {}, Options())
    seconds = {stage.name: stage.task_seconds for stage in fitted.plan.stages}
    assert all(seconds[f"k{k:02d}"] > 0 for k in range(1, 8)), seconds
    assert seconds["f06"] > seconds["f03"]
    assert [s.tasks for s in fitted.plan.stages] == [s.tasks for s in planned.plan.stages]
    assert not (tmp_path / "run").exists()
