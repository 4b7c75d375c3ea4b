"""Job kinds, found by registration: the ``epcg.jobs`` entry-point group, or an import path.

The runtime never imports a job kind by name. A package (epcg itself included)
registers its job kinds in its ``pyproject.toml``::

    [project.entry-points."epcg.jobs"]
    witness = "epcg.games.witness.kinds:WitnessKind"

and a job file names one with ``domain = "witness"``. A job file may instead
name a content space by import path (``space = "mypkg.puzzles:SPACE"``); the
space says which algorithm walks it (its ``algorithm``, e.g. ``"scan"``), and
the job kind registered under that name runs it.

A job kind is a :class:`~epcg.runtime.kind.JobKind` subclass (``"mygame.kind:MyGame"``; every built-in
kind is one), or a plugin's module with the same names (``"mygame.kind"``, wrapped in
:class:`~epcg.runtime.kind.ModuleKind`): :func:`job_kind` gives one object on which every hook exists.

A space named in a run directory's job.toml is data, not code to run: while
:func:`reading` (every reader of a run: status, verify, report, export,
``epcg.open``), :func:`load_object` imports nothing and resolves nothing, and
says so in one line (:class:`Untrusted`). When it may import (a job file the
user runs, a run resumed), it never imports from the current directory that
Python put first on ``sys.path`` by itself (``python -m``, ``python -c``, a
notebook): only from where the user's own path (an installed package,
``PYTHONPATH``, ``sys.path``) points.

>>> {"witness", "fling", "dwp"} <= set(known_kinds())
True
>>> load_object("math:pi")
3.141592653589793
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import importlib
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Iterator
from functools import cache
from importlib.metadata import entry_points
from typing import Any

from epcg.runtime.errors import UserError, one_line
from epcg.runtime.kind import JobKind, as_job_kind

GROUP = "epcg.jobs"
RUNS_GROUP = "epcg.runs"
"""Where a job kind may register the :class:`epcg.api.Run` subclass its finished runs open as."""


@cache
def _entry_points() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def known_kinds() -> tuple[str, ...]:
    """Names of every registered job kind."""
    return tuple(sorted(_entry_points()))


@cache
def job_kind(name: str) -> JobKind:
    """The job kind registered as ``name``; a UserError if none is or it is broken."""
    entry = _entry_points().get(name)
    if entry is None:
        close = difflib.get_close_matches(name, known_kinds(), n=1) if isinstance(name, str) else []
        hint = f" (did you mean {close[0]!r}? a kind's variants are chosen by its own keys)" if close else ""
        raise UserError(f"'domain' must be one of {', '.join(known_kinds())}, got {name!r}{hint}")
    try:
        kind = entry.load()
    except Exception as exc:  # noqa: BLE001 - a broken plugin is the user's to fix, in one line
        raise UserError(f"job kind {name!r} ({entry.value}) failed to import: {one_line(exc, named=True)}") from None
    try:
        return as_job_kind(kind, name)
    except ValueError as exc:
        raise UserError(f"job kind {name!r} ({entry.value}) is not an epcg job kind: {exc}") from None


@cache
def _run_entry_points() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=RUNS_GROUP)}


@cache
def run_type(name: str) -> type | None:
    """The class registered in ``epcg.runs`` for runs of job kind ``name`` (None if none is).

    >>> run_type("fling").__name__, run_type("no-such-kind")
    ('FlingRun', None)
    """
    entry = _run_entry_points().get(name)
    if entry is None:
        return None
    try:
        loaded: type = entry.load()
        return loaded
    except Exception as exc:  # noqa: BLE001 - a broken plugin is the user's to fix, in one line
        raise UserError(f"the run type of job kind {name!r} ({entry.value}) failed to import: {one_line(exc, named=True)}") from None


def kinds_with_run_types() -> list[tuple[str, type]]:
    """Every kind's registered run class that imports, by kind name (for messages that name the right kind)."""
    out = []
    for name in sorted(_run_entry_points()):
        try:
            found = run_type(name)
        except UserError:
            continue
        if found is not None:  # always: the name is a registered one
            out.append((name, found))
    return out


class Untrusted(UserError):
    """A reader of a run needed the code its job names (a space): reading a run never imports or runs it."""


_IMPORTS = contextvars.ContextVar("epcg_space_imports", default=True)


@contextlib.contextmanager
def reading(trusted: bool = False) -> Iterator[None]:
    """Within the block, :func:`load_object` imports a space only if ``trusted`` (never, by default: the block
    reads a run directory, whose job.toml is data)."""
    token = _IMPORTS.set(trusted)
    try:
        yield
    finally:
        _IMPORTS.reset(token)


_CWD_CHECKED = contextvars.ContextVar("epcg_cwd_checked", default=True)


@contextlib.contextmanager
def vetted() -> Iterator[None]:
    """Within the block (a task on a worker, a plan-time subprocess) a space is imported as the client that sent
    the work imported it: the client refused a space found only in an implicit current directory, so the check
    is not made again where the client's own imports (a module a notebook imported) are not at hand."""
    token = _CWD_CHECKED.set(False)
    try:
        yield
    finally:
        _CWD_CHECKED.reset(token)


def may_import() -> bool:
    """False while :func:`reading` a run: no space is imported, none is resolved."""
    return _IMPORTS.get()


def require_import(path: str) -> None:
    """:class:`Untrusted` while :func:`reading`: the space at ``path`` may be neither imported nor used, even when
    this process built it before (a cache of built spaces asks here first)."""
    if not may_import():
        raise Untrusted(f"space {path!r}: reading a run never imports or runs the code its job names; "
                        "--trust-space or epcg.open(DIR, trust_space=True) imports it, as 'epcg run' did")


def load_object(path: str) -> Any:
    """The object at ``"package.module:attribute"``; a UserError naming what did not resolve, :class:`Untrusted`
    while :func:`reading`."""
    module_name, sep, attr = path.partition(":")
    if not sep or not module_name or not attr:
        raise UserError(f"space {path!r} is not an import path of the form 'package.module:NAME'")
    require_import(path)
    if _CWD_CHECKED.get():
        _refuse_implicit_cwd(path, module_name)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any import failure of user code gets one line
        raise UserError(f"space {path!r}: cannot import {module_name!r}: {one_line(exc, named=True)}") from None
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UserError(f"space {path!r}: module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


def _refuse_implicit_cwd(path: str, module_name: str) -> None:
    """A UserError if ``module_name``'s package would be imported from the current directory that Python put
    first on ``sys.path`` by itself (``python -m``, ``-c``, a notebook): a space is imported from where the
    user's own path points, never from whatever directory a command happens to run in (a run directory, a
    download). Finding where a module is runs no code."""
    top = module_name.split(".")[0]
    if top in sys.modules or not sys.path:
        return
    cwd = os.path.realpath(os.getcwd())
    first = sys.path[0]
    if not (first == "" or os.path.realpath(first) == cwd):
        return
    if any(entry and os.path.realpath(entry) == cwd for entry in sys.path[1:]):
        return  # the user put it there too (PYTHONPATH=.)
    try:
        local = importlib.machinery.PathFinder.find_spec(top, [cwd])
        chosen = importlib.util.find_spec(top) if local is not None else None
    except (ImportError, ValueError):
        return  # importing it says what is wrong
    if chosen is not None and _places(chosen) & _places(local):
        raise UserError(f"space {path!r}: {top!r} would be imported from the current directory, which Python put "
                        "on its path by itself; a space is imported from an installed package, a directory on "
                        "PYTHONPATH (PYTHONPATH=. names this one) or sys.path, or a module you imported first")


def _places(spec: Any) -> set[str]:
    """Where a module spec's code lies (its file, or its package's directories)."""
    found = {spec.origin} if spec.origin else set()
    return {os.path.realpath(p) for p in found | set(spec.submodule_search_locations or [])}


def kind_of(data: dict[str, Any]) -> str:
    """The job kind a job's plain data asks for: its ``domain``, or its space's algorithm."""
    if "domain" not in data and "space" not in data:
        raise UserError(f"missing key 'domain' (one of {', '.join(known_kinds())}) or 'space'")
    if "domain" in data:
        domain = data["domain"]
        if not isinstance(domain, str):
            raise UserError(f"'domain' must be one of {', '.join(known_kinds())}, got {domain!r}")
        return domain
    space = data["space"]
    if not isinstance(space, str):
        raise UserError(f"space must be an import path string 'package.module:NAME', got {space!r}")
    obj = load_object(space)
    algorithm = getattr(obj, "algorithm", None)
    if not isinstance(algorithm, str) and callable(obj) and not isinstance(obj, type):
        raise UserError(
            f"space {space!r} is a plain function, not an epcg space: a function of the job's rows must be "
            "marked, @scan_family (returning a ScanSpace) or @retrograde_family (returning a RetrogradeSpace), "
            "both from epcg.search"
        )
    if not isinstance(algorithm, str):
        raise UserError(
            f"space {space!r} is not an epcg space: it has no 'algorithm' "
            "(build it with epcg.search.ScanSpace or epcg.search.RetrogradeSpace)"
        )
    return algorithm
