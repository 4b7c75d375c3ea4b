"""Every writer meets a full or read-only disk, a foreign locale and a concurrent writer in one line.

The run's log file (`runtime/logs.py` `LogFile`), text written into a run (`RunDir.write_text`, `write_atomic`),
the terminal in an ASCII locale (`cli._bytes_as_given`), printed commands (`runtime/shell.py`), exports
(`api/export.py`) and every reader of a run whose directory was deleted (`RunDir.check_present`).
"""

from __future__ import annotations

import html
import logging
import os
import shlex
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from epcg.runtime.logs import LogFile, RunLog

from .conftest import epcg

SMALL = ('name = "small"\ndomain = "witness"\nkind = "must-cross"\nrows = ["2x2:2", "3x3:3"]\nchunk_size = 700\n'
         "figures_per_row = 1\n")


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("writers")
    (folder / "small.toml").write_text(SMALL)
    done = epcg("run", str(folder / "small.toml"), "--out", str(folder / "run"), "--serial")
    assert done.returncode == 0, done.stderr
    return folder / "run"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("through", ["run log", "log file"])
def test_a_log_on_a_full_disk_is_one_note_and_no_traceback(capfd, through: str) -> None:
    """/dev/full fails every write with ENOSPC: the log says so once and drops the rest; nothing is raised."""
    logger = logging.getLogger(f"epcg-test-{through}")
    logger.propagate = False
    if through == "run log":
        handler: logging.Handler = RunLog()
        logger.info("held before the file is named")  # not yet attached: held
        handler.attach(Path("/dev/full"))
    else:
        handler = LogFile(Path("/dev/full"))
    logger.handlers = [handler]
    try:
        for n in range(50):
            logger.warning("record %d %s", n, "x" * 200)
    finally:
        logger.handlers = []
        handler.close()
    err = capfd.readouterr().err
    assert "Logging error" not in err and "Traceback" not in err, err
    notes = [line for line in err.splitlines() if line.startswith("epcg: note: cannot write /dev/full")]
    assert len(notes) == 1 and "No space left on device" in notes[0], err


def test_other_log_errors_are_still_reported(capfd) -> None:
    """Only the disk's refusals are quiet: a record that cannot be formatted is logging's usual report."""
    logger = logging.getLogger("epcg-test-format")
    logger.propagate = False
    handler = LogFile(Path(os.devnull))
    logger.handlers = [handler]
    try:
        logger.warning("%d", "not a number")
    finally:
        logger.handlers = []
        handler.close()
    assert "Logging error" in capfd.readouterr().err


NAMES = ["lä ufe", pytest.param("it's a run", marks=pytest.mark.slow), pytest.param("tab\there", marks=pytest.mark.slow)]
"""Directory names: other bytes and a space (in the default run), a quote, a tab (-m slow: 20 s each)."""


@pytest.mark.parametrize("name", NAMES)
def test_a_run_in_an_ascii_locale_round_trips_its_path(finished: Path, tmp_path: Path, name: str) -> None:
    """LC_ALL=C without UTF-8 mode: report.html is written and holds the path's own bytes; `status` prints them,
    and its printed command, pasted as it is printed, runs."""
    run = tmp_path / name
    shutil.copytree(finished, run)
    for output in ("results.json", "summary.md", "report.html"):
        (run / output).unlink()
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0", "PYTHONUNBUFFERED": "1"}
    env.pop("LANG", None)

    def run_epcg(*args: str | bytes) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "epcg", *args], env=env, capture_output=True, timeout=300)

    status = run_epcg("status", os.fsencode(run))
    assert status.returncode == 0, status.stderr
    out = status.stdout.decode("utf-8", "surrogateescape")
    assert str(run) in out and "?" not in out.splitlines()[0], out
    printed = next(line for line in out.splitlines() if "epcg report" in line).removesuffix(" writes them")
    command = printed[printed.index("epcg report"):]
    if printed[printed.index("epcg report") - 1] == "'":  # 'epcg report DIR': no word needed quoting
        command = command.removesuffix("'")
    words = shlex.split(command)
    assert words == ["epcg", "report", str(run)], printed
    rebuilt = run_epcg(*words[1:])
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert html.escape(str(run)).encode("utf-8", "surrogateescape") in (run / "report.html").read_bytes()
    assert os.fsencode(run) in rebuilt.stdout


def test_two_exports_to_one_directory_at_once(finished: Path, tmp_path: Path) -> None:
    """While one export holds `--out`, another is refused in one line (exit status 75); the first completes."""
    from epcg.api import export as exporting

    out = tmp_path / "export"
    inside, release = threading.Event(), threading.Event()
    original = exporting._write

    def slow_write(*args, **kwargs):
        inside.set()
        release.wait(60)
        return original(*args, **kwargs)

    import epcg

    result: list = []
    first = threading.Thread(target=lambda: result.append(exporting.export(epcg.open(finished), out)))
    exporting._write = slow_write
    try:
        first.start()
        assert inside.wait(60)
        second = epcg_cli("export", str(finished), "--out", str(out))
    finally:
        release.set()
        first.join(120)
        exporting._write = original
    lines = second.stderr.strip().splitlines()
    assert second.returncode == 75 and len(lines) == 1, second.stderr
    assert f"--out {out} is being written by another export (pid {os.getpid()})" in lines[0]
    assert result and result[0].count > 0 and (out / "found.jsonl").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export"]  # the lock is gone with its export


def epcg_cli(*args: str) -> subprocess.CompletedProcess:
    return epcg(*args, timeout=300)


def in_small_filesystem(script: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """A shell script with $MNT a 2 MiB tmpfs of its own (user and mount namespaces); skipped where not allowed."""
    if not shutil.which("unshare") or subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode:
        pytest.skip("no user and mount namespaces here")
    body = (f'MNT={tmp_path / "mnt"}; mkdir -p "$MNT"; mount -t tmpfs -o size=2m tmpfs "$MNT" || exit 99\n'
            f'epcg() {{ "{sys.executable}" -m epcg "$@"; }}\n'
            'fill() { dd if=/dev/zero of="$MNT/fill" bs=4k 2>/dev/null; truncate -s "-$1" "$MNT/fill"; }\n' + script)
    result = subprocess.run(["unshare", "-rm", "bash", "-c", body], capture_output=True, text=True, timeout=300)
    if result.returncode == 99:
        pytest.skip("cannot mount a tmpfs here")
    return result


@pytest.mark.parametrize("previous", [False, True])
def test_an_export_onto_a_full_disk_says_what_is_kept(finished: Path, tmp_path: Path, previous: bool) -> None:
    first = f'epcg export {finished} --out "$MNT/export" --pictures none --limit 1 >/dev/null; ' if previous else ""
    result = in_small_filesystem(f'{first}fill 8K; epcg export {finished} --out "$MNT/export"; echo "rc=$?"',
                                 tmp_path)
    errors = [line for line in result.stderr.splitlines() if line.startswith("epcg: error: ")]
    assert "rc=1" in result.stdout and len(errors) == 1, result.stdout + result.stderr
    assert "No space left on device" in errors[0]
    export = tmp_path / "mnt" / "export"
    if previous:
        assert f"the previous export in {export} is kept" in errors[0]
    else:
        assert f"nothing was written to {export}" in errors[0] and "previous" not in errors[0]


def test_readers_of_a_deleted_run_name_the_cause(finished: Path, tmp_path: Path) -> None:
    """Deleted after it was opened, before or after its arrays were first read: every reader says it is gone."""
    import epcg
    from epcg.runtime.arrays import StoreMissing

    run = tmp_path / "run"
    shutil.copytree(finished, run)
    fresh, read = epcg.open(run), epcg.open(run)
    read.stored  # noqa: B018 - its records read before the deletion
    shutil.rmtree(run)
    for opened in (fresh, read):
        for call in (lambda r: list(r.puzzles()), lambda r: r.results,  # fling's top() reads .results too
                     lambda r: r.export(tmp_path / "out")):
            with pytest.raises(StoreMissing, match=f"run {run} is gone: .*job.toml no longer exists"):
                call(opened)
