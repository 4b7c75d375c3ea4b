"""Headless Chromium for page tests: Debian's chromium driven by Playwright, never a downloaded browser.

Tests using :func:`chromium_page` are skipped, with the reason, when either is missing
(.ci/run installs both: ``apt-get install -y chromium`` and ``pip install playwright``).
Every request that is not ``file:``, ``data:`` or an allowed address is aborted and counted,
so a page that reaches for the network is caught. ``EPCG_SCREENS=DIR`` also keeps a copy of
each screenshot in DIR.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-sync"]


@contextlib.contextmanager
def chromium_page(allow: tuple[str, ...] = ()) -> Iterator[tuple[object, list[str]]]:
    """A Playwright page in headless Chromium and the list of requests it was refused."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (Debian package 'chromium')")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the Python package 'playwright' is missing")
    refused: list[str] = []

    def route(r) -> None:
        url = r.request.url
        if url.startswith(("file:", "data:")) or url.startswith(allow):
            r.continue_()
        else:
            refused.append(url)
            r.abort()

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.route("**/*", route)
            yield page, refused
        finally:
            browser.close()


def screenshot(page, path: Path, **kwargs) -> Path:
    """Save a PNG screenshot at ``path`` (and in $EPCG_SCREENS when set)."""
    page.screenshot(path=str(path), **kwargs)
    if os.environ.get("EPCG_SCREENS"):
        shutil.copy(path, Path(os.environ["EPCG_SCREENS"]) / path.name)
    return path
