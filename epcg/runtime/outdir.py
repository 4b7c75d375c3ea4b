"""Where a new run may go: the checks of ``--out`` made before anything is written, and its creation undone
when it fails.

A path that cannot become a run directory (a file in the way, a missing link target, no permission, a
name longer than the filesystem takes, a filesystem like ``/proc``) is one :class:`UserError` naming it;
an object-store URL is checked by reaching the store.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from epcg.runtime.errors import UserError
from epcg.runtime.rundir import is_url, open_location


def run_directory(out: str | os.PathLike[str]) -> Path | str:
    """``out`` as an absolute path or an object-store URL where a run can be made; UserError naming what is wrong.

    A URL is never taken for a path: ``s3://bucket/prefix`` is checked by
    reaching the store (bucket, credentials, endpoint), ``file://`` is a path.
    """
    location = open_location(out)
    if is_url(out):
        location.check()
        local = location.local_path()
        if local is None:
            return location.where
        out = local
    given = Path(out)
    if given.is_symlink() and not given.exists():
        raise UserError(f"--out {out} is a symbolic link to {os.readlink(given)}, which does not exist")
    path = given.absolute()
    if path.exists() and not path.is_dir():
        raise UserError(f"--out {out} is a file, not a directory")
    existing = first_existing(path)
    if existing is not None:
        _check_creatable(out, path, existing)
    if path.is_dir() and not os.access(path, os.W_OK | os.X_OK):
        raise UserError(f"--out {out}: directory is not writable")
    return path


def first_existing(path: Path) -> Path | None:
    """The nearest of ``path`` and its parents that exists."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
        if candidate.is_symlink():
            raise UserError(f"--out {path}: {candidate} is a symbolic link to a missing target")
    return None


def _check_creatable(out: str | os.PathLike[str], path: Path, parent: Path) -> None:
    """UserError unless the directories from ``parent`` (which exists) down to ``path`` can be made there."""
    if not parent.is_dir():
        raise UserError(f"--out {out}: {parent} is a file, not a directory")
    if parent != path and not os.access(parent, os.W_OK | os.X_OK):
        raise UserError(f"--out {out}: cannot create directories in {parent} (permission denied)")
    if os.statvfs(parent).f_blocks == 0:
        raise UserError(f"--out {out}: {parent} is on a filesystem that holds no files (like /proc or /sys)")
    longest = os.pathconf(parent, "PC_NAME_MAX")
    for name in path.relative_to(parent).parts:
        if len(os.fsencode(name)) > longest:
            raise UserError(f"--out {out}: the name {name[:40]}… is {len(os.fsencode(name))} bytes long, more "
                            f"than the {longest} a name may have on that filesystem")
    if len(os.fsencode(str(path))) + len("/manifest/") + 64 >= os.pathconf(parent, "PC_PATH_MAX"):
        raise UserError(f"--out {out}: the path is too long for the files a run keeps inside it")


@contextlib.contextmanager
def created(where: Path | None) -> Iterator[None]:
    """For the block, the directories it creates for a new run at ``where`` (a local path; None: nothing to
    watch) are removed again if it fails: a run that never started leaves nothing behind."""
    top = None
    if where is not None:
        top = next((p for p in (*reversed(where.parents), where) if not p.exists()), None)
    try:
        yield
    except BaseException:
        if top is not None:
            shutil.rmtree(top, ignore_errors=True)
        raise
