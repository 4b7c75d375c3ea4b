"""The `epcg plan` output the docs quote is what the tool prints today.

A quote is an indented block whose first line is ``$ epcg plan …`` (a trailing backslash continues the command)
and whose other lines are what it printed. Each quoted command runs in this process (``epcg plan`` writes
nothing), and each quoted line must be one of its output lines, in order, with two allowances: a duration or a
percentage matches any other (the kernels are timed at plan time, so hours and a stage's scheduling share move
with the machine's load), and ``…`` matches any text. Bytes, memory, partitions, slices and read groups are
arithmetic, so a doc edit or a code change that moves them fails here. So are the tasks of a stage, unless its
tasks are so short that the plan coarsens them by their timed speed: a quote leaves such a stage's line out.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from epcg.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("README.md", "docs/cli.md", "docs/cluster.md", "docs/scaling.md")
PROMPT = "$ epcg plan "
INDENT = "    "
TIMED = re.compile(r"<?\b\d[\d,.]*\s?(?:ms|s|min|h|d|days?|hours?|minutes?|%)(?!\w)")
"""A figure that comes from the kernels' speed timed at plan time: a duration, or a share of one."""
SLOW_PIECES = 13
"""Plans this deep take minutes on a loaded 2-core machine (their slices are counted one by one); ``-m slow`` runs
them."""


@dataclass(frozen=True)
class Quote:
    """One quoted plan: where it is, the arguments after ``epcg plan``, and the lines quoted from its output."""

    doc: str
    args: tuple[str, ...]
    lines: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.doc}: {' '.join(self.args)}"


def quotes(doc: str, text: str) -> list[Quote]:
    """Every quoted plan in ``text``: its command (joined over trailing backslashes) and its output lines, up to the
    first line that is not indented."""
    found = []
    lines = text.splitlines()
    for at, line in enumerate(lines):
        if not line.startswith(INDENT) or not line.strip().startswith(PROMPT):
            continue
        command = line.strip()
        at += 1
        while command.endswith("\\"):
            command = command[:-1] + " " + lines[at].strip()
            at += 1
        output = []
        while at < len(lines) and lines[at].startswith(INDENT):
            output.append(lines[at].strip())
            at += 1
        args = tuple(shlex.split(command, comments=True))[3:]
        found.append(Quote(doc, args, tuple(output)))
    return found


def _normal(line: str) -> str:
    return " ".join(TIMED.sub("⧗", line).split())


def _pattern(quoted: str) -> re.Pattern[str]:
    """The output lines a quoted line stands for: its timed figures any timed figure, ``…`` any text."""
    parts = [re.escape(part).replace("⧗", TIMED.pattern) for part in _normal(quoted).split("…")]
    return re.compile(r"\s*" + ".*".join(parts) + r"\s*")


def unmatched(quoted: tuple[str, ...], printed: str) -> list[str]:
    """The quoted lines not found, in order, among the printed ones (timed figures and ``…`` as the module says)."""
    lines = [" ".join(line.split()) for line in printed.splitlines()]
    missing, at = [], 0
    for line in quoted:
        if line.strip("…. ") == "":
            continue
        pattern = _pattern(line)
        hit = next((i for i in range(at, len(lines)) if pattern.fullmatch(lines[i])), None)
        if hit is None:
            missing.append(line)
        else:
            at = hit + 1
    return missing


def _all_quotes() -> list[Quote]:
    return [q for doc in DOCS for q in quotes(doc, (ROOT / doc).read_text())]


def _param(quote: Quote) -> Any:
    """The quote as a test case, marked slow when its plan is deep."""
    deep = any(a.startswith("max_pieces=") and int(a.split("=")[1]) >= SLOW_PIECES for a in quote.args)
    return pytest.param(quote, id=quote.name, marks=[pytest.mark.slow] if deep else [])


QUOTES = _all_quotes()


def test_the_docs_quote_plans() -> None:
    """The parser finds the quotes: a doc that stops quoting in this form would otherwise pass unchecked."""
    assert sum(q.doc == "docs/scaling.md" for q in QUOTES) >= 2
    assert all(q.lines for q in QUOTES), [q.name for q in QUOTES if not q.lines]


@pytest.mark.parametrize("quote", [_param(q) for q in QUOTES])
def test_a_quoted_plan_is_what_plan_prints(quote: Quote) -> None:
    args = [str(ROOT / a) if (ROOT / a).is_file() else a for a in quote.args]
    result = CliRunner().invoke(main, ["plan", *args])
    assert result.exit_code == 0, result.output
    missing = unmatched(quote.lines, result.stdout)
    assert not missing, f"{quote.name}: not printed today:\n" + "\n".join(missing) + "\n--- printed:\n" + result.stdout


def test_the_match_allows_only_durations_and_ellipses() -> None:
    printed = "k14  26,615   13 s   1.3 TiB  358.2 GiB  3.6 GiB  22.3 min\nrun would accept this job\n"
    assert unmatched(("k14  26,615   18 s   1.3 TiB  358.2 GiB  3.6 GiB  1.2 h",), printed) == []
    assert unmatched(("k14 … 3.6 GiB …", "run would accept this job"), printed) == []
    assert unmatched(("k14  26,616   13 s   1.3 TiB  358.2 GiB  3.6 GiB  22.3 min",), printed) != []
    assert unmatched(("k14  26,615   13 s   1.3 TiB  358.2 GiB  3.7 GiB  22.3 min",), printed) != []
    assert unmatched(("k14  26,615   13 s   1.3 TiB  358.2 GiB  3.6 GiB  22.3 min",), "k14 26,615 0.4 s <0.1 %") != []
    assert unmatched(("top  1 s  3.6 %  0 B",), "top  2 ms  <0.1 %  0 B") == []
    assert unmatched(("run would accept this job", "k14 …"), printed) != []
