"""Faults named for their cause (issue 34, items 3 and 6): a cluster file's addresses, quoted dotted keys in
``--set``, a killed client's lease on an object store, each storage fault's exit status, as real processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import JOBS, epcg


def one_line(result: subprocess.CompletedProcess) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("epcg: error: "), result.stderr
    return lines[0]


@pytest.mark.parametrize("line, said", [
    ('host = "nohost.invalid"', "host: 'nohost.invalid' does not resolve to an address"),
    ('host = "198.18.0.7"', "host: '198.18.0.7' is not an address of this machine"),
    ('dashboard_address = "127.0.0.1:99999"', "dashboard_address: '127.0.0.1:99999' is not HOST:PORT"),
    ('dashboard_address = "nohost.invalid:8787"', "dashboard_address: 'nohost.invalid' does not resolve"),
    ('dashboard_address = "8787"', "dashboard_address: '8787' is not HOST:PORT"),
])
@pytest.mark.parametrize("command", ["plan", "run"])
def test_a_cluster_file_with_a_bad_address_is_named_before_anything_starts(tmp_path: Path, line: str, said: str,
                                                                            command: str) -> None:
    cluster = tmp_path / "c.toml"
    cluster.write_text(f'kind = "local"\n{line}\n')
    args = [command, str(JOBS / "witness-paths.toml"), "--cluster", str(cluster)]
    result = epcg(*args, *(["--out", str(tmp_path / "run")] if command == "run" else []))
    assert result.returncode == 2 and said in one_line(result), result.stderr
    assert "memory_limit" not in result.stderr and not (tmp_path / "run").exists()


def test_a_good_local_address_is_accepted(tmp_path: Path) -> None:
    cluster = tmp_path / "c.toml"
    cluster.write_text('kind = "local"\nhost = "127.0.0.1"\ndashboard_address = ":0"\n')
    result = epcg("plan", str(JOBS / "witness-paths.toml"), "--cluster", str(cluster))
    assert result.returncode == 0, result.stderr


def test_a_quoted_dotted_key_in_set(tmp_path: Path) -> None:
    job = tmp_path / "j.toml"
    job.write_text('name = "q"\ndomain = "witness"\nkind = "must-cross"\nrows = ["3x3:3"]\n')
    result = epcg("run", str(job), "--out", str(tmp_path / "run"), "--serial", "--set", 'solution_counts."3x3"=5')
    assert result.returncode == 0, result.stderr
    assert "[solution_counts]\n3x3 = 5" in (tmp_path / "run" / "job.toml").read_text()
    assert "malformed --set" in one_line(epcg("plan", str(job), "--set", '"3x3=5'))


def _killed_holding_a_lease(url: str, hostname: str | None) -> None:
    """A client that takes the run's lease and is SIGKILLed, on this machine or (in a UTS namespace of its own
    with another host name) as if on another."""
    code = ("import os, sys\nfrom epcg.runtime.rundir import open_location\n"
            f"held = open_location({url!r}).lock('pid %d on the dead host' % os.getpid())\nheld.__enter__()\n"
            "os.kill(os.getpid(), 9)\n")
    command = [sys.executable, "-c", code]
    if hostname is not None:
        if os.geteuid() != 0 or not shutil.which("unshare"):
            pytest.skip("another host name needs root and util-linux's unshare")
        command = ["unshare", "--uts", "sh", "-c", f'hostname {hostname} && exec "$0" "$@"', *command]
    killed = subprocess.run(command, capture_output=True, text=True, timeout=60,
                            env={**os.environ, "EPCG_LEASE_SECONDS": "600"})
    assert killed.returncode in (-9, 137), killed.stderr


def test_a_killed_clients_lease_says_who_held_it_and_when_it_expires(s3_server, s3_env, tmp_path: Path) -> None:
    """A lease of another machine's client: only its expiry tells that it is dead."""
    from epcg.runtime.errors import Conflict
    from epcg.runtime.rundir import open_location

    s3_server.create_bucket("leases")
    url = "s3://leases/killed"
    _killed_holding_a_lease(url, "elsewhere")
    location = open_location(url)
    with pytest.raises(Conflict) as refused:
        with location.lock("me"):
            pass
    said = str(refused.value)
    assert "on the dead host" in said and "its lease expires in" in said and "UTC" in said, said
    expires = json.loads(location.read(".lock"))["expires"]
    assert time.strftime("%H:%M:%S UTC", time.gmtime(expires)) in said
    assert refused.value.exit_status == 75
    assert "on the dead host" in location.holder()


def test_a_lease_of_a_dead_process_of_this_machine_is_taken_over_at_once(s3_server, s3_env, tmp_path: Path) -> None:
    """The client SIGKILLed on this machine (or a release that failed in this very process): `epcg resume`
    goes on at once, not after the lease's life."""
    import epcg as api
    from epcg.runtime.rundir import open_location

    url = f"s3://{s3_server.create_bucket()}/r"
    api.run(JOBS / "witness-paths.toml", url, progress=False, rows=["3x3"])
    _killed_holding_a_lease(url, None)
    assert open_location(url).is_locked() is False and open_location(url).holder() is None
    began = time.monotonic()
    result = epcg("resume", url, "--serial")
    assert result.returncode == 0 and time.monotonic() - began < 60, result.stderr
    with open_location(url).lock("this process"):
        assert open_location(url).is_locked()  # held here: the same process does not take it over from itself


def test_a_lease_whose_pid_another_process_took_is_taken_over(s3_server, s3_env, tmp_path: Path) -> None:
    """The killed client's pid given to an unrelated live process (a ``sleep``): the lease's start time tells
    them apart, so the lease is free; a lease of this host without a start time holds until it expires."""
    from epcg.runtime.rundir import open_location

    url = f"s3://{s3_server.create_bucket()}/reused"
    _killed_holding_a_lease(url, None)
    location = open_location(url)
    lease = json.loads(location.read(".lock"))
    assert isinstance(lease["token"], str)
    stranger = subprocess.Popen(["sleep", "60"])
    try:
        for body, locked in (({**lease, "pid": stranger.pid}, False), ({**lease, "pid": stranger.pid, "token": None},
                                                                       True)):
            location.delete(".lock")
            assert location.create(".lock", json.dumps(body).encode())
            assert location.is_locked() is locked, body
        assert stranger.poll() is None  # judged, never signalled
    finally:
        stranger.kill()
        stranger.wait()


def test_an_unreachable_store_is_named_so_by_every_command(s3_server, s3_env, tmp_path: Path) -> None:
    from tests.s3server import free_port

    os.environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{free_port()}"  # s3_env restores it afterwards
    for args in (["status", "s3://b/r"], ["resume", "s3://b/r", "--serial"], ["export", "s3://b/r"],
                 ["report", "s3://b/r"], ["verify", "s3://b/r", "--serial"]):
        result = epcg(*args, cwd=tmp_path)
        assert result.returncode == 69 and "cannot reach" in one_line(result), (args, result.stderr)


def test_a_bucket_deleted_under_an_open_run_is_named_so(s3_server, s3_env) -> None:
    """Zarr reads a missing object as an absent key: the run's store asks why, and names the missing bucket."""
    import urllib.request

    import epcg as api
    from epcg.runtime.errors import MissingBucket
    from epcg.runtime.rundir import open_location

    name = s3_server.create_bucket()
    job = {"name": "w", "domain": "witness", "kind": "must-cross", "rows": ["2x2:2"], "figures_per_row": 1}
    api.run(job, f"s3://{name}/r", progress=False)
    opened = api.open(f"s3://{name}/r")
    assert opened.results and opened.stored.has("2x2-k2/at_min/ranks")  # records read; the arrays not yet
    bucket = open_location(f"s3://{name}")
    for key in bucket.list():
        bucket.delete(key)
    urllib.request.urlopen(urllib.request.Request(f"{s3_server.endpoint}/{name}", method="DELETE"), timeout=10)
    with pytest.raises(MissingBucket, match="its bucket does not exist"):
        list(opened.puzzles())


@pytest.mark.parametrize("where", [["--workers", "2"], pytest.param(["--serial"], marks=pytest.mark.slow)])
def test_the_store_gone_mid_run_is_one_line_naming_it(tmp_path: Path, where: list[str]) -> None:
    """The S3 server SIGKILLed while chunks are written (by Dask workers, or in this process): the run ends in
    one line naming the store as unreachable (exit 69), not a node as blind; the cleanup after it (live.json,
    the lock) adds nothing and hides nothing."""
    from tests.s3server import S3Server

    pytest.importorskip("moto")
    server = S3Server(tmp_path / "moto.log")
    try:
        bucket = server.create_bucket()
        proc = subprocess.Popen([sys.executable, "-m", "epcg", "run", str(JOBS / "fling.toml"), *where,
                                 "--out", f"s3://{bucket}/r", "--set", "max_pieces=7", "--set", "chunk_words=4096"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, **server.env, "PYTHONUNBUFFERED": "1"})
        from epcg.runtime.rundir import open_location

        os.environ.update(server.env)
        try:
            records = open_location(f"s3://{bucket}/r")
            deadline = time.monotonic() + 120
            while sum(1 for key in records.list("manifest/")) < 5:
                assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
                time.sleep(0.3)
        finally:
            for key in server.env:
                os.environ.pop(key, None)
        server.process.kill()
        server.process.wait()
        _out, err = proc.communicate(timeout=300)
    finally:
        server.stop()
    lines = [line for line in err.splitlines() if line.startswith("epcg: error:") or "Traceback" in line]
    assert proc.returncode == 69, err[-3000:]
    assert len(lines) == 1 and "cannot reach" in lines[0], err[-3000:]
    assert "Traceback" not in err, err[-3000:]


def test_an_endpoint_that_is_not_an_s3_server_is_named_so(tmp_path: Path) -> None:
    """AWS_ENDPOINT_URL naming a plain web server: one line with the HTTP status it answered, and the question."""
    from tests.s3server import free_port

    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                              cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while subprocess.run(["python3", "-c", f"import socket; socket.create_connection(('127.0.0.1', {port}), 1)"],
                             capture_output=True).returncode and time.monotonic() < deadline:
            time.sleep(0.2)
        env = {**os.environ, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "x",
               "AWS_SECRET_ACCESS_KEY": "y", "AWS_REGION": "us-east-1"}
        for args in (["status", "s3://b/r"], ["run", str(JOBS / "witness-paths.toml"), "--out", "s3://b/r"]):
            result = subprocess.run([sys.executable, "-m", "epcg", *args], capture_output=True, text=True,
                                    timeout=120, env=env, cwd=tmp_path)
            said = one_line(result)
            assert result.returncode == 2 and "the server answered HTTP 404" in said, (args, result.stderr)
            assert f"is http://127.0.0.1:{port} an S3 endpoint?" in said
    finally:
        server.kill()
        server.wait()
