"""What epcg shows a person, escaped for where it is shown: a terminal, Markdown, any message or log.

Much of what epcg prints is data a run directory, a job file or a URL holds (a path, a row's title, a space's
decoded design), and anybody may have written it. So:

- :func:`terminal` removes every control sequence and control character but newline and tab (CSI colours and
  cursor moves, OSC titles and hyperlinks, DCS/APC strings, 8-bit C1 controls, a bare carriage return or
  backspace that would overwrite what was printed): every line the command line prints passes through it
  (:func:`shown`).
- :func:`redact` removes the secret parts of what looks like a URL or a credential (``http://admin:pw@host``,
  ``s3://KEY:secret@bucket/x``, ``?X-Amz-Signature=…``, ``password=…``) from every message and log line.
- :func:`figure_text` is text a matplotlib figure draws (no control characters; a ``$`` is a dollar sign,
  never the start of mathtext that may fail to parse).
- :func:`markdown` and :func:`markdown_code` escape text set into summary.md (and report.html, which renders it).

>>> terminal("a\\x1b]0;pwned\\x07b\\x1b[31mc\\x9b2Jd\\re\\tf")
'abcde\\tf'
>>> redact("cannot reach http://admin:hunter2@127.0.0.1:9/x?token=abc&page=2")
'cannot reach http://***@127.0.0.1:9/x?token=***&page=2'
>>> markdown("*a* | <b>")
'\\\\*a\\\\* \\\\| \\\\<b\\\\>'
>>> markdown_code("a`b")
'`` a`b ``'
"""

from __future__ import annotations

import re

__all__ = ["terminal", "redact", "shown", "markdown", "markdown_code", "figure_text"]

_SEQUENCES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI (7-bit and 8-bit): colours, cursor moves, erasing
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS, SOS, PM, APC
    r"|\x1b[ -/]*[0-~]?"  # any other escape (ESC c resets the terminal), and a lone ESC
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""C0 controls but tab and newline, DEL, and C1 controls."""


def terminal(text: str) -> str:
    """``text`` without control sequences or control characters (newline and tab kept), safe to print."""
    return _CONTROLS.sub("", _SEQUENCES.sub("", text))


_USERINFO = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s@?#]*@")
_SECRET_PARAMS = re.compile(
    r"(?i)\b((?:[a-z0-9_-]*(?:password|passwd|secret|token|signature|credential|api[_-]?key|access[_-]?key)"
    r"[a-z0-9_-]*|sig)=)[^&\s#'\"]+")


def redact(text: str) -> str:
    """``text`` with the user information of every URL (``user:password@``) and the values of parameters
    named like secrets replaced by ``***``."""
    return _SECRET_PARAMS.sub(r"\1***", _USERINFO.sub(r"\1***@", text))


def shown(text: str) -> str:
    """A message as a terminal shows it: secrets redacted, control sequences removed."""
    return terminal(redact(text))


_MARKDOWN = re.compile(r"([\\`*_\[\]|~<>&])")
_LEADING = re.compile(r"^([#+-]|\d+[.)])")


def markdown(text: str) -> str:
    """``text`` as literal Markdown inline text: one line, every character that could make emphasis, a link, code,
    a table cell, HTML, or at its start a heading or list, escaped with a backslash."""
    one_line = " ".join(terminal(str(text)).split())
    return _LEADING.sub(r"\\\1", _MARKDOWN.sub(r"\\\1", one_line))


def markdown_code(text: str, cell: bool = False) -> str:
    """``text`` as one Markdown code span on one line, fenced by more backticks than it holds in a row (in a
    table ``cell``, its ``|`` escaped as tables need)."""
    one_line = " ".join(terminal(str(text)).split())
    if cell:
        one_line = one_line.replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", one_line)), default=0)
    if not longest:
        return f"`{one_line}`"
    fence = "`" * (longest + 1)
    return f"{fence} {one_line} {fence}"


def figure_text(text: str) -> str:
    """``text`` as matplotlib draws it literally: control characters removed, ``$`` escaped (no mathtext).

    >>> print(figure_text("cost $5$\\x07"))
    cost \\$5\\$
    """
    return terminal(str(text)).replace("$", r"\$")
