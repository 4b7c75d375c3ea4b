"""Reach compute: one small spec per way — the embedded local cluster, a running scheduler, SLURM or PBS.

A cluster file (``cluster/*.toml``) is data, validated like a job file:

    kind = "local" | "scheduler" | "slurm" | "pbs"

The embedded default listens on 127.0.0.1 only. Every way can name TLS
certificate files (distributed's security settings). Each worker runs
``threads_per_worker`` Dask threads and numba and OpenMP are pinned to one
thread per Dask thread; only a job kind whose tasks share their reads gets one
thread more than the machine's cores by default (``SPARE_THREADS``).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pydantic

from epcg.runtime.errors import TaskFailed, UserError, one_line
from epcg.runtime.jobs import check_types, describe_error, read_toml
from epcg.runtime.kind import JobKind
from epcg.runtime.probe import check_scheduler


class TLS(pydantic.BaseModel):
    """Certificate files for ``tls://`` connections (all three are required)."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)
    ca_file: Path
    cert: Path
    key: Path

    @pydantic.field_validator("ca_file", "cert", "key")
    @classmethod
    def _exists(cls, path: Path) -> Path:
        if not path.is_file():
            raise ValueError(f"file {path} does not exist")
        return path

    def security(self) -> Any:
        from distributed.security import Security

        return Security(
            tls_ca_file=str(self.ca_file), tls_client_cert=str(self.cert), tls_client_key=str(self.key),
            tls_scheduler_cert=str(self.cert), tls_scheduler_key=str(self.key),
            tls_worker_cert=str(self.cert), tls_worker_key=str(self.key), require_encryption=True,
        )


def check_host(host: str, *, bind: bool) -> str:
    """``host`` if it names an address (and, with ``bind``, one of this machine's, which a local scheduler
    listens on); ValueError naming what is wrong otherwise.

    >>> check_host("127.0.0.1", bind=True)
    '127.0.0.1'
    """
    import socket

    name = host.strip("[]")
    if not name or any(c.isspace() for c in name):
        raise ValueError(f"{host!r} is not a host name or address")
    try:
        infos = socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise ValueError(f"{host!r} does not resolve to an address") from None
    if bind:
        family, _, _, _, address = infos[0]
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((address[0], 0))
            except OSError:
                raise ValueError(f"{host!r} is not an address of this machine (nothing can listen on it)") from None
    return host


def check_address(text: str | None, *, bind: bool) -> str | None:
    """A ``HOST:PORT`` (or ``:PORT``) a dashboard listens on; ValueError naming what is wrong otherwise.

    >>> check_address(":8787", bind=True), check_address("127.0.0.1:0", bind=True)
    (':8787', '127.0.0.1:0')
    """
    if text is None:
        return None
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{text!r} is not HOST:PORT (a port 0..65535, e.g. '127.0.0.1:8787' or ':8787')")
    if host:
        check_host(host, bind=bind)
    return text


MAX_MEMORY = 1 << 50
"""Largest memory per worker process a size may give (1 PiB): beyond it a size is a typo."""


def parse_size(text: str, what: str) -> int:
    """Bytes in ``text`` (like '64GiB'); a UserError naming ``what`` unless it is a size from 1 B to 1 PiB.

    >>> parse_size("2 GiB", "--memory-limit")
    2147483648
    >>> parse_size("-5GB", "--memory-limit")
    Traceback (most recent call last):
    ...
    epcg.runtime.errors.UserError: --memory-limit '-5GB' is not a size from 1 B to 1 PiB, like '64GiB'
    """
    from dask.utils import parse_bytes

    try:
        value = parse_bytes(text)
    except (ValueError, TypeError):
        value = None
    if value is None or not 0 < value <= MAX_MEMORY:
        raise UserError(f"{what} {text!r} is not a size from 1 B to 1 PiB, like '64GiB'")
    return int(value)


class _Spec(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)
    tls: TLS | None = None


class LocalSpec(_Spec):
    """The embedded default: a LocalCluster of worker processes on this machine."""

    kind: Literal["local"] = "local"
    workers: int | None = pydantic.Field(None, ge=1)
    """Worker processes; default one per core."""
    threads_per_worker: int = pydantic.Field(1, ge=1)
    host: str = "127.0.0.1"
    dashboard_address: str | None = "127.0.0.1:8787"
    memory_limit: str = "auto"

    @pydantic.field_validator("host")
    @classmethod
    def _host(cls, text: str) -> str:
        return check_host(text, bind=True)

    @pydantic.field_validator("dashboard_address")
    @classmethod
    def _dashboard(cls, text: str | None) -> str | None:
        return check_address(text, bind=True)

    @pydantic.field_validator("memory_limit")
    @classmethod
    def _size(cls, text: str) -> str:
        if text != "auto":
            try:
                parse_size(text, "memory_limit")
            except UserError as exc:
                raise ValueError(str(exc).removeprefix("memory_limit ")) from None
        return text


class SchedulerSpec(_Spec):
    """A scheduler someone already started: an address or a scheduler file."""

    kind: Literal["scheduler"]
    address: str | None = None
    scheduler_file: Path | None = None

    @pydantic.model_validator(mode="after")
    def _one(self) -> SchedulerSpec:
        if (self.address is None) == (self.scheduler_file is None):
            raise ValueError("give exactly one of 'address' and 'scheduler_file'")
        return self


class Adapt(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)
    minimum: int = pydantic.Field(1, ge=0)
    maximum: int = pydantic.Field(4, ge=1)


class JobqueueSpec(_Spec):
    """A SLURM or PBS cluster: workers as batch jobs through dask-jobqueue (``run``), or whole
    runs as batch jobs that requeue themselves (``submit``, :mod:`epcg.runtime.batch`)."""

    kind: Literal["slurm", "pbs"]
    cores: int = pydantic.Field(ge=1)
    """Cores per job."""
    memory: str
    """Memory per job, e.g. '8GiB'."""
    processes: int = pydantic.Field(1, ge=1)
    """Worker processes per job; each gets cores/processes threads."""
    walltime: str = "01:00:00"
    queue: str | None = None
    account: str | None = None
    interface: str | None = None
    local_directory: str | None = None
    log_directory: str | None = None
    prologue: list[str] = []
    """Extra shell lines run before the worker starts (after the thread pinning)."""
    python: str | None = None
    adapt: Adapt = Adapt()
    dashboard_address: str | None = "127.0.0.1:8787"
    nodes: int = pydantic.Field(1, ge=1)
    """``submit``: nodes of one allocation."""
    tasks_per_node: int | None = pydantic.Field(None, ge=1)
    """``submit``: single-threaded worker processes per node (default: one per core)."""
    signal_lead: int = pydantic.Field(90, ge=1)
    """``submit``: seconds before the walltime at which the driver stops handing out chunks and requeues."""
    max_requeues: int = pydantic.Field(10, ge=0)
    """``submit``: continuation jobs at most after the first allocation."""
    directives: list[str] = []
    """``submit``: extra header lines of the batch script, as written (``#SBATCH --qos=long``)."""

    @property
    def threads_per_worker(self) -> int:
        return max(1, self.cores // self.processes)

    @property
    def walltime_seconds(self) -> int:
        return parse_walltime(self.walltime)

    @pydantic.field_validator("dashboard_address")
    @classmethod
    def _dashboard(cls, text: str | None) -> str | None:
        return check_address(text, bind=False)  # the scheduler may run on another machine: its name must resolve

    @pydantic.field_validator("walltime")
    @classmethod
    def _walltime(cls, text: str) -> str:
        parse_walltime(text)
        return text

    @pydantic.field_validator("memory")
    @classmethod
    def _memory(cls, text: str) -> str:
        from dask.utils import parse_bytes

        try:
            parse_bytes(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a size like '8GiB'") from None
        return text

    def job_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of the dask-jobqueue cluster class."""
        pin = self.threads_per_worker
        kwargs: dict[str, Any] = {
            "cores": self.cores, "memory": self.memory, "processes": self.processes,
            "walltime": self.walltime, "queue": self.queue, "account": self.account,
            "interface": self.interface, "local_directory": self.local_directory,
            "log_directory": self.log_directory, "python": self.python,
            "job_script_prologue": [
                f"export NUMBA_NUM_THREADS={pin}", "export OMP_NUM_THREADS=1", *self.prologue,
            ],
            "scheduler_options": {"dashboard_address": self.dashboard_address},
            "worker_extra_args": _staggered_lifetime(self.walltime_seconds),
        }
        if self.tls is not None:
            kwargs.update(security=self.tls.security(), protocol="tls://")
        return {k: v for k, v in kwargs.items() if v is not None}


def parse_walltime(text: str) -> int:
    """Seconds of a batch walltime: ``[D-]HH:MM:SS``, ``MM:SS`` or minutes (SLURM's forms).

    >>> parse_walltime("01:00:00"), parse_walltime("1-00:00:00"), parse_walltime("05:30"), parse_walltime("2")
    (3600, 86400, 330, 120)
    """
    days, _, clock = text.strip().rpartition("-")
    parts = clock.split(":")
    try:
        numbers = [int(p) for p in parts]
        day = int(days) if days else 0
    except ValueError:
        raise ValueError(f"walltime {text!r} is not [D-]HH:MM:SS") from None
    if len(numbers) > 3 or any(n < 0 for n in numbers) or day < 0:
        raise ValueError(f"walltime {text!r} is not [D-]HH:MM:SS")
    if len(numbers) == 1:
        seconds = numbers[0] * 60
    elif len(numbers) == 2:
        seconds = numbers[0] * 60 + numbers[1]
    else:
        seconds = numbers[0] * 3600 + numbers[1] * 60 + numbers[2]
    seconds += day * 86400
    if seconds <= 0:
        raise ValueError(f"walltime {text!r} is not positive")
    return seconds


def _staggered_lifetime(walltime: int) -> list[str]:
    """Worker jobs retire between 65 % and 95 % of their walltime, each at its own moment, so jobs
    started together do not expire together and the run always has workers while adapt replaces them."""
    return ["--lifetime", f"{int(walltime * 0.8)}s", "--lifetime-stagger", f"{int(walltime * 0.15)}s"]


_SPECS: dict[str, type[_Spec]] = {
    "local": LocalSpec, "scheduler": SchedulerSpec, "slurm": JobqueueSpec, "pbs": JobqueueSpec,
}


def load_cluster(path: Path) -> LocalSpec | SchedulerSpec | JobqueueSpec:
    """Read and validate a cluster file (one clear UserError line on any mistake)."""
    data = read_toml(path, "cluster file")
    kind = data.get("kind")
    model = _SPECS.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise UserError(f"cluster file {path}: 'kind' must be one of {', '.join(_SPECS)}, got {data.get('kind')!r}")
    try:
        check_types(data, model)
        spec = model.model_validate(data)
        assert isinstance(spec, LocalSpec | SchedulerSpec | JobqueueSpec)
        return spec
    except pydantic.ValidationError as exc:
        raise UserError(f"cluster file {path}: {describe_error(exc, model)}") from None


def default_workers() -> int:
    """One single-threaded worker process per core: numba kernels never oversubscribe."""
    return max(1, len(os.sched_getaffinity(0)))


SPARE_THREADS = 1
"""Threads the embedded cluster's one process runs beyond one per core, for a job kind whose tasks share what they
read (``default_shape``): while a task stores its chunk and record (compression handed to Zarr's threads, ``fsync``)
its core would wait idle, and the spare thread's task computes on it meanwhile."""


def default_shape(kind: JobKind) -> tuple[int, int]:
    """Worker processes and threads per process of the embedded cluster when nobody chose them: one
    single-threaded process per core, or, for a job kind whose tasks share what they read within a process and
    whose kernels release the GIL (``THREADS_SHARE_READS``: Fling!'s layers), one process with a thread per core
    and ``SPARE_THREADS`` more, which holds that once per machine."""
    if kind.THREADS_SHARE_READS:
        return 1, default_workers() + SPARE_THREADS
    return default_workers(), 1


def computing(workers: int, threads: int) -> int:
    """Tasks an embedded cluster of ``workers`` processes with ``threads`` each computes at once: no more than
    this machine's cores, whatever waits beside them."""
    return max(1, min(workers * threads, default_workers()))


@contextlib.contextmanager
def connect(spec: LocalSpec | SchedulerSpec | JobqueueSpec | None = None) -> Iterator[Any]:
    """Yield a ``distributed.Client`` for the spec (default: the embedded local cluster)."""
    from distributed import Client

    spec = spec or LocalSpec()
    security = spec.tls.security() if spec.tls else None
    if isinstance(spec, SchedulerSpec):
        target = spec.address or str(spec.scheduler_file)
        if spec.scheduler_file is not None and not spec.scheduler_file.is_file():
            raise UserError(f"scheduler file {spec.scheduler_file} does not exist (is the scheduler running?)")
        if security is None:
            security = _tls_from_config(spec)
        check_scheduler(spec.address or _file_address(Path(target)))
        try:
            if spec.address:
                client = Client(spec.address, timeout="5s", security=security)
            else:
                client = Client(scheduler_file=str(spec.scheduler_file), timeout="5s", security=security)
        except (OSError, ValueError, TypeError) as exc:
            raise UserError(f"cannot reach scheduler {target}: {one_line(exc)}") from None
        with client:
            yield client
        return
    with _start(spec, security) as cluster, Client(cluster, security=security) as client:
        yield client


def _file_address(path: Path) -> str:
    """The address a scheduler file names ("" if it names none: Dask's client says what is wrong with it)."""
    import json

    try:
        address = json.loads(path.read_text()).get("address", "")
    except (OSError, ValueError, AttributeError):
        return ""
    return address if isinstance(address, str) else ""


def _tls_from_config(spec: SchedulerSpec) -> Any:
    """Security from Dask's configuration for a ``tls://`` scheduler; UserError if it names no certificates."""
    import dask

    address = spec.address
    if address is None:
        import json

        assert spec.scheduler_file is not None  # the spec's validator asks for one of the two
        try:
            address = json.loads(spec.scheduler_file.read_text()).get("address", "")
        except (OSError, ValueError, AttributeError):
            raise UserError(f"scheduler file {spec.scheduler_file} is not a Dask scheduler file") from None
    if not str(address).startswith("tls://"):
        return None
    tls = dask.config.get("distributed.comm.tls", {}) or {}
    if not (tls.get("ca-file") and (tls.get("client") or {}).get("cert")):
        raise UserError(
            f"scheduler {address} uses TLS but no certificates were given: use --cluster FILE with kind = "
            "\"scheduler\" and a [tls] table (ca_file, cert, key), or set distributed.comm.tls.ca-file and "
            "distributed.comm.tls.client.cert/key in Dask's configuration"
        )
    from distributed.security import Security

    return Security()


def worker_memory(client: Any, spec: LocalSpec | SchedulerSpec | JobqueueSpec | None) -> int | None:
    """The smallest memory limit of the cluster's worker processes (None when unknown or unlimited)."""
    from dask.utils import parse_bytes

    limits = [w.get("memory_limit") or 0 for w in client.scheduler_info(n_workers=-1)["workers"].values()]
    if limits and all(limits):
        return min(limits)
    if isinstance(spec, JobqueueSpec):
        return parse_bytes(spec.memory) // spec.processes
    return None


def local_memory(spec: LocalSpec) -> int:
    """The memory limit each worker of the embedded cluster will get (Dask's 'auto' rule)."""
    from epcg.runtime.estimate import machine_memory

    if spec.memory_limit == "auto":
        return machine_memory() // (spec.workers or default_workers())
    return parse_size(spec.memory_limit, "memory_limit")


def _close_quietly(cluster: Any) -> None:
    """Close a local cluster without distributed's own errors: a cluster whose workers kept dying can raise
    while it closes (a KeyError in SpecCluster's worker-status watch), which would hide why the run ended.
    Its dead connections' coroutines are reported by asyncio ("Task exception was never retrieved") when they
    are collected, after the cluster is gone, so asyncio's log stays quiet from here on."""
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    loggers = [logging.getLogger(name) for name in ("distributed", "distributed.deploy.cluster")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        cluster.close()
    except (KeyError, RuntimeError, OSError, TimeoutError):
        pass
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


@contextlib.contextmanager
def _start(spec: LocalSpec | JobqueueSpec, security: Any) -> Iterator[Any]:
    if isinstance(spec, LocalSpec):
        from distributed import LocalCluster

        threads = spec.threads_per_worker
        try:
            cluster = LocalCluster(
                host=spec.host,
                n_workers=spec.workers or default_workers(),
                threads_per_worker=threads,
                processes=True,
                dashboard_address=spec.dashboard_address,
                memory_limit=spec.memory_limit,
                silence_logs=logging.ERROR,
                env={"NUMBA_NUM_THREADS": str(threads), "OMP_NUM_THREADS": "1"},
                **({"security": security, "protocol": "tls://"} if security else {}),
            )
        except RuntimeError as exc:  # "Nanny failed to start."
            raise TaskFailed(f"the local cluster's workers failed to start ({exc}): memory_limit "
                             f"{spec.memory_limit!r} is below what a worker needs (about 250 MB), or see the "
                             "workers' messages above") from None
        try:
            yield cluster
        finally:
            _close_quietly(cluster)
        return
    try:
        import dask_jobqueue
    except ImportError:
        raise UserError(f"kind = {spec.kind!r} needs dask-jobqueue: pip install 'epcg[cluster]'") from None
    cls = dask_jobqueue.SLURMCluster if spec.kind == "slurm" else dask_jobqueue.PBSCluster
    with cls(**spec.job_kwargs()) as cluster:
        cluster.adapt(minimum_jobs=spec.adapt.minimum, maximum_jobs=spec.adapt.maximum)
        yield cluster


def dashboard_url(client: Any, spec: LocalSpec | SchedulerSpec | JobqueueSpec | None) -> str | None:
    """The dashboard's address as the scheduler listens on it: the host of the spec's ``dashboard_address``
    (Dask's own link names the scheduler's host instead) and the port the dashboard really got."""
    link: str | None = client.dashboard_link
    port = (client.scheduler_info().get("services") or {}).get("dashboard")
    address = getattr(spec, "dashboard_address", None)
    host = address.rpartition(":")[0].strip("[]") if address and ":" in address else ""
    if port is None or host in ("", "0.0.0.0", "::"):
        return link
    return f"http://{host}:{port}/status"
