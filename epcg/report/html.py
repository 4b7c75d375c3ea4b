"""DIR/report.html: one self-contained page to browse a run in any browser.

No server, no network, nothing fetched: pictures are inline PNG data URIs, the
script and styles are in the page. It holds the run's tables (summary.md), the
distributions results.json records, every figure the run wrote, and a gallery
of what the run found with filters and a detail view with the solution. The
gallery, its filters and the plots come from the run's class
(:mod:`epcg.report.gallery`): the page never asks which kind it shows. A large
run draws a sample of each group, lists every object a group keeps (caption and filter values, a page at a
time) and says how many there are.

>>> print(markdown_html("# T\\n\\n| a | b |\\n|---|---|\\n| 1 | *2* |\\n\\n- x `y`"))
<h1>T</h1>
<table><tr><th>a</th><th>b</th></tr>
<tr><td>1</td><td><em>2</em></td></tr></table>
<ul><li>x <code>y</code></li></ul>
"""

from __future__ import annotations

import html
import itertools
import json
import re
import time
from pathlib import Path
from typing import Any

from epcg.report.gallery import Group, Item, Reported
from epcg.report.pictures import data_uri
from epcg.runtime.estimate import duration
from epcg.runtime.outputs import REPORT

GALLERY_ITEMS = 32
"""Pictures in the gallery at most (each is drawn by the domain's render code)."""
LISTED = 20_000
"""Objects the gallery lists at most, drawn or not (``epcg export`` lists every one)."""
PAGE_SIZE = 24
"""Objects on one page of the gallery."""
THUMB_DPI = 75


def write_report(run: Reported, items: int = GALLERY_ITEMS, page_size: int = PAGE_SIZE) -> Path | str:
    """Write ``DIR/report.html`` for a finished run (an :class:`epcg.api.Run`) and return its path (or URL, for a
    run on an object store)."""
    run.dir.write_text(REPORT, build_html(run, items, page_size))
    return run.dir.location.address(REPORT)


def build_html(run: Reported, items: int = GALLERY_ITEMS, page_size: int = PAGE_SIZE) -> str:
    """The whole page as text: ``items`` pictures at most, ``page_size`` objects a page of the gallery."""
    groups = run.gallery(items)
    notation = getattr(run, "NOTATION", "")
    gallery = gallery_data(groups, page_size=page_size)
    listed, drawn = gallery["listed"], gallery["drawn"]
    total = sum(g.total for g in groups)
    sample_note = (f"The gallery lists {listed:,} of the {total:,} objects in the groups below, {page_size} a page "
                   f"(per group: how many there are and how many are listed; a group lists every object the run "
                   f"keeps a list of, {LISTED:,} at most in all, else its drawn sample), and draws {drawn:,} of "
                   "them; the others show their caption (an object may be in more than one group).")
    sample_note = _e(sample_note) + (f" The filters choose among every listed object; every match, drawn, is in "
                                     f"<code>epcg export {_e(str(run.path))} --where KEY=VALUE</code> or the Python "
                                     "API." if run.FILTERS else "")
    parts = [
        f"<h1>{_e(run.name)} <small>({_e(run.domain)})</small></h1>",
        f"<p class=meta>run directory <code>{_e(str(run.path))}</code>{_wall_html(run.results)}</p>",
        "<nav><a href='#tables'>tables</a> · <a href='#plots'>plots</a> · <a href='#gallery'>gallery</a>"
        + (" · <a href='#notation'>how to read this</a>" if notation else "") + "</nav>",
        "<section id=tables>", markdown_html(run.summary), "</section>",
        (f"<section id=notation><h2>How to read this</h2>{markdown_html(notation)}</section>" if notation else ""),
        _allocations_html(run.results.get("allocations")),
        "<section id=plots><h2>Plots</h2>", _plots_html(run, groups), "</section>",
        "<section id=gallery><h2>Gallery</h2>", f"<p id=sample-note>{sample_note}</p>",
        _filters_html(run.FILTERS, gallery),
        "<div id=pager><button id=prev>◀ previous</button> <span id=page></span> <button id=next>next ▶</button>"
        " <span id=count></span></div><div id=cards></div>",
        f"<script type=application/json id=gallery-data>{_script_json(gallery)}</script>", "</section>",
        "<div id=detail hidden><div class=box><button id=close>close ✕</button>"
        "<img id=detail-img alt='detail'><p id=detail-caption></p><pre id=detail-json></pre></div></div>",
    ]
    return PAGE.format(title=_e(f"{run.name}: epcg report"), style=STYLE, body="\n".join(parts), script=SCRIPT)


def _wall_html(results: dict[str, Any]) -> str:
    """How long the run took: its one execution, or each part of a run continued with ``epcg resume``."""
    parts = results.get("parts") or []
    if len(parts) > 1:
        each = ", ".join(duration(part["seconds"]) for part in parts)
        return _e(f" · computed in {len(parts)} parts, {duration(sum(p['seconds'] for p in parts))} in all ({each})")
    return f" · wall time {results['wall_seconds']:.1f} s" if "wall_seconds" in results else ""


def _allocations_html(allocations: list[dict[str, Any]] | None) -> str:
    """The batch allocations a submitted run used, one row each ("" for a run that was not submitted)."""
    if not allocations:
        return ""

    def clock(seconds: float | None) -> str:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds)) if seconds else "–"

    rows = "".join(
        f"<tr><td>{n}</td><td>{_e(str(a.get('job') or 'pid ' + str(a.get('pid'))))}</td><td>{_e(str(a.get('node')))}"
        f"</td><td>{clock(a.get('started_at'))}</td><td>{clock(a.get('ended_at'))}</td><td>{a.get('chunks', 0)}</td>"
        f"<td style='text-align:left'>{_e(a.get('why', 'running'))}</td></tr>"
        for n, a in enumerate(allocations, 1)
    )
    return ("<section id=allocations><h2>Allocations</h2><table><thead><tr><th>#</th><th>batch job</th><th>node</th>"
            "<th>start</th><th>end</th><th>chunks</th><th style='text-align:left'>how it ended</th></tr></thead><tbody>"
            f"{rows}</tbody></table></section>")


# -- the gallery ---------------------------------------------------------------


def gallery_data(groups: list[Group], limit: int = LISTED, page_size: int = PAGE_SIZE) -> dict[str, Any]:
    """The gallery as the page's script reads it: per group its name, how many the run found and its entries,
    each an object's filter values (``a``), caption (``c``) and, for the drawn sample, its picture (``p``) and
    export record (``j``); every object a group keeps (``Group.every``) up to ``limit`` in all, the sample's too.
    ``listed`` and ``drawn`` count the entries and the pictures."""
    out: list[dict[str, Any]] = []
    left, drawn = limit, 0
    for g in groups:
        sample = {item.found.ident(): item for item in g.items}
        entries = []
        source = g.items if g.every is None else g.every
        for item in itertools.islice(source, left):
            entries.append(_entry(item, sample.pop(item.found.ident(), None)))
        entries += [_entry(item, item) for item in sample.values()]  # drawn, past the limit of the list
        left = max(0, left - len(entries))
        drawn += sum("p" in e for e in entries)
        out.append({"name": g.name, "total": g.total, "entries": entries})
    return {"groups": out, "page": page_size, "listed": sum(len(g["entries"]) for g in out), "drawn": drawn}


def _entry(item: Item, drawn: Item | None) -> dict[str, Any]:
    entry = {"a": {k: _plain(v) for k, v in item.attrs.items()}, "c": item.found.caption()}
    if drawn is not None:
        entry["p"] = drawn.found.thumbnail(dpi=THUMB_DPI)
        entry["j"] = drawn.found.to_dict()
    return entry


def _plain(value: Any) -> Any:
    """A filter value as JSON has it (numpy scalars as Python numbers)."""
    return value.item() if hasattr(value, "item") else value


def _script_json(data: Any) -> str:
    """``data`` as JSON safe inside a ``<script>`` element (no ``</script>`` can end it early)."""
    return json.dumps(data, separators=(",", ":"), default=str).replace("<", "\\u003c")


def _filters_html(filters: tuple[tuple[str, str, str], ...], gallery: dict[str, Any]) -> str:
    """The filter controls; a select offers every value among the listed objects, not only the drawn ones."""
    controls = []
    values: dict[str, set] = {}
    for g in gallery["groups"]:
        for entry in g["entries"]:
            for key, value in entry["a"].items():
                values.setdefault(key, set()).add(value)
    for key, label, how in filters:
        if how == "select":
            options = sorted(values.get(key, ()), key=lambda v: (not isinstance(v, (int, float)), v))
            opts = "".join(f"<option value='{_e(str(v))}'>{_e(str(v))}</option>" for v in options)
            controls.append(f"<label>{_e(label)} <select data-filter='{key}' data-how='eq'>"
                            f"<option value=''>all</option>{opts}</select></label>")
        else:
            controls.append(f"<label>{_e(label)} <input type=number step=any data-filter='{key}' data-how='min'></label>")
    return "<div id=filters>" + " ".join(controls) + "</div>"


# -- plots -----------------------------------------------------------------------


def _plots_html(run: Reported, groups: list[Group]) -> str:
    pictures = [(title, data_uri(png)) for title, png in run.plots(groups)]
    pictures += [(p.stem, data_uri(p.read_bytes())) for p in run.figures()]
    if not pictures:
        return "<p>No plots for this run.</p>"
    return "\n".join(f"<figure class=plot><img src='{uri}' alt='{_e(t)}'><figcaption>{_e(t)}</figcaption></figure>"
                     for t, uri in pictures)


# -- markdown tables -------------------------------------------------------------


def markdown_html(text: str) -> str:
    """The subset of Markdown summary.md uses: headings, tables, lists, paragraphs, code, bold, italics."""
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if line.startswith("|"):
            table = []
            while i < len(lines) and lines[i].startswith("|"):
                cells = [c.strip().replace("\\|", "|")  # a cell's own | is escaped, in code too (as GFM)
                         for c in re.split(r"(?<!\\)\|", lines[i].strip().removeprefix("|").removesuffix("|"))]
                if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                    table.append(cells)
                i += 1
            head, *body = table
            rows = ["<tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head) + "</tr>"]
            rows += ["<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>" for row in body]
            out.append("<table>" + "\n".join(rows) + "</table>")
            continue
        if line.startswith("- "):
            items = []
            while i < len(lines) and lines[i].startswith("- "):
                items.append(f"<li>{_inline(lines[i][2:])}</li>")
                i += 1
            out.append("<ul>" + "".join(items) + "</ul>")
            continue
        heading = re.match(r"(#{1,4}) (.*)", line)
        if heading:
            level = len(heading[1])
            out.append(f"<h{level}>{_inline(heading[2])}</h{level}>")
        elif line:
            out.append(f"<p>{_inline(line)}</p>")
        i += 1
    return "\n".join(out)


def _inline(text: str) -> str:
    """One line of Markdown: code spans (fenced by any number of backticks), then in the rest backslash escapes
    (a literal character), bold and italics; everything else is text, HTML-escaped."""
    out, at = [], 0
    for span in re.finditer(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", text):
        code = span[2]
        if code.startswith(" ") and code.endswith(" ") and code.strip():
            code = code[1:-1]
        out += [_styled(text[at:span.start()]), f"<code>{_e(code)}</code>"]
        at = span.end()
    return "".join(out + [_styled(text[at:])])


def _styled(text: str) -> str:
    literal: list[str] = []

    def keep(match: re.Match) -> str:
        literal.append(_e(match[1]))
        return f"\x00{len(literal) - 1}\x00"

    text = _e(re.sub(r"\\([!-/:-@\[-`{-~])", keep, text))
    text = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)
    text = re.sub(r"(?<![\w*])\*([^*]+)\*(?![\w*])", r"<em>\1</em>", text)
    return re.sub("\x00([0-9]+)\x00", lambda m: literal[int(m[1])], text)


def _e(text: str) -> str:
    return html.escape(text, quote=True)


PAGE = """<!DOCTYPE html>
<html lang=en><head><meta charset=utf-8><meta name=viewport content="width=device-width, initial-scale=1">
<title>{title}</title><style>{style}</style></head>
<body>
{body}
<script>{script}</script>
</body></html>
"""

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px; padding: 0 1em; color: #222; }
h1 small, h3 small { color: #777; font-weight: normal; font-size: 0.6em; }
.meta { color: #555; } code { background: #f2f2f2; padding: 0 0.2em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.85em; display: block; overflow-x: auto; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: right; }
th { background: #f4f4f8; }
figure.plot { display: inline-block; margin: 0.5em; vertical-align: top; max-width: 100%; }
figure.plot img { max-width: 100%; border: 1px solid #ddd; }
#filters { position: sticky; top: 0; background: #fff; padding: 0.6em 0; border-bottom: 1px solid #ddd; z-index: 1; }
#filters label { margin-right: 1.2em; } #count { color: #555; margin-left: 1em; }
.grid { display: flex; flex-wrap: wrap; gap: 0.6em; align-items: flex-start; }
figure.item { margin: 0; width: 220px; cursor: pointer; border: 1px solid #ddd; padding: 0.3em; background: #fafafa; }
figure.item:hover { border-color: #5e81ac; }
figure.item img { width: 100%; height: 160px; object-fit: contain; }
figure.item figcaption { font-size: 0.75em; color: #444; }
figure.item.text { display: flex; align-items: center; min-height: 3em; background: #fff; }
#pager { margin: 0.5em 0; } #pager button { margin-right: 0.4em; }
#detail { position: fixed; inset: 0; background: rgba(0, 0, 0, 0.55); display: flex; align-items: center;
          justify-content: center; z-index: 2; }
#detail[hidden] { display: none; }
#detail .box { background: #fff; padding: 1em; max-width: 92vw; max-height: 92vh; overflow: auto; }
#detail img { max-width: 88vw; max-height: 60vh; display: block; }
#detail pre { font-size: 0.8em; max-height: 25vh; overflow: auto; background: #f6f6f6; }
"""

SCRIPT = """
(function () {
  var data = JSON.parse(document.getElementById('gallery-data').textContent);
  var entries = [];
  data.groups.forEach(function (g, i) { g.entries.forEach(function (e) { e.g = i; entries.push(e); }); });
  var controls = Array.prototype.slice.call(document.querySelectorAll('[data-filter]'));
  var matching = entries, page = 0;
  function ok(e) {
    return controls.every(function (c) {
      var want = c.value, have = e.a[c.dataset.filter];
      if (want === '') return true;
      if (have === undefined || have === null || have === '') return false;
      if (c.dataset.how === 'min') return parseFloat(have) >= parseFloat(want);
      return String(have) === want;
    });
  }
  var detail = document.getElementById('detail');
  function show(e) {
    var img = document.getElementById('detail-img');
    img.hidden = !e.p;
    if (e.p) img.src = e.p;
    document.getElementById('detail-caption').textContent = e.c + (e.p ? '' :
      ' (not drawn on this page: epcg export draws it, with its solution)');
    document.getElementById('detail-json').textContent = JSON.stringify(e.j || e.a, null, 1);
    detail.hidden = false;
  }
  function card(e) {
    var fig = document.createElement('figure');
    fig.className = 'item';
    Object.keys(e.a).forEach(function (k) { fig.dataset[k] = String(e.a[k]); });
    if (e.p) {
      var img = document.createElement('img');
      img.src = e.p;
      img.alt = e.c;
      fig.appendChild(img);
    } else {
      fig.classList.add('text');
    }
    var cap = document.createElement('figcaption');
    cap.textContent = e.c;
    fig.appendChild(cap);
    fig.addEventListener('click', function () { show(e); });
    return fig;
  }
  function render() {
    var pages = Math.max(1, Math.ceil(matching.length / data.page));
    page = Math.max(0, Math.min(page, pages - 1));
    var box = document.getElementById('cards'), last = -1, grid = null;
    box.textContent = '';
    matching.slice(page * data.page, (page + 1) * data.page).forEach(function (e) {
      if (e.g !== last) {
        var g = data.groups[e.g], div = document.createElement('div'), h = document.createElement('h3');
        var small = document.createElement('small');
        div.className = 'group';
        h.textContent = g.name + ' ';
        small.textContent = '(' + g.total.toLocaleString('en') + ' in all, ' +
          g.entries.length.toLocaleString('en') + ' listed)';
        h.appendChild(small);
        grid = document.createElement('div');
        grid.className = 'grid';
        div.appendChild(h);
        div.appendChild(grid);
        box.appendChild(div);
        last = e.g;
      }
      grid.appendChild(card(e));
    });
    document.getElementById('page').textContent = 'page ' + (page + 1) + ' of ' + pages;
    document.getElementById('prev').disabled = page === 0;
    document.getElementById('next').disabled = page >= pages - 1;
    document.getElementById('count').textContent = matching.length + ' of ' + entries.length +
      ' listed objects match';
  }
  function apply() { matching = entries.filter(ok); page = 0; render(); }
  controls.forEach(function (c) { c.addEventListener('input', apply); c.addEventListener('change', apply); });
  document.getElementById('prev').addEventListener('click', function () { page -= 1; render(); });
  document.getElementById('next').addEventListener('click', function () { page += 1; render(); });
  function close() { detail.hidden = true; }
  document.getElementById('close').addEventListener('click', close);
  detail.addEventListener('click', function (e) { if (e.target === detail) close(); });
  document.addEventListener('keydown', function (e) { if (e.key === 'Escape') close(); });
  apply();
})();
"""
