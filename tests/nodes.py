"""Several machines on one Linux host: each node a network namespace with its own mount namespace.

A :class:`Network` is a bridge in the host's namespace with the address
``198.18.N.254/24`` (the benchmarking range, 198.18.0.0/15, never a private
one). Each :class:`Node` is a network namespace joined to the bridge by a veth
pair (``eth0`` inside, ``198.18.N.i/24``) and a mount namespace held open by
one ``sleep`` process, in which

- ``/tmp`` is a tmpfs of its own (the node's scratch: Dask's worker
  directories, epcg's per-machine copies, numba's cache if pointed there);
- ``/mnt`` is the shared directory bind-mounted (as a network filesystem
  would be), or, for a node that does not mount it, an empty tmpfs.

Every other process of the node is started with ``nsenter`` into both
namespaces, so the node's processes share its ``/tmp`` and its address, and
``ip netns pids`` finds them all. The rest of the host's filesystem (the
venv, the checkout) is the same on every node: the same install everywhere.
Their output goes to log files on the host, opened before entering the node.

:meth:`Network.close` kills every process of every node, then deletes the
namespaces (their veths go with them), the bridge, and with the last process
of a mount namespace its tmpfs; it is safe to call after any failure, and
:func:`unavailable` says why nodes cannot be made here (tests skip with it).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

SHARED = "/mnt"
"""Where every node that mounts the shared directory sees it."""
VENV_BIN = Path(sys.executable).parent
TIMEOUT = 20.0
"""Seconds any single set-up step may take before the harness gives up (every wait is bounded)."""


def unavailable() -> str | None:
    """Why nodes cannot be created on this machine, or None if they can."""
    if sys.platform != "linux":
        return "network namespaces need Linux"
    if os.geteuid() != 0:
        return "creating network namespaces needs root"
    for tool in ("ip", "nsenter", "unshare", "mount"):
        if shutil.which(tool) is None:
            return f"'{tool}' is not installed (Debian: iproute2, util-linux, mount)"
    if not Path(SHARED).is_dir():
        return f"{SHARED} does not exist to mount the shared directory on"
    for path in (sys.prefix, str(Path(__file__).resolve().parents[1])):
        if Path(path).resolve().is_relative_to("/tmp"):
            return f"{path} is under /tmp, which each node replaces with a private one (clone elsewhere)"
    probe = f"epcgprobe{os.getpid()}"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"'ip netns add' failed: {made.stderr.strip()}"
    _ip("netns", "del", probe, check=False)
    return None


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=TIMEOUT)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done


class Node:
    """One machine: a network namespace, an address, a private /tmp, and the processes started on it."""

    def __init__(self, network: Network, index: int, name: str, shared: Path | None, logs: Path) -> None:
        began = time.monotonic()
        self.network, self.index, self.name, self.logs = network, index, name, logs
        self.ns = f"epcg{network.tag}n{index}"
        self.veth = f"ve{network.tag}n{index}"
        self.address = f"198.18.{network.subnet}.{index}"
        self.processes: list[subprocess.Popen] = []
        network.nodes.append(self)
        _ip("netns", "add", self.ns)
        _ip("link", "add", self.veth, "type", "veth", "peer", "name", "eth0", "netns", self.ns)
        _ip("link", "set", self.veth, "master", network.bridge, "up")
        for args in (("link", "set", "lo", "up"), ("addr", "add", f"{self.address}/24", "dev", "eth0"),
                     ("link", "set", "eth0", "up")):
            _ip("-n", self.ns, *args)
        mount_shared = (f"mount --bind {shared} {SHARED}" if shared is not None
                        else f"mount -t tmpfs -o size=64m {name}-mnt {SHARED}")
        script = (f"mount --make-rprivate / && {mount_shared} && mount -t tmpfs -o size=4g {name}-tmp /tmp "
                  "&& echo ready && exec sleep infinity")  # /mnt first: the shared directory may lie under /tmp
        self.holder = subprocess.Popen(["ip", "netns", "exec", self.ns, "unshare", "--mount", "--propagation",
                                        "private", "sh", "-c", script],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                       start_new_session=True)
        self.processes.append(self.holder)
        line = _readline(self.holder, TIMEOUT)
        if line.strip() != "ready":
            raise RuntimeError(f"node {name}: its namespaces did not come up: {line or self.holder.stderr.read()}")
        self.ready_seconds = time.monotonic() - began
        """Seconds from nothing to a node whose namespaces and mounts are in place."""

    def spawn(self, args: list[str], log: str, env: dict[str, str] | None = None, **popen) -> subprocess.Popen:
        """Start ``args`` on this node (its address, its /tmp, its /mnt); output to ``logs/<node>-<log>.log``
        unless ``popen`` says otherwise."""
        environment = {"PATH": f"{VENV_BIN}:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": os.environ.get("HOME", "/root"),
                       "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1", "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
                       "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "10s", **(env or {})}
        if "stdout" not in popen:
            handle = open(self.logs / f"{self.name}-{log}.log", "a")
            popen.update(stdout=handle, stderr=subprocess.STDOUT)
        process = subprocess.Popen(["nsenter", f"--target={self.holder.pid}", "--mount", "--net", "--", *args],
                                   env=environment, start_new_session=True, **popen)
        self.processes.append(process)
        return process

    def scheduler(self, port: int = 8786) -> subprocess.Popen:
        """``dask scheduler`` on this node, its dashboard on port 8787."""
        return self.spawn([str(VENV_BIN / "dask"), "scheduler", "--host", self.address, "--port", str(port),
                           "--dashboard-address", f"{self.address}:8787", "--no-show"], "scheduler")

    def workers(self, scheduler: str, n: int = 2, env: dict[str, str] | None = None,
                memory_limit: str = "2GiB") -> subprocess.Popen:
        """``dask worker`` with ``n`` single-threaded worker processes (and their nanny) on this node."""
        return self.spawn([str(VENV_BIN / "dask"), "worker", scheduler, "--host", self.address, "--nworkers", str(n),
                           "--nthreads", "1", "--no-dashboard", "--memory-limit", memory_limit,
                           "--death-timeout", "60"], "workers", env)

    def pids(self) -> list[int]:
        """Every process in this node's network namespace."""
        done = _ip("netns", "pids", self.ns, check=False)
        return [int(p) for p in done.stdout.split()]

    def kill(self) -> None:
        """SIGKILL every process of the node (the machine dies; its /tmp goes with its mount namespace)."""
        for _ in range(3):
            pids = set(self.pids()) | {p.pid for p in self.processes if p.poll() is None}
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            for process in self.processes:
                try:
                    process.wait(TIMEOUT)
                except subprocess.TimeoutExpired:
                    pass
            time.sleep(0.1)

    def tmp_files(self) -> list[str]:
        """What is in this node's /tmp now (empty after a wipe)."""
        done = subprocess.run(["nsenter", f"--target={self.holder.pid}", "--mount", "--", "ls", "-A", "/tmp"],
                              capture_output=True, text=True, timeout=TIMEOUT)
        return done.stdout.split()

    def crash(self) -> None:
        """SIGKILL every process of the node but the one holding its namespaces, then empty its /tmp: the
        machine as it comes back from a power cut, with nothing running and no scratch."""
        for pid in self.pids():
            if pid != self.holder.pid:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + TIMEOUT
        while set(self.pids()) - {self.holder.pid} and time.monotonic() < deadline:
            time.sleep(0.05)
        for process in self.processes[1:]:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(TIMEOUT)
        subprocess.run(["nsenter", f"--target={self.holder.pid}", "--mount", "--", "find", "/tmp", "-mindepth", "1",
                        "-delete"], check=True, timeout=TIMEOUT)

    def link(self, up: bool) -> None:
        """Take this node's cable out of the bridge, or plug it back in."""
        _ip("link", "set", self.veth, "up" if up else "down")

    def close(self) -> None:
        self.kill()
        _ip("netns", "del", self.ns, check=False)


_SERIAL = itertools.count()


class Network:
    """A bridge and the nodes on it; a context manager that removes everything it made."""

    def __init__(self, logs: Path, shared: Path) -> None:
        serial = next(_SERIAL)
        self.tag = f"{os.getpid() % 1000:03d}{serial % 100:02d}"
        self.subnet = 1 + (os.getpid() + serial) % 250
        self.bridge = f"epcg{self.tag}br"
        self.logs, self.shared = logs, shared
        self.nodes: list[Node] = []
        logs.mkdir(parents=True, exist_ok=True)
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"198.18.{self.subnet}.254/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")

    def node(self, name: str, shared: bool = True) -> Node:
        """A new node on the bridge (the next address), with the shared directory at /mnt unless ``shared`` is
        False."""
        return Node(self, len(self.nodes) + 1, name, self.shared if shared else None, self.logs)

    def close(self) -> None:
        for node in self.nodes:
            node.close()
        _ip("link", "del", self.bridge, check=False)

    def __enter__(self) -> Network:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _readline(process: subprocess.Popen, timeout: float) -> str:
    """A line of the process's stdout, or '' after ``timeout`` seconds or its exit."""
    import selectors

    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if selector.select(timeout):
            return process.stdout.readline()
    return ""


def wait_port(address: str, port: int, timeout: float) -> float:
    """Seconds until ``address:port`` accepts a connection (from the host, through the bridge)."""
    began = time.monotonic()
    while True:
        try:
            socket.create_connection((address, port), timeout=1).close()
            return time.monotonic() - began
        except OSError:
            if time.monotonic() - began > timeout:
                raise TimeoutError(f"{address}:{port} not listening after {timeout:.0f} s") from None
            time.sleep(0.1)


def wait_workers(scheduler: str, hosts: dict[str, int], timeout: float) -> float:
    """Seconds until the scheduler has exactly the given workers per host for the hosts named."""
    from distributed import Client

    began = time.monotonic()
    with Client(scheduler, timeout="10s") as client:
        while True:
            counts: dict[str, int] = {}
            for address in client.scheduler_info(n_workers=-1)["workers"]:
                host = address.split("://")[-1].rsplit(":", 1)[0]
                counts[host] = counts.get(host, 0) + 1
            if all(counts.get(host, 0) == n for host, n in hosts.items()):
                return time.monotonic() - began
            if time.monotonic() - began > timeout:
                raise TimeoutError(f"workers per host {counts}, wanted {hosts}, after {timeout:.0f} s")
            time.sleep(0.2)
