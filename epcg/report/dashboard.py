"""The run's progress as a page on the Dask dashboard: ``<dashboard>/epcg``.

:class:`ProgressPage` is a scheduler plugin: registered by the client
(``client.register_plugin(ProgressPage(run_dir))``, as ``epcg run`` does), it
adds two routes to the scheduler's web server, next to ``/status``:

- ``/epcg``: stages with chunks done of total, items per second, time left,
  and for branch and bound the incumbent's history; the page asks again two
  seconds after each answer (:meth:`ProgressPage.latest` bounds what answers cost);
- ``/epcg/status.json``: the same as data, :func:`snapshot` of the run directory.

The page reads what ``epcg status`` reads: the run directory's manifest (one
record per finished chunk) and ``live.json``. The scheduler must be able to
import epcg and see the run directory (workers write there anyway).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from distributed.diagnostics.plugin import SchedulerPlugin
from tornado import web

from epcg.runtime.errors import UserError
from epcg.runtime.estimate import duration
from epcg.runtime.rundir import is_url

NAME = "epcg-progress"
ROUTE = "/epcg"
REUSE = 4
"""A snapshot is served again while younger than this many times what it took to read."""


def snapshot(run_dir: str | Path) -> dict[str, Any]:
    """Progress of the run in ``run_dir`` as every view reads it (:mod:`epcg.runtime.status`): plain JSON data,
    with each duration also as the text the terminal shows."""
    from epcg.runtime.status import run_status

    status = run_status(run_dir)
    figures, info, done = status.readout, status.live, status.done
    first = min((r["ended_at"] - r["seconds"] for r in done.values()), default=None)
    stages = []
    for stage, seen in zip(status.planned.plan.stages, figures.stages, strict=True):
        finished = [(t, done[t.id]) for t in stage.tasks if t.id in done]
        stages.append({**asdict(seen), "incumbent": _incumbent_history(finished, first)})
    items_done = sum(s.items_done for s in figures.stages)
    return {
        "run": str(status.run.path), "job": status.planned.job.name, "domain": status.planned.job.domain,
        "state": figures.state, "dashboard": info.get("dashboard"), "workers": info.get("workers"),
        "hosts": info.get("hosts") or {}, "done": figures.done, "total": figures.total,
        "compute_seconds": figures.compute_seconds,
        "length_seconds": figures.length_seconds, "length": duration(figures.length_seconds),
        "items_per_second": float(f"{items_done / figures.length_seconds:.3g}") if figures.length_seconds > 0
        else None,
        "seconds_left": figures.seconds_left,
        "left": duration(figures.seconds_left) if figures.seconds_left is not None else None,
        "stages": stages, "at": figures.at,
    }


def _incumbent_history(finished: list[tuple[Any, dict]], t0: float | None) -> list[list[float]]:
    """For branch-and-bound stages: ``[seconds since start, best score so far]`` as chunks finished."""
    scored = sorted((r["ended_at"], r["result"]["score"]) for _, r in finished
                    if isinstance(r.get("result"), dict) and "incumbent_at_start" in r["result"])
    history, best = [], None
    for ended, score in scored:
        if best is None or score > best:
            best = score
            history.append([round(ended - (t0 or ended), 3), score])
    return history


class ProgressPage(SchedulerPlugin):
    """Serve the progress of one run directory on the scheduler's dashboard, at ``/epcg``."""

    name = NAME

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = str(run_dir) if is_url(run_dir) else str(Path(run_dir).resolve())
        self._latest: asyncio.Future | None = None  # the snapshot being read, or the last one read
        self._fresh_until = 0.0

    def latest(self) -> asyncio.Future:
        """The run's snapshot, read at most once at a time and reused while younger than ``REUSE`` times what it
        took to read: on a large run (a manifest of tens of thousands of records) a read takes seconds, and
        however many pages poll, the scheduler's process spends at most ``1 / (1 + REUSE)`` of a core on it."""
        loop = asyncio.get_running_loop()
        if self._latest is None or (self._latest.done() and loop.time() >= self._fresh_until):
            began = loop.time()
            self._latest = loop.run_in_executor(None, snapshot, self.run_dir)

            def read(_: asyncio.Future) -> None:
                self._fresh_until = loop.time() + REUSE * (loop.time() - began)

            self._latest.add_done_callback(read)
        return self._latest

    async def start(self, scheduler: Any) -> None:
        if not getattr(scheduler, "_epcg_routes", False):
            scheduler.http_application.add_handlers(r".*", [
                (ROUTE + "/?", _PageHandler, {"scheduler": scheduler}),
                (ROUTE + "/status.json", _JsonHandler, {"scheduler": scheduler}),
            ])
            scheduler._epcg_routes = True


def page_link(dashboard_link: str) -> str:
    """The progress page's address, from the dashboard's.

    >>> page_link("http://127.0.0.1:8787/status")
    'http://127.0.0.1:8787/epcg'
    """
    return dashboard_link.rsplit("/status", 1)[0] + ROUTE


def register(client: Any, run_dir: str | Path) -> str | None:
    """Show ``run_dir``'s progress on ``client``'s dashboard; its address, or None if the
    scheduler cannot take the page (it cannot import epcg, or has no dashboard)."""
    try:
        client.register_plugin(ProgressPage(run_dir))
    except Exception:  # noqa: BLE001 - the page is a convenience; the run goes on without it
        return None
    return page_link(client.dashboard_link) if client.dashboard_link else None


class _Handler(web.RequestHandler):
    def initialize(self, scheduler: Any) -> None:
        self.scheduler = scheduler

    async def _snapshot(self) -> dict[str, Any] | None:
        plugin = self.scheduler.plugins.get(NAME)
        if plugin is None:
            return None
        try:
            data = dict(await asyncio.shield(plugin.latest()))
        except UserError as exc:  # not laid out yet, or its job file was changed
            return {"state": str(exc)}
        data["hosts"] = workers_by_host(self.scheduler)
        data["workers"] = sum(data["hosts"].values())
        return data


def workers_by_host(scheduler: Any) -> dict[str, int]:
    """The scheduler's live workers per host (what the page shows, fresher than live.json)."""
    counts: dict[str, int] = {}
    for worker in scheduler.workers.values():
        counts[worker.host] = counts.get(worker.host, 0) + 1
    return dict(sorted(counts.items()))


class _JsonHandler(_Handler):
    async def get(self) -> None:
        data = await self._snapshot()
        self.set_header("Content-Type", "application/json")
        self.set_header("Cache-Control", "no-store")
        self.write(json.dumps(data if data is not None else {"state": "no run"}))


class _PageHandler(_Handler):
    def get(self) -> None:
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.write(PAGE)


PAGE = """<!DOCTYPE html>
<html lang=en><head><meta charset=utf-8><title>epcg progress</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.2em 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; } th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; }
td.n { text-align: right; } .bar { width: 220px; height: 12px; background: #e5e9f0; position: relative; }
.bar div { position: absolute; left: 0; top: 0; bottom: 0; background: #5e81ac; }
#head > span { margin-right: 1.6em; } .state-running { color: #2e7d32; } .state-stopped { color: #bf616a; }
svg text { font-size: 11px; }
</style></head>
<body>
<h1>epcg: <span id=job>…</span></h1>
<p id=head></p>
<table id=stages><thead><tr><th>stage</th><th>chunks</th><th></th><th>items</th><th>CPU s</th></tr></thead>
<tbody></tbody></table>
<div id=incumbent></div>
<p><a href="/status">Dask dashboard</a> · <a href="/epcg/status.json">status.json</a></p>
<script>
// Every value of status.json is data (a run path, a row's label, a host name): it reaches the page as text
// nodes and attribute values, never as markup.
var SVG = 'http://www.w3.org/2000/svg';
function el(tag, attrs, children, ns) {
  var node = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
  Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
  (children || []).forEach(function (c) {
    node.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  });
  return node;
}
function fmt(x) { return x === null || x === undefined ? '–' : Number(x).toLocaleString('en'); }
function chart(name, points, elapsed) {
  var w = 420, h = 160, p = 34;
  points = points.map(function (q) { return [Number(q[0]), Number(q[1])]; });
  var tmax = Math.max.apply(null, points.map(function (q) { return q[0]; }).concat([Number(elapsed) || 0, 1e-9]));
  var smax = Math.max.apply(null, points.map(function (q) { return q[1]; }));
  var smin = Math.min.apply(null, points.map(function (q) { return q[1]; }).concat([0]));
  function x(t) { return p + (w - 2 * p) * t / tmax; }
  function y(s) { return h - p + (2 * p - h) * (s - smin) / Math.max(smax - smin, 1); }
  var d = '', prev = null;
  points.forEach(function (q) { d += (prev === null ? 'M' : 'H' + x(q[0]) + 'V') + (prev === null ? x(q[0]) + ',' : '') + y(q[1]); prev = q; });
  d += 'H' + x(tmax);
  var parts = [el('path', {d: d, stroke: '#d08770', fill: 'none', 'stroke-width': 2}, [], SVG)];
  points.forEach(function (q) { parts.push(el('circle', {r: 3, cx: x(q[0]), cy: y(q[1]), fill: '#d08770'}, [], SVG)); });
  parts.push(el('line', {x1: p, y1: h - p, x2: w - p, y2: h - p, stroke: '#888'}, [], SVG));
  parts.push(el('text', {x: p, y: h - 10}, ['0 s'], SVG));
  parts.push(el('text', {x: w - p - 30, y: h - 10}, [tmax.toFixed(1) + ' s'], SVG));
  parts.push(el('text', {x: 4, y: y(smax) + 4}, [smax], SVG));
  var svg = el('svg', {width: w, height: h, role: 'img', 'aria-label': 'incumbent ' + name}, parts, SVG);
  return el('figure', {}, [svg, el('figcaption', {}, ['incumbent (best score) of ' + name + ' as chunks finished'])]);
}
function hosts(h) { var names = Object.keys(h || {});
  return names.length ? [' (', el('span', {id: 'hosts'}, [names.map(function (n) { return n + ': ' + h[n]; }).join(', ')]), ')'] : []; }
function replace(node, children) { node.replaceChildren.apply(node, children); }
function render(s) {
  document.getElementById('job').textContent = s.job + ' (' + s.domain + ')';
  replace(document.getElementById('head'), [
    el('span', {'class': 'state-' + String(s.state).replace(/[^a-z]/g, '')}, [String(s.state)]),
    el('span', {}, ['chunks ', el('b', {id: 'done'}, [String(s.done)]), ' of ', el('b', {id: 'total'}, [String(s.total)])]),
    el('span', {}, ['items/s ', el('b', {}, [fmt(s.items_per_second)])]),
    el('span', {}, ['time left ', el('b', {}, [String(s.left || '–')])]),
    el('span', {}, ['workers ' + fmt(s.workers)].concat(hosts(s.hosts))),
    el('span', {}, [el('code', {}, [String(s.run)])])]);
  replace(document.querySelector('#stages tbody'), s.stages.map(function (st) {
    var pct = st.total ? 100 * st.done / st.total : 100;
    return el('tr', {}, [el('td', {}, [String(st.label)]),
      el('td', {'class': 'n'}, [st.done + ' / ' + st.total]),
      el('td', {}, [el('div', {'class': 'bar'}, [el('div', {style: 'width:' + Number(pct) + '%'})])]),
      el('td', {'class': 'n'}, [fmt(st.items_done) + ' / ' + fmt(st.items_total)]),
      el('td', {'class': 'n'}, [Number(st.compute_seconds).toFixed(2)])]);
  }));
  replace(document.getElementById('incumbent'), s.stages.filter(function (st) { return st.incumbent.length; })
    .map(function (st) { return chart(String(st.label), st.incumbent, s.length_seconds); }));
}
function poll() {  // the next request two seconds after this one's answer: never several at once
  fetch(location.pathname.replace(/\\/$/, '') + '/status.json', {cache: 'no-store'}).then(function (r) { return r.json(); })
    .then(function (s) { if (s.stages) render(s); }).catch(function () {})
    .then(function () { setTimeout(poll, 2000); });
}
poll();
</script>
</body></html>
"""
