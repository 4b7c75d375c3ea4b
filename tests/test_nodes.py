"""Several machines for real: a scheduler node, worker nodes and a client node as Linux network namespaces
(tests/nodes.py), each with its own address and /tmp, the run directory on a shared mount or an S3 server on its
own node. Results are compared with a local serial run of the same job."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from .conftest import JOBS, load_results
from .nodes import SHARED, Network, Node, unavailable, wait_port, wait_workers

WHY = unavailable()
needs_nodes = pytest.mark.skipif(WHY is not None, reason=f"no simulated nodes here: {WHY}")

WITNESS = ('name = "w"\ndomain = "witness"\nkind = "must-cross"\nrows = ["3x4:3", "3x4:4", "4x4:3"]\n'
           'chunk_size = 3000\nfigures_per_row = 1\n')
FLING = ["--set", "chunk_words=8192", "--set", "top_puzzles=0"]
RUN_TIMEOUT = 600.0
"""No run in these tests may take longer (a hang fails the test instead of the suite)."""
TIMINGS: list[str] = []
"""What the harness measured (start-up per node, runs), printed after each test (pytest -s shows it)."""


@pytest.fixture(autouse=True)
def _print_timings():
    began = time.monotonic()
    yield
    TIMINGS.append(f"test wall time {time.monotonic() - began:.1f} s")
    print("\n" + "\n".join(TIMINGS))
    TIMINGS.clear()


class Cluster:
    """A scheduler node, worker nodes (two workers each) and a client node on one bridge."""

    def __init__(self, tmp: Path, workers: int = 2, shared_workers: bool = True,
                 worker_env: dict | None = None, s3: bool = False, per_node: int = 2,
                 memory_limit: str = "2GiB") -> None:
        self.tmp = tmp
        self.shared = tmp / "shared"
        self.shared.mkdir()
        self.net = Network(tmp / "logs", self.shared)
        self.env: dict[str, str] = {}
        """What the client and the workers need in their environment (an object store's credentials)."""
        try:
            if s3:
                self.s3 = self.net.node("s3", shared=False)
                self.s3.spawn([sys.executable, "-m", "moto.server", "-H", self.s3.address, "-p", "5000"], "moto")
                wait_port(self.s3.address, 5000, 60)
                self.endpoint = f"http://{self.s3.address}:5000"
                self.env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                            "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": self.endpoint, "AWS_ALLOW_HTTP": "true"}
            self.client = self.net.node("client")
            self.head = self.net.node("scheduler")
            began = time.monotonic()
            self.head.scheduler()
            wait_port(self.head.address, 8786, 60)
            TIMINGS.append(f"scheduler node {self.head.address}: namespaces {self.head.ready_seconds:.2f} s, "
                           f"scheduler listening after {time.monotonic() - began:.1f} s")
            self.address = f"tcp://{self.head.address}:8786"
            self.worker_env = {**self.env, **(worker_env or {})}
            self.per_node, self.memory_limit = per_node, memory_limit
            self.nodes = [self.add(f"worker{i + 1}", shared_workers) for i in range(workers)]
            began = time.monotonic()
            wait_workers(self.address, {n.address: per_node for n in self.nodes}, 120)
            TIMINGS.append(f"{workers} worker nodes (namespaces "
                           f"{', '.join(f'{n.ready_seconds:.2f}' for n in self.nodes)} s): all "
                           f"{per_node * workers} workers joined {time.monotonic() - began:.1f} s after the last was started")
        except BaseException:
            self.net.close()
            raise

    def add(self, name: str, shared: bool = True, env: dict | None = None) -> Node:
        node = self.net.node(name, shared)
        node.started = time.monotonic()
        node.workers(self.address, self.per_node, {**self.worker_env, **(env or {})}, self.memory_limit)
        return node

    def epcg(self, *args: str, env: dict | None = None) -> subprocess.Popen:
        """``epcg ARGS`` on the client node, its output captured."""
        return self.client.spawn([sys.executable, "-m", "epcg", *args], "epcg", stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True,
                                 env={"EPCG_PROGRESS_INTERVAL": "5", **self.env, **(env or {})})

    def close(self) -> None:
        self.net.close()


@pytest.fixture
def cluster(tmp_path: Path):
    c = Cluster(tmp_path)
    yield c
    c.close()


def reference(tmp: Path, job: str, sets: list[str], name: str) -> subprocess.Popen:
    """The same job run serially on this host, in the background."""
    return subprocess.Popen([sys.executable, "-m", "epcg", "run", job, "--out", str(tmp / name), "--serial", *sets],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen, timeout: float = RUN_TIMEOUT) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"no end after {timeout:.0f} s (a hang): {err[-2000:]}")
    return proc.returncode, out, err


def same(run: Path, ref: subprocess.Popen, ref_dir: Path, timeout: float = RUN_TIMEOUT) -> None:
    """``run`` has the results of the serial reference ``ref`` (given ``timeout`` seconds more to end)."""
    code, _, err = finish(ref, timeout)
    assert code == 0, err
    assert load_results(run) == load_results(ref_dir)


@needs_nodes
@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_fling_9_on_three_nodes(cluster: Cluster, tmp_path: Path) -> None:
    """(a) Fling! to 9 pieces across the two worker nodes: identical to the local run."""
    ref = reference(tmp_path, str(JOBS / "fling.toml"), ["--set", "max_pieces=9", *FLING], "ref")
    code, _, err = finish(cluster.epcg("run", str(JOBS / "fling.toml"), "--out", f"{SHARED}/f",
                                       "--scheduler", cluster.address, "--set", "max_pieces=9", *FLING), 3600)
    assert code == 0, err
    same(cluster.shared / "f", ref, tmp_path / "ref", 3600)  # serial, on the cores the nodes shared


@needs_nodes
@pytest.mark.slow
def test_sliced_fling_across_two_worker_nodes(cluster: Cluster, tmp_path: Path) -> None:
    """Fling! to 8 pieces with slices (``slice_rows = 2``) across the two worker nodes: the layers of the local
    whole-layer run, each node reading only part of layer 8; the bytes each node read are printed. (Layer 7 has
    two read groups, which Dask may well give two workers of one node.)"""
    sets = ["--set", "max_pieces=8", *FLING]
    ref = reference(tmp_path, str(JOBS / "fling.toml"), sets, "ref")
    code, _, err = finish(cluster.epcg("run", str(JOBS / "fling.toml"), "--out", f"{SHARED}/f",
                                       "--scheduler", cluster.address, *sets, "--set", "slice_rows=2"), 1800)
    assert code == 0, err
    assert finish(ref)[0] == 0
    same_layers_read_in_part(cluster, tmp_path / "ref", (8,), 2)


@needs_nodes
@pytest.mark.slow
@pytest.mark.timeout(2 * 3600)
def test_sliced_fling_9_across_two_worker_nodes(cluster: Cluster, tmp_path: Path) -> None:
    """Fling! to 9 pieces with slices keyed by 3 rows across the two worker nodes: the layers of the local
    whole-layer run, each read group read once, by the node that ran its tasks (layers only: no evaluation)."""
    sets = ["--set", "max_pieces=9", "--set", "distributions=false", *FLING]
    ref = reference(tmp_path, str(JOBS / "fling.toml"), sets, "ref")
    code, _, err = finish(cluster.epcg("run", str(JOBS / "fling.toml"), "--out", f"{SHARED}/f",
                                       "--scheduler", cluster.address, *sets, "--set", "slice_rows=3"), 3600)
    assert code == 0, err
    assert finish(ref, 3600)[0] == 0
    same_layers_read_in_part(cluster, tmp_path / "ref", (8, 9), 3)


@needs_nodes
@pytest.mark.slow
@pytest.mark.timeout(3 * 3600)
def test_sliced_fling_under_a_memory_limit_below_one_layer(tmp_path: Path) -> None:
    """Fling! to 10 pieces with slices keyed by 3 rows on two worker nodes of one worker each, whose memory limit
    (900 MiB) is below layer 9's solvable bits alone (903 MiB): the layers of the local whole-layer run, no
    worker above its limit; the bytes each node read are printed."""
    limit = 900 * 2**20
    sets = ["--set", "max_pieces=10", *FLING]
    ref = reference(tmp_path, str(JOBS / "fling.toml"), sets, "ref")
    cluster = Cluster(tmp_path, per_node=1, memory_limit=str(limit))
    try:
        code, out, err = finish(cluster.epcg("run", str(JOBS / "fling.toml"), "--out", f"{SHARED}/f",
                                             "--scheduler", cluster.address, *sets, "--set", "slice_rows=3"), 2 * 3600)
        assert code == 0, err
        assert finish(ref, 3600)[0] == 0
        rows = same_layers_read_in_part(cluster, tmp_path / "ref", (9, 10), 3)
        assert 8 * -(-rows[8]["boards"] // 64) > limit
        rss = max(json.loads(p.read_text())["record"]["max_rss"]
                  for p in (cluster.shared / "f" / "manifest").rglob("0*.json"))
        TIMINGS.append(f"the largest resident memory a worker ended a task with: {rss / 2**20:.0f} MiB "
                       f"(limit {limit / 2**20:.0f} MiB); " + " ".join(s for s in out.splitlines() if "note" in s))
        restarts = [line for log in (tmp_path / "logs").glob("*workers.log") for line in log.read_text().splitlines()
                    if "memory budget" in line]
        assert rss < limit and not restarts, restarts
    finally:
        cluster.close()


def same_layers_read_in_part(cluster: Cluster, ref: Path, layers: tuple[int, ...], rows: int) -> list[dict]:
    """Assert the run on the shared mount (slices keyed by ``rows`` rows) has the layers of ``ref``, and that in each
    of ``layers`` both worker nodes read part of the previous layer, no task held all of it, the stage read what the
    plan counts, and each node exactly the groups its tasks start (each group once, on one node); the bytes each
    node read, beside the plan's figure for the share of the layer it solved, go to TIMINGS. The rows."""
    from epcg.games.fling.kind import fling_space
    from epcg.search.retrograde import aligned_groups, span_words

    keep = ("pieces", "solvable", "unique", "checksum", "full_checksum")
    results = [json.loads((d / "results.json").read_text())["rows"] for d in (cluster.shared / "f", ref)]
    assert [{k: r.get(k) for k in keep} for r in results[0]] == [{k: r.get(k) for k in keep} for r in results[1]]
    space = fling_space(7, 8, max(layers), True, "auto", rows)
    for k in layers:
        records = [json.loads(path.read_text())["record"]
                   for path in (cluster.shared / "f" / "manifest" / f"k{k:02d}").glob("*.json")]
        bounds = aligned_groups(space.read_groups(k), max(r["stop"] - r["start"] for r in records))
        groups = {int(a): 16 * span_words(space.reads(k, int(a), int(b))) for a, b in zip(bounds[:-1], bounds[1:])}
        read, expected, words, held = {}, {}, {}, 0
        for record in records:
            host = record["worker"].split("://")[1].rsplit(":", 1)[0]
            read[host] = read.get(host, 0) + record["read_bytes"]
            expected[host] = expected.get(host, 0) + sum(n for a, n in groups.items()
                                                         if record["start"] <= a < record["stop"])
            words[host] = words.get(host, 0) + record["stop"] - record["start"]
            held = max(held, record["result"]["held_words"])
        reads = results[0][k - 1]["reads"]
        TIMINGS.append(f"layer {k}: bytes of layer {k - 1} each node read (uncompressed) "
                       f"{ {h: f'{b / 2**20:.1f} MiB' for h, b in sorted(read.items())} }, the plan "
                       f"{reads['planned'] / len(cluster.nodes) / 2**20:.1f} MiB each (its share of the layer's words "
                       f"{ {h: f'{w / sum(words.values()):.0%}' for h, w in sorted(words.items())} }), "
                       f"{max(read.values()) / (reads['source'] / len(cluster.nodes)):.2f}× a node's share of the "
                       f"layer; the most a task held {8 * held / 2**20:.1f} MiB of solvable (all of it: "
                       f"{reads['source'] / 2 / 2**20:.1f} MiB)")
        assert set(read) == {n.address for n in cluster.nodes} and 0 < 16 * held < reads["source"]
        assert sum(read.values()) == reads["planned"] == sum(groups.values()) and read == expected, (read, expected)
    return results[1]


@needs_nodes
@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_run_on_s3_server_node_without_shared_mount(tmp_path: Path, monkeypatch) -> None:
    """(a) on S3: Table 2's small rows, then Fling! to 9 pieces, each written to moto on its own node; the worker
    nodes mount nothing and each has only the credentials, its /tmp (Fling!'s per-machine copies of a layer live
    there) and a numba cache of its own there. Both runs are identical to serial runs on this host."""
    cluster = Cluster(tmp_path, shared_workers=False, worker_env={"NUMBA_CACHE_DIR": "/tmp/numba-cache"}, s3=True)
    try:
        bucket = f"epcg-{uuid.uuid4().hex[:12]}"
        urllib.request.urlopen(urllib.request.Request(f"{cluster.endpoint}/{bucket}", method="PUT"),
                               timeout=10).close()
        for key, value in cluster.env.items():
            monkeypatch.setenv(key, value)
        (cluster.shared / "w.toml").write_text(WITNESS)
        runs = {"w": (str(cluster.shared / "w.toml"), f"{SHARED}/w.toml", []),
                "f": (str(JOBS / "fling.toml"), str(JOBS / "fling.toml"), ["--set", "max_pieces=9", *FLING])}
        for name, (job, job_on_client, sets) in runs.items():
            ref = reference(tmp_path, job, sets, f"ref-{name}")
            began = time.monotonic()
            code, _, err = finish(cluster.epcg("run", job_on_client, "--out", f"s3://{bucket}/{name}",
                                               "--scheduler", cluster.address, *sets), 3000)
            assert code == 0, err
            TIMINGS.append(f"{name} on the nodes, written to S3: {time.monotonic() - began:.1f} s")
            assert_same_as_fetched(f"s3://{bucket}/{name}", tmp_path / f"fetched-{name}", ref, tmp_path / f"ref-{name}")
        for node in cluster.nodes:
            assert {"epcg-scratch", "numba-cache"} <= set(node.tmp_files()), node.name
    finally:
        cluster.close()


def assert_same_as_fetched(url: str, local: Path, ref: subprocess.Popen, ref_dir: Path) -> None:
    """The results an object-store run wrote equal the serial reference's."""
    from epcg.runtime.rundir import open_location

    local.mkdir()
    (local / "results.json").write_bytes(open_location(url).read("results.json"))
    same(local, ref, ref_dir)


def _records(run: Path) -> int:
    manifest = run / "manifest"
    return sum(1 for _ in manifest.rglob("0*.json")) if manifest.exists() else 0


def fling_7_under_way(cluster: Cluster, tmp: Path, records: int) -> tuple[Path, subprocess.Popen, subprocess.Popen]:
    """Fling! to 7 pieces started on the nodes (and serially here); returns once ``records`` chunks are done."""
    sets = ["--set", "max_pieces=7", *FLING]
    ref = reference(tmp, str(JOBS / "fling.toml"), sets, "ref")
    run = cluster.shared / "f"
    proc = cluster.epcg("run", str(JOBS / "fling.toml"), "--out", f"{SHARED}/f", "--scheduler", cluster.address,
                        *sets)
    deadline = time.monotonic() + 240
    while _records(run) < records and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None and _records(run) >= records, "the run did not get going"
    return run, ref, proc


def status_by_host(cluster: Cluster) -> None:
    """`epcg status` (from a worker node) and the dashboard page list the live workers per host."""
    status = cluster.nodes[0].spawn([sys.executable, "-m", "epcg", "status", f"{SHARED}/f"], "status",
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    code, out, err = finish(status, 60)
    assert code == 0, err
    hosts = ", ".join(f"{n.address}: 2" for n in cluster.nodes)
    assert f"workers: 4 ({hosts})" in out, out
    page = json.loads(urllib.request.urlopen(f"http://{cluster.head.address}:8787/epcg/status.json", timeout=10).read())
    assert page["hosts"] == {n.address: 2 for n in cluster.nodes} and page["workers"] == 4, page


@needs_nodes
def test_witness_then_fling_with_a_worker_node_lost(cluster: Cluster, tmp_path: Path) -> None:
    """(a) Table 2's small rows on a scheduler node and two worker nodes, the run directory on the shared mount:
    identical to a serial run. (b) Then Fling! to 7 pieces on the same nodes: every process of one worker node
    SIGKILLed and its /tmp wiped mid-run; a new node joins and takes work; the run finishes with identical results
    and says which host it lost. Before the kill, `epcg status` and the dashboard name the workers by host."""
    from distributed import Client

    (cluster.shared / "w.toml").write_text(WITNESS)
    ref = reference(tmp_path, str(cluster.shared / "w.toml"), [], "ref-w")
    began = time.monotonic()
    code, _, err = finish(cluster.epcg("run", f"{SHARED}/w.toml", "--out", f"{SHARED}/w",
                                       "--scheduler", cluster.address))
    assert code == 0, err
    TIMINGS.append(f"witness on the nodes: {time.monotonic() - began:.1f} s")
    same(cluster.shared / "w", ref, tmp_path / "ref-w")
    run, ref, proc = fling_7_under_way(cluster, tmp_path, 40)
    deadline = time.monotonic() + 240
    status_by_host(cluster)
    victim = cluster.nodes[1]
    assert victim.tmp_files(), "the node's workers keep nothing in its /tmp"
    victim.crash()
    assert victim.tmp_files() == []
    at_kill = _records(run)
    newcomer = cluster.add("worker3")
    took_work = False
    with Client(cluster.address, timeout="10s") as watcher:
        while proc.poll() is None and time.monotonic() < deadline + RUN_TIMEOUT:
            processing = watcher.processing()
            took_work = took_work or any(newcomer.address in worker and any(str(k).startswith("epcg-") for k in keys)
                                         for worker, keys in processing.items())
            time.sleep(0.2)
    code, _, err = finish(proc)
    assert code == 0, err
    assert _records(run) > at_kill
    assert took_work, "the node added mid-run took no chunk"
    lost = [line for line in err.splitlines() if f"host {victim.address}: 2 workers lost" in line]
    assert len(lost) == 1 and "rescheduled" in lost[0], err
    TIMINGS.append(lost[0])
    same(run, ref, tmp_path / "ref")


@needs_nodes
@pytest.mark.slow
def test_client_link_down_20_s(cluster: Cluster, tmp_path: Path) -> None:
    """(c) The client's cable out for 20 s, then back: the run goes on to identical results, or ends within
    the stated time in one line naming the resume command; never a hang."""
    run, ref, proc = fling_7_under_way(cluster, tmp_path, 20)
    cluster.client.link(False)
    time.sleep(20)
    cluster.client.link(True)
    restored = time.monotonic()
    code, _, err = finish(proc, 300)
    TIMINGS.append(f"link down 20 s: exit {code} {time.monotonic() - restored:.1f} s after the link came back")
    if code == 0:
        same(run, ref, tmp_path / "ref")
    else:
        last = err.strip().splitlines()[-1]
        assert f"epcg resume {SHARED}/f" in last, err


@needs_nodes
@pytest.mark.slow  # (d): 14-31 s; the default run keeps (a) and (b)
def test_worker_node_without_the_run_directory(tmp_path: Path) -> None:
    """(d) A worker node that does not mount the shared directory: one line naming its host and the path, exit 2,
    at once (no retries, no hang)."""
    cluster = Cluster(tmp_path)
    try:
        blind = cluster.add("worker-blind", shared=False)
        wait_workers(cluster.address, {blind.address: 2}, 120)
        (cluster.shared / "w.toml").write_text(WITNESS)
        began = time.monotonic()
        code, _, err = finish(cluster.epcg("run", f"{SHARED}/w.toml", "--out", f"{SHARED}/w",
                                           "--scheduler", cluster.address), 120)
        TIMINGS.append(f"blind worker node refused after {time.monotonic() - began:.1f} s")
        errors = [line for line in err.splitlines() if "error" in line.lower()]
        assert code == 2, err
        assert len(errors) == 1 and errors[0] == err.strip().splitlines()[-1], err
        assert f"host {blind.address}" in errors[0] and f"{SHARED}/w" in errors[0] and "cannot see" in errors[0]
        assert not (cluster.shared / "w" / "manifest").exists() or _records(cluster.shared / "w") == 0
    finally:
        cluster.close()


def test_lost_workers_are_one_line_per_host() -> None:
    """The scheduler's remove-worker events of one host become one line; a retired worker is not lost."""
    from epcg.runtime.dask_executor import LostHosts

    lines: list[str] = []
    lost = LostHosts(lambda event: lines.append(event.line()))
    for port, keys in ((1, ["epcg-k07/00003-ab", "epcg-k07/00004-cd"]), (2, ["epcg-k07/00005-ef", "other"])):
        lost.on_event((0.0, {"action": "remove-worker", "worker": f"tcp://198.18.0.3:{port}", "expected": False,
                             "processing-tasks": keys}))
    lost.on_event((0.0, {"action": "remove-worker", "worker": "tcp://198.18.0.4:1", "expected": True,
                         "processing-tasks": ["epcg-k07/00006-gh"]}))
    lost.flush()
    assert lines == []  # not settled yet: the node's other workers may still be reported
    lost.flush(0)
    assert lines == ["host 198.18.0.3: 2 workers lost, 3 chunks rescheduled"]
    event = (0.0, {"action": "remove-worker", "worker": "tcp://198.18.0.5:1", "processing-tasks": ["epcg-k07/1-a"]})
    lost.on_event(event)
    lost.drop()  # a stop by signal: what is pending and what follows is no news
    lost.on_event(event)
    lost.flush(0)
    assert lines == ["host 198.18.0.3: 2 workers lost, 3 chunks rescheduled"]


def test_a_machine_sees_a_run_directory_only_with_its_run_json(tmp_path: Path) -> None:
    """An empty mount point (the node did not mount the share) is not the run directory."""
    from epcg.runtime.dask_executor import can_see

    assert can_see(str(tmp_path / "not-mounted")) == "no run.json there"
    (tmp_path / "run.json").write_text("{}")
    assert can_see(str(tmp_path)) is None
