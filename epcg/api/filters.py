"""Every filter ``epcg export --where KEY=VALUE`` and ``Run.found(**filters)`` take, as one table made from the code.

A run's class names the method that lists what it found (``FOUND``); that method's keyword arguments are the
filters. Each class describes them in ``WHERE`` (method -> key -> (values, what it selects)); :func:`missing`
finds an argument without its line (or a line without its argument), and docs/filters.md holds
:func:`filter_table` as ``python -m epcg.api.filters`` prints it (``tests/test_filters_documented.py`` checks both).
"""

from __future__ import annotations

import inspect

from epcg.runtime.registry import kinds_with_run_types


def filter_keys() -> list[tuple[str, str, str]]:
    """``(kind, method, key)`` of every filter the API accepts, kind by kind, in the methods' order."""
    out = []
    for kind, cls in kinds_with_run_types():
        for method in _methods(cls):
            params = inspect.signature(getattr(cls, method)).parameters
            out += [(kind, method, key) for key in params if key != "self"]
    return out


def _methods(cls: type) -> list[str]:
    """The listing methods of a run class: its ``FOUND`` (one per variant when it depends on the run) and those
    ``WHERE`` describes."""
    found = cls.__dict__.get("FOUND", getattr(cls, "FOUND", None))
    named = [found] if isinstance(found, str) else []
    return list(dict.fromkeys(named + list(getattr(cls, "WHERE", {}))))


def missing() -> list[str]:
    """Filters without a line in their class's ``WHERE``, and lines of ``WHERE`` naming no filter."""
    accepted = filter_keys()
    out = [f"{kind}: {method}({key}=) has no line in {_class(kind).__name__}.WHERE" for kind, method, key in accepted
           if key not in _where(kind).get(method, {})]
    for kind, cls in kinds_with_run_types():
        for method, keys in getattr(cls, "WHERE", {}).items():
            out += [f"{kind}: {cls.__name__}.WHERE describes {method}({key}=), which takes no such filter"
                    for key in keys if (kind, method, key) not in accepted]
    return out


def _class(kind: str) -> type:
    return dict(kinds_with_run_types())[kind]


def _where(kind: str) -> dict[str, dict[str, tuple[str, str]]]:
    return getattr(_class(kind), "WHERE", {})


def filter_table() -> str:
    """The table of docs/filters.md: one line per filter of every kind of run."""
    lines = ["| runs of | method | `--where` key | values | what it selects |", "|---|---|---|---|---|"]
    for kind, method, key in filter_keys():
        values, selects = _where(kind).get(method, {}).get(key, ("?", "?"))
        lines.append(f"| {kind} | `{method}` | `{key}` | {values} | {selects} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(filter_table(), end="")
