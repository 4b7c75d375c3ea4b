"""Every path option of every command, given a path that cannot serve: one line, exit 2 or the exit status of the
storage fault named (or success where the path is only read and can be), no traceback, nothing created.

The options are found in the click commands themselves, so a new path option is covered (or this test says
it has no case). The commands run as an unprivileged user (root reads and writes past file modes), all in
one child process through click's runner, so the whole class costs one interpreter start.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import click
import pytest

from epcg.cli import main
from epcg.runtime.errors import Conflict, Damaged, MissingBucket, PermissionDenied, Unreachable

FILE_OPTIONS = {"job_file", "cluster_file", "scheduler_file"}
"""Options naming a file epcg reads."""
DIR_OPTIONS = {"run_dir", "resume_dir", "out"}
"""Options naming a run directory (existing or to be made) or an export's directory."""

BASE = {
    "plan": ["plan", "{job}"],
    "run": ["run", "{job}", "--out", "{new}"],
    "resume": ["resume", "{run}"],
    "status": ["status", "{run}"],
    "verify": ["verify", "{run}"],
    "report": ["report", "{run}"],
    "export": ["export", "{run}", "--pictures", "none", "--out", "{new}"],
    "probe": ["probe", "{run}", "2x2: vertex (1,0)", "--out", "{new}"],
    "submit": ["submit", "{job}", "--detach", "--out", "{new}"],
    "cancel": ["cancel", "{run}"],
    "drive": ["drive", "{run}"],
}
"""A working invocation of each command, into which one path option at a time is given a bad path."""
REFUSED = {2} | {cls.exit_status for cls in (Unreachable, PermissionDenied, MissingBucket, Damaged, Conflict)}
"""Exit statuses of a refusal: bad input, or a storage fault named by its cause."""
POSITIONAL = {"plan": "{job}", "run": "{job}", "submit": "{job}"}


def path_options() -> list[tuple[str, str, str]]:
    """(command, parameter name, its flag or '' for the positional) of every path option of every command."""
    found = []
    for name, command in sorted(main.commands.items()):
        for param in command.params:
            if param.name in FILE_OPTIONS | DIR_OPTIONS or isinstance(param.type, click.Path):
                flag = "" if isinstance(param, click.Argument) else max(param.opts, key=len)
                found.append((name, param.name, flag))
    return found


def invocation(command: str, param: str, flag: str, bad: str, paths: dict[str, str]) -> list[str]:
    args = [a.format(**paths) for a in BASE[command]]
    if not flag:
        slot = POSITIONAL.get(command, "{run}").format(**paths)
        return [bad if a == slot else a for a in args]
    if flag in args:
        args[args.index(flag) + 1] = bad
        return args
    if param == "resume_dir":  # submit --resume DIR takes the place of the job file
        args.remove(paths["job"])
        args.remove("--out")
        args.remove(paths["new"])
    return [*args, flag, bad]


def bad_paths(root: Path, role: str) -> dict[str, str]:
    """The paths that cannot serve as a file (``role`` 'file') or a directory ('dir'), made under ``root``."""
    long_name = str(root / ("x" * 300))
    unreadable = root / f"unreadable-{role}"
    (root / "a-directory").mkdir()
    (root / "a-file").write_text("not a directory\n")
    if role == "file":
        unreadable.write_text('name = "x"\n')
        unreadable.chmod(0)
        return {"too long": long_name, "a directory": str(root / "a-directory"), "unreadable": str(unreadable)}
    unreadable.mkdir()
    unreadable.chmod(0)
    unwritable = root / "unwritable"
    unwritable.mkdir(exist_ok=True)
    unwritable.chmod(0o555)
    return {"too long": long_name, "a file": str(root / "a-file"), "unreadable": str(unreadable),
            "unwritable": str(unwritable / "run")}


AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
"""The commands run as this unprivileged user and group (nobody, nogroup)."""

RUNNER = """
import json, sys, traceback
from click.testing import CliRunner
from epcg.cli import main
from epcg.runtime.errors import Conflict, Damaged, MissingBucket, PermissionDenied, Unreachable
out = []
for args in json.loads(sys.stdin.read()):
    result = CliRunner().invoke(main, args, catch_exceptions=True)
    crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
    out.append({"args": args, "code": result.exit_code, "stderr": result.stderr, "stdout": result.stdout,
                "traceback": "".join(traceback.format_exception(result.exception)) if crashed else ""})
print(json.dumps(out))
"""


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv to run the "
                    "commands as an unprivileged user (file modes do not stop root)")
def test_every_path_option_refuses_a_path_that_cannot_serve_in_one_line() -> None:
    reach = subprocess.run([*AS_NOBODY, sys.executable, "-c", "import epcg.cli"], capture_output=True, text=True,
                           cwd="/", timeout=120)
    if reach.returncode != 0:
        pytest.skip(f"an unprivileged user cannot run this checkout's interpreter or import epcg from it "
                    f"(a checkout under a private home directory): {reach.stderr.strip().splitlines()[-1:]}")
    tmp_path = Path(tempfile.mkdtemp(prefix="epcg-paths-", dir="/tmp"))  # pytest's tmp_path is root's alone
    try:
        check_every_path_option(tmp_path)
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", str(tmp_path)], check=False)
        shutil.rmtree(tmp_path, ignore_errors=True)


def check_every_path_option(tmp_path: Path) -> None:
    root = tmp_path / "sandbox"
    root.mkdir()
    job = root / "job.toml"
    job.write_text('name = "p"\ndomain = "witness"\nkind = "paths"\nrows = ["2x2"]\n')
    made = subprocess.run([sys.executable, "-m", "epcg.cli", "run", str(job), "--out", str(root / "run"),
                           "--serial"], capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    paths = {"job": str(job), "run": str(root / "run"), "new": str(root / "new")}
    all_args = []
    for command, param, flag in path_options():
        assert command in BASE, f"epcg {command} has path options but no case here"
        place = root / f"{command}-{param}"
        place.mkdir()
        role = "file" if param in FILE_OPTIONS else "dir"
        all_args += [invocation(command, param, flag, bad, paths) for bad in bad_paths(place, role).values()]
    for p in [tmp_path, *tmp_path.rglob("*")]:
        if not p.name.startswith("unreadable") and p.name != "unwritable":
            p.chmod(p.stat().st_mode | (0o777 if p.is_dir() else 0o666))
    before = tree(root)
    env = {**os.environ, "HOME": str(tmp_path), "MPLCONFIGDIR": str(tmp_path / "mpl"),
           "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    ran = subprocess.run([*AS_NOBODY, sys.executable, "-c", RUNNER], input=json.dumps(all_args), capture_output=True, text=True, timeout=600, env=env,
                         cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-3000:]
    results = json.loads(ran.stdout)
    print(f"{len(results)} invocations: {len(path_options())} path options of {len(BASE)} commands")
    failures = []
    for result in results:
        lines = [line for line in result["stderr"].splitlines() if line.strip()]
        fine = not result["traceback"] and (result["code"] == 0 or (
            result["code"] in REFUSED and len(lines) == 1 and lines[0].startswith("epcg: error:")))
        if not fine:
            failures.append(f"{' '.join(result['args'])}\n  -> exit {result['code']}: "
                            f"{(result['traceback'] or result['stderr'])[-600:]}")
    assert not failures, f"{len(failures)} of {len(results)}:\n" + "\n".join(failures)
    assert tree(root) == before, f"created: {sorted(tree(root) - before)}, removed: {sorted(before - tree(root))}"
