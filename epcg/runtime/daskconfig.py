"""Dask's configuration checked before anything uses it: one line naming the file (or variable) and the key.

Dask reads its YAML files (``/etc/dask``, ``~/.config/dask``, ``$DASK_CONFIG``) and ``DASK_*`` variables when
it is first imported, and distributed reads each key only where it needs it: a malformed file is a long
traceback at the first ``import dask``, and ``distributed.worker.memory.pause: "lots"`` one in the middle of a
run. :func:`check` imports Dask once, then checks the ``distributed`` part of the configuration against the
schema distributed ships with its defaults (the few JSON-schema words it uses: types, ``enum``, ``oneOf``,
bounds, ``properties``, ``items``), so every key distributed describes is checked, not only those epcg reads.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from epcg.runtime.errors import UserError, one_line

_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "number": (int, float), "integer": (int,),
                                       "boolean": (bool,), "array": (list, tuple), "object": (dict,),
                                       "null": (type(None),)}


@functools.cache
def check() -> None:
    """Import Dask and check its configuration; UserError (one line) naming the file or variable and the key."""
    try:
        import dask  # noqa: F401 - reads the configuration
    except ValueError as exc:  # dask: "A dask config file at '...' is malformed ..."
        head, told, detail = str(exc).partition("original error message:")
        message = one_line(head).rstrip(",") + (": " + " ".join(detail.split()[:12]) if told else "")
        raise UserError(f"Dask's configuration: {message}") from None
    import dask.config

    problem = _first_problem(dask.config.get("distributed", {}), _schema().get("properties", {}).get(
        "distributed", {}), ("distributed",))
    if problem is not None:
        key, value, expected = problem
        raise UserError(f"Dask's configuration: {'.'.join(key)} = {value!r} in {_source(key)}: expected {expected}")


@functools.cache
def _schema() -> dict[str, Any]:
    import importlib.util

    import yaml

    spec = importlib.util.find_spec("distributed")  # found, not imported: status and export never need it
    if spec is None or spec.origin is None:
        return {}
    path = Path(spec.origin).parent / "distributed-schema.yaml"
    try:
        return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
    except (OSError, yaml.YAMLError):
        return {}  # an installation without its schema: nothing to check against


def _first_problem(value: Any, schema: dict[str, Any], key: tuple[str, ...]
                   ) -> tuple[tuple[str, ...], Any, str] | None:
    """``(key, value, what was expected)`` of the first value ``schema`` refuses, or None."""
    expected = _refusal(value, schema)
    if expected is not None:
        return key, value, expected
    if isinstance(value, dict):
        for name, item in value.items():
            inner = schema.get("properties", {}).get(name)
            if isinstance(inner, dict):
                found = _first_problem(item, inner, (*key, str(name)))
                if found is not None:
                    return found
    if isinstance(value, (list, tuple)) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            found = _first_problem(item, schema["items"], (*key, str(index)))
            if found is not None:
                return found
    return None


def _refusal(value: Any, schema: dict[str, Any]) -> str | None:
    """What ``schema`` expects, if it refuses ``value`` itself (its members are checked by the caller)."""
    if "oneOf" in schema or "anyOf" in schema:
        members = schema.get("oneOf", []) + schema.get("anyOf", [])
        if all(_refusal(value, member) is not None for member in members):
            return " or ".join(_refusal(value, member) or "" for member in members)
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        allowed = tuple(t for name in names for t in _TYPES.get(name, (object,)))
        if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
            return " or ".join({"string": "text", "number": "a number", "integer": "a whole number",
                                "boolean": "true or false", "array": "a list", "object": "a mapping",
                                "null": "null"}.get(name, name) for name in names)
    if "enum" in schema and value not in schema["enum"]:
        return "one of " + ", ".join(_yaml(v) for v in schema["enum"])
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"a number of at least {schema['minimum']}"
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            return f"a number above {schema['exclusiveMinimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"a number of at most {schema['maximum']}"
    return None


def _yaml(value: Any) -> str:
    """A value as a YAML file writes it (``false``, not ``False``)."""
    for word, same in (("true", True), ("false", False), ("null", None)):
        if value is same:
            return word
    return repr(value)


def _source(key: tuple[str, ...]) -> str:
    """Where ``key`` was set: the first of Dask's YAML files that sets it, else the DASK_ variable."""
    import dask.config
    import yaml

    def same(a: str, b: str) -> bool:
        return a.replace("_", "-").lower() == b.replace("_", "-").lower()

    for top in dask.config.paths:
        root = Path(top)
        files = sorted(p for p in root.iterdir() if p.suffix in (".yaml", ".yml", ".json")) if root.is_dir() \
            else [root] if root.is_file() else []
        for path in files:
            try:
                node: Any = yaml.safe_load(path.read_text())
            except (OSError, yaml.YAMLError):
                continue
            for part in key:
                match = [v for k, v in node.items() if same(str(k), part)] if isinstance(node, dict) else []
                if not match:
                    break
                node = match[0]
            else:
                return str(path)
    for name in os.environ:
        if name.startswith("DASK_") and same(name.removeprefix("DASK_"), "__".join(key)):
            return f"the environment ({name})"
    return "Dask's configuration"
