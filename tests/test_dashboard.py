"""The progress page on the Dask dashboard: the same numbers as the manifest, live in a browser."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
import urllib.request
from pathlib import Path

import pytest
from distributed import Client, LocalCluster

from epcg.report import dashboard
from epcg.report.dashboard import register, snapshot
from tests.browser import chromium_page, screenshot
from tests.workbench_runs import small_run


def _stopped_copy(domain: str, tmp_path: Path, forget: int) -> Path:
    """A copy of a finished small run with ``forget`` chunk records removed: a stopped run."""
    path = tmp_path / domain
    shutil.copytree(small_run(domain).path, path)
    (path / "results.json").unlink()
    for record in sorted((path / "manifest").rglob("*/*.json"))[-forget:]:
        record.unlink()
    return path


def test_snapshot_counts_the_manifest(tmp_path: Path) -> None:
    path = _stopped_copy("witness", tmp_path, forget=2)
    s = snapshot(path)
    records = list((path / "manifest").rglob("*/*.json"))
    assert (s["state"], s["done"]) == ("stopped", len(records))
    assert s["total"] == sum(st["total"] for st in s["stages"]) == len(records) + 2
    assert sum(st["done"] for st in s["stages"]) == len(records)
    assert s["stages"][-1]["items_total"] == 9880 and s["stages"][-1]["items_done"] < 9880


@pytest.mark.slow
def test_incumbent_history_rises(tmp_path: Path) -> None:
    s = snapshot(small_run("triple").path)
    for stage, row in zip(s["stages"], small_run("triple").results["rows"]):
        scores = [score for _t, score in stage["incumbent"]]
        assert scores == sorted(set(scores)) and scores[-1] == row["score"]


@pytest.mark.parametrize("domain", ["witness", pytest.param("triple", marks=pytest.mark.slow)])
def test_page_on_the_dashboard(domain: str, tmp_path: Path) -> None:
    path = _stopped_copy(domain, tmp_path, forget=1)
    with LocalCluster(n_workers=1, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster, Client(cluster) as client:
        link = register(client, path)
        assert link is not None and link.endswith("/epcg")
        data = json.loads(urllib.request.urlopen(link + "/status.json", timeout=30).read())
        assert (data["done"], data["total"]) == (snapshot(path)["done"], snapshot(path)["total"])
        base = link.rsplit("/epcg", 1)[0]
        with chromium_page(allow=(base,)) as (page, refused):
            page.goto(link)
            page.wait_for_selector("#stages tbody tr")
            assert page.inner_text("#done") == str(data["done"])
            assert page.inner_text("#total") == str(data["total"])
            assert data["hosts"] == {"127.0.0.1": 1} and page.inner_text("#hosts") == "127.0.0.1: 1"
            assert page.locator("#stages tbody tr").count() == len(data["stages"])
            charts = [st for st in data["stages"] if st["incumbent"]]
            assert bool(charts) == (domain == "triple")
            assert page.locator("#incumbent svg").count() == len(charts)
            assert page.locator("#incumbent svg circle").count() == sum(len(st["incumbent"]) for st in charts)
            assert all(w > 0 for w in page.eval_on_selector_all("#incumbent svg", "s => s.map(x => x.getBBox().width)"))
            screenshot(page, tmp_path / f"dashboard-epcg-{domain}.png", full_page=True)
            assert not refused


def test_run_on_a_client_registers_the_page(tmp_path: Path) -> None:
    import epcg
    from tests.workbench_runs import JOBS

    with LocalCluster(n_workers=1, threads_per_worker=1, host="127.0.0.1", dashboard_address="127.0.0.1:0") as cluster, \
            Client(cluster) as client:
        run = epcg.run({**JOBS["witness"], "rows": ["2x2:2"]}, tmp_path / "r", client=client, progress=False)
        data = json.loads(urllib.request.urlopen(client.dashboard_link.replace("/status", "/epcg/status.json"),
                                                 timeout=30).read())
    assert (data["state"], data["done"], data["total"]) == ("finished", 1, 1)
    serial = small_run("witness").results["rows"][0]
    assert run.table()[["min_solutions", "puzzles_at_min"]].values.tolist() == [[serial["min_solutions"],
                                                                                 serial["puzzles_at_min"]]]


def test_pages_polling_at_once_share_one_read_of_the_run(tmp_path: Path, monkeypatch) -> None:
    """A large run's snapshot takes seconds: requests that come while it is read wait for that read, and one that
    comes within ``REUSE`` times its duration gets it again; a later one reads the run again."""
    reads = []

    def slow_snapshot(run_dir: str) -> dict:
        reads.append(run_dir)
        time.sleep(0.2)
        return {"read": len(reads)}

    monkeypatch.setattr(dashboard, "snapshot", slow_snapshot)
    page = dashboard.ProgressPage(tmp_path)

    async def polls() -> tuple[list[dict], dict, dict]:
        together = await asyncio.gather(*(page.latest() for _ in range(5)))
        soon = await page.latest()
        await asyncio.sleep(0.2 * (dashboard.REUSE + 1))
        return together, soon, await page.latest()

    together, soon, later = asyncio.run(polls())
    assert [s["read"] for s in together] == [1] * 5 and soon["read"] == 1
    assert later["read"] == 2 and len(reads) == 2


HOSTILE = "<img src=x onerror=\"document.title='pwned'\"><b>bold</b>"


def test_page_shows_a_hostile_run_path_and_row_label_as_text(tmp_path: Path, monkeypatch) -> None:
    """A run directory's name and a row's label are data: the page shows them as text and builds no element
    from them (status.json carries them as they are; it is JSON)."""
    path = tmp_path / f"run-{HOSTILE}"
    shutil.copytree(small_run("witness").path, path)
    real = dashboard.snapshot

    def hostile(run_dir):
        data = real(run_dir)
        data["stages"][0]["label"] = f"row {HOSTILE}"
        data["stages"][0]["incumbent"] = [[0.5, 3], [1.0, 4]]
        return data

    monkeypatch.setattr(dashboard, "snapshot", hostile)
    with LocalCluster(n_workers=1, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster, Client(cluster) as client:
        link = register(client, path)  # the scheduler, and so the page's snapshot, run in this process
        data = json.loads(urllib.request.urlopen(link + "/status.json", timeout=30).read())
        assert data["run"] == str(path) and data["stages"][0]["label"] == f"row {HOSTILE}"
        with chromium_page(allow=(link.rsplit("/epcg", 1)[0],)) as (page, refused):
            page.goto(link)
            page.wait_for_selector("#stages tbody tr")
            assert page.inner_text("#head code") == str(path)
            assert page.inner_text("#stages tbody tr td") == f"row {HOSTILE}"
            assert f"incumbent (best score) of row {HOSTILE}" in page.inner_text("#incumbent figcaption")
            assert page.locator("img").count() == 0 and page.locator("#stages td *:not(div), #head code *, figcaption *").count() == 0
            assert page.title() == "epcg progress"
            screenshot(page, tmp_path / "dashboard-hostile.png", full_page=True)
            assert not any("/x" in url for url in refused), refused
