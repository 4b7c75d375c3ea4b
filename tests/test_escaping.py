"""Every view escapes what it shows for its medium: the terminal gets no control sequence of data, summary.md
no Markdown or HTML of data, and no message or log a URL's password or a secret parameter. (The progress page
is tested in a browser in test_dashboard.py.)"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from epcg.runtime.errors import TaskFailed, UserError
from epcg.runtime.text import markdown, markdown_code, redact, terminal

HOSTILE = "\x1b]0;pwned\x07<img src=x onerror=alert(1)>*bold* [link](javascript:alert(1)) | cell\x1b[2J\x9b31m"


@pytest.mark.parametrize("text", [
    "\x1b]0;title\x07", "\x1b]8;;http://x\x1b\\", "\x1b[31m", "\x1b[?1049h", "\x9b2J", "\x9d0;t\x9c", "\x1bPq#0\x1b\\",
    "\x1b_apc\x1b\\", "\x1bc", "\x1b(0", "\r", "\b", "\x00", "\x7f", "\x85", "\x07",
])
def test_the_terminal_gets_no_control_sequence(text: str) -> None:
    assert terminal(f"a{text}b") == "ab"


def test_the_terminal_keeps_text_newlines_and_tabs() -> None:
    assert terminal("Größe 日本\tx\ny — ✓") == "Größe 日本\tx\ny — ✓"
    assert terminal("a lone escape at the end\x1b") == "a lone escape at the end"


@pytest.mark.parametrize(("text", "secret"), [
    ("http://admin:hunter2pass@127.0.0.1:9", "hunter2pass"),
    ("s3://KEY:secret@bkt/x", "secret"),
    ("s3://AKIAEXAMPLE@bkt/x", "AKIAEXAMPLE"),
    ("https://acct.blob.core.windows.net/c/b?sv=2020&sig=abcDEF%2B", "abcDEF"),
    ("https://storage.googleapis.com/b/o?X-Goog-Signature=deadbeef&X-Goog-Date=1", "deadbeef"),
    ("--set password=letmein", "letmein"),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI", "wJalrXUtnFEMI"),
    ("tcp://user:pw@10.0.0.1:8786", ":pw@"),
])
def test_secrets_are_redacted(text: str, secret: str) -> None:
    assert secret not in redact(text)


def test_redaction_leaves_what_is_no_secret() -> None:
    text = "run /tmp/runs/a@b (user@example.com) at s3://bucket/prefix, rows=3x3:3, chunk_words=1024"
    assert redact(text) == text


def test_every_message_is_redacted_as_it_is_made() -> None:
    for error in (UserError, TaskFailed):
        assert "hunter2" not in str(error("cannot reach http://admin:hunter2@127.0.0.1:9"))


def test_log_lines_are_redacted(tmp_path: Path) -> None:
    from epcg.runtime.logs import RunLog

    log = RunLog()
    log.attach(tmp_path / "run.log")
    logging.getLogger("distributed").addHandler(log)
    try:
        logging.getLogger("distributed").warning("connect to tcp://u:s3cr3t@h:1 failed \x1b]0;x\x07")
    finally:
        logging.getLogger("distributed").removeHandler(log)
        log.close()
    text = (tmp_path / "run.log").read_text()
    assert "connect to tcp://***@h:1 failed" in text and "s3cr3t" not in text and "\x1b" not in text


def test_markdown_of_data_is_literal() -> None:
    from epcg.report.html import markdown_html

    html = markdown_html(f"- {markdown(HOSTILE)}\n- {markdown_code('a ` b | c')}\n\n# {markdown('# not a heading')}")
    assert "<img" not in html and "<a " not in html and "<em>" not in html and "<strong>" not in html
    assert html.count("<h1>") == 1 and "<code>" in html and "\x1b" not in html


SPACE = '''
from numba import njit

from epcg.search import ScanSpace, scan_family


@njit(cache=True)
def score(rank, base):
    return rank % base


@scan_family
def labelled(base, title=""):
    return ScanSpace(max_rank=20, evaluate=score, data=(base,), name=title, decode=lambda rank: title)
'''


def test_a_hostile_row_reaches_neither_terminal_nor_summary_raw(tmp_path: Path) -> None:
    """A row's title with an OSC sequence, HTML and Markdown: ``epcg run`` prints the summary, ``epcg report``
    writes it again; neither output holds a control character of it, summary.md holds no markup of it."""
    from epcg.report.html import markdown_html

    (tmp_path / "labelspace.py").write_text(SPACE)
    (tmp_path / "job.toml").write_text(f'name = "hostile"\nspace = "labelspace:labelled"\n'
                                       f'rows = [{{base = 7, title = {json.dumps(HOSTILE)}}}]\nmax = true\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    out = tmp_path / "run"
    for args in (["run", str(tmp_path / "job.toml"), "--out", str(out), "--serial"],
                 ["report", str(out), "--trust-space"], ["status", str(out)]):
        done = subprocess.run([sys.executable, "-m", "epcg", *args], capture_output=True, text=True, env=env,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        shown = done.stdout + done.stderr
        assert not any(c in shown for c in "\x1b\x07\x9b"), (args, shown)
        summary = (out / "summary.md").read_text()
        assert "\\<img src=x" in summary and not any(c in summary for c in "\x1b\x07\x9b")
        html = markdown_html(summary)  # as report.html shows it
        assert "<img" not in html and "<em>bold" not in html and "&lt;img src=x" in html


def test_a_url_secret_is_never_printed(s3_env, tmp_path: Path) -> None:
    """A password in the endpoint's URL or in the run's URL: the commands name the place without it."""
    from tests.s3server import free_port

    env = {**os.environ, "AWS_ENDPOINT_URL": f"http://admin:hunter2pass@127.0.0.1:{free_port()}"}
    for args in (["status", "s3://KEY:topsecret@bkt/x"], ["status", "s3://b/r"]):
        result = subprocess.run([sys.executable, "-m", "epcg", *args], capture_output=True, text=True, env=env,
                                cwd=tmp_path, timeout=300)
        shown = result.stdout + result.stderr
        assert result.returncode != 0 and shown.count("\n") == 1, (args, shown)
        assert "hunter2pass" not in shown and "topsecret" not in shown, (args, shown)
