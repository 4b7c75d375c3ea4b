"""Everything checkable is checked at plan time, in one line, whatever the key, the kind or the value.

Job values go through `runtime/jobs.py` (`check_values`, `check_types`) and each kind's schema; Dask's
configuration through `runtime/daskconfig.py`; a `--scheduler` through `runtime/probe.py`. Each is tried with
the cases the trial found and with others of the same class, and a hypothesis test gives every key of every
example job values of every type: one line and exit status 2, or a plan, never a traceback.
"""

from __future__ import annotations

import math
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
import tomli_w
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from epcg.cli import main
from epcg.runtime.jobs import _schema_for, read_toml
from epcg.runtime.registry import job_kind

from .conftest import JOBS, epcg

WITNESS = 'name = "w"\ndomain = "witness"\nkind = "must-cross"\nrows = ["2x2:2", "3x3:3"]\nchunk_size = 700\n'


def _plan(job: Path, *sets: str, **env) -> tuple[int, str, str]:
    """``epcg plan JOB --set ...`` in this process: exit status, standard output, standard error."""
    result = CliRunner(env=env or None).invoke(main, ["plan", str(job), *(a for s in sets for a in ("--set", s)),
                                                     "--out", "/nonexistent-dir/x"])
    if result.exc_info and not isinstance(result.exc_info[1], SystemExit):
        raise result.exc_info[1]  # a traceback: the test fails with it
    return result.exit_code, result.stdout, result.stderr


def _one_line(status: int, err: str) -> str:
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and lines[0].startswith("epcg: error: "), (status, err)
    return lines[0]


@pytest.fixture(scope="module")
def witness(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("inputs") / "w.toml"
    path.write_text(WITNESS)
    return path


@pytest.mark.parametrize("job, value, said", [
    # the trial's cases
    ("witness", "keep=[{solutions = [0, 0]}]", "starts at 1 or above"),
    ("witness", "keep=[{solutions = [-5, -1]}]", "starts at 1 or above"),
    ("witness", "keep=[{solutions = [1, 99999999999999999999]}]", "64 bits"),
    ("fling", "max_pieces=5.0", "max_pieces: expected an integer, got 5.0"),
    ("witness", 'rows=["３x3:3"]', "U+FF13"),
    # others of the same classes
    ("witness", "keep=[{solutions = 0}]", "starts at 1 or above"),
    ("witness", "keep=[{solutions = [0, 5]}]", "starts at 1 or above"),
    ("witness", "keep=[{solutions = [1, -9223372036854775809]}]", "64 bits"),
    ("witness", "chunk_size=700.0", "chunk_size: expected an integer, got 700.0"),
    ("witness", "figures_per_row=1e3", "expected an integer"),
    ("witness", 'rows=["3x3:٣"]', "U+0663"),  # an Arabic-Indic digit
    ("witness", 'solution_counts={"５x5" = 10}', "U+FF15"),  # a table's key
    ("witness", "domain=[1]", "'domain' must be one of"),
    ("fling", "seed=18446744073709551616", "64 bits"),
    ("fling", "keep=[3]", "each band is {min_ratio = X}"),
    ("fling", "keep=[{min_ratio = nan}]", "finite numbers"),
    ("fling", "keep=[{ratio = [1, inf]}]", "finite numbers"),
    ("fling", "count_sample=5e4", "count_sample: expected an integer"),
    ("dwp-study", "runs=3.0", "runs: expected an integer"),
])
def test_refused_at_plan_time_in_one_line(witness: Path, job: str, value: str, said: str) -> None:
    path = witness if job == "witness" else JOBS / f"{job}.toml"
    line = _one_line(*_plan(path, value)[::2])
    assert said in line, line


def test_an_accepted_band_still_plans(witness: Path) -> None:
    status, out, err = _plan(witness, "keep=[{solutions = [1, 2]}]")
    assert status == 0 and "run would accept" in out, err


def _value_text(value) -> str:
    return tomli_w.dumps({"v": value}).partition("=")[2].strip()


SCALARS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70), st.sampled_from([0, -1, 1, 2, 3, 2**63 - 1, 2**63, -(2**63)]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([5.0, 0.5, -0.0]),
    st.booleans(), st.text(max_size=8),
    st.sampled_from(["", "５", "３x3:3", "3x3:3", "4x4", "all", "first", "auto", "plain", "witness", "fling"]),
)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.sampled_from(["solutions", "min_ratio", "ratio", "score", "a", "5x5"]),
                                        inner, max_size=2), max_leaves=6)
JOB_FILES = sorted(JOBS.glob("*.toml"))


def _keys(job: Path) -> list[str]:
    data = read_toml(job)
    return sorted(_schema_for(job_kind(data["domain"]), data).model_fields)


@st.composite
def mutations(draw) -> tuple[Path, str, str]:
    job = draw(st.sampled_from(JOB_FILES))
    key = draw(st.sampled_from(_keys(job) + ["not_a_key"]))
    return job, key, _value_text(draw(VALUES))


def _check_mutation(job: Path, key: str, text: str) -> None:
    status, out, err = _plan(job, f"{key}={text}")
    if status == 0:
        assert "run would accept" in out or "run would refuse" in out, out
    else:
        _one_line(status, err)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutations())
def test_any_value_of_any_key_is_a_plan_or_one_line(case) -> None:
    _check_mutation(*case)


@pytest.mark.slow
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutations())
def test_any_value_of_any_key_is_a_plan_or_one_line_more(case) -> None:
    _check_mutation(*case)


# -- Dask's configuration ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, text, said", [
    ("bad.yaml", "distributed:\n  worker: [unclosed\n", "bad.yaml' is malformed"),
    ("pause.yaml", "distributed:\n  worker:\n    memory:\n      pause: lots\n",
     "distributed.worker.memory.pause = 'lots' in {path}"),
    ("list.yaml", "- 1\n- 2\n", "must have a dict as the top level"),
    ("timeouts.yml", "distributed:\n  comm:\n    timeouts:\n      connect: [5]\n",
     "distributed.comm.timeouts.connect = [5] in {path}"),
    ("spill.yaml", "distributed:\n  worker:\n    memory:\n      spill: 1.5\n", "distributed.worker.memory.spill"),
])
def test_dask_configuration_is_one_line_naming_file_and_key(witness: Path, tmp_path: Path, name: str, text: str,
                                                            said: str, monkeypatch) -> None:
    """In a fresh process (Dask reads its configuration once, at import), with the file as DASK_CONFIG."""
    path = tmp_path / name
    path.write_text(text)
    monkeypatch.setenv("DASK_CONFIG", str(path))
    done = epcg("plan", str(witness))
    line = _one_line(done.returncode, done.stderr)
    assert said.format(path=path) in line, line


def test_dask_configuration_from_the_environment_names_the_variable(witness: Path, monkeypatch) -> None:
    monkeypatch.setenv("DASK_DISTRIBUTED__WORKER__MEMORY__TARGET", "lots")
    done = epcg("plan", str(witness))
    line = _one_line(done.returncode, done.stderr)
    assert "DASK_DISTRIBUTED__WORKER__MEMORY__TARGET" in line and "memory.target" in line, line


# -- a scheduler that is not one ------------------------------------------------------------------------------


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"<html>dashboard</html>")

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def web_server():
    server = HTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def banner_server():
    """A server that speaks first, but not Dask (as an SSH daemon does); and one that accepts and says nothing."""
    listeners = [socket.create_server(("127.0.0.1", 0)) for _ in range(2)]
    stop = threading.Event()

    def serve(listener, greeting: bytes) -> None:
        listener.settimeout(0.2)
        held = []
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            conn.sendall(greeting)
            held.append(conn)
        for conn in held:
            conn.close()

    threads = [threading.Thread(target=serve, args=(listener, greeting), daemon=True)
               for listener, greeting in zip(listeners, (b"SSH-2.0-OpenSSH_9.2\r\n", b""))]
    for thread in threads:
        thread.start()
    yield [f"tcp://127.0.0.1:{listener.getsockname()[1]}" for listener in listeners]
    stop.set()
    for thread in threads:
        thread.join()
    for listener in listeners:
        listener.close()


def test_a_web_server_given_as_scheduler_is_one_line_in_seconds(web_server: str, witness: Path,
                                                                tmp_path: Path) -> None:
    """The trial's case: `epcg run --scheduler` at an HTTP server; no directory made, no resume advised."""
    out = tmp_path / "never"
    began = time.monotonic()
    done = epcg("run", str(witness), "--scheduler", web_server, "--out", str(out), timeout=120)
    line = _one_line(done.returncode, done.stderr)
    assert f"{web_server} is not a Dask scheduler" in line and "an HTTP server answered" in line, line
    assert "HTTP/1.0 200" in line and "resume" not in done.stdout + done.stderr
    assert not out.exists()
    assert time.monotonic() - began < 60


def test_other_servers_given_as_scheduler_are_named(banner_server: list[str]) -> None:
    from epcg.runtime.errors import UserError
    from epcg.runtime.probe import check_scheduler

    talker, silent = banner_server
    with pytest.raises(UserError, match=r"sent 'SSH-2\.0-OpenSSH_9\.2'"):
        check_scheduler(talker, seconds=1)
    with pytest.raises(UserError, match="it said nothing"):
        check_scheduler(silent, seconds=1)
    closed = socket.create_server(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    with pytest.raises(UserError, match="cannot reach scheduler .*refused"):
        check_scheduler(f"tcp://127.0.0.1:{port}", seconds=1)


def test_a_real_scheduler_passes_the_check() -> None:
    from distributed import LocalCluster

    from epcg.runtime.probe import check_scheduler

    with LocalCluster(n_workers=0, processes=False, host="127.0.0.1", protocol="tcp", dashboard_address=":0") as c:
        check_scheduler(c.scheduler_address, seconds=5)


def test_api_ratios_that_are_not_finite_are_one_line(tmp_path: Path) -> None:
    """`boards(k, min_ratio=inf)` (and -inf, nan) is the API's one-line ValueError, not an OverflowError."""
    import epcg as api
    from epcg.runtime.errors import InvalidValue

    run = tmp_path / "fling"
    done = epcg("run", str(JOBS / "fling.toml"), "--set", "width=4", "--set", "height=4", "--set", "max_pieces=4",
                "--set", "chunk_words=64", "--serial", "--out", str(run))
    assert done.returncode == 0, done.stderr
    opened = api.open(run)
    for ratio in (math.inf, -math.inf, math.nan):
        with pytest.raises(InvalidValue, match=r"min_ratio must be a number \(a finite expert ratio\)"):
            list(opened.boards(4, min_ratio=ratio))


def test_api_asking_for_unsolvable_puzzles_is_one_line(witness: Path, tmp_path: Path) -> None:
    """`puzzles(solutions=0)` would recompute with a band the job file refuses: the API says why at once."""
    import epcg as api
    from epcg.runtime.errors import InvalidValue

    run = tmp_path / "w"
    done = epcg("run", str(witness), "--serial", "--out", str(run))
    assert done.returncode == 0, done.stderr
    with pytest.raises(InvalidValue, match="solutions must be 1 or more"):
        list(api.open(run).puzzles(solutions=0))
