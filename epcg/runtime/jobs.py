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
import types
import typing
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pydantic
import tomli_w
from pydantic_core import ErrorDetails

from epcg.runtime.errors import UserError, one_line
from epcg.runtime.kind import JobKind
from epcg.runtime.registry import job_kind, kind_of
from epcg.runtime.shell import command

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


def parse_override(text: str) -> tuple[str | tuple[str, ...], Any]:
    """Split ``KEY=VALUE`` where KEY is a TOML key (dotted, parts quoted or bare) and VALUE a TOML value; raise
    UserError if malformed. A key with a quoted part comes back as the tuple of its parts.

    >>> parse_override('solution_counts."4x4"=100')
    (('solution_counts', '4x4'), 100)
    """
    key: str | tuple[str, ...]
    key, sep, value = text.partition("=")
    key = key.strip()
    quoted = _quoted_key(text) if sep and not _KEY.match(key) else None
    if quoted is not None:
        (key, value) = quoted
    elif not sep or not _KEY.match(key):
        raise UserError(
            f"malformed --set {text!r}: expected KEY=VALUE with KEY a dotted name, e.g. --set width=7"
        )
    shown = key if isinstance(key, str) else text.partition("=")[0].strip()
    if len(value) > MAX_TEXT:
        raise UserError(f"--set {shown}: the value is {len(value):,} characters long, at most {MAX_TEXT:,}")
    if _nesting(value) > MAX_DEPTH:
        raise UserError(f"--set {shown}: the value nests lists or tables more than {MAX_DEPTH} deep")
    try:
        parsed = tomllib.loads(f"v = {value.strip()}")["v"]
    except (tomllib.TOMLDecodeError, RecursionError):
        raise UserError(
            f"malformed --set {text!r}: {value.strip()!r} is not a TOML value "
            "(strings need quotes: --set 'name=\"x\"', lists: --set 'rows=[\"4x4:5\"]')"
        ) from None
    return key, parsed


def _quoted_key(text: str) -> tuple[tuple[str, ...], str] | None:
    """``(key parts, value text)`` of ``KEY=VALUE`` whose KEY is a TOML key with quoted parts
    (``solution_counts."4x4"``, which may hold ``=`` or ``.``), or None if no ``=`` ends such a key."""
    for at in (i for i, char in enumerate(text) if char == "="):
        try:
            node: Any = tomllib.loads(f"{text[:at]} = 0")
        except tomllib.TOMLDecodeError:
            continue
        parts: list[str] = []
        while isinstance(node, dict) and len(node) == 1:
            (part, node), = node.items()
            parts.append(part)
        if node == 0 and parts:
            return tuple(parts), text[at + 1:]
    return None


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


def apply_overrides(data: dict[str, Any], overrides: list[tuple[str | tuple[str, ...], Any]]) -> dict[str, Any]:
    """Return a copy of ``data`` with each key (dotted text, or a tuple of parts) set to its value."""
    out = copy.deepcopy(data)
    for key, value in overrides:
        *parents, leaf = key.split(".") if isinstance(key, str) else key
        key = key if isinstance(key, str) else ".".join(key)
        node = out
        for part in parents:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise UserError(f"--set {key}: {part!r} is not a table in the job file")
            node = child
        node[leaf] = value
    return out


def read_toml(path: Path, what: str = "job file") -> dict[str, Any]:
    """Parse a TOML file (a ``what``: job file, cluster file), turning a missing or malformed one into a UserError."""
    if path.is_dir():
        hint = f" (a run directory: {command('resume', path)})" if (path / "job.toml").is_file() else ""
        raise UserError(f"{what} {path} is a directory, not a TOML file{hint}")
    if not path.exists():
        raise UserError(f"{what} {path} does not exist")
    try:
        with path.open("rb") as handle:  # a pipe or device too (bash's <(...)), read at most MAX_TEXT + 1 bytes
            raw = handle.read(MAX_TEXT + 1)
        if len(raw) > MAX_TEXT:
            raise UserError(f"{what} {path} is more than {MAX_TEXT:,} bytes long")
        text = raw.decode("utf-8").removeprefix("\ufeff")  # an editor's byte-order mark is not TOML's business
        if _nesting(text) > MAX_DEPTH:
            raise UserError(f"{what} {path} nests lists or tables more than {MAX_DEPTH} deep")
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{what} {path} is not valid TOML: {one_line(exc)}") from None
    except OSError as exc:
        raise UserError(f"{what} {path} cannot be read: {exc.strerror}") from None


def loads_toml(text: str, source: str) -> dict[str, Any]:
    """Parse a job's TOML text (a file's, or a run directory's job.toml wherever it is stored)."""
    text = text.removeprefix("\ufeff")
    if len(text) > MAX_TEXT:
        raise UserError(f"job file {source} is {len(text):,} bytes, at most {MAX_TEXT:,}")
    if _nesting(text) > MAX_DEPTH:
        raise UserError(f"job file {source} nests lists or tables more than {MAX_DEPTH} deep")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"job file {source} is not valid TOML: {one_line(exc)}") from None


def validate(data: dict[str, Any], source: str = "job") -> Job:
    """Validate plain job data against the schema of its job kind (its ``domain`` or ``space``)."""
    try:
        domain = kind_of(data)
        kind = job_kind(domain)
    except UserError as exc:
        raise UserError(f"{source}: {exc}") from None
    try:
        check_values(data)
        check_types(data, _schema_for(kind, data))
        config: Any = kind.validate(data)  # a kind's own model: every one has name and domain
    except pydantic.ValidationError as exc:
        raise UserError(f"{source}: {describe_error(exc, _schema_for(kind, data))}") from None
    except (RecursionError, MemoryError, OverflowError) as exc:
        raise UserError(f"{source}: a value is too large or too deeply nested to validate ({type(exc).__name__})") from None
    return Job(name=config.name, domain=config.domain, config=config)


def _schema_for(kind: JobKind, data: Any) -> type[pydantic.BaseModel]:
    """The schema that validates ``data`` (so an error lists that schema's keys only); the kind's ``Config`` when
    the data names no schema it has."""
    try:
        return kind.schema_for(data)
    except (pydantic.ValidationError, ValueError):
        return kind.Config


def load_job(path: Path, overrides: Sequence[str] = ()) -> Job:
    """Read, override and validate a job file."""
    parsed = [parse_override(text) for text in overrides]
    data = apply_overrides(read_toml(path), parsed)
    return validate(data, source=str(path))


_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string", list: "a list",
          tuple: "a list", dict: "a table"}


def _admitted(annotation: Any) -> set[Any]:
    """The plain types (and literal values) a field's annotation admits; ``object`` when it admits anything."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _admitted(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return set().union(*(_admitted(arg) for arg in typing.get_args(annotation)))
    if origin is typing.Literal:
        return {type(value) for value in typing.get_args(annotation)}
    if origin is not None:
        return {origin if isinstance(origin, type) else object}
    if annotation is type(None):
        return set()
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return {dict}
    return {annotation} if annotation in _WORDS else {object}


def _type_error(loc: tuple[int | str, ...], value: Any, annotation: Any) -> pydantic.ValidationError:
    words: list[str] = []
    for member in _members(annotation):
        if typing.get_origin(member) is typing.Literal:
            found = [repr(v) for v in typing.get_args(member)]
        else:
            origin = typing.get_origin(member) or member
            found = [_WORDS.get(origin, "a table")] if origin is not type(None) else []
        words += [w for w in found if w not in words]
    expected = ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else words[0]
    shown = {True: "true", False: "false"}.get(value, repr(value)) if isinstance(value, bool) else repr(value)
    return pydantic.ValidationError.from_exception_data("job", [{
        "type": "value_error", "loc": loc, "input": value,
        "ctx": {"error": ValueError(f"expected {expected}, got {shown}")}}])


def check_types(data: Any, model: Any, loc: tuple[int | str, ...] = ()) -> None:
    """Refuse (a ValidationError naming the key) what pydantic's lax mode would coerce by surprise:
    a boolean where a number is expected, text where only numbers or booleans are, a number for a boolean,
    a number with a point (``5.0``) where only whole numbers are.

    >>> class M(pydantic.BaseModel):
    ...     width: int = 1
    >>> try:
    ...     check_types({"width": True}, M)
    ... except pydantic.ValidationError as exc:
    ...     print(describe_error(exc, M))
    width: expected an integer, got true
    """
    fields = getattr(model, "model_fields", None)
    if not isinstance(data, dict) or not fields:
        return
    for key, value in data.items():
        if key in fields:
            _check_value(value, fields[key].annotation, (*loc, key))


def check_values(data: Any, loc: tuple[int | str, ...] = ()) -> None:
    """Refuse (a ValidationError naming the key), in any key of any kind, what no key means: an integer beyond
    64 bits (the kernels' and arrays' integers) and a decimal digit other than 0-9 in a text or a table's key
    (``"３x3:3"`` would read as a row of its own, that a filter written ``3x3:3`` never finds).

    >>> try:
    ...     check_values({"rows": ["３x3:3"]})
    ... except pydantic.ValidationError as exc:
    ...     print(exc.errors()[0]["msg"])
    Value error, expected numbers written with the digits 0-9, got '３x3:3' (its '３' is U+FF13)
    """
    def refuse(message: str, value: Any) -> pydantic.ValidationError:
        return pydantic.ValidationError.from_exception_data("job", [{
            "type": "value_error", "loc": loc, "input": value, "ctx": {"error": ValueError(message)}}])

    if isinstance(data, int) and not isinstance(data, bool) and not INT64[0] <= data <= INT64[1]:
        raise refuse(f"expected an integer of 64 bits ({INT64[0]}..{INT64[1]}), got {_short(data)}", data)
    texts = [data] if isinstance(data, str) else [k for k in data if isinstance(k, str)] \
        if isinstance(data, dict) else []
    for text in texts:
        digit = next((c for c in text if not c.isascii() and unicodedata.decimal(c, None) is not None), None)
        if digit is not None:
            raise refuse(f"expected numbers written with the digits 0-9, got {text!r} (its {digit!r} is "
                         f"U+{ord(digit):04X})", text)
    if isinstance(data, dict):
        for key, value in data.items():
            check_values(value, (*loc, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            check_values(value, (*loc, index))


INT64 = (-(1 << 63), (1 << 63) - 1)
"""The integers a job value may be."""


def _short(number: int) -> str:
    text = str(number)
    return text if len(text) <= 30 else f"{text[:12]}...({len(text)} digits)"


def _check_value(value: Any, annotation: Any, loc: tuple[int | str, ...]) -> None:
    admitted = _admitted(annotation)
    if object in admitted or not admitted:
        return
    if isinstance(value, bool):
        bad = bool not in admitted
    elif isinstance(value, float) and float not in admitted:
        bad = True  # 5.0 for a whole number is refused as "5" is: TOML writes an integer without a point
    elif isinstance(value, (int, float)):
        bad = bool in admitted and not admitted & {int, float}
    elif isinstance(value, str):
        bad = str not in admitted and bool(admitted & {bool, int, float}) and not admitted - {bool, int, float}
    else:
        bad = False
    if bad:
        raise _type_error(loc, value, annotation)
    for member in _members(annotation):
        if isinstance(member, type) and issubclass(member, pydantic.BaseModel) and isinstance(value, dict):
            check_types(value, member, loc)
        origin, args = typing.get_origin(member), typing.get_args(member)
        if origin is dict and isinstance(value, dict) and len(args) == 2:
            for key, item in value.items():
                _check_value(item, args[1], (*loc, key))
        elif origin in (list, tuple) and isinstance(value, list) and args:
            for index, item in enumerate(value):
                _check_value(item, args[0] if origin is list or len(args) != len(value) else args[index],
                             (*loc, index))


def _members(annotation: Any) -> tuple[Any, ...]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return tuple(m for arg in typing.get_args(annotation) for m in _members(arg))
    return (annotation,)


_UNION_TAG = re.compile(r"^(int|float|str|bool|none|(literal|dict|list|tuple|set)\[.*\]|[A-Z]\w*)$")
"""How pydantic names the member of a union a failed attempt was made with."""


def _union_error(errors: list[ErrorDetails]) -> str | None:
    """One line for a value that matched no member of a union: what each member would have taken."""
    first = errors[0]
    if not first["loc"]:
        return None
    parent = first["loc"][:-1]
    members = [e for e in errors if e["loc"] and e["loc"][:-1] == parent and e.get("input") is first.get("input")
               and _UNION_TAG.match(str(e["loc"][-1]))]
    if len(members) < 2 or not _UNION_TAG.match(str(first["loc"][-1])):
        return None
    words: list[Any] = []  # the allowed values pydantic names (its error context is untyped)
    for e in members:
        tag = str(e["loc"][-1])
        word = (e.get("ctx", {}).get("expected") if tag.startswith("literal") else
                {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false"}.get(
                    tag, "a list" if tag.startswith(("list", "tuple", "set")) else "a table"))
        if word not in words:
            words.append(word)
    got = repr(first.get("input"))
    return (f"{'.'.join(str(p) for p in parent) or 'job'}: expected {', '.join(words[:-1])} or {words[-1]} "
            f"(got {got if len(got) <= 80 else got[:77] + '...'})")


def _model_at(model: Any, loc: tuple[Any, ...]) -> Any:
    """The pydantic model whose keys sit at ``loc`` under ``model`` (a row's table inside ``rows``), or None."""
    for part in loc:
        if isinstance(part, int):
            continue  # an item of a list: the same annotation's argument, below
        fields = getattr(model, "model_fields", {})
        if part not in fields:
            return None
        model = fields[part].annotation
        while typing.get_args(model) and not (isinstance(model, type) and issubclass(model, pydantic.BaseModel)):
            inner = [a for a in typing.get_args(model) if isinstance(a, type) and issubclass(a, pydantic.BaseModel)]
            model = inner[0] if inner else typing.get_args(model)[0]
    return model if isinstance(model, type) and issubclass(model, pydantic.BaseModel) else None


def describe_error(exc: pydantic.ValidationError, model: type[pydantic.BaseModel]) -> str:
    """One line for the first validation error, naming the key and what is allowed."""
    errors = exc.errors()
    err = errors[0]
    union = _union_error(errors)
    if union is not None:
        return union
    loc = ".".join(str(part) for part in err["loc"]) or "job"
    if err["type"] == "extra_forbidden":
        allowed = ", ".join(getattr(_model_at(model, tuple(err["loc"][:-1])), "model_fields", None)
                            or model.model_fields)
        if loc in ("keep", "keep_cap"):
            return (f"unknown key {loc!r}: this kind of job has no score bands to keep (keep is a key of witness "
                    f"must-cross, regions and joint jobs, fling jobs and scan jobs; allowed keys: {allowed})")
        return f"unknown key {loc!r} (allowed keys: {allowed})"
    if err["type"] == "missing":
        return f"missing key {loc!r}"
    message = err["msg"].removeprefix("Value error, ")
    if err["loc"] == () or isinstance(err.get("input"), dict) or "got " in message:
        return f"{loc}: {message}"
    got = repr(err.get("input"))
    return f"{loc}: {message} (got {got if len(got) <= 80 else got[:77] + '...'})"
