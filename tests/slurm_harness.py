"""A one-node SLURM in a temporary folder, for the tests that run batch jobs for real.

.ci/run installs Debian's slurm-wlm and munge; where they are missing or will
not start (not root, ports taken), the tests that need it are skipped with the
reason. ``python -m tests.slurm_harness`` starts one by hand and prints its
``SLURM_CONF`` (stop it with Ctrl-C).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

SLURM_CONF = """ClusterName=epcg
SlurmctldHost={host}
AuthType=auth/munge
AuthInfo=socket={tmp}/munge/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SlurmUser=root
SlurmdUser=root
StateSaveLocation={tmp}/state
SlurmdSpoolDir={tmp}/spool
SlurmctldPidFile={tmp}/slurmctld.pid
SlurmdPidFile={tmp}/slurmd.pid
SlurmctldLogFile={tmp}/slurmctld.log
SlurmdLogFile={tmp}/slurmd.log
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
NodeName={host} CPUs={cpus} RealMemory={memory} State=UNKNOWN
PartitionName=epcg Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


class Unavailable(Exception):
    """SLURM cannot be started on this machine (the reason is the message)."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(tmp: Path) -> tuple[dict[str, str], list[Path]]:
    """Start munged, slurmctld and slurmd as root under ``tmp``; return the environment and the pid files."""
    missing = [b for b in ("munged", "slurmctld", "slurmd", "sbatch", "sinfo") if shutil.which(b) is None]
    if missing:
        raise Unavailable(f"{', '.join(missing)} not installed (see .ci/run)")
    if os.geteuid() != 0:
        raise Unavailable("the daemons need root")
    for sub in ("state", "spool", "munge"):
        (tmp / sub).mkdir(parents=True, exist_ok=True)
    shutil.chown(tmp / "munge", "munge", "munge")
    memory = int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20 * 0.8)
    conf = tmp / "slurm.conf"
    conf.write_text(SLURM_CONF.format(host=socket.gethostname(), tmp=tmp, cpus=os.cpu_count(), memory=memory,
                                      ctld_port=_free_port(), slurmd_port=_free_port()))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    started: list[Path] = []
    try:
        subprocess.run(["runuser", "-u", "munge", "--", shutil.which("munged"), f"--socket={tmp}/munge/munge.socket",
                        f"--pid-file={tmp}/munge/munged.pid", f"--seed-file={tmp}/munge/seed",
                        f"--log-file={tmp}/munge/munged.log"], check=True, timeout=30)
        started.append(tmp / "munge" / "munged.pid")
        for daemon, pid in (("slurmctld", "slurmctld.pid"), ("slurmd", "slurmd.pid")):
            subprocess.run([daemon, "-f", str(conf)], check=True, env=env, timeout=30)
            started.append(tmp / pid)
        deadline = time.monotonic() + 60
        state = ""
        while time.monotonic() < deadline:
            state = subprocess.run(["sinfo", "-h", "-o", "%t"], env=env, capture_output=True, text=True).stdout
            if state.strip() == "idle":
                return env, started
            time.sleep(0.5)
        raise Unavailable(f"the node never became idle (sinfo: {state.strip()!r})")
    except (subprocess.SubprocessError, OSError, Unavailable) as exc:
        stop(started)
        raise Unavailable(str(exc)) from None


def stop(pid_files: list[Path]) -> None:
    for pid_file in reversed(pid_files):
        try:
            os.kill(int(pid_file.read_text().split()[0]), signal.SIGTERM)
        except (OSError, ValueError):
            pass


@pytest.fixture(scope="session")
def slurm() -> Iterator[tuple[dict[str, str], Path]]:
    """A running one-node SLURM; yields the environment to use (SLURM_CONF set) and its folder."""
    tmp = Path("/tmp") / f"epcg-slurm-{os.getpid()}"  # short: a munge socket path has a length limit
    try:
        env, started = start(tmp)
    except Unavailable as exc:
        pytest.skip(f"SLURM cannot be started here: {exc}")
    yield env, tmp
    subprocess.run(["scancel", "--user", "root"], env=env, timeout=30)
    stop(started)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    folder = Path("/tmp") / f"epcg-slurm-{os.getpid()}"
    environment, pids = start(folder)
    print(f"export SLURM_CONF={environment['SLURM_CONF']}", flush=True)
    try:
        signal.pause()
    finally:
        subprocess.run(["scancel", "--user", "root"], env=environment, timeout=30)
        stop(pids)
