"""Job files: load TOML, apply ``--set`` overrides, validate against the domain's schema.

A job file is data, not code: it is parsed with :mod:`tomllib` and validated by a
pydantic model; nothing in it is ever executed.

>>> parse_override('rows=["4x4:7"]')
('rows', ['4x4:7'])
>>> apply_overrides({"a": {"b": 1}}, [("a.b", 2), ("c", "x")])
{'a': {'b': 2}, 'c': 'x'}
"""

from __future__ import annotations

import copy
import hashlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pydantic
import tomli_w

from epcg.runtime.errors import UserError
from epcg.runtime.registry import job_kind, kind_of

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*$")
MAX_DEPTH = 16
"""Deepest nesting of lists and tables a job value may have (job files need 4)."""
MAX_TEXT = 1 << 20
"""Longest job file or --set value, in characters."""


@dataclass(frozen=True)
class Job:
    """A validated job: its name, its domain, and the domain's config model."""

    name: str
    domain: str
    config: pydantic.BaseModel

    def to_dict(self) -> dict[str, Any]:
        """The resolved job as plain data (what ``job.toml`` in the run directory holds)."""
        return self.config.model_dump(mode="json", exclude_none=True)

    def to_toml(self) -> str:
        return tomli_w.dumps(self.to_dict())

    @property
    def digest(self) -> str:
        """SHA-256 of the resolved job; resume refuses a run whose job differs."""
        return hashlib.sha256(self.to_toml().encode()).hexdigest()


def parse_override(text: str) -> tuple[str, Any]:
    """Split ``KEY=VALUE`` where VALUE is a TOML value; raise UserError if malformed."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not _KEY.match(key):
        raise UserError(
            f"malformed --set {text!r}: expected KEY=VALUE with KEY a dotted name, e.g. --set width=7"
        )
    if len(value) > MAX_TEXT:
        raise UserError(f"--set {key}: the value is {len(value):,} characters long, at most {MAX_TEXT:,}")
    if _nesting(value) > MAX_DEPTH:
        raise UserError(f"--set {key}: the value nests lists or tables more than {MAX_DEPTH} deep")
    try:
        parsed = tomllib.loads(f"v = {value.strip()}")["v"]
    except (tomllib.TOMLDecodeError, RecursionError):
        raise UserError(
            f"malformed --set {text!r}: {value.strip()!r} is not a TOML value "
            "(strings need quotes: --set 'name=\"x\"', lists: --set 'rows=[\"4x4:5\"]')"
        ) from None
    return key, parsed


def _nesting(text: str) -> int:
    """Deepest bracket nesting in ``text`` (an upper bound on the TOML value's depth).

    >>> _nesting('[[1], {a = [2]}]')
    3
    """
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def apply_overrides(data: dict[str, Any], overrides: list[tuple[str, Any]]) -> dict[str, Any]:
    """Return a copy of ``data`` with each dotted key set to its value."""
    out = copy.deepcopy(data)
    for key, value in overrides:
        *parents, leaf = key.split(".")
        node = out
        for part in parents:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise UserError(f"--set {key}: {part!r} is not a table in the job file")
            node = child
        node[leaf] = value
    return out


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file, turning a missing or malformed file into a UserError."""
    if not path.is_file():
        raise UserError(f"job file {path} does not exist")
    try:
        if path.stat().st_size > MAX_TEXT:
            raise UserError(f"job file {path} is {path.stat().st_size:,} bytes, at most {MAX_TEXT:,}")
        return loads_toml(path.read_text(), str(path))
    except UnicodeDecodeError as exc:
        raise UserError(f"job file {path} is not valid TOML: {_one_line(exc)}") from None
    except OSError as exc:
        raise UserError(f"job file {path} cannot be read: {exc.strerror}") from None


def loads_toml(text: str, source: str) -> dict[str, Any]:
    """Parse a job's TOML text (a file's, or a run directory's job.toml wherever it is stored)."""
    if len(text) > MAX_TEXT:
        raise UserError(f"job file {source} is {len(text):,} bytes, at most {MAX_TEXT:,}")
    if _nesting(text) > MAX_DEPTH:
        raise UserError(f"job file {source} nests lists or tables more than {MAX_DEPTH} deep")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"job file {source} is not valid TOML: {_one_line(exc)}") from None


def validate(data: dict[str, Any], source: str = "job") -> Job:
    """Validate plain job data against the schema of its job kind (its ``domain`` or ``space``)."""
    try:
        domain = kind_of(data)
        model = job_kind(domain).Config
    except UserError as exc:
        raise UserError(f"{source}: {exc}") from None
    try:
        config = model.model_validate(data)
    except pydantic.ValidationError as exc:
        raise UserError(f"{source}: {describe_error(exc, model)}") from None
    except (RecursionError, MemoryError, OverflowError) as exc:
        raise UserError(f"{source}: a value is too large or too deeply nested to validate ({type(exc).__name__})") from None
    return Job(name=config.name, domain=config.domain, config=config)


def load_job(path: Path, overrides: list[str] = ()) -> Job:
    """Read, override and validate a job file."""
    parsed = [parse_override(text) for text in overrides]
    data = apply_overrides(read_toml(path), parsed)
    return validate(data, source=str(path))


def describe_error(exc: pydantic.ValidationError, model: type[pydantic.BaseModel]) -> str:
    """One line for the first validation error, naming the key and what is allowed."""
    err = exc.errors()[0]
    loc = ".".join(str(part) for part in err["loc"]) or "job"
    if err["type"] == "extra_forbidden":
        allowed = ", ".join(model.model_fields)
        return f"unknown key {loc!r} (allowed keys: {allowed})"
    if err["type"] == "missing":
        return f"missing key {loc!r}"
    message = err["msg"].removeprefix("Value error, ")
    if err["loc"] == () or isinstance(err.get("input"), dict) or "got " in message:
        return f"{loc}: {message}"
    got = repr(err.get("input"))
    return f"{loc}: {message} (got {got if len(got) <= 80 else got[:77] + '...'})"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
