"""Where a run directory lives: one interface (:class:`Location`), a POSIX and an object-store implementation.

``open_location`` reads what a user gave (``--out``, ``epcg resume X``,
``epcg.open(X)``): a URL with an object-store scheme is an object store, a
``file://`` URL or anything else a path. A URL is never taken for a path.

>>> open_location("file:///tmp/runs/a").where
'/tmp/runs/a'
>>> is_url("s3://bucket/prefix"), is_url("runs/a"), is_url("C:/x")
(True, False, False)
>>> open_location("ftp://host/x")
Traceback (most recent call last):
...
epcg.runtime.errors.UserError: ftp://host/x: epcg cannot keep a run directory at a ftp:// URL; use a path, file://, s3://, gs:// or az://
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, urlsplit

from epcg.runtime.errors import InvalidValue, UserError
from epcg.runtime.rundir.base import LOCK_KEY, Location
from epcg.runtime.rundir.objects import IO, SCHEMES, ObjectLocation
from epcg.runtime.rundir.posix import PosixLocation, write_atomic

__all__ = ["IO", "LOCK_KEY", "Location", "ObjectLocation", "PosixLocation", "is_url", "open_location",
           "write_atomic"]

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")


def is_url(where: str | os.PathLike[str]) -> bool:
    """True if ``where`` is written as a URL (``scheme://...``), which is never a path."""
    return isinstance(where, str) and bool(_URL.match(where))


def open_location(where: str | os.PathLike[str] | Location) -> Location:
    """The location ``where`` names; UserError for what is neither a path nor a URL, or a URL scheme epcg does
    not keep runs at."""
    if isinstance(where, Location):
        return where
    if not isinstance(where, (str, os.PathLike)) or not isinstance(os.fspath(where), str):
        raise InvalidValue(f"a run directory is a path or a URL such as s3://bucket/prefix, got {where!r}")
    if not is_url(where):
        return PosixLocation(where)
    parts = urlsplit(str(where))
    scheme = parts.scheme.lower()
    if scheme == "file":
        return PosixLocation(unquote(parts.path))
    if scheme not in SCHEMES:
        raise UserError(f"{where}: epcg cannot keep a run directory at a {scheme}:// URL; "
                        "use a path, file://, s3://, gs:// or az://")
    if not parts.netloc:
        raise UserError(f"{where}: the URL names no bucket")
    return ObjectLocation(str(where))
