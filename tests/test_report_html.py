"""report.html: self-contained, and it works in a real browser (headless Chromium)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from epcg.report.html import GALLERY_ITEMS, PAGE_SIZE, gallery_data, write_report
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
    data = gallery_data(groups)
    assert data["drawn"] == sum(len(g.items) for g in groups) > 0
    assert text.count("data:image/png;base64,") >= data["drawn"] + len(run.figures())
    assert "</script" not in json.dumps(data)[:-1] or "\\u003c/script" in text


def test_large_groups_are_sampled_and_say_so() -> None:
    run = small_run("fling")
    groups = run.gallery(10)
    assert any(len(g.items) < g.total for g in groups)
    assert "of the" in write_report(run, items=10).read_text()


def test_witness_report_filters_in_chromium(tmp_path: Path) -> None:
    run = small_run("witness")
    path = write_report(run)
    listed = [e for g in gallery_data(run.gallery(GALLERY_ITEMS))["groups"] for e in g["entries"]]
    expected = sum(1 for e in listed if e["a"]["k"] == "3")
    with chromium_page() as (page, refused):
        page.goto(path.as_uri())
        assert page.locator(VISIBLE).count() == min(PAGE_SIZE, len(listed))
        assert page.inner_text("#count").startswith(f"{len(listed)} of {len(listed)}")
        page.select_option("select[data-filter=k]", "3")
        assert page.inner_text("#count").startswith(f"{expected} of {len(listed)}") and 0 < expected < len(listed)
        assert page.locator(VISIBLE).count() == min(PAGE_SIZE, expected)
        assert _pictures_rendered(page, VISIBLE + ":not(.text)")
        page.locator(VISIBLE + ":not(.text)").first.click()
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
    items = [e["a"] for g in gallery_data(run.gallery(GALLERY_ITEMS))["groups"] for e in g["entries"]]
    top = max(i["ratio"] for i in items if i["ratio"] != "")
    with chromium_page() as (page, refused):
        page.goto(path.as_uri())
        page.select_option("select[data-filter=unique]", "yes")
        assert page.inner_text("#count").startswith(f"{sum(i['unique'] == 'yes' for i in items)} of {len(items)}")
        page.fill("input[data-filter=ratio]", str(top))
        expected = sum(i["ratio"] != "" and i["ratio"] >= top for i in items)
        assert page.inner_text("#count").startswith(f"{expected} of {len(items)}") and expected > 0
        assert page.locator(VISIBLE).count() == min(PAGE_SIZE, expected)
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


def test_gallery_pages_through_every_kept_puzzle_in_chromium(tmp_path: Path) -> None:
    """The filters offer every value among the objects the run kept, not only the drawn sample's, and a length
    absent from the first page finds its puzzles on the pages the pager turns to."""
    run, SIZE = small_run("witness"), 8
    groups = run.gallery(GALLERY_ITEMS)
    kept = [(p.found.row, p.found.rank, p.attrs["length"]) for g in groups for p in g.every]
    assert len(kept) == sum(g.total for g in groups) > SIZE
    first = {length for _, _, length in kept[:SIZE]}
    drawn = {p.attrs["length"] for g in groups for p in g.items}
    later = sorted({length for _, _, length in kept} - first)
    assert later, "the run must have a length beyond its first page"
    length = later[0]
    matches = [(row, rank) for row, rank, n in kept if n == length]
    path = write_report(run, page_size=SIZE)
    with chromium_page() as (page, refused):
        page.goto(path.as_uri())
        options = page.eval_on_selector("select[data-filter=length]",
                                        "s => Array.from(s.options).map(o => o.value).filter(v => v)")
        assert sorted(map(int, options)) == sorted({n for _, _, n in kept}) and set(options) >= set(map(str, drawn))
        assert page.inner_text("#page") == f"page 1 of {-(-len(kept) // SIZE)}"
        assert str(length) not in page.eval_on_selector_all(VISIBLE, "fs => fs.map(f => f.dataset.length)")
        page.click("#next")
        assert page.inner_text("#page").startswith("page 2 of")
        page.select_option("select[data-filter=length]", str(length))
        assert page.inner_text("#count").startswith(f"{len(matches)} of {len(kept)}")
        captions = page.eval_on_selector_all(VISIBLE + " figcaption", "cs => cs.map(c => c.textContent)")
        assert [c.split(" rank ")[0] for c in captions] == [row for row, _ in matches[:SIZE]]
        assert [int(c.split(" rank ")[1].split(" ")[0].replace(",", "")) for c in captions] == [
            rank for _, rank in matches[:SIZE]]
        assert all(f"{length} edges" in c for c in captions)
        page.locator(VISIBLE).first.click()
        assert f"{length} edges" in page.inner_text("#detail-caption") and page.inner_text("#detail-json")
        page.click("#close")
        page.locator("#gallery").scroll_into_view_if_needed()
        screenshot(page, tmp_path / "report-witness-paged.png")
        assert not refused


def test_fling_gallery_pages_through_every_solvable_board_in_chromium(tmp_path: Path) -> None:
    """Every solvable board of every layer is listed, its uniqueness as the reference solver has it; the filters
    offer every layer and both answers though the first page holds neither layer 3 nor a board with several
    solutions, and the pager turns through exactly the reference's 3-piece boards with several solutions."""
    from tests.reference import fling as ref

    run, SIZE = small_run("fling"), 8
    c = run.config
    layers = {k: ref.layer(c.width, c.height, k) for k in range(1, c.max_pieces + 1)}
    every = {(k, r, "yes" if unique[r] else "no") for k, (solvable, unique) in layers.items()
             for r in range(len(solvable)) if solvable[r]}
    listed = [(p.found.pieces, p.found.rank, p.attrs["unique"]) for g in run.gallery(GALLERY_ITEMS)
              if g.every is not None for p in g.every]
    best = len(run.best_boards())
    assert set(listed[best:]) == every and len(listed) == best + len(every)
    several = [r for k, r, u in sorted(every) if k == 3 and u == "no"]
    assert several and len(several) > SIZE
    path = write_report(run, page_size=SIZE)
    with chromium_page() as (page, refused):
        page.goto(path.as_uri())
        first = page.eval_on_selector_all(VISIBLE, "fs => fs.map(f => [f.dataset.pieces, f.dataset.unique])")
        assert ["3", "no"] not in first and not any(u == "no" for _, u in first)
        assert page.inner_text("#page") == f"page 1 of {-(-len(listed) // SIZE)}"
        for key, values in (("pieces", {str(k) for k, _, _ in every}), ("unique", {"yes", "no"})):
            options = page.eval_on_selector(f"select[data-filter={key}]",
                                            "s => Array.from(s.options).map(o => o.value).filter(v => v)")
            assert set(options) == values
        page.select_option("select[data-filter=pieces]", "3")
        page.select_option("select[data-filter=unique]", "no")
        assert page.inner_text("#count").startswith(f"{len(several)} of {len(listed)}")
        seen: list[int] = []
        while True:
            captions = page.eval_on_selector_all(VISIBLE + " figcaption", "cs => cs.map(c => c.textContent)")
            assert all(c.startswith("3 pieces · rank ") and "several solutions" in c for c in captions)
            seen += [int(c.split(" rank ")[1].split(" ")[0].replace(",", "")) for c in captions]
            if page.is_disabled("#next"):
                break
            if len(seen) == SIZE:
                page.locator("#gallery").scroll_into_view_if_needed()
                screenshot(page, tmp_path / "report-fling-paged.png")
            page.click("#next")
        assert seen == several
        assert not refused


def test_the_list_stops_at_its_limit_and_keeps_every_drawn_object() -> None:
    run = small_run("witness")
    groups = run.gallery(GALLERY_ITEMS)  # Group.every is read once: each use gets its own gallery
    whole, cut = gallery_data(run.gallery(GALLERY_ITEMS)), gallery_data(run.gallery(GALLERY_ITEMS), limit=5)
    assert whole["listed"] == sum(g.total for g in groups) and whole["drawn"] == sum(len(g.items) for g in groups)
    captions = [e["c"] for g in cut["groups"] for e in g["entries"]]
    every = [i.found.caption() for g in groups for i in g.every]
    drawn = {i.found.caption() for g in groups for i in g.items}
    assert captions[:5] == every[:5] and set(captions[5:]) == drawn - set(every[:5])
    assert cut["drawn"] == whole["drawn"] and len(captions) == len(set(captions))
