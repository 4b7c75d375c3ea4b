"""DIR/report.html: one self-contained page to browse a run in any browser.

No server, no network, nothing fetched: pictures are inline PNG data URIs, the
script and styles are in the page. It holds the run's tables (summary.md), the
distributions results.json records, every figure the run wrote, and a gallery
of what the run found with filters (board size, k, solution count, length,
pieces, uniqueness, ratio, experiment, fitness) and a detail view with the
solution. A large run shows a sample of each group and says how many there are.

>>> print(markdown_html("# T\\n\\n| a | b |\\n|---|---|\\n| 1 | *2* |\\n\\n- x `y`"))
<h1>T</h1>
<table><tr><th>a</th><th>b</th></tr>
<tr><td>1</td><td><em>2</em></td></tr></table>
<ul><li>x <code>y</code></li></ul>
"""

from __future__ import annotations

import html
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from epcg.api.found import Found
from epcg.api.pictures import data_uri, png_bytes
from epcg.api.runs import Run, counts_of
from epcg.runtime.store import REPORT

"""The page's key in the run directory."""
GALLERY_ITEMS = 32
"""Pictures in the gallery at most (each is drawn by the domain's render code)."""
THUMB_DPI = 75


@dataclass
class Item:
    """One gallery entry: a found object, its group and the values the filters act on."""

    found: Found
    group: str
    attrs: dict[str, Any]


@dataclass
class Group:
    """A gallery section (a Witness row, a Fling! layer, a variant, an experiment)."""

    name: str
    total: int
    """How many such objects the run found (the gallery shows a sample when fewer)."""
    items: list[Item]


FILTERS: dict[str, list[tuple[str, str, str]]] = {
    "witness": [("board", "board", "select"), ("k", "k", "select"), ("solutions", "solutions", "select"),
                ("length", "solution length", "select")],
    "fling": [("pieces", "pieces", "select"), ("unique", "uniquely solvable", "select"),
              ("ratio", "expert ratio at least", "min")],
    "triple": [("variant", "variant", "select"), ("score", "score", "select")],
    "dwp": [("experiment", "experiment", "select"), ("states", "states", "select"),
            ("fitness", "fitness at least", "min")],
    "scan": [("row", "row", "select"), ("role", "kept as", "select"), ("score", "score", "select")],
    "retrograde": [("row", "row", "select"), ("layer", "layer", "select")],
}


def write_report(run: Run | str | os.PathLike[str], items: int = GALLERY_ITEMS) -> Path | str:
    """Write ``DIR/report.html`` for a finished run and return its path (or URL, for a run on an object store)."""
    run = run if isinstance(run, Run) else Run(run)
    run.dir.write_text(REPORT, build_html(run, items))
    return Path(run.dir.describe(REPORT)) if run.dir.location.is_local else run.dir.describe(REPORT)


def build_html(run: Run, items: int = GALLERY_ITEMS) -> str:
    """The whole page as text."""
    groups = gallery(run, items)
    shown = sum(len(g.items) for g in groups)
    total = sum(g.total for g in groups)
    sample_note = (f"Showing a sample of {shown:,} of the {total:,} objects this run found "
                   "(per group below: how many there are and how many are shown)."
                   if shown < total else f"All {total:,} objects this run found.")
    parts = [
        f"<h1>{_e(run.name)} <small>({_e(run.domain)})</small></h1>",
        f"<p class=meta>run directory <code>{_e(str(run.path))}</code>"
        + (f" · wall time {run.results['wall_seconds']:.1f} s" if "wall_seconds" in run.results else "")
        + "</p>",
        "<nav><a href='#tables'>tables</a> · <a href='#plots'>plots</a> · <a href='#gallery'>gallery</a></nav>",
        "<section id=tables>", markdown_html(run.summary), "</section>",
        _allocations_html(run.results.get("allocations")),
        "<section id=plots><h2>Plots</h2>", _plots_html(run, groups), "</section>",
        "<section id=gallery><h2>Gallery</h2>", f"<p id=sample-note>{_e(sample_note)}</p>",
        _filters_html(run.domain, groups), "<p id=count></p>", _gallery_html(groups), "</section>",
        "<div id=detail hidden><div class=box><button id=close>close ✕</button>"
        "<img id=detail-img alt='detail'><p id=detail-caption></p><pre id=detail-json></pre></div></div>",
    ]
    return PAGE.format(title=_e(f"{run.name}: epcg report"), style=STYLE, body="\n".join(parts), script=SCRIPT)


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


def gallery(run: Run, items: int = GALLERY_ITEMS) -> list[Group]:
    """The sampled gallery of a run, group by group (empty for kinds without found objects)."""
    builders = {"witness": _witness_groups, "fling": _fling_groups, "triple": _triple_groups, "dwp": _dwp_groups,
                "scan": _design_groups, "retrograde": _state_groups}
    if run.domain not in builders or (run.domain == "witness" and run.config.kind == "paths"):
        return []
    return builders[run.domain](run, items)


def _share(items: int, groups: int) -> int:
    return max(2, items // max(1, groups))


def _witness_groups(run: Run, items: int) -> list[Group]:
    from epcg.api.witness import WitnessPuzzle

    rows = [(row, r) for row, r in zip(run.config.parsed_rows(), run.results["rows"]) if r["puzzles_at_min"]]
    n = _share(items, len(rows))
    out = []
    for row, res in rows:
        ranks, longest = _longest_and_spread(run, row.name, n)
        k = "+".join(map(str, res["k"])) if isinstance(res["k"], list) else str(res["k"])
        group = f"{res['width']}x{res['height']} k={k}"
        puzzles = [WitnessPuzzle(run.config.kind, row.width, row.height, row.k, rank, row=row.name,
                                 solutions=res["min_solutions"], length=length)
                   for rank, length in zip(ranks, longest)]
        out.append(Group(group, res["puzzles_at_min"], [
            Item(p, group, {"board": f"{p.width}x{p.height}", "k": k, "solutions": p.solution_count,
                            "length": p.longest}) for p in puzzles]))
    return out


def _longest_and_spread(run: Run, row: str, n: int) -> tuple[list[int], list[int]]:
    """About ``n`` stored puzzles of a row: half with the longest solutions, half spread over the
    ranks; read one Zarr chunk at a time, longest first."""
    ranks, longest = run.dir.group[f"{row}/at_min/ranks"], run.dir.group[f"{row}/at_min/longest"]
    total, step = ranks.shape[0], max(1, ranks.chunks[0])
    spread = set(np.linspace(0, total - 1, n - n // 2).round().astype(int).tolist()) if total else set()
    best_r, best_l = np.zeros(0, np.uint64), np.zeros(0, np.int64)
    picked: dict[int, int] = {}
    for start in range(0, total, step):
        r = np.asarray(ranks[start:start + step])
        lengths = np.asarray(longest[start:start + step]).astype(np.int64)
        best_r, best_l = np.concatenate([best_r, r]), np.concatenate([best_l, lengths])
        keep = np.lexsort((best_r, -best_l))[: n // 2]
        best_r, best_l = best_r[keep], best_l[keep]
        for i in (j for j in spread if start <= j < start + len(r)):
            picked[int(r[i - start])] = int(lengths[i - start])
    picked.update(zip(best_r.tolist(), best_l.tolist()))
    chosen = sorted(picked.items(), key=lambda kv: (-kv[1], kv[0]))
    return [int(r) for r, _ in chosen], [length for _, length in chosen]


def _fling_groups(run: Run, items: int) -> list[Group]:
    from epcg.api.fling import FlingBoard, sample_ranks

    c = run.config
    layers = run.results["rows"]
    n = _share(items, len(layers) + 1)
    out = []
    best = run.best_boards()
    if best:
        out.append(Group(f"best {len(best)} by expert ratio, {c.max_pieces} pieces", len(best),
                         [_fling_item(b, "best") for b in best[:n]]))
    for row in layers:
        k = row["pieces"]
        several = row["solvable"] - row["unique"]
        ranks = [(r, True) for r in sample_ranks(run.dir, k, True, n - n // 3)]
        ranks += [(r, False) for r in sample_ranks(run.dir, k, False, n // 3)] if several else []
        boards = [FlingBoard(c.width, c.height, k, r) for r, _ in ranks]
        out.append(Group(f"{k} pieces", row["solvable"], [_fling_item(b, f"{k} pieces") for b in boards]))
    return out


def _fling_item(board: Any, group: str) -> Item:
    ratio = board.ratio
    return Item(board, group, {"pieces": board.pieces, "unique": "yes" if board.unique else "no",
                               "ratio": round(ratio, 3) if ratio is not None else ""})


TRIPLES_SHOWN = 6
"""Triples per variant in the gallery at most (each is six panels, slow to draw)."""


def _triple_groups(run: Run, items: int) -> list[Group]:
    rows = run.results["rows"]
    n = min(TRIPLES_SHOWN, _share(items, len(rows)))
    return [Group(f"{r['variant']}: optimal triples", r["optimal_triples"],
                  [Item(t, r["variant"], {"variant": t.variant, "score": t.score})
                   for t in list(run.triples(r["variant"]))[:n]]) for r in rows]


def _dwp_groups(run: Run, items: int) -> list[Group]:
    rows = run.results["rows"]
    n = _share(items, len(rows))
    out = []
    for r in rows:
        maps = sorted(run.maps(experiment=r["experiment"]), key=lambda m: (-m.fitness, m.run))
        picks = sorted({int(i) for i in np.linspace(0, len(maps) - 1, min(n, len(maps))).round()})
        group = f"experiment {r['experiment']}"
        out.append(Group(group, len(maps), [
            Item(maps[i], group, {"experiment": r["experiment"], "states": r["states"],
                                  "fitness": round(maps[i].fitness, 1)}) for i in picks]))
    return out


def _design_groups(run: Run, items: int) -> list[Group]:
    """Per row of a user's scan: designs at the minimum (spread over all of them), the top ones, those at the
    maximum."""
    from epcg.api.designs import ROLES

    rows = run.results["rows"]
    groups = [(res, role) for res in rows for role in ROLES if _kept(res, role)]
    n = _share(items, len(groups))
    out = []
    for res, role in groups:
        total = _kept(res, role)
        picks = _spread(total, n) if role == "min" else set(range(min(n, total)))
        designs = [d for i, d in enumerate(run.designs(res["row"], role=role)) if i in picks]
        params = ", ".join(f"{k}={v}" for k, v in res["params"].items())
        name = f"{res['row']}{f' ({params})' if params else ''}: {ROLES[role]}"
        out.append(Group(name, total, [Item(d, name, {"row": d.row, "role": role, "score": d.score})
                                       for d in designs]))
    return out


def _kept(res: dict[str, Any], role: str) -> int:
    """How many designs of a scan row's results have ``role``."""
    if role == "top":
        return len(res.get("top") or [])
    return int(res.get(f"at_{role}") or 0) if res.get(role) is not None else 0


def _spread(total: int, n: int) -> set[int]:
    """About ``n`` indices spread evenly over ``range(total)``."""
    return set(np.linspace(0, total - 1, min(n, total)).round().astype(int).tolist()) if total else set()


STATE_LAYERS = 4
"""Layers of a retrograde run (per row of a family) in the gallery, deepest first."""


def _state_groups(run: Run, items: int) -> list[Group]:
    """Per row and layer of a user's retrograde space, deepest first: the first states with its first bit set."""
    import itertools

    bit = run.results["bits"][0]
    names = [run.config.row(i) for i in range(len(run.config.rows))]
    chosen = []
    for i, row in enumerate(names):
        layers = [r for r in reversed(run.results["rows"]) if r.get("row", "") == row and r[bit]]
        chosen += [(i, row, r) for r in layers[:STATE_LAYERS]]
    n = _share(items, len(chosen))
    out = []
    for i, row, res in chosen:
        name = f"{f'{row} ' if row else ''}layer {res['layer']}: {bit}"
        states = list(itertools.islice(run.states(res["layer"], row=i), n))
        out.append(Group(name, res[bit], [Item(st, name, {"layer": st.layer, "row": row}) for st in states]))
    return out


def _filters_html(domain: str, groups: list[Group]) -> str:
    controls = []
    values: dict[str, set] = {}
    for g in groups:
        for item in g.items:
            for key, value in item.attrs.items():
                values.setdefault(key, set()).add(value)
    for key, label, how in FILTERS.get(domain, []):
        if how == "select":
            options = sorted(values.get(key, ()), key=lambda v: (not isinstance(v, (int, float)), v))
            opts = "".join(f"<option value='{_e(str(v))}'>{_e(str(v))}</option>" for v in options)
            controls.append(f"<label>{_e(label)} <select data-filter='{key}' data-how='eq'>"
                            f"<option value=''>all</option>{opts}</select></label>")
        else:
            controls.append(f"<label>{_e(label)} <input type=number step=any data-filter='{key}' data-how='min'></label>")
    return "<div id=filters>" + " ".join(controls) + "</div>"


def _gallery_html(groups: list[Group]) -> str:
    out = []
    for g in groups:
        note = f"{len(g.items):,} of {g.total:,} shown" if len(g.items) < g.total else f"all {g.total:,} shown"
        out.append(f"<h3>{_e(g.name)} <small>({note})</small></h3><div class=grid>")
        for item in g.items:
            attrs = " ".join(f"data-{k}='{_e(str(v))}'" for k, v in item.attrs.items())
            data = _e(json.dumps(item.found.to_dict()))
            caption = _e(item.found.caption())
            uri = item.found.thumbnail(dpi=THUMB_DPI)
            out.append(f"<figure class=item {attrs} data-json='{data}'><img src='{uri}' alt='{caption}'>"
                       f"<figcaption>{caption}</figcaption></figure>")
        out.append("</div>")
    return "\n".join(out)


# -- plots -----------------------------------------------------------------------


def _plots_html(run: Run, groups: list[Group]) -> str:
    pictures = [(title, data_uri(png)) for title, png in distribution_plots(run, groups)]
    pictures += [(p.stem, data_uri(p.read_bytes())) for p in run.figures()]
    if not pictures:
        return "<p>No plots for this run.</p>"
    return "\n".join(f"<figure class=plot><img src='{uri}' alt='{_e(t)}'><figcaption>{_e(t)}</figcaption></figure>"
                     for t, uri in pictures)


def distribution_plots(run: Run, groups: list[Group]) -> list[tuple[str, bytes]]:
    """PNG plots of what the tables summarise: solution counts per Witness row (when the run
    recorded them), Fling! boards by solution count per piece count and, for runs without the exact
    distributions (which the report's figures show), expert ratios of the gallery sample."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    def figure() -> tuple[Figure, Any]:
        fig = Figure(figsize=(6.5, 3.4), layout="constrained")
        FigureCanvasAgg(fig)
        return fig, fig.add_subplot()

    out = []
    if run.domain == "witness":
        for res in run.results["rows"]:
            if res.get("solution_counts") is None:
                continue
            counts = counts_of(res["solution_counts"])
            if sum(1 for c in counts if c > 0) < 2:
                continue  # the job tallied no distribution beyond "no solution" (solution_counts = 0)
            fig, ax = figure()
            ax.bar(list(counts), list(counts.values()), color="#5e81ac")
            ax.set_yscale("log")
            ax.set_xlabel("solutions")
            ax.set_ylabel("puzzles")
            k = "+".join(map(str, res["k"])) if isinstance(res["k"], list) else res["k"]
            title = f"solution counts, {res['width']}x{res['height']} k={k}"
            if res.get("solution_counts_above"):
                title += (f" ({res['solution_counts_above']:,} puzzles with more than "
                          f"{res['solution_counts_cap']:,} not shown)")
            ax.set_title(title, fontsize=10)
            out.append((title, png_bytes(fig)))
    if run.domain == "fling":
        rows = run.results["rows"]
        pieces = [r["pieces"] for r in rows]
        unique = np.array([r["unique"] for r in rows], float)
        several = np.array([r["solvable"] - r["unique"] for r in rows], float)
        none = np.array([r["boards"] - r["solvable"] for r in rows], float)
        fig, ax = figure()
        width = 0.27
        x = np.arange(len(pieces))
        for shift, values, label, colour in ((-width, none, "no solution", "#bf616a"),
                                             (0, unique, "one solution", "#a3be8c"),
                                             (width, several, "several solutions", "#5e81ac")):
            ax.bar(x + shift, np.where(values > 0, values, np.nan), width, label=label, color=colour)
        ax.set_xticks(x, [str(p) for p in pieces])
        ax.set_yscale("log")
        ax.set_xlabel("pieces")
        ax.set_ylabel("boards")
        ax.legend(fontsize=8)
        ax.set_title("boards by number of solutions, per piece count")
        out.append(("boards by number of solutions per piece count", png_bytes(fig)))
        ratios = [i.attrs["ratio"] for g in groups for i in g.items if i.attrs["ratio"] != ""]
        if ratios and not run.results.get("ratio_histograms"):  # else the report's exact figures are shown
            fig, ax = figure()
            ax.hist(ratios, bins=20, color="#d08770")
            ax.set_xlabel("expert ratio (brute-force nodes / expert nodes)")
            ax.set_ylabel("boards")
            title = f"expert ratios of the {len(ratios)} uniquely solvable boards in the gallery sample"
            ax.set_title(title, fontsize=9)
            out.append((title, png_bytes(fig)))
    return out


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
                cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
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
    text = _e(text)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)
    return re.sub(r"(?<![\w*])\*([^*]+)\*(?![\w*])", r"<em>\1</em>", text)


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
#filters label { margin-right: 1.2em; } #count { color: #555; }
.grid { display: flex; flex-wrap: wrap; gap: 0.6em; }
figure.item { margin: 0; width: 220px; cursor: pointer; border: 1px solid #ddd; padding: 0.3em; background: #fafafa; }
figure.item:hover { border-color: #5e81ac; }
figure.item img { width: 100%; height: 160px; object-fit: contain; }
figure.item figcaption { font-size: 0.75em; color: #444; }
#detail { position: fixed; inset: 0; background: rgba(0, 0, 0, 0.55); display: flex; align-items: center;
          justify-content: center; z-index: 2; }
#detail[hidden] { display: none; }
#detail .box { background: #fff; padding: 1em; max-width: 92vw; max-height: 92vh; overflow: auto; }
#detail img { max-width: 88vw; max-height: 60vh; display: block; }
#detail pre { font-size: 0.8em; max-height: 25vh; overflow: auto; background: #f6f6f6; }
"""

SCRIPT = """
(function () {
  var items = Array.prototype.slice.call(document.querySelectorAll('figure.item'));
  var controls = Array.prototype.slice.call(document.querySelectorAll('[data-filter]'));
  function apply() {
    var shown = 0;
    items.forEach(function (item) {
      var ok = controls.every(function (c) {
        var want = c.value, have = item.dataset[c.dataset.filter];
        if (want === '') return true;
        if (c.dataset.how === 'min') return have !== '' && parseFloat(have) >= parseFloat(want);
        return have === want;
      });
      item.hidden = !ok;
      if (ok) shown += 1;
    });
    document.getElementById('count').textContent = shown + ' of ' + items.length + ' pictures shown';
  }
  controls.forEach(function (c) { c.addEventListener('input', apply); c.addEventListener('change', apply); });
  var detail = document.getElementById('detail');
  items.forEach(function (item) {
    item.addEventListener('click', function () {
      document.getElementById('detail-img').src = item.querySelector('img').src;
      document.getElementById('detail-caption').textContent = item.querySelector('figcaption').textContent;
      document.getElementById('detail-json').textContent = JSON.stringify(JSON.parse(item.dataset.json), null, 1);
      detail.hidden = false;
    });
  });
  function close() { detail.hidden = true; }
  document.getElementById('close').addEventListener('click', close);
  detail.addEventListener('click', function (e) { if (e.target === detail) close(); });
  document.addEventListener('keydown', function (e) { if (e.key === 'Escape') close(); });
  apply();
})();
"""
