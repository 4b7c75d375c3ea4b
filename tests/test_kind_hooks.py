"""A job kind is a class: every built-in kind subclasses JobKind, the runtime calls its hooks without asking
whether they exist (no getattr, hasattr or vars on a kind or an executor in epcg/runtime), and a plugin's kind,
a class or a module, still runs through the one adapter."""

from __future__ import annotations

import ast
import json
import os
import sys
from collections.abc import Iterator
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

import pytest

from epcg.runtime import registry
from epcg.runtime.errors import UserError
from epcg.runtime.kind import HOOKS, REQUIRED, SETTINGS, JobKind, ModuleKind, as_job_kind

from .conftest import ROOT, epcg

RUNTIME = ROOT / "epcg" / "runtime"
PROBES = ("getattr", "hasattr", "vars")
"""Calls that ask an object what it has."""
ALLOWED = {
    ("cluster.py", "spec", "'dashboard_address'"),  # a Dask cluster object, whichever class made it
    ("daskconfig.py", "yaml", "'CSafeLoader'"),  # PyYAML built without libyaml has none
    ("engine.py", "client", "'submit'"),  # what a caller handed in as a Dask client
    ("estimate.py", "f.io", "k"),  # a dataclass's fields by name
    ("execute.py", "errors", "self.error"),  # the error class a worker named, looked up in epcg's own module
    ("jobs.py", "model", "'model_fields'"),  # a pydantic model, or an annotation that is none
    ("jobs.py", "_model_at(model, tuple(err['loc'][:-1]))", "'model_fields'"),
    ("logs.py", "worker", "'status'"),  # a Dask worker of any version
    ("worker_signals.py", "worker", "'nanny'"),
    ("worker_signals.py", "worker", "'status'"),
    ("registry.py", "obj", "part"),  # a space's import path, resolved one name at a time
    ("registry.py", "obj", "'algorithm'"),  # a space, which names the kind that walks it
    ("schemas.py", "self", "key"),  # a record's own fields by name
    ("store.py", "self", "'_job_data'"),  # a RunDir's own memo
    ("store.py", "self", "'_run_id'"),
    ("kind.py", "module", ""),  # ModuleKind: the one adapter reading a plugin module's names
    ("kind.py", "obj", ""),  # registration: what a plugin's kind defines itself
    ("kind.py", "base", ""),
}
"""Every probe epcg/runtime may make, as (file, object, name) written in the source: none is on a kind or an
executor. A new probe fails the test until it is listed here, with the reason it asks an object that is neither."""


def probes(path: Path, source: str) -> list[tuple[str, str, str, int]]:
    """Each call of a :data:`PROBES` builtin in ``source``: (file name, object, name asked, line)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in PROBES and node.args:
            asked = ast.unparse(node.args[1]) if len(node.args) > 1 else ""
            found.append((path.name, ast.unparse(node.args[0]), asked, node.lineno))
    return found


def unlisted(paths: list[Path]) -> list[str]:
    """The probes of ``paths`` that :data:`ALLOWED` does not list, as ``file:line call``."""
    return [f"{name}:{line} ({obj}, {asked})" for path in paths for name, obj, asked, line in probes(path, path.read_text())
            if (name, obj, asked) not in ALLOWED]


def test_the_runtime_never_probes_a_kind_or_an_executor() -> None:
    assert unlisted(sorted(RUNTIME.rglob("*.py"))) == []


def test_a_probe_of_a_kind_is_found_and_one_of_a_worker_is_not(tmp_path: Path) -> None:
    logs = tmp_path / "logs.py"
    logs.write_text("if getattr(worker, 'status', None) == 1:\n    pass\n")
    engine = tmp_path / "engine.py"
    engine.write_text("def f(kind, executor):\n"
                      "    if hasattr(kind, 'estimate'):\n"
                      "        return getattr(executor, 'check', None) or 'plan_notes' in vars(kind)\n")
    assert unlisted([logs, engine]) == ["engine.py:2 (kind, 'estimate')", "engine.py:3 (executor, 'check')",
                                        "engine.py:3 (kind, )"]


def _own_kinds() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=registry.GROUP) if ep.value.startswith("epcg.")}


def test_every_built_in_kind_is_a_job_kind_class() -> None:
    kinds = _own_kinds()
    assert set(kinds) == {"witness", "fling", "dwp", "scan", "retrograde"}
    for name, ep in kinds.items():
        cls = ep.load()
        assert isinstance(cls, type) and issubclass(cls, JobKind) and not issubclass(cls, ModuleKind), name
        assert type(registry.job_kind(name)) is cls and registry.job_kind(name).name == name


def _kind_classes() -> list[type[JobKind]]:
    """The built-in kinds and the Witness kind's variants."""
    from epcg.games.witness.kinds import SCANS, VARIANTS

    return [ep.load() for ep in _own_kinds().values()] + [type(SCANS)] + [type(k) for k in VARIANTS.values()]


@pytest.mark.parametrize("cls", _kind_classes(), ids=lambda c: c.__name__)
def test_a_kind_class_holds_every_hook_its_module_defines(cls: type[JobKind]) -> None:
    """A hook written in the module but not bound in its class would silently be the base's default."""
    module = vars(sys.modules[cls.__module__])
    defined = [name for name in REQUIRED + HOOKS + SETTINGS if name in module]
    assert {name: getattr(cls, name) for name in defined} == {name: module[name] for name in defined}


def _entry_point(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    """``name`` registered as ``value`` in this process, for this test only."""
    known = {**registry._entry_points(), name: EntryPoint(name, value, registry.GROUP)}
    monkeypatch.setattr(registry, "_entry_points", lambda: known)
    registry.job_kind.cache_clear()


@pytest.fixture(autouse=True)
def _fresh_registry() -> Iterator[None]:
    """No kind a test registered outlives it in the registry's cache."""
    yield
    registry.job_kind.cache_clear()


@pytest.mark.parametrize(("value", "why"), [
    ("math:pi", "is not an epcg job kind: it is a float not subclassing epcg.runtime.kind.JobKind, and not a module"),
    ("pathlib:Path", "is not an epcg job kind: it is a class not subclassing epcg.runtime.kind.JobKind, and not a module"),
    ("json", "is not an epcg job kind: it has no Config, plan, run_task, reduce, report"),
    ("epcg.runtime.kind:JobKind", "is not an epcg job kind: it has no Config, plan, run_task, reduce, report"),
])
def test_what_is_no_kind_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch, value: str, why: str) -> None:
    _entry_point(monkeypatch, "odd", value)
    with pytest.raises(UserError) as caught:
        registry.job_kind("odd")
    assert str(caught.value) == f"job kind 'odd' ({value}) {why}"


def test_a_module_kind_takes_the_hooks_it_defines_and_the_defaults_for_the_rest() -> None:
    import types

    module = types.ModuleType("squares")
    exec(PLUGIN_MODULE, vars(module))  # the test's own text, as a plugin's file would hold it
    kind = as_job_kind(module, "squares")
    assert isinstance(kind, ModuleKind) and kind.Config is vars(module)["Config"]
    config = kind.validate({"name": "t", "domain": "squares", "n": 10})
    assert list(kind.notes(config)) == ["n = 10: every square below it"]  # the module's
    assert kind.estimate(config) is None and kind.COARSEN == () and not kind.THREADS_SHARE_READS  # the base's
    with pytest.raises(UserError, match="job kind 'squares' has no checked mode"):
        kind.check_slice(config)
    assert repr(kind) == "<job kind 'squares' (squares)>"


PLUGIN_MODULE = '''
"""A job kind written as a module, as a plugin may be: the sum of the squares below n."""

from epcg.kinds.base import JobConfig
from epcg.runtime.plan import Plan, Stage, split_range


class Config(JobConfig):
    n: int = 100


def plan(config):
    return Plan((Stage("squares", split_range("squares", config.n, 25), size=config.n),))


def run_task(config, task, run):
    return {"sum": sum(i * i for i in range(task.start, task.stop))}


def reduce(config, plan, records, run):
    return {"rows": [{"n": config.n, "sum": sum(r["result"]["sum"] for r in records.values())}]}


def report(config, results, run):
    return f"sum {results['rows'][0]['sum']}\\n", []


def notes(config):
    return [f"n = {config.n}: every square below it"]
'''

PLUGIN_CLASS = '''
"""A job kind written as a class, as the built-in kinds are."""

from epcg.runtime.kind import JobKind

from squares_kinds import module_kind


class Squares(JobKind):
    Config = module_kind.Config

    def plan(self, config):
        return module_kind.plan(config)

    def run_task(self, config, task, run):
        return {"sum": 2 * module_kind.run_task(config, task, run)["sum"]}

    def reduce(self, config, plan, records, run):
        return module_kind.reduce(config, plan, records, run)

    def report(self, config, results, run):
        return module_kind.report(config, results, run)
'''


def test_a_plugin_registered_as_a_module_or_a_class_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed package's entry points (a dist-info on the path) name a module and a class: both run."""
    site = tmp_path / "site"
    (site / "squares_kinds").mkdir(parents=True)
    (site / "squares_kinds" / "__init__.py").write_text("")
    (site / "squares_kinds" / "module_kind.py").write_text(PLUGIN_MODULE)
    (site / "squares_kinds" / "class_kind.py").write_text(PLUGIN_CLASS)
    info = site / "squares_kinds-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: squares-kinds\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[epcg.jobs]\nsquaresmod = squares_kinds.module_kind\n"
                                           "squarescls = squares_kinds.class_kind:Squares\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    expected = sum(i * i for i in range(40))
    for domain, total in (("squaresmod", expected), ("squarescls", 2 * expected)):
        job = tmp_path / f"{domain}.toml"
        job.write_text(f'name = "{domain}"\ndomain = "{domain}"\nn = 40\n')
        out = tmp_path / domain
        result = epcg("run", str(job), "--serial", "--out", str(out))
        assert result.returncode == 0, result.stderr
        assert json.loads((out / "results.json").read_text())["rows"] == [{"n": 40, "sum": total}]
        assert (out / "summary.md").read_text().startswith(f"sum {total}")
        assert ("n = 40: every square below it" in result.stdout + result.stderr) == (domain == "squaresmod")
