"""Runs whose run directory is an S3 prefix, on moto's real server in its own process (tests/s3server.py).

Results must equal the same job's on a local path (every non-time key); the
faults of tests/test_runtime_faults.py are replayed against the bucket: a
client killed with SIGKILL, two clients at once, records deleted or damaged
by hand, a damaged chunk object, and stores that cannot be used.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from epcg.runtime.rundir import open_location
from epcg.runtime.records import unseal

from .conftest import without_timings
from .s3server import S3Server, free_port

SMALL = ('name = "small"\ndomain = "witness"\nkind = "must-cross"\nrows = ["2x2:2", "3x3:3", "3x3:4"]\n'
         'chunk_size = {chunk}\nfigures_per_row = 1\n')


@pytest.fixture(scope="module")
def jobs(tmp_path_factory) -> dict[str, Path]:
    """The must-cross job in 7 chunks (a quick whole run) and in 147 (faults), and the 8-chunk job's local run."""
    import epcg as api

    base = tmp_path_factory.mktemp("jobs")
    out = {}
    for name, chunk in (("few", 20_000), ("many", 700)):
        out[name] = base / f"{name}.toml"
        out[name].write_text(SMALL.format(chunk=chunk))
    out["local"] = base / "local"
    api.run(out["few"], out["local"], progress=False)
    return out


def epcg(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
         timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m epcg ARGS`` in a subprocess with this process's environment (and ``env`` on top)."""
    return subprocess.run([sys.executable, "-m", "epcg", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})


def rows(results: dict) -> list[dict]:
    """A results.json's rows without timings or chunk counts (results do not depend on the chunking)."""
    return [{k: v for k, v in row.items() if "chunk" not in k} for row in without_timings(results)["rows"]]


def local_rows(run: Path) -> list[dict]:
    return rows(json.loads((run / "results.json").read_text()))


def s3_rows(url: str) -> list[dict]:
    return rows(json.loads(open_location(url).read("results.json")))


def one_line(result: subprocess.CompletedProcess, status: int = 2) -> str:
    """The one error line of a refused command, which exited with ``status`` (each storage fault has its own)."""
    lines = result.stderr.strip().splitlines()
    assert result.returncode == status and len(lines) == 1 and lines[0].startswith("epcg: error:"), result.stderr
    return lines[0]


def records(url: str) -> list[str]:
    return [k for k in open_location(url).list("manifest/") if k.count("/") == 2]


def test_run_on_s3_matches_local_with_every_command(jobs, bucket, tmp_path, monkeypatch):
    """A Dask run (workers reach the bucket through their own environment), then status, verify, report,
    export and the Python API, all on the URL; nothing is written under the working directory."""
    import epcg as api

    monkeypatch.chdir(tmp_path)
    url = f"{bucket}/joint"
    result = epcg("run", str(jobs["few"]), "--out", url, "--workers", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"report:  {url}/report.html" in result.stdout
    assert s3_rows(url) == local_rows(jobs["local"])
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no local 's3:' directory
    keys = open_location(url).list()
    assert {"job.toml", "run.json", "results.json", "summary.md", "report.html"} <= set(keys)
    assert any(k.startswith("figures/") and k.endswith(".png") for k in keys)
    assert not any("testing" in (open_location(url).read(k) or b"").decode(errors="ignore")
                   for k in keys if not k.startswith(("store.zarr/", "figures/")))  # no credentials stored

    status = epcg("status", url, cwd=tmp_path)
    assert status.returncode == 0 and f"{url}: job small (witness), finished" in status.stdout
    exported = epcg("export", url, "--limit", "3", "--pictures", "none", cwd=tmp_path)
    assert exported.returncode == 0 and (tmp_path / "small-export" / "found.jsonl").is_file(), exported.stderr

    opened = api.open(url)
    assert opened.finished and str(opened.path) == url
    assert rows(opened.results) == local_rows(jobs["local"])
    assert [p.name for p in opened.figures()] == [p.name for p in api.open(jobs["local"]).figures()]
    again = api.run(jobs["few"], url, progress=False)  # finished: opened, nothing recomputed
    assert again.results["rows"] == opened.results["rows"]


@pytest.mark.slow
def test_sigkill_then_resume_against_the_bucket(jobs, bucket):
    """The killed client was of this machine, so its lease is free at once (another machine's holds until it
    expires: test_named_causes), and resume finishes the run with the chunks the client had written."""
    url = f"{bucket}/killed"
    env = {**os.environ, "EPCG_LEASE_SECONDS": "6", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "epcg", "run", str(jobs["many"]), "--out", url, "--serial"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and len(records(url)) < 20:
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = len(records(url))
    assert 20 <= done < 147
    assert open_location(url).is_locked() is False
    resumed = epcg("resume", url, "--serial", env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{147 - done} of 147 chunks to do" in resumed.stdout
    assert s3_rows(url) == local_rows(jobs["local"])


@pytest.mark.slow
def test_two_clients_on_one_new_prefix(jobs, bucket):
    url = f"{bucket}/twice"
    procs = [subprocess.Popen([sys.executable, "-m", "epcg", "run", str(jobs["few"]), "--out", url, "--serial"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    codes = [p.wait(timeout=120) for p in procs]
    errors = [p.stderr.read() for p in procs]
    assert sorted(codes) in ([0, 2], [0, 75]), errors  # 75: the lease (a Conflict); 2: the run laid out already
    loser = errors[codes.index(max(codes))].strip().splitlines()
    assert len(loser) == 1 and ("in use" in loser[0] or "already holds a run" in loser[0]), loser
    assert s3_rows(url) == local_rows(jobs["local"])


FLING = 'name = "f55"\ndomain = "fling"\nwidth = 5\nheight = 5\nmax_pieces = 5\nchunk_words = 512\ntop_puzzles = 0\n'


@pytest.mark.slow
def test_damaged_records_and_chunks_are_recomputed(bucket, tmp_path):
    """Deleted and torn records, then a damaged chunk object found by `epcg verify`: each next resume recomputes
    exactly those chunks (every other record keeps its bytes); a store gone is exit 2 with nothing deleted."""
    import epcg as api

    job = tmp_path / "f55.toml"
    job.write_text(FLING)
    url = f"{bucket}/damaged"
    api.run(job, url, progress=False)
    location = open_location(url)
    before = s3_rows(url)
    keys = records(url)
    snapshot = {key: location.read(key) for key in keys}
    victims = keys[-3:-1]
    location.delete(victims[0])                                              # a record deleted by hand
    location.write(victims[1], snapshot[victims[1]][:30])                    # a record torn by hand
    api.run(job, url, progress=False)
    renewed = {key for key in keys if location.read(key) != snapshot[key]}
    assert renewed == set(victims) and s3_rows(url) == before

    snapshot = {key: location.read(key) for key in keys}
    recorded = {name for key in keys for name in json.loads(snapshot[key])["record"]["data"]}
    chunk = next(k for k in location.list("store.zarr/") if "/c/" in k and k.split("/c/")[0][11:] in recorded)
    location.write(chunk, b"\x00garbage")                                   # a chunk object damaged
    verify = epcg("verify", url, "--all", "--serial")
    assert verify.returncode == 1 and "1 of" in verify.stdout and "damaged" in verify.stdout, verify.stdout
    assert not location.exists("results.json")
    api.run(job, url, progress=False)
    assert len({key for key in keys if location.read(key) != snapshot[key]}) == 1 and s3_rows(url) == before

    for key in location.list("store.zarr/"):                                 # the whole store gone
        location.delete(key)
    left = location.list()
    assert "missing or unreadable" in one_line(epcg("resume", url, "--serial"))
    assert location.list() == left


def test_stores_that_cannot_be_used_are_one_line_and_nothing_written(jobs, bucket, s3_env, tmp_path):
    name = bucket.removeprefix("s3://")
    location = open_location(bucket)
    location.write("other/data.csv", b"1,2\n")
    before = location.list()
    cases = {
        "bucket does not exist": ({}, "s3://no-such-bucket-here/run", 66),
        "cannot reach http://127.0.0.1:": ({"AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}"}, f"{bucket}/r", 69),
        "is not an epcg run directory": ({}, f"{bucket}/other", 2),
    }
    for expected, (env, url, status) in cases.items():
        result = epcg("run", str(jobs["few"]), "--out", url, "--serial", cwd=tmp_path, env=env)
        assert expected in one_line(result, status), (expected, result.stderr)
    assert "is not an epcg run directory" in one_line(epcg("resume", f"{bucket}/other", cwd=tmp_path))
    assert location.list() == before and not any(tmp_path.iterdir())

    guarded = S3Server(tmp_path.parent / "moto-auth.log", auth_after=2)  # after its readiness probe and the bucket
    try:
        guarded.create_bucket(name)
        env = {**guarded.env, "AWS_ACCESS_KEY_ID": "wrong", "AWS_SECRET_ACCESS_KEY": "wrong"}
        result = epcg("run", str(jobs["few"]), "--out", f"s3://{name}/r", "--serial", cwd=tmp_path, env=env)
        assert "access denied" in one_line(result, 77)
        assert "wrong" not in result.stderr
    finally:
        guarded.stop()


def test_straggler_of_an_older_session_writes_no_record(jobs, bucket):
    import epcg as api
    from epcg.runtime.errors import StaleTask
    from epcg.runtime.execute import run_task
    from epcg.runtime.registry import job_kind
    from epcg.runtime.records import Records
    from epcg.runtime.store import RunDir

    url = f"{bucket}/straggler"
    api.run(jobs["few"], url, progress=False)
    run = RunDir(url)
    ident = run.identity()
    old = f"{ident['run_id']}/{ident['epoch']}"
    with run.lock():
        run.new_epoch()
    job = run.read_job()
    task = job_kind("witness").plan(job.config).tasks()[1]
    run.records.forget(task)
    with pytest.raises(StaleTask):
        run_task("witness", json.dumps(job.to_dict(), sort_keys=True), url, old, task)
    assert not run.location.exists(Records.key(task))


def test_plan_says_what_a_run_reads_and_writes_on_the_store(bucket):
    from .conftest import JOBS

    result = epcg("plan", str(JOBS / "fling.toml"), "--out", f"{bucket}/plan", "--set", "max_pieces=6")
    assert result.returncode == 0, result.stderr
    table = result.stdout.split("on the object store")[1].splitlines()
    assert "PUTs" in table[1] and "GETs" in table[1] and "requests $" in table[1]
    k06 = next(line.split() for line in table if line.startswith("k06"))
    assert int(k06[1].replace(",", "")) > 0 and float(k06[-3]) > 0 and k06[-2] == "KiB"  # PUTs; reads layer 5
    assert open_location(bucket).list() == []  # planning writes nothing


PAPER_ROWS = ["3x3:3", "3x3:5", "3x4:3", "3x4:5", "4x4:3", "4x4:4", "4x4:5", "4x4:6"]


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("job, sets", [
    ("witness-must-cross.toml", [f"rows={json.dumps(PAPER_ROWS)}"]),                        # Table 2
    ("witness-regions.toml", [f"rows={json.dumps(PAPER_ROWS[:3] + ['3x4:4'] + PAPER_ROWS[3:])}"]),  # Table 3
    ("fling.toml", ["max_pieces=8"]),                                                        # 7x8 to 8 pieces
    ("witness-triple-4x4.toml", []),                                                         # triple panels
])
def test_paper_jobs_on_s3_match_local(job, sets, bucket, tmp_path):
    from .conftest import JOBS

    extra = [arg for item in sets for arg in ("--set", item)]
    local = tmp_path / "local"
    url = f"{bucket}/{job.removesuffix('.toml')}"
    for out in (str(local), url):
        result = epcg("run", str(JOBS / job), "--out", out, "--workers", "2", *extra, timeout=3000)
        assert result.returncode == 0, result.stderr
    effort = ("nodes", "pruned", "improvements")  # branch and bound's work depends on when each worker sees the
    drop = lambda rows: [{k: v for k, v in r.items() if k not in effort} for r in rows]  # noqa: E731 - incumbent
    assert drop(s3_rows(url)) == drop(local_rows(local))


@pytest.mark.slow
def test_features_of_main_on_s3_reduce_record_repair_and_submit_refused(jobs, bucket, tmp_path):
    """The reduction's record and live outputs are objects in the bucket; a damaged run.json is named and
    `verify --repair` rebuilds it there; `epcg submit` (a batch script, scheduler file and logs beside the
    run) refuses a URL in one line with nothing written."""
    import epcg as api

    url = f"{bucket}/features"
    api.run(jobs["few"], url, progress=False)
    location = open_location(url)
    ident = json.loads(location.read("run.json"))
    reduced = unseal(location.read("manifest/reduce.json").decode())
    assert reduced["task"] == "reduce" and any("at_min" in name for name in reduced["data"])

    before = location.list()
    for args in (("submit", str(jobs["few"]), "--out", f"{bucket}/submitted", "--detach"),
                 ("submit", "--resume", url, "--detach"), ("cancel", url)):
        assert "needs a run directory on a filesystem" in one_line(epcg(*args, cwd=tmp_path))
    assert location.list() == before and not any(tmp_path.iterdir())

    location.write("run.json", b"{not json")
    assert "verify --repair" in one_line(epcg("resume", url, "--serial", cwd=tmp_path))
    repaired = epcg("verify", url, "--repair", "--serial", cwd=tmp_path)
    assert repaired.returncode == 0 and "rebuilt run.json" in repaired.stdout, repaired.stdout + repaired.stderr
    assert json.loads(location.read("run.json"))["run_id"] == ident["run_id"]
    assert s3_rows(url) == local_rows(jobs["local"]) and not any(tmp_path.iterdir())
