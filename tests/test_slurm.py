"""SLURM for real: a one-node SLURM started in a temporary folder, workers as SLURM jobs via cluster files.

.ci/run installs Debian's slurm-wlm and munge; where they are missing or will
not start (not root, ports taken), the test is skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import JOBS, epcg, load_results

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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """munged, slurmctld and slurmd as root in a temporary folder; yields the environment to use."""
    missing = [b for b in ("munged", "slurmctld", "slurmd", "sbatch", "sinfo") if shutil.which(b) is None]
    if missing:
        pytest.skip(f"SLURM cannot be started here: {', '.join(missing)} not installed (see .ci/run)")
    if os.geteuid() != 0:
        pytest.skip("SLURM cannot be started here: the daemons need root")
    tmp = Path("/tmp") / f"epcg-slurm-{os.getpid()}"  # short: a munge socket path has a length limit
    for sub in ("state", "spool", "munge"):
        (tmp / sub).mkdir(parents=True, exist_ok=True)
    shutil.chown(tmp / "munge", "munge", "munge")
    memory = int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20 * 0.8)
    conf = tmp / "slurm.conf"
    conf.write_text(SLURM_CONF.format(host=socket.gethostname(), tmp=tmp, cpus=os.cpu_count(), memory=memory,
                                      ctld_port=_free_port(), slurmd_port=_free_port()))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    started = []
    try:
        subprocess.run(["runuser", "-u", "munge", "--", shutil.which("munged"), f"--socket={tmp}/munge/munge.socket",
                        f"--pid-file={tmp}/munge/munged.pid", f"--seed-file={tmp}/munge/seed",
                        f"--log-file={tmp}/munge/munged.log"], check=True, timeout=30)
        started.append(tmp / "munge" / "munged.pid")
        for daemon, pid in (("slurmctld", "slurmctld.pid"), ("slurmd", "slurmd.pid")):
            subprocess.run([daemon, "-f", str(conf)], check=True, env=env, timeout=30)
            started.append(tmp / pid)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = subprocess.run(["sinfo", "-h", "-o", "%t"], env=env, capture_output=True, text=True).stdout
            if state.strip() == "idle":
                break
            time.sleep(0.5)
        else:
            pytest.skip(f"SLURM cannot be started here: the node never became idle (sinfo: {state.strip()!r})")
    except (subprocess.SubprocessError, OSError) as exc:
        _stop(started)
        pytest.skip(f"SLURM cannot be started here: {exc}")
    yield env, tmp
    subprocess.run(["scancel", "--user", "root"], env=env, timeout=30)
    _stop(started)
    shutil.rmtree(tmp, ignore_errors=True)


def _stop(pid_files: list[Path]) -> None:
    for pid_file in reversed(pid_files):
        try:
            os.kill(int(pid_file.read_text().split()[0]), signal.SIGTERM)
        except (OSError, ValueError):
            pass


def test_jobs_on_slurm_workers(slurm, tmp_path: Path, small_job: Path) -> None:
    env, tmp = slurm
    cluster = tmp_path / "slurm.toml"
    cluster.write_text(
        'kind = "slurm"\ncores = 1\nmemory = "2GiB"\nprocesses = 1\nwalltime = "00:20:00"\n'
        f'local_directory = "{tmp}"\nlog_directory = "{tmp_path}"\n'
        f'python = "{sys.executable}"\n[adapt]\nminimum = 2\nmaximum = 2\n'
    )
    fling = ["--set", "max_pieces=5", "--set", "chunk_words=4096", "--set", "top_puzzles=2"]
    for name, job, sets in (("witness", str(small_job), []), ("fling", str(JOBS / "fling.toml"), fling)):
        reference = tmp_path / f"{name}-reference"
        assert epcg("run", job, "--out", str(reference), "--serial", *sets).returncode == 0
        out = tmp_path / name
        result = subprocess.run([sys.executable, "-m", "epcg", "run", job, "--out", str(out),
                                 "--cluster", str(cluster), *sets],
                                env=env, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stderr
        assert load_results(out) == load_results(reference)
    logs = list(tmp_path.glob("*.out")) + list(tmp_path.glob("*.err"))
    assert logs, "the workers did not run as SLURM jobs (no job logs)"
