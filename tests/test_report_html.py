"""report.html: self-contained, and it works in a real browser (headless Chromium)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from epcg.report.html import GALLERY_ITEMS, write_report
from tests.browser import chromium_page, screenshot
from tests.workbench_runs import SLOW, small_run

VISIBLE = "figure.item:not([hidden])"


def _pictures_rendered(page, selector: str) -> bool:
    return page.eval_on_selector_all(
        selector + " img", "imgs => imgs.length > 0 && imgs.every(i => i.complete && i.naturalWidth > 0)")


@pytest.mark.parametrize("domain", [pytest.param(d, marks=[pytest.mark.slow] if d in SLOW else [])
                                    for d in ["witness", "fling", "triple", "dwp"]])
def test_report_is_self_contained(domain: str) -> None:
    run = small_run(domain)
    text = write_report(run).read_text()
    assert not re.search(r"""(src|href)\s*=\s*['"]?(https?:|//)""", text)
    assert "<script src" not in text and "<link" not in text
    groups = run.gallery(GALLERY_ITEMS)
    assert text.count("<figure class=item") == sum(len(g.items) for g in groups) > 0
    assert text.count("data:image/png;base64,") >= sum(len(g.items) for g in groups) + len(run.figures())


def test_large_groups_are_sampled_and_say_so() -> None:
    run = small_run("fling")
    groups = run.gallery(10)
    assert any(len(g.items) < g.total for g in groups)
    assert "of the" in write_report(run, items=10).read_text()


def test_witness_report_filters_in_chromium(tmp_path: Path) -> None:
    run = small_run("witness")
    path = write_report(run)
    expected = sum(1 for g in run.gallery(GALLERY_ITEMS) for i in g.items if i.attrs["k"] == "3")
    with chromium_page() as (page, refused):
        page.goto(path.as_uri())
        total = page.locator("figure.item").count()
        assert page.locator(VISIBLE).count() == total
        page.select_option("select[data-filter=k]", "3")
        assert 0 < page.locator(VISIBLE).count() == expected < total
        assert page.inner_text("#count").startswith(f"{expected} of {total}")
        assert _pictures_rendered(page, VISIBLE)
        page.locator(VISIBLE).first.click()
        assert page.is_visible("#detail")
        assert '"solution"' in page.inner_text("#detail-json")
        assert page.eval_on_selector("#detail-img", "i => i.naturalWidth") > 0
        screenshot(page, tmp_path / "report-witness-detail.png")
        page.click("#close")
        page.locator("#gallery").scroll_into_view_if_needed()
        screenshot(page, tmp_path / "report-witness.png")
        assert not refused


def test_fling_report_filters_in_chromium(tmp_path: Path) -> None:
    run = small_run("fling")
    path = write_report(run)
    items = [i for g in run.gallery(GALLERY_ITEMS) for i in g.items]
    top = max(i.attrs["ratio"] for i in items if i.attrs["ratio"] != "")
    with chromium_page() as (page, refused):
        page.goto(path.as_uri())
        page.select_option("select[data-filter=unique]", "yes")
        assert page.locator(VISIBLE).count() == sum(i.attrs["unique"] == "yes" for i in items)
        page.fill("input[data-filter=ratio]", str(top))
        shown = page.locator(VISIBLE).count()
        assert shown == sum(i.attrs["ratio"] != "" and i.attrs["ratio"] >= top for i in items) > 0
        assert _pictures_rendered(page, VISIBLE)
        page.locator("#gallery").scroll_into_view_if_needed()
        screenshot(page, tmp_path / "report-fling.png")
        assert not refused


def test_solution_counts_are_shown_when_recorded(tmp_path: Path) -> None:
    import json
    import shutil

    import epcg

    path = tmp_path / "w"
    shutil.copytree(small_run("witness").path, path)
    results = json.loads((path / "results.json").read_text())
    results["rows"][1]["solution_counts"] = {"4": 36, "5": 120, "12": 7}
    (path / "results.json").write_text(json.dumps(results))
    run = epcg.open(path)
    assert run.solution_counts("3x3:3").to_dict() == {4: 36, 5: 120, 12: 7}
    assert "solution counts, 3x3 k=3" in write_report(run).read_text()
