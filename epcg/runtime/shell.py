"""Commands printed for a person to paste: every path quoted for the shell, whatever it holds.

A run directory may be named with spaces, quotes or bytes of another locale (kept as surrogate escapes,
printed back as the same bytes). :func:`command` writes ``'epcg resume /runs/x'`` as before when no word
needs quoting, and ``epcg resume '/runs/a b'`` (each word as :func:`shlex.quote` gives it) when one does, so
that what is selected and pasted is the command itself.

>>> command("resume", "/runs/x")
"'epcg resume /runs/x'"
>>> command("submit --resume", "/runs/a b", "--detach")
"epcg submit --resume '/runs/a b' --detach"
"""

from __future__ import annotations

import os
import shlex


def command(action: str, *args: str | os.PathLike[str]) -> str:
    """``epcg ACTION ARGS`` as it must be typed, for a message."""
    words = ["epcg", *action.split(), *(os.fspath(a) for a in args)]
    quoted = [shlex.quote(word) for word in words]
    return f"'{' '.join(words)}'" if quoted == words else " ".join(quoted)
