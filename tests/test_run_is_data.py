"""A run directory is data: reading a run (status, verify, report, export, epcg.open and what the API reads)
never imports or runs code its job.toml names, and a space is never imported from the current directory that
Python put on its path by itself. Each module here writes a file when it is imported: the file tells."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


SPACE = '''
import pathlib
pathlib.Path({marker!r}).open("a").write("imported\\n")

from numba import njit

from epcg.search import ScanSpace, scan_family


@njit(cache=True)
def score(rank, base):
    return rank % base


@scan_family
def residues(base):
    return ScanSpace(max_rank=50, evaluate=score, data=(base,), name=f"residues {{base}}",
                     decode=lambda rank: {{"rank": rank}})
'''

EVIL = '''
import pathlib
pathlib.Path({marker!r}).open("a").write("imported\\n")
SPACE = None
'''


def epcg(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``python -m epcg ARGS`` in ``cwd`` (which Python then puts first on its path)."""
    return subprocess.run([sys.executable, "-m", "epcg", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, **(env or {})})


def all_done(status: subprocess.CompletedProcess) -> bool:
    """``epcg status`` succeeded and counts every chunk done."""
    total = [line.split()[1] for line in status.stdout.splitlines() if line.startswith("total")]
    return status.returncode == 0 and len(total) == 1 and total[0].split("/")[0] == total[0].split("/")[1]


def python(code: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env})


def rewrite_job(run: Path, change) -> None:
    """Edit the run's job.toml and its digest, as somebody handing over a run directory could."""
    text = change((run / "job.toml").read_text())
    (run / "job.toml").write_text(text)
    (run / "manifest" / "job.sha256").write_text(hashlib.sha256(text.encode()).hexdigest() + "\n")


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A finished scan of a space in a module that leaves a mark when imported: (run, its module's directory,
    the mark)."""
    where = tmp_path_factory.mktemp("space")
    marker = where / "imported.txt"
    (where / "plugin").mkdir()
    (where / "plugin" / "markedspace.py").write_text(SPACE.format(marker=str(marker)))
    (where / "job.toml").write_text('name = "marked"\nspace = "markedspace:residues"\nrows = [{base = 7}]\n'
                                    "chunk_size = 10\nmax = true\n")
    env = {"PYTHONPATH": os.pathsep.join([str(where / "plugin"), os.environ.get("PYTHONPATH", "")])}
    result = epcg("run", str(where / "job.toml"), "--out", str(where / "run"), "--serial", env=env)
    assert result.returncode == 0, result.stderr
    assert marker.exists() and (where / "run" / "manifest" / "plan.json").exists()
    return where / "run", where / "plugin", marker


def test_reading_a_run_never_imports_its_space(finished, tmp_path: Path) -> None:
    run, plugin, marker = finished
    marker.unlink(missing_ok=True)
    env = {"PYTHONPATH": os.pathsep.join([str(plugin), os.environ.get("PYTHONPATH", "")])}
    status = epcg("status", str(run), env=env)
    assert all_done(status), status.stdout + status.stderr
    verify = epcg("verify", str(run), "--all", "--serial", env=env)
    assert verify.returncode == 0 and "all intact" in verify.stdout, verify.stdout + verify.stderr
    report = epcg("report", str(run), env=env)
    assert report.returncode == 0, report.stderr
    assert "Designs are shown by rank" in (run / "summary.md").read_text()
    assert not marker.exists(), "a reader of the run imported the space its job names"


def test_the_api_reads_a_run_without_its_space_unless_trusted(finished, tmp_path: Path) -> None:
    run, plugin, marker = finished
    marker.unlink(missing_ok=True)
    env = {"PYTHONPATH": os.pathsep.join([str(plugin), os.environ.get("PYTHONPATH", "")])}
    export = epcg("export", str(run), "--out", str(tmp_path / "x"), "--pictures", "none", env=env)
    assert export.returncode == 0, export.stderr
    assert "listed by rank, without text" in export.stdout and "--trust-space draws them" in export.stdout
    found = [json.loads(line) for line in (tmp_path / "x" / "found.jsonl").read_text().splitlines()]
    assert sorted(d["rank"] for d in found if d["role"] == "max") == [r for r in range(50) if r % 7 == 6]
    assert all(d["text"] == "" for d in found)
    warned = python(f"import epcg, warnings; warnings.simplefilter('error'); "
                    f"epcg.open({str(run)!r}).export({str(tmp_path / 'z')!r}, pictures=None)", tmp_path,
                    PYTHONPATH=env["PYTHONPATH"])
    assert warned.returncode == 1 and "trust_space=True) draws them" in warned.stderr, warned.stderr
    opened = python(f"import epcg; r = epcg.open({str(run)!r}); print(len(list(r.designs())))", tmp_path,
                    PYTHONPATH=env["PYTHONPATH"])
    assert opened.returncode == 0, opened.stderr
    assert not marker.exists(), "a reader of the run imported the space its job names"
    trusted = python(f"import epcg; r = epcg.open({str(run)!r}, trust_space=True); "
                     "print(next(iter(r.designs(role='max'))).text)", tmp_path, PYTHONPATH=env["PYTHONPATH"])
    assert trusted.returncode == 0 and trusted.stdout.strip() == '{"rank": 6}', trusted.stdout + trusted.stderr
    assert marker.exists()
    marker.unlink()
    export = epcg("export", str(run), "--out", str(tmp_path / "y"), "--pictures", "none", "--trust-space", env=env)
    assert export.returncode == 0 and "without text" not in export.stdout, export.stdout + export.stderr
    first = json.loads((tmp_path / "y" / "found.jsonl").read_text().splitlines()[0])
    assert json.loads(first["text"]) == {"rank": first["rank"]} and marker.exists()


def test_a_module_in_the_run_directory_is_never_imported(finished, tmp_path: Path) -> None:
    """The finding: job.toml names a module placed beside it; a user types ``python -m epcg status .`` in the
    run directory, or opens it from a notebook there (both put the directory first on sys.path)."""
    run = tmp_path / "copy"
    shutil.copytree(finished[0], run)
    marker = tmp_path / "evil-imported.txt"
    (run / "evilmod.py").write_text(EVIL.format(marker=str(marker)))
    rewrite_job(run, lambda text: text.replace('"markedspace:residues"', '"evilmod:SPACE"'))
    status = epcg("status", ".", cwd=run)  # its chunks were made under another space: they count no more
    assert status.returncode == 0 and "5 chunks were made under other job parameters" in status.stdout, \
        status.stdout + status.stderr
    opened = python("import epcg; r = epcg.open('.'); print(r.table().shape); list(r.designs()); r.report()", run)
    assert opened.returncode == 0, opened.stderr
    trusted = python("import epcg; list(epcg.open('.', trust_space=True).designs())", run)
    assert trusted.returncode == 1 and "would be imported from the current directory" in trusted.stderr
    resume = epcg("resume", ".", cwd=run)
    assert resume.returncode == 2 and "would be imported from the current directory" in resume.stderr, resume.stderr
    assert len(resume.stderr.strip().splitlines()) == 1, resume.stderr
    assert not marker.exists(), "a module in the run directory was imported"


@pytest.mark.parametrize("space", ["this:nothing", "antigravity:x", "evilmod:SPACE"])
def test_a_space_without_its_kind_is_one_line_and_imports_nothing(finished, tmp_path: Path, space: str) -> None:
    """job.toml names a space and no domain: the kind would be the space's own word, which reading never asks."""
    run = tmp_path / "copy"
    shutil.copytree(finished[0], run)
    marker = tmp_path / "evil-imported.txt"
    (run / "evilmod.py").write_text(EVIL.format(marker=str(marker)))
    rewrite_job(run, lambda text: "\n".join(line if not line.startswith("space") else f'space = "{space}"'
                                            for line in text.splitlines() if not line.startswith("domain")))
    for args in (["status", "."], ["export", ".", "--out", str(tmp_path / "x")], ["report", "."]):
        result = epcg(*args, cwd=run, env={"BROWSER": "false"})
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert result.stderr.count("\n") == 1 and "never imports" in result.stderr, result.stderr
        assert "Zen of Python" not in result.stdout + result.stderr
    assert not marker.exists()


def test_a_run_without_its_kept_plan_says_how_to_read_it(finished, tmp_path: Path) -> None:
    """A run of a space made before plans were kept: reading it would need the space's code to plan it."""
    run = tmp_path / "old"
    shutil.copytree(finished[0], run)
    (run / "manifest" / "plan.json").unlink()
    result = epcg("status", str(run))
    assert result.returncode == 2 and f"'epcg resume {run}' imports it" in result.stderr, result.stderr
    (run / "manifest" / "plan.json").write_text('{"stages": [{"name": "row-000", "tasks": [[0, 0, "ten"]]}]}')
    result = epcg("status", str(run))
    assert result.returncode == 2 and "plan.json is damaged (stages.0.tasks.0" in result.stderr, result.stderr


LOCAL = '''
from numba import njit
from epcg.search import ScanSpace


@njit(cache=True)
def score(rank):
    return rank % 5


SPACE = ScanSpace(max_rank=40, evaluate=score, name="local")
'''


@pytest.mark.slow
def test_a_space_a_notebook_imported_from_its_directory_runs_on_workers(tmp_path: Path) -> None:
    """A notebook (the current directory first on its path) that imported its own module may run it, on Dask
    workers too (they import as the client did); naming it without importing it is refused in one line."""
    (tmp_path / "localspace.py").write_text(LOCAL)
    code = ("import epcg{imp}\nr = epcg.run({{'name': 'nb', 'space': 'localspace:SPACE', 'chunk_size': 10}}, "
            "'run', workers=1, progress=False)\nprint(r.table()['min'].tolist())")
    imported = python(code.format(imp=", localspace"), tmp_path)
    assert imported.returncode == 0 and imported.stdout.strip() == "[0]", imported.stderr
    shutil.rmtree(tmp_path / "run")
    named = python(code.format(imp=""), tmp_path)
    assert named.returncode == 1 and "would be imported from the current directory" in named.stderr
