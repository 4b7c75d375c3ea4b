"""The layers of docs/architecture.md: who never imports whom (in fresh interpreters), no import circles, and
each built-in game one package that only the registry reaches."""

from __future__ import annotations

import ast
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GAMES = ("witness", "fling", "dwp")
STORAGE_AND_CLUSTER = ("dask", "distributed", "zarr")


def _domain_forbids(game: str) -> tuple[str, ...]:
    """A game's domain: no runtime, kinds, API, report page, other game, or its own game's outer modules."""
    others = tuple(f"epcg.games.{g}" for g in GAMES if g != game)
    own_outer = tuple(f"epcg.games.{game}.{m}" for m in ("kind", "kinds", "scans", "triples", "unique_cover", "paper",
                                                        "rows", "evaluation", "report", "found", "run"))
    return ("epcg.runtime", "epcg.kinds", "epcg.api", "epcg.cli", "epcg.report.html", "epcg.report.dashboard",
            *others, *own_outer, *STORAGE_AND_CLUSTER)


def _modules(package: str) -> list[str]:
    folder = ROOT / package.replace(".", "/")
    return sorted(".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
                  for p in folder.rglob("*.py"))


FORBIDDEN = {
    "epcg.combinatorics": ("epcg.search", "epcg.runtime", "epcg.kinds", "epcg.games", "epcg.api", "epcg.report",
                           *STORAGE_AND_CLUSTER),
    "epcg.search": ("epcg.runtime", "epcg.kinds", "epcg.games", "epcg.api", "epcg.report", *STORAGE_AND_CLUSTER),
    **{f"epcg.games.{game}.domain": _domain_forbids(game) for game in GAMES},
    "epcg.runtime": ("epcg.kinds", "epcg.games", "epcg.api", "epcg.report", "epcg.cli"),
    "epcg.report": ("epcg.kinds", "epcg.games", "epcg.api", "epcg.cli"),
    "epcg.api": ("epcg.kinds", "epcg.games", "epcg.cli"),
    "epcg.kinds": ("epcg.games", "epcg.cli"),
}


@pytest.mark.parametrize("package", list(FORBIDDEN))
def test_a_layer_never_imports_the_layers_above_it(package: str) -> None:
    modules = _modules(package)
    code = (
        f"import sys, importlib\nfor m in {modules!r}: importlib.import_module(m)\n"
        f"print(sorted({{m for m in sys.modules if m.startswith({FORBIDDEN[package]!r})}}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "[]"


def _imports(path: Path, module: str) -> set[str]:
    """Every epcg module ``module`` imports, at any depth of its code, except under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return {name for name in found if name.split(".")[0] == "epcg"}


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    """epcg's modules and the epcg modules each imports (names that are not modules dropped)."""
    paths = {m: ROOT / (m.replace(".", "/") + ("/__init__.py" if (ROOT / m.replace(".", "/")).is_dir() else ".py"))
             for m in _modules("epcg")}
    return {m: {i for i in _imports(p, m) if i in paths and i != m} for m, p in paths.items()}


def test_no_import_circles(graph: dict[str, set[str]]) -> None:
    """Tarjan's strongly connected components of the import graph: each must be one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while (w := stack.pop()) != v:
                part.append(w)
            if part:
                circles.append(sorted([v, *part]))

    sys.setrecursionlimit(10_000)
    for v in graph:
        if v not in index:
            connect(v)
    assert circles == []


def test_only_a_game_imports_its_own_modules(graph: dict[str, set[str]]) -> None:
    """Outside ``epcg/games/<game>/`` a game is reached through the registry (entry points), never imported."""
    crossing = sorted((m, i) for m, imports in graph.items() for i in imports for game in GAMES
                      if i.startswith(f"epcg.games.{game}") and not m.startswith(f"epcg.games.{game}"))
    assert crossing == []


@pytest.mark.parametrize("game", GAMES)
def test_each_game_registers_its_kind_and_run_class_from_its_own_package(game: str) -> None:
    kinds = {ep.name: ep.value for ep in entry_points(group="epcg.jobs")}
    runs = {ep.name: ep.value for ep in entry_points(group="epcg.runs")}
    assert kinds[game].startswith(f"epcg.games.{game}.")
    assert runs[game].startswith(f"epcg.games.{game}.run:")


LOCATION_KINDS = {"is_local", "PosixLocation", "ObjectLocation"}
"""What a module would name to ask where a run lives instead of asking its Location."""


def _asks_where_a_run_lives(path: Path) -> list[str]:
    """``file:line name`` of every use of :data:`LOCATION_KINDS` in ``path``: an attribute, a name, an import."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        names = [node.attr] if isinstance(node, ast.Attribute) else [node.id] if isinstance(node, ast.Name) else \
            [alias.name for alias in node.names] if isinstance(node, ast.ImportFrom) else []
        found += [f"{path.relative_to(ROOT)}:{node.lineno} {name}" for name in names if name in LOCATION_KINDS]
    return found


def test_only_the_location_decides_what_differs_between_a_directory_and_an_object_store() -> None:
    """Outside epcg/runtime/rundir/, no module asks which kind of Location a run has (an ``is_local`` flag, a
    PosixLocation or ObjectLocation): each such decision is a method of the Location (``local_path``, ``address``,
    ``written_through``, ``drop_scratch``, ``io``, ``metered``, ``check_conditional``)."""
    rundir = ROOT / "epcg" / "runtime" / "rundir"
    asked = [hit for path in sorted((ROOT / "epcg").rglob("*.py")) if rundir not in path.parents
             for hit in _asks_where_a_run_lives(path)]
    assert asked == []
    assert _asks_where_a_run_lives(rundir / "__init__.py"), "the check finds the names where they are allowed"
