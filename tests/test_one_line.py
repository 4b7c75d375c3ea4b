"""Every message quotes an exception in one line made by one function (``errors.one_line``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from epcg.runtime.errors import one_line

EPCG = Path(__file__).resolve().parents[1] / "epcg"


@pytest.mark.parametrize(("error", "named", "line"), [
    (FileNotFoundError(2, "No such file or directory", "/a b"), False, "/a b: No such file or directory"),
    (OSError(18, "Invalid cross-device link", "/a", None, "/b"), False, "/a -> /b: Invalid cross-device link"),
    (ConnectionRefusedError(111, "Connection refused"), False, "Connection refused"),
    (OSError("Timed out trying to connect\nafter 5 s"), False, "Timed out trying to connect after 5 s"),
    (ValueError("  spaced\n\tout  "), False, "spaced out"),
    (ValueError(), False, ""),
    (TypeError("No implementation\n  of add\n"), True, "TypeError: No implementation"),
    (KeyError(), True, "KeyError"),
    (FileNotFoundError(2, "No such file or directory", "/x"), True, "FileNotFoundError: [Errno 2] No such file or "
                                                                     "directory: '/x'"),
    ("a tool's\r\noutput\n", False, "a tool's output"),
])
def test_one_line(error: BaseException | str, named: bool, line: str) -> None:
    assert one_line(error, named=named) == line
    assert "\n" not in one_line(error, named=named)


def test_no_module_makes_its_own_one_line_of_an_exception() -> None:
    """The formatter is the only place that folds an exception's text: no module joins split words of
    ``str(exc)`` or takes the first of its ``splitlines()`` itself."""
    own = re.compile(r"join\(str\(\w+\)\.split\(\)\)|str\(exc\)\.strip\(\)\.splitlines\(\)")
    offenders = [f"{path.relative_to(EPCG)}:{n}" for path in EPCG.rglob("*.py") if path.name != "errors.py"
                 for n, text in enumerate(path.read_text().splitlines(), 1) if own.search(text)]
    assert offenders == []
