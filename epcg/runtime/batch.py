"""Whole runs as batch jobs: the script, its submission, the allocation's own Dask cluster, requeueing.

``epcg submit`` writes ``DIR/batch.sh`` (a person can read and re-submit it)
and submits it. Each allocation runs the *driver* (``epcg drive DIR``, :mod:`epcg.runtime.driver`): the
Dask scheduler and the client on the allocation's first node, one
single-threaded ``dask worker`` per core started by the batch system's
launcher (``srun``, ``pbsdsh``) and joining through ``DIR/scheduler.json``.
At its start an allocation submits its own continuation (the same script,
``afterany`` its own job), so even a driver killed outright is followed by
the next allocation; a driver that finishes the run, runs out of requeues or
sees an allocation that made no progress cancels it and says why.

Before the time limit the batch system signals the driver (SLURM
``--signal=B:USR1@lead``; PBS has no such signal, so the driver's own timer
at walltime - lead does it, and does it for SLURM too if the signal is late).
The driver then stops handing out chunks, lets the chunks in flight finish
(their records are the checkpoint) and ends the allocation.

The run directory keeps, besides the run itself (all writes are in the
functions under "run directory" below)::

    DIR/batch.sh or batch.pbs   the batch script
    DIR/batch.json              how the run was submitted: batch kind, cluster file, limits
    DIR/allocations.json        one entry per allocation (job id, node, start, end, why, chunks),
                                the pending continuation, whether `epcg cancel` was asked
                                (:mod:`epcg.runtime.history`: changed only by compare-and-swap)
    DIR/scheduler.json          the live allocation's Dask scheduler file
    DIR/logs/                   the batch system's and the workers' logs
    DIR/driver.log              the output of a detached driver (``submit --detach``)
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from epcg.runtime import history, processes
from epcg.runtime.cluster import JobqueueSpec
from epcg.runtime.errors import UserError, one_line
from epcg.runtime.schemas import Batch, DetachedBatch, Malformed, SystemBatch, typed
from epcg.runtime.shell import command as shell_command
from epcg.runtime.store import RunDir, write_atomic

BATCH_FILE = "batch.json"
SCHEDULER_FILE = "scheduler.json"
DRIVER_LOG = "driver.log"
LOG_DIR = "logs"
DRAIN_MARGIN = 10
"""Seconds of the signal lead kept free after the chunks in flight are waited for (the driver's own exit)."""


# -- batch systems --------------------------------------------------------------


Info = TypeVar("Info", SystemBatch, DetachedBatch)
"""The record of batch.json a batch kind writes and reads."""
Submitted = SystemBatch | DetachedBatch
"""A run's batch.json, as the record of its batch kind."""


class BatchKind(Generic[Info]):
    """How a submitted run's allocations start, continue, stop and are described: a batch system's
    (:class:`BatchSystem`: SLURM, PBS) or a detached driver on this machine's (:class:`Detached`). ``info`` is
    the run's batch.json, the record of the kind's own type."""

    name: str
    continue_how: str
    """What ``epcg submit --resume DIR`` needs besides the directory to continue the run."""

    # -- submitting (Engine.submit) ---------------------------------------------------------------------------

    def workers(self, spec: Any) -> tuple[int, int | None]:
        """Workers and memory per worker of one allocation (what the plan is fitted to)."""
        raise NotImplementedError

    def script(self, spec: Any, info: Info, run: Path, job_name: str) -> str | None:
        """The batch script of one allocation (None: the kind has none)."""
        raise NotImplementedError

    def start(self, run: RunDir, spec: Any, info: Info, job_name: str, say: Callable[[str], None]) -> None:
        """Start the run's first allocation (the run is recorded in batch.json and the history) and say how."""
        raise NotImplementedError

    # -- inside an allocation (the driver) --------------------------------------------------------------------

    def allocation_id(self) -> str | None:
        """The batch job id of the allocation this process runs in (None: not a batch job)."""
        return None

    def limits(self, info: Info, job_id: str | None, began: float) -> tuple[float | None, float | None]:
        """The allocation's time limit and when to drain before it (epoch seconds; None: no limit)."""
        return None, None

    def grace(self, info: Info) -> int:
        """Seconds the chunks in flight get after a drain."""
        raise NotImplementedError

    def max_requeues(self, info: Info) -> int | None:
        """Allocations after the first that a submission may use (None: no limit)."""
        return None

    def continuation(self, run: RunDir, info: Info, after: str | None, number: int,
                     say: Callable[[str], None]) -> str | None:
        """Submit the allocation that follows this one (its job id), or say why none (None)."""
        return None

    def cancel_job(self, job_id: str, drain: bool) -> None:
        """Cancel a job of this kind (``drain``: tell the running one to stop handing out chunks instead)."""

    def cluster(self, run: RunDir, info: Info) -> contextlib.AbstractContextManager[Path | str | None]:
        """Where the allocation's chunks run: the scheduler file to connect through (None: the submission's)."""
        raise NotImplementedError

    # -- from outside (epcg cancel, epcg status) --------------------------------------------------------------

    def stop(self, run: RunDir, past: history.History, waiting: str | None) -> tuple[list[str], list[str]]:
        """Stop the waiting continuation and tell each running allocation to drain (``epcg cancel``): what was
        stopped and what could not be signalled, as phrases."""
        raise NotImplementedError

    def states(self, ids: list[str], env: dict[str, str] | None = None) -> dict[str, str]:
        """The batch system's state of each of these jobs it knows."""
        return {}

    def head(self, run: RunDir, info: Info, requeues: int) -> str:
        """``epcg status``'s first line of the submission."""
        return f"submitted: {self.name}"

    def unseen(self, run: RunDir, info: Info, alloc: history.Allocation) -> str | None:
        """Why an allocation without an end does not run any more, when only this host can tell (None: ask
        :meth:`states`)."""
        return None


class BatchSystem(BatchKind[SystemBatch]):
    """What differs between batch systems: the script header, the commands, the launcher, the job id."""

    submit_command: str
    cancel_command: str
    script_name: str
    job_id_variable: str
    has_early_signal: bool
    continue_how = "--cluster FILE"

    def header(self, spec: JobqueueSpec, walltime: int, run: Path, job_name: str) -> list[str]:
        raise NotImplementedError

    def submit_args(self, script: Path, after: str | None) -> list[str]:
        raise NotImplementedError

    def parse_id(self, stdout: str) -> str:
        return stdout.strip().split(";")[0].strip()

    def launcher(self, spec: JobqueueSpec, run: Path) -> list[str]:
        raise NotImplementedError

    def cancel_args(self, job_id: str, drain: bool) -> list[str]:
        raise NotImplementedError

    def end_time(self, job_id: str) -> float | None:
        """When the batch system will end the job (epoch seconds), if it says."""
        return None

    def workers(self, spec: Any) -> tuple[int, int | None]:
        return spec.nodes * workers_per_node(spec), worker_memory_limit(spec)

    def script(self, spec: Any, info: SystemBatch, run: Path, job_name: str) -> str | None:
        return script(self, spec, int(info.walltime_seconds), run, job_name, spec.python or sys.executable)

    def start(self, run: RunDir, spec: Any, info: SystemBatch, job_name: str, say: Callable[[str], None]) -> None:
        logs_dir(run)
        script_path = folder(run) / self.script_name
        job_id = submit(self, script_path)
        history.update(run, lambda past: past.waiting(job_id))
        say(f"{job_name}: submitted batch job {job_id} -> {run.path}")
        say(f"batch script: {script_path} (walltime {info.walltime_seconds} s, "
            f"signal {spec.signal_lead} s before it, at most {spec.max_requeues} requeues)")

    def allocation_id(self) -> str | None:
        return os.environ.get(self.job_id_variable)

    def limits(self, info: SystemBatch, job_id: str | None, began: float) -> tuple[float | None, float | None]:
        end = (self.end_time(job_id) if job_id else None) or began + info.walltime_seconds
        return end, end - info.signal_lead

    def grace(self, info: SystemBatch) -> int:
        return max(1, int(info.signal_lead) - DRAIN_MARGIN)

    def max_requeues(self, info: SystemBatch) -> int | None:
        return int(info.max_requeues)

    def continuation(self, run: RunDir, info: SystemBatch, after: str | None, number: int,
                     say: Callable[[str], None]) -> str | None:
        if number - 1 >= info.max_requeues:
            say(f"epcg: no continuation: all {info.max_requeues} requeues are spent")
            return None
        return submit(self, folder(run) / info.script, after=after)

    def cancel_job(self, job_id: str, drain: bool) -> None:
        call(self.cancel_args(job_id, drain))

    def cluster(self, run: RunDir, info: SystemBatch) -> contextlib.AbstractContextManager[Path | str | None]:
        return allocation_cluster(run, JobqueueSpec.model_validate(info.cluster), self)

    def stop(self, run: RunDir, past: history.History, waiting: str | None) -> tuple[list[str], list[str]]:
        stopped = []
        if waiting:
            self.cancel_job(waiting, drain=False)
            stopped.append(f"job {waiting} (waiting)")
        for alloc in past.allocations:
            if (job := alloc.get("job")) and not alloc.get("ended_at") and self.states([job]):
                self.cancel_job(job, drain=True)
                stopped.append(f"job {alloc['job']} (running: stops handing out chunks)")
        return stopped, []

    def head(self, run: RunDir, info: SystemBatch, requeues: int) -> str:
        return f"submitted: {self.name} ({folder(run) / info.script}), requeued {requeues} of {info.max_requeues}"


def _clock(seconds: int) -> str:
    """``HH:MM:SS`` (hours may pass 24), the form both SLURM and PBS read.

    >>> _clock(3600), _clock(90061)
    ('01:00:00', '25:01:01')
    """
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def _megabytes(memory: str) -> int:
    from dask.utils import parse_bytes

    return max(1, parse_bytes(memory) // 2**20)


def workers_per_node(spec: JobqueueSpec) -> int:
    """Single-threaded worker processes per node: ``tasks_per_node``, else one per core."""
    return spec.tasks_per_node or spec.cores


def worker_memory_limit(spec: JobqueueSpec) -> int:
    """Bytes each worker of an allocation may use: the node's memory shared by its workers."""
    from dask.utils import parse_bytes

    return parse_bytes(spec.memory) // workers_per_node(spec)


class Slurm(BatchSystem):
    name = "slurm"
    submit_command = "sbatch"
    cancel_command = "scancel"
    script_name = "batch.sh"
    job_id_variable = "SLURM_JOB_ID"
    has_early_signal = True

    def header(self, spec: JobqueueSpec, walltime: int, run: Path, job_name: str) -> list[str]:
        lines = [
            f"--job-name=epcg-{job_name}",
            f"--nodes={spec.nodes}",
            f"--ntasks-per-node={workers_per_node(spec)}",
            "--cpus-per-task=1",
            f"--mem={_megabytes(spec.memory)}M",
            f"--time={_clock(walltime)}",
            f"--signal=B:USR1@{spec.signal_lead}",
            f"--output={run / LOG_DIR}/slurm-%j.out",
            "--open-mode=append",
            f"--chdir={run}",
        ]
        if spec.queue:
            lines.append(f"--partition={spec.queue}")
        if spec.account:
            lines.append(f"--account={spec.account}")
        return [f"#SBATCH {line}" for line in lines] + list(spec.directives)

    def submit_args(self, script: Path, after: str | None) -> list[str]:
        return ["sbatch", "--parsable", *([f"--dependency=afterany:{after}"] if after else []), str(script)]

    def launcher(self, spec: JobqueueSpec, run: Path) -> list[str]:
        return ["srun", f"--ntasks={spec.nodes * workers_per_node(spec)}", "--cpus-per-task=1",
                "--kill-on-bad-exit=0", f"--output={run / LOG_DIR}/worker-%j-%t.log"]

    def states(self, ids: list[str], env: dict[str, str] | None = None) -> dict[str, str]:
        if not ids:
            return {}
        out = _quiet(["squeue", "-h", "-o", "%i %T %r", "-j", ",".join(ids)], env)
        states = {}
        for line in out.splitlines():
            parts = line.split(None, 2)
            if len(parts) >= 2:
                reason = parts[2] if len(parts) > 2 and parts[2] not in ("None", "(null)") else ""
                states[parts[0]] = parts[1].lower() + (f" ({reason})" if reason else "")
        return states

    def cancel_args(self, job_id: str, drain: bool) -> list[str]:
        return ["scancel", "--batch", "--signal=USR1", job_id] if drain else ["scancel", job_id]

    def end_time(self, job_id: str) -> float | None:
        text = _quiet(["squeue", "-h", "-j", job_id, "-o", "%e"]).strip()
        try:
            return time.mktime(time.strptime(text, "%Y-%m-%dT%H:%M:%S"))
        except ValueError:
            return None


class Pbs(BatchSystem):
    name = "pbs"
    submit_command = "qsub"
    cancel_command = "qdel"
    script_name = "batch.pbs"
    job_id_variable = "PBS_JOBID"
    has_early_signal = False

    def header(self, spec: JobqueueSpec, walltime: int, run: Path, job_name: str) -> list[str]:
        select = (f"select={spec.nodes}:ncpus={spec.cores}:mpiprocs={workers_per_node(spec)}"
                  f":mem={_megabytes(spec.memory)}mb")
        lines = [f"-N epcg-{job_name[:10]}", f"-l {select}", f"-l walltime={_clock(walltime)}",
                 "-j oe", f"-o {run / LOG_DIR}/"]
        if spec.queue:
            lines.append(f"-q {spec.queue}")
        if spec.account:
            lines.append(f"-A {spec.account}")
        return [f"#PBS {line}" for line in lines] + list(spec.directives) + [f"cd {shlex.quote(str(run))}"]

    def submit_args(self, script: Path, after: str | None) -> list[str]:
        return ["qsub", *(["-W", f"depend=afterany:{after}"] if after else []), str(script)]

    def launcher(self, spec: JobqueueSpec, run: Path) -> list[str]:
        return ["pbsdsh", "--"]

    def states(self, ids: list[str], env: dict[str, str] | None = None) -> dict[str, str]:
        names = {"Q": "pending", "R": "running", "H": "held", "E": "exiting", "F": "finished", "W": "waiting"}
        states = {}
        for job_id in ids:
            out = _quiet(["qstat", "-x", "-f", job_id], env)
            for line in out.splitlines():
                key, _, value = line.strip().partition(" = ")
                if key == "job_state":
                    states[job_id] = names.get(value.strip(), value.strip())
        return states

    def cancel_args(self, job_id: str, drain: bool) -> list[str]:
        return ["qsig", "-s", "USR1", job_id] if drain else ["qdel", job_id]


DETACHED_GRACE = 30
"""Seconds a detached driver gives the chunks in flight after ``epcg cancel``."""


class Detached(BatchKind[DetachedBatch]):
    """No batch system (``submit --detach``): one driver, a daemon on this machine, runs the run on the cluster
    the submission named; nothing requeues it, ``epcg cancel`` signals its process."""

    name = "detached"
    continue_how = "--detach"

    def workers(self, spec: Any) -> tuple[int, int | None]:
        from epcg.runtime.cluster import default_workers, local_memory

        return spec.workers or default_workers(), local_memory(spec)

    def script(self, spec: Any, info: DetachedBatch, run: Path, job_name: str) -> str | None:
        return None

    def start(self, run: RunDir, spec: Any, info: DetachedBatch, job_name: str, say: Callable[[str], None]) -> None:
        pid = spawn_detached(run)
        say(f"{job_name}: driver started in the background (pid {pid}) -> {run.path}")
        say(f"its output: {driver_log(run)}")

    def grace(self, info: DetachedBatch) -> int:
        return DETACHED_GRACE

    def cluster(self, run: RunDir, info: DetachedBatch) -> contextlib.AbstractContextManager[Path | str | None]:
        return contextlib.nullcontext(info.connect.scheduler_file)

    def stop(self, run: RunDir, past: history.History, waiting: str | None) -> tuple[list[str], list[str]]:
        stopped, left = [], []
        for alloc in past.allocations:
            if alloc.get("ended_at"):
                continue
            seen = processes.signal_if_ours(alloc, signal.SIGUSR1)
            if seen == "alive":
                stopped.append(f"driver pid {alloc['pid']}")
            elif seen == "elsewhere":
                left.append(f"driver pid {alloc.get('pid')} on {alloc.get('node')} was not signalled (another host: "
                            f"run {shell_command('cancel', run.path)} there)")
            else:
                left.append(f"driver pid {alloc.get('pid')} is gone (that process ended; "
                            "nothing was signalled)")
        return stopped, left

    def unseen(self, run: RunDir, info: DetachedBatch, alloc: history.Allocation) -> str | None:
        seen = processes.state(alloc)
        if seen == "alive":
            return None
        if seen == "elsewhere":
            return (f"its driver ran on {alloc.get('node')}, which this host cannot see into: "
                    f"{shell_command('status', run.path)} there tells whether it lives")
        return (f"its driver (pid {alloc.get('pid')}) is gone, killed before it could record its end; "
                f"{continue_command(run, info)} continues")


SYSTEMS: dict[str, BatchSystem] = {"slurm": Slurm(), "pbs": Pbs()}
"""The batch systems a cluster file's ``kind`` names."""
KINDS: dict[str, BatchKind[Any]] = {**SYSTEMS, "detached": Detached()}
"""Every batch kind by the name batch.json records."""


def kind_of(info: Submitted) -> BatchKind[Any]:
    """The batch kind a run's batch.json names."""
    return KINDS[info.kind]


def call(args: list[str]) -> None:
    """Run a batch system's command, ignoring its failure (the job may be gone already)."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(args, capture_output=True, timeout=30)


def _quiet(args: list[str], env: dict[str, str] | None = None) -> str:
    """A query's standard output, or "" if the command is missing or fails (status shows what it can)."""
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=30, env=env).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


# -- submitting -----------------------------------------------------------------


@dataclass(frozen=True)
class Submission:
    """How a run is to be submitted: its batch kind, the cluster it runs on (a SLURM/PBS allocation's, the
    detached driver's local cluster, or None: a running scheduler, whose workers the plan cannot know before
    it runs), and the record batch.json keeps of it."""

    kind: BatchKind[Any]
    spec: Any
    info: Submitted


def check_idle(run: RunDir) -> None:
    """Refuse to submit a run that is live (its lock held: a driver, run or resume) or already has an allocation
    waiting."""
    from epcg.runtime.errors import Conflict

    if run.is_locked():
        raise Conflict(f"run directory {run.path} is in use by a live epcg process (a driver, run or resume); "
                       f"{shell_command('status', run.path)} says which, {shell_command('cancel', run.path)} stops "
                       "a submitted one")
    pending = history.load(run).next
    info = read_batch(run)
    if pending and info and kind_of(info).states([pending]):
        raise UserError(f"run directory {run.path} already has batch job {pending} waiting to continue it")


def check_submittable(spec: JobqueueSpec, walltime: int, source: str) -> BatchSystem:
    """The batch system of ``spec``; UserError if its command is missing or its times cannot work."""
    kind = SYSTEMS[spec.kind]
    if shutil.which(kind.submit_command) is None:
        raise UserError(f"{source}: kind = {spec.kind!r} submits with '{kind.submit_command}', "
                        "which is not on PATH (run epcg submit on the cluster's login node)")
    if spec.signal_lead >= walltime:
        raise UserError(f"{source}: signal_lead = {spec.signal_lead} s is not shorter than the walltime "
                        f"{_clock(walltime)} ({walltime} s): an allocation would have no time to compute")
    if spec.tls is not None:
        raise UserError(f"{source}: [tls] is not supported by epcg submit (the allocation's scheduler "
                        "listens inside the allocation); remove it or use epcg run")
    return kind


def script(kind: BatchSystem, spec: JobqueueSpec, walltime: int, run: Path, job_name: str, python: str) -> str:
    """The batch script of one allocation of the run in ``run``: header, thread pinning, the driver."""
    lines = [
        "#!/usr/bin/env bash",
        f"# One allocation of the epcg run in {run}. `epcg submit` wrote and submitted this script;",
        "# each allocation submits the next one (afterany) until the run is finished.",
        f"# Submit it again by hand with: {kind.submit_command} {run / kind.script_name}",
        *kind.header(spec, walltime, run, job_name),
        "export NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1",
        *spec.prologue,
        f"exec {shlex.quote(python)} -m epcg drive {shlex.quote(str(run))}",
    ]
    return "\n".join(lines) + "\n"


def submit(kind: BatchSystem, script_path: Path, after: str | None = None) -> str:
    """Submit the script (after job ``after`` ends, if given); return the batch job id."""
    args = kind.submit_args(script_path, after)
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        raise UserError(f"{args[0]} failed: {exc}") from None
    job_id = kind.parse_id(done.stdout) if done.returncode == 0 else ""
    if not job_id:
        reason = one_line(done.stderr or done.stdout) or f"exit status {done.returncode}"
        raise UserError(f"{' '.join(args)} failed: {reason}")
    return job_id


# -- run directory ----------------------------------------------------------------


def write_batch(run: RunDir, info: Submitted, script_text: str | None) -> None:
    """Record how the run was submitted (and its script) in the run directory."""
    if script_text is not None and isinstance(info, SystemBatch):
        path = folder(run) / info.script
        write_atomic(path, script_text)
        path.chmod(0o755)
    run.write_text(BATCH_FILE, info.model_dump_json(indent=2) + "\n")


def read_batch(run: RunDir) -> Submitted | None:
    """How the run was submitted, or None for a run that was not (``epcg run``)."""
    try:
        data = run.read_json(BATCH_FILE, Batch)
    except (FileNotFoundError, Malformed):
        return None
    info: Submitted | None = None if data is None else typed(data, Batch)
    return info


def write_scheduler_file(run: RunDir, address: str) -> Path:
    """``DIR/scheduler.json`` in Dask's scheduler-file form: what the allocation's workers join through."""
    path = folder(run) / SCHEDULER_FILE
    write_atomic(path, json.dumps({"type": "Scheduler", "address": address}))
    return path


def folder(run: RunDir) -> Path:
    """A submitted run's directory, on a filesystem by construction (``epcg submit`` refuses a URL)."""
    path = run.path
    assert isinstance(path, Path), path
    return path


def logs_dir(run: RunDir) -> Path:
    path = folder(run) / LOG_DIR
    path.mkdir(parents=True, exist_ok=True)
    return path


def driver_log(run: RunDir) -> Path:
    return folder(run) / DRIVER_LOG


# -- the history of allocations ---------------------------------------------------


def describe(run: RunDir, info: Submitted, records: dict[str, dict[str, Any]], finished: bool,
             env: dict[str, str] | None = None) -> list[str]:
    """Lines for ``epcg status``: the batch kind, each allocation, the pending continuation and its state."""
    past = history.load(run)
    history.settle(past, records)
    allocations = past.allocations
    kind = kind_of(info)
    ids = [job for a in allocations if (job := a.get("job"))] + ([past.next] if past.next else [])
    states = kind.states(ids, env)
    limit = info.max_requeues if isinstance(info, SystemBatch) else None
    requeues = max(0, len(allocations) - 1)
    lines = [kind.head(run, info, requeues)]
    for n, alloc in enumerate(allocations, 1):
        began = time.strftime("%H:%M:%S", time.localtime(alloc["started_at"]))
        if alloc.get("ended_at"):
            span = f"{began}-{time.strftime('%H:%M:%S', time.localtime(alloc['ended_at']))}" \
                   f" ({alloc['ended_at'] - alloc['started_at']:.0f} s)"
            why = alloc.get("why", "")
        elif (gone := kind.unseen(run, info, alloc)) is not None:
            span, why = f"from {began}", gone
        else:
            span = f"since {began} ({time.time() - alloc['started_at']:.0f} s)"
            why = states.get(alloc.get("job") or "", "running")
        where = f"job {alloc['job']}" if alloc.get("job") else f"pid {alloc.get('pid')}"
        lines.append(f"  allocation {n}: {where} on {alloc.get('node')}, {span}, "
                     f"{alloc.get('chunks', 0)} chunks; {why}")
    if past.next:
        lines.append(f"  next: job {past.next} {states.get(past.next, 'not in the queue')}"
                     f" (requeue {requeues + 1 if allocations else 0} of {limit})")
    elif not finished and allocations and allocations[-1].get("ended_at"):
        lines.append(f"  stopped: {allocations[-1].get('why')}; {continue_command(run, info)} continues")
    return lines


def continue_command(run: RunDir, info: Submitted) -> str:
    """The command that continues a submitted run, as it must be typed."""
    return shell_command("submit --resume", run.path, *kind_of(info).continue_how.split())


def tunnel(dashboard: str, node: str | None) -> str | None:
    """The ssh command that brings a dashboard on a compute node to a person's own browser (through this
    machine, the login node, where ``epcg status`` runs)."""
    from urllib.parse import urlsplit

    url = urlsplit(dashboard)
    if not url.hostname or not url.port:
        return None
    here = socket.gethostname()
    if url.hostname in ("127.0.0.1", "localhost", "::1"):  # listening on the node's loopback only
        hop = here if node in (None, here) else f"-J {here} {node}"
        command = f"ssh -N -L {url.port}:localhost:{url.port} {hop}"
    else:
        command = f"ssh -N -L {url.port}:{url.hostname}:{url.port} {here}"
    return f"{command}   (then open http://localhost:{url.port}/status)"


# -- the driver inside an allocation ---------------------------------------------


@contextlib.contextmanager
def allocation_cluster(run: RunDir, spec: JobqueueSpec, kind: BatchSystem) -> Iterator[Path]:
    """A Dask scheduler in this process (the allocation's first node) and the allocation's workers,
    started by the batch system's launcher; yields the scheduler file the client connects through."""
    import logging

    from distributed import LocalCluster

    port = (spec.dashboard_address or ":0").rpartition(":")[2] or "0"
    host = socket.gethostname()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Port .* is already in use")  # another port is taken, and shown
        cluster = LocalCluster(n_workers=0, host=host, dashboard_address=f"{host}:{port}",
                               silence_logs=logging.ERROR)
    logs = logs_dir(run)
    path = write_scheduler_file(run, cluster.scheduler_address)
    command = [*kind.launcher(spec, folder(run)), sys.executable, "-m", "distributed.cli.dask_worker",
               "--scheduler-file", str(path), "--nthreads", "1", "--nworkers", "1",
               "--memory-limit", str(worker_memory_limit(spec)),
               *(["--local-directory", spec.local_directory] if spec.local_directory else [])]
    workers = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=(logs / "workers.log").open("a"),
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_for_workers(cluster, workers, spec.nodes * workers_per_node(spec))
        yield path
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(workers.pid, signal.SIGTERM)
        try:
            workers.wait(15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(workers.pid, signal.SIGKILL)
            workers.wait()
        cluster.close(timeout=10)
        path.unlink(missing_ok=True)


WORKER_START = 120
"""Seconds an allocation waits for all its workers before it computes with those that joined."""


def _wait_for_workers(cluster: Any, launcher: subprocess.Popen[bytes], wanted: int) -> None:
    """Return once ``wanted`` workers joined (or WORKER_START passed with at least one); UserError if the
    launcher ended with none."""
    deadline = time.monotonic() + WORKER_START
    while True:
        joined = len(cluster.scheduler.workers)
        if joined >= wanted or (joined and time.monotonic() > deadline):
            return
        if launcher.poll() is not None and not joined:
            raise UserError(f"the workers' launcher ended with status {launcher.returncode} before any worker "
                            "joined (see DIR/logs/workers.log)")
        time.sleep(0.2)


DRIVER_START = 120
"""Seconds ``submit --detach`` waits for its driver to hold the run before it returns anyway."""


def spawn_detached(run: RunDir) -> int:
    """Start ``epcg drive DIR`` as a daemon in its own session (it survives the terminal) and return its pid
    once it holds the run's lock; Conflict (exit status 75) if another process holds the run instead, UserError
    if the driver ended at once."""
    from epcg.runtime.errors import Conflict
    from epcg.runtime.rundir import LOCK_KEY

    log = driver_log(run).open("a")
    process = subprocess.Popen([sys.executable, "-m", "epcg", "drive", str(run.path)], stdin=subprocess.DEVNULL,
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=folder(run),
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    log.close()
    mine = f"pid {process.pid} on {socket.gethostname()}"
    deadline = time.monotonic() + DRIVER_START
    while time.monotonic() < deadline:
        if run.is_locked() and (run.location.read(LOCK_KEY) or b"").decode(errors="replace").strip() == mine:
            return process.pid
        status = process.poll()
        if status is not None:
            last = _last_line(driver_log(run)).removeprefix("epcg: error: ")
            if status == Conflict.exit_status:
                raise Conflict(last)
            raise UserError(f"the driver ended at once (exit status {status}): {last} (see {driver_log(run)})")
        time.sleep(0.1)
    return process.pid


def _last_line(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1] if lines else ""
