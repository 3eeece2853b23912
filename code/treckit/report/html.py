"""A :class:`treckit.report.page.Page` as one self-contained HTML file.

The figures are plotly's (plotly.io writes each figure's JSON; plotly's own plotly.js sits in the page and draws each
figure as it comes into view), the per-query table is the page's script (``page.js``: sort, filter, pages of rows),
and the data are one JSON block; the summary and the table come before plotly.js, so they show at once;
a Content-Security-Policy forbids every request, so that the page works offline and sends nothing anywhere.
Element ids are fixed and nothing depends on the time: the same page gives the same bytes.  Every number shown
is formatted here, in Python, except the table's cells, which ``page.js`` rounds as Python does (half to even
on the exact binary value).
"""
from __future__ import annotations

import html
import importlib.util
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..console.errors import InputError
from ..dependencies import deferred, install_hint
from . import EXTRA
from .page import NO_TYPE, Page

np = deferred("numpy")

HOVER_TEXT_CHARS = 120          # a query's text in a tooltip is cut to this many characters (the table has it whole)
FIGURE_HEIGHT = 320
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22")
CONFIG = {"displaylogo": False, "responsive": True, "typesetMath": False,
          "modeBarButtonsToRemove": ["select2d", "lasso2d"]}
POLICY = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
          "img-src data: blob:; font-src data:; connect-src 'none'")


def require_plotly() -> None:
    """An error naming the report extra and its pip command when plotly is not installed (found without loading it);
    checked before any work."""
    if importlib.util.find_spec("plotly") is None:
        raise InputError("an HTML report needs plotly, which is not installed", fix=install_hint(EXTRA))


@lru_cache(maxsize=1)
def _assets() -> tuple[str, str, str]:
    """(plotly.js, the page's CSS, the page's script)."""
    from plotly.offline import get_plotlyjs
    here = Path(__file__).resolve().parent
    return (get_plotlyjs(), (here / "page.css").read_text(encoding="utf-8"),
            (here / "page.js").read_text(encoding="utf-8"))


def e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def label(text: Any) -> str:
    """Text for plotly to show as written: its markup escaped as HTML entities (plotly reads them back), '%' too,
    so that a name is never read as a template's %{...}."""
    return e(text).replace("%", "&#37;")


def f4(x) -> str:
    return "" if x is None or (isinstance(x, float) and x != x) else f"{x:.4f}"


def render(page: Page, query_text: bool = True) -> str:
    """The page's HTML; ``query_text`` False leaves the queries' texts out (a page to mail around)."""
    require_plotly()
    plotly_js, css, script = _assets()
    texts = page.texts if query_text else None
    sections = [_summary(page), _gate(page), _trend(page), _per_query(page, texts), _types(page), _curves(page),
                _ties(page), _tests(page), _definitions(page), _inputs(page, query_text)]
    nav = "".join(f'<a href="#{sid}">{e(title)}</a>' for sid, title, body in sections if body)
    body = "".join(f'<section id="{sid}"><h2>{e(title)}</h2>{body}</section>' for sid, title, body in sections if body)
    data = json.dumps(_table_data(page, texts), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>treckit: {e(page.title)}</title><style>{css}</style></head><body>"
            f'<header><h1>{e(page.title)}</h1><p class="sub">treckit {e(page.version)} &middot; {e(page.kind)} report'
            f" &middot; {len(page.qids)} queries &middot; {len(page.systems)} system(s)</p><nav>{nav}</nav></header>"
            f"<main>{body}</main>"
            f'<script type="application/json" id="treckit-data">{_safe(data)}</script>'
            f'<script type="application/json" id="treckit-plot-config">{json.dumps(CONFIG)}</script>'
            f"<script>{script}</script><script>{plotly_js}</script></body></html>\n")


def _figure(fig_id: str, data: list, layout: dict, height: int = FIGURE_HEIGHT) -> str:
    """An empty box and the figure's JSON (plotly.io's); page.js has plotly draw it when it comes into view, so that
    a page of many figures and queries opens at once."""
    import plotly.io as pio
    axis = {"gridcolor": "#e6e9ef", "linecolor": "#9aa3b2", "zerolinecolor": "#5b6475", "automargin": True}
    base = {"height": height, "margin": {"l": 60, "r": 20, "t": 40, "b": 50}, "paper_bgcolor": "#fff",
            "plot_bgcolor": "#fff", "colorway": list(COLORS),
            "font": {"family": "system-ui, -apple-system, Segoe UI, Roboto, Helvetica, Arial, sans-serif", "size": 12,
                     "color": "#1d2330"},
            "title": {"font": {"size": 14}, "x": 0.01}, "hoverlabel": {"align": "left"},
            "legend": {"orientation": "h", "y": -0.25}}
    merged = {**base, **layout}
    for name in ("xaxis", "yaxis"):
        merged[name] = {**axis, **layout.get(name, {})}
    merged["title"] = {**base["title"], **layout.get("title", {})}
    text = pio.to_json({"data": data, "layout": merged}, validate=False, pretty=False, engine="json")
    return (f'<div class="figure" id="{fig_id}" style="height:{height}px"></div>'
            f'<script type="application/json" class="figure-data" data-for="{fig_id}">{_safe(text)}</script>')


def _safe(json_text: str) -> str:
    """JSON inside a script element: no '<' that could end it."""
    return json_text.replace("<", "\\u003c")


# ---------------------------------------------------------------- summary
def _summary(page: Page) -> tuple[str, str, str]:
    head = "".join(f"<th>{e(m)}</th>" for m in page.measures)
    rows = []
    for s in page.systems:
        cells = "".join(_mean_cell(page, s, m) for m in page.measures)
        role = ' <span class="role">baseline</span>' if s == page.baseline and len(page.systems) > 1 else ""
        rows.append(f'<tr><th class="system">{e(s)}{role}</th>{cells}</tr>')
    legend = ('<p class="legend">Each cell: the mean, its interval in brackets'
              + ("; for another system, its difference from the baseline and the significance mark: &dagger; "
                 "significant, with the test and the adjusted p that decide." if len(page.systems) > 1 else ".")
              + "</p>")
    notes = "".join(f"<li>{e(n)}</li>" for n in page.notes)
    return ("summary", "Summary", f'<div class="scroll"><table class="summary" id="summary-table"><thead><tr>'
            f"<th>system</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>{legend}"
            f'<ul class="notes">{notes}</ul>')


def _mean_cell(page: Page, s: str, m: str) -> str:
    mean = page.means[s].get(m)
    ci = page.intervals.get(s, {}).get(m)
    mark = page.marks.get(s, {}).get(m)
    parts = [f'<span class="mean">{f4(mean) or "&ndash;"}</span>']
    if mark is not None and mark.significant:
        parts.append('<span class="dagger" title="significant">&dagger;</span>')
    if ci is not None:
        parts.append(f'<span class="ci">[{f4(ci[0])}, {f4(ci[1])}]</span>')
    if s != page.baseline and mean is not None and page.means[page.baseline].get(m) is not None:
        parts.append(f'<span class="delta">\u0394 {mean - page.means[page.baseline][m]:+.4f}</span>')
    if mark is not None:
        verdict = "&dagger;" if mark.significant else "n.s."
        parts.append(f'<span class="test{" sig" if mark.significant else ""}">{verdict} {e(mark.test)} '
                     f"p = {e(_p(mark))}</span>")
    title = e(mark.text()) if mark is not None else ""
    return (f'<td data-system="{e(s)}" data-measure="{e(m)}" data-mean="{f4(mean)}" title="{title}">'
            + "".join(parts) + "</td>")


def _p(mark) -> str:
    x = mark.p_adjusted
    return f"{x:.2e}" if 0 < x < 1e-4 else f"{x:.4f}"


# ---------------------------------------------------------------- per query
def _hover_rows(page: Page, texts, system: str, j: int) -> list[list[str]]:
    """customdata of each query: id, type, text, the baseline's value, the system's value, their difference (as
    the table prints them)."""
    base, own = page.values[page.baseline][:, j].tolist(), page.values[system][:, j].tolist()
    out = []
    for i, q in enumerate(page.qids):
        text = (texts[i] or "") if texts is not None else ""
        if len(text) > HOVER_TEXT_CHARS:
            text = text[:HOVER_TEXT_CHARS - 1] + "\u2026"
        qtype = (page.types[i] or NO_TYPE) if page.types is not None else ""
        delta = f"{own[i] - base[i]:+.4f}" if system != page.baseline else ""
        out.append([label(q), label(qtype), label(text), f4(base[i]), f4(own[i]), delta])
    return out


def _per_query(page: Page, texts) -> tuple[str, str, str]:
    figures = []
    pairs = len(page.systems) > 1
    for n, m in enumerate(page.plotted):
        j = page.measures.index(m)
        traces = []
        for k, s in enumerate(page.systems[1:] if pairs else page.systems):
            v = page.column(s, m) - page.column(page.baseline, m) if pairs else page.column(s, m)
            keep = np.flatnonzero(np.isfinite(v))
            order = keep[np.argsort(v[keep], kind="stable")]
            custom = _hover_rows(page, texts, s, j)
            own = label(s)
            template = ("<b>%{customdata[0]}</b> %{customdata[1]}<br>%{customdata[2]}<br>"
                        + (f"{label(page.baseline)}: %{{customdata[3]}}<br>{own}: %{{customdata[4]}}<br>"
                           "difference: %{customdata[5]}" if pairs else f"{own}: %{{customdata[4]}}")
                        + f"<extra>{own}</extra>")
            traces.append({"type": "scatter", "mode": "lines+markers" if len(order) <= 200 else "lines",
                           "line": {"shape": "hvh", "color": COLORS[(k + pairs) % len(COLORS)], "width": 1.5},
                           "marker": {"size": 5}, "fill": "tozeroy",
                           "name": label(f"{s} \u2212 {page.baseline}" if pairs else s),
                           "x": list(range(1, len(order) + 1)), "y": [float(v[i]) for i in order],
                           "customdata": [custom[i] for i in order], "hovertemplate": template})
        ytitle = f"\u0394 {m}" if pairs else m
        figures.append(_figure(f"fig-query-{n}", traces, {
            "title": {"text": label(f"{m}: " + ("per-query difference from " + page.baseline if pairs else "per query")
                                + ", sorted")},
            "xaxis": {"title": {"text": "queries, sorted"}, "zeroline": False, "range": [0.5, len(page.qids) + 0.5]},
            "yaxis": {"title": {"text": label(ytitle)}, "zeroline": True, "zerolinecolor": "#444"},
            "hovermode": "closest", "showlegend": pairs and len(page.systems) > 2}))
    controls = ('<div class="controls"><input id="filter" type="search" placeholder="filter: query id, type or text">'
                + ('<select id="type-filter"><option value="">every type</option>'
                   + "".join(f'<option value="{e(t)}">{e(t)}</option>' for t in (page.type_means or {}))
                   + "</select>" if page.types is not None else "")
                + '<span id="count"></span><button id="prev" type="button">&larr; previous</button>'
                  '<button id="next" type="button">next &rarr;</button></div>')
    table = ('<div class="scroll"><table id="query-table" class="queries"><thead></thead><tbody></tbody></table></div>'
             '<p class="legend">Click a column\'s name to sort by it (again: the other way); the rows come a page at '
             "a time.</p>")
    return ("per-query", "Per query", f'<div class="grid">{"".join(figures)}</div>{controls}{table}')


def _table_data(page: Page, texts) -> dict:
    """The per-query table: its columns and rows (values as numbers; null where none)."""
    pairs = len(page.systems) > 1
    columns = [{"name": "query", "kind": "id"}]
    if page.types is not None:
        columns.append({"name": "type", "kind": "type"})
    if texts is not None:
        columns.append({"name": "text", "kind": "text"})
    blocks = []
    for s in page.systems:
        for j, m in enumerate(page.measures):
            columns.append({"name": f"{s} {m}" if pairs else m, "kind": "value"})
            blocks.append(page.values[s][:, j])
    if pairs:
        for s in page.systems[1:]:
            for j, m in enumerate(page.measures):
                columns.append({"name": f"\u0394 {s} {m}", "kind": "delta"})
                blocks.append(page.values[s][:, j] - page.values[page.baseline][:, j])
    matrix = np.column_stack(blocks) if blocks else np.zeros((len(page.qids), 0))
    rows = []
    for i, q in enumerate(page.qids):
        row: list = [q]
        if page.types is not None:
            row.append(page.types[i] or NO_TYPE)
        if texts is not None:
            row.append(texts[i])
        row += [None if x != x else x for x in matrix[i].tolist()]
        rows.append(row)
    return {"columns": columns, "rows": rows}


# ---------------------------------------------------------------- types, curves, ties, tests
def _types(page: Page) -> tuple[str, str, str]:
    if not page.type_means:
        return ("types", "By query type", "" if page.types is None else "<p>No query has a type.</p>")
    types = list(page.type_means)
    figures = []
    for n, m in enumerate(page.plotted):
        traces = [{"type": "bar", "name": label(s), "x": [label(t) for t in types], "marker": {"color": COLORS[k % len(COLORS)]},
                   "y": [page.type_means[t][s][m] for t in types],
                   "customdata": [[page.type_means[t]["queries"], f4(page.type_means[t][s][m])] for t in types],
                   "hovertemplate": f"<b>%{{x}}</b><br>{label(s)}: %{{customdata[1]}}<br>%{{customdata[0]}} queries"
                                    "<extra></extra>"}
                  for k, s in enumerate(page.systems) if s in page.type_means[types[0]]]
        figures.append(_figure(f"fig-type-{n}", traces, {"title": {"text": label(f"{m}: mean by query type")},
                                                         "barmode": "group", "yaxis": {"title": {"text": label(m)}}}))
    systems = [s for s in page.systems if s in page.type_means[types[0]]]
    head = "".join(f"<th>{e(s)} {e(m)}</th>" if len(systems) > 1 else f"<th>{e(m)}</th>"
                   for s in systems for m in page.measures)
    rows = "".join(f'<tr><th class="system">{e(t)}</th><td>{page.type_means[t]["queries"]}</td>'
                   + "".join(f'<td data-type="{e(t)}" data-system="{e(s)}" data-measure="{e(m)}">'
                             f"{f4(page.type_means[t][s][m])}</td>" for s in systems for m in page.measures) + "</tr>"
                   for t in types)
    return ("types", "By query type", f'<div class="grid">{"".join(figures)}</div><div class="scroll">'
            f'<table class="summary" id="type-table"><thead><tr><th>type</th><th>queries</th>{head}</tr></thead>'
            f"<tbody>{rows}</tbody></table></div>")


def _curves(page: Page) -> tuple[str, str, str]:
    if page.curves is None:
        return ("curves", "Precision-recall", f'<p class="absent">{e(page.no_curves or "no curve")}.</p>')
    traces = [{"type": "scatter", "mode": "lines+markers", "name": label(s), "x": page.curve_levels, "y": ys,
               "line": {"color": COLORS[k % len(COLORS)]},
               "hovertemplate": f"{label(s)}<br>recall %{{x:.2f}}: interpolated precision %{{y:.4f}}<extra></extra>"}
              for k, (s, ys) in enumerate(page.curves.items())]
    fig = _figure("fig-curves", traces, {"title": {"text": "Interpolated precision at recall (iprec_at_recall), mean"},
                                        "xaxis": {"title": {"text": "recall"}, "range": [0, 1]},
                                        "yaxis": {"title": {"text": "precision"}, "range": [0, 1.02]}}, 380)
    return ("curves", "Precision-recall", fig)


def _ties(page: Page) -> tuple[str, str, str]:
    if page.ties is None:
        return ("ties", "Ties", "")
    t = page.ties
    movers = _html_table(["query", "system", "measure", "worst", "best", "trec_eval", "range"], t["movers"], "tie-movers")
    return ("ties", "Ties", f"<p>{e(t['statement'])}.</p>{_html_table(t['header'], t['cells'], 'tie-table')}"
            f"<h3>Queries whose values move most with the order of tied documents</h3>"
            + (movers if t["movers"] else "<p>No query's value depends on the order of its tied documents.</p>"))


def _tests(page: Page) -> tuple[str, str, str]:
    if page.tests is None:
        return ("tests", "Tests", "")
    header, cells = page.tests
    return ("tests", "Tests", f"<details><summary>Every paired test ({len(cells)} rows)</summary>"
            f"{_html_table(header, cells, 'test-table')}</details>")


def _html_table(header, cells, table_id: str) -> str:
    head = "".join(f"<th>{e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in cells)
    return (f'<div class="scroll"><table class="summary" id="{table_id}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


# ---------------------------------------------------------------- gate and trend
def _gate(page: Page) -> tuple[str, str, str]:
    g = page.gate
    if g is None:
        return ("gate", "Gate", "")
    checks = g["checks"]
    metrics = [label(c["metric"]) for c in checks]
    traces = [{"type": "bar", "name": side, "x": metrics, "y": [c[side] for c in checks],
               "marker": {"color": color}, "hovertemplate": f"%{{x}}<br>{side}: %{{y:.4f}}<extra></extra>"}
              for side, color in (("baseline", "#9ecae1"), ("current", "#3182bd"))]
    traces.append({"type": "scatter", "mode": "markers", "name": label(f"limit: a drop of at most {g['rule']}"),
                   "x": metrics, "y": [c["limit"] for c in checks],
                   "marker": {"symbol": "line-ew-open", "size": 46, "color": "#d62728",
                              "line": {"width": 3, "color": "#d62728"}},
                   "hovertemplate": "%{x}<br>limit: %{y:.4f}<extra></extra>"})
    limits = [{"type": "line", "xref": "x", "yref": "y", "x0": i - 0.45, "x1": i + 0.45, "y0": c["limit"],
               "y1": c["limit"], "line": {"color": "#d62728", "width": 3, "dash": "dash"}} for i, c in enumerate(checks)]
    fig = _figure("fig-gate", traces, {"title": {"text": f"Gated metrics: {'PASS' if g['passed'] else 'FAIL'}"},
                                      "barmode": "group", "yaxis": {"title": {"text": "mean"}}, "shapes": limits})
    cells = [[c["metric"], f4(c["baseline"]), f4(c["current"]), f"{c['current'] - c['baseline']:+.4f}", f4(c["limit"]),
              "pass" if c["passed"] else "FAIL"] for c in checks]
    drops = [[d["qid"], d["query_type"] or "", d["metric"], f4(d["baseline"]), f4(d["current"]), f4(d["drop"])]
             for d in g["drops"]]
    verdict = "pass" if g["passed"] else "fail"
    return ("gate", "Gate", f'<p class="verdict {verdict}">{verdict.upper()}: a metric fails when it drops more than '
            f"{e(g['rule'])} below the baseline.</p>{fig}"
            + _html_table(["metric", "baseline", "current", "change", "limit", "gate"], cells, "gate-table")
            + f"<h3>Queries that dropped on the {e(g['drops_of'])} ({g['dropped']}; the first {len(drops)} shown, "
              "largest drop first)</h3>"
            + (_html_table(["query", "type", "metric", "baseline", "current", "drop"], drops, "gate-drops")
               if drops else "<p>No query dropped.</p>"))


def _trend(page: Page) -> tuple[str, str, str]:
    t = page.trend
    if t is None:
        return ("trend", "Trend", "")
    labels = [label(f"{x} (v{v})") for x, v in zip(t["labels"], t["versions"])]
    traces = [{"type": "scatter", "mode": "lines+markers", "name": label(m), "x": labels, "y": ys,
               "line": {"color": COLORS[k % len(COLORS)]},
               "hovertemplate": f"%{{x}}<br>{label(m)}: %{{y:.4f}}<extra></extra>"}
              for k, (m, ys) in enumerate(t["means"].items())]
    fig = _figure("fig-trend", traces, {"title": {"text": "Means over the results, in the order given"},
                                       "xaxis": {"type": "category"}, "yaxis": {"title": {"text": "mean"}}}, 380)
    return ("trend", "Trend", fig)


# ---------------------------------------------------------------- definitions and inputs
def _definitions(page: Page) -> tuple[str, str, str]:
    if not page.definitions:
        return ("definitions", "Definitions", "")
    items = "".join(f"<dt>{e(m)}</dt><dd>{e(d)}</dd>" for m, d in page.definitions.items())
    return ("definitions", "Definitions", f"<dl>{items}</dl>")


def _inputs(page: Page, query_text: bool) -> tuple[str, str, str]:
    rows = [[role, name, digest or "\u2013"] for role, name, digest in page.inputs]
    note = "" if query_text else "<p>Query texts were left out of this page (--no-query-text).</p>"
    return ("inputs", "Inputs", _html_table(["input", "name", "SHA-256"], rows, "input-table") + note
            + f"<p>Drawn by treckit {e(page.version)}.</p>")
