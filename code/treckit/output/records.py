"""Output of evaluation results: trec_eval text, a rich table, JSON, CSV, JSON lines.

``results`` is a list of ``(path, run tag, EvalResult)``, one per run.  trec_eval text is trec_eval's
bytes, run after run; every other format says which run each line belongs to (tag and path), since
several runs may carry the same tag.  Floats in JSON/CSV are written with ``repr`` (shortest
round-trip), so the same numbers give the same bytes everywhere; a NaN (trec_eval's -nan) is null in
JSON and ``nan`` in CSV.
"""
from __future__ import annotations

import csv
import io
import json
import math

from ..console.errors import InputError
from ..console.tables import wide_or_long
from .trec_eval import format_trec_eval, trec_eval_chunks


def _numeric(res) -> list[str]:
    return [c for c in res.columns if res.kinds[c] in ("double", "long")]


def _per_query_numeric(res) -> list[tuple[int, str]]:
    return [(j, c) for j, c in enumerate(res.columns) if c in res.per_query_columns and res.kinds[c] in ("double", "long")]


def _json_number(x: float):
    return None if math.isnan(x) else x


def frame(res, per_query: bool = True):
    """The API's DataFrame of a result: a row per query, then the summary row ``all``; numeric measures only."""
    import pandas as pd

    cols = [c for c in res.columns if res.kinds[c] in ("double", "long")]
    rows = list(res.qids) if per_query else []
    data = {"qid": rows + ["all"]}
    for c in cols:                        # doubles, as the values are (a missing summary value: NaN)
        value = res.summary.get(c)
        column = res.values[:, res.columns.index(c)].astype(float).tolist() if per_query else []
        data[c] = column + [math.nan if value is None else float(value)]
    return pd.DataFrame(data)


def write(out, results, fmt: str, *, per_query: bool = False, summary: bool = True) -> None:
    """:func:`render`'s text written to ``out``; trec_eval text a piece at a time (see trec_eval_chunks)."""
    if fmt != "trec_eval":
        out.write(render(results, fmt, per_query=per_query, summary=summary))
        return
    for _, _, res in results:
        for piece in trec_eval_chunks(res, per_query=per_query, summary=summary):
            out.write(piece)


def render(results, fmt: str, *, per_query: bool = False, summary: bool = True) -> str:
    if fmt == "trec_eval":
        return "".join(format_trec_eval(res, per_query=per_query, summary=summary) for _, _, res in results)
    if fmt == "table":
        return _table(results, per_query, summary)
    if fmt == "json":
        return json.dumps([_run_record(path, tag, res, per_query, summary) for path, tag, res in results], indent=2) + "\n"
    if fmt == "jsonl":
        lines = []
        for path, tag, res in results:
            rec = _run_record(path, tag, res, per_query, summary)
            for row in rec.get("per_query", []):
                lines.append(json.dumps({"run": tag, "path": str(path), **row}))
            if summary:
                lines.append(json.dumps({"run": tag, "path": str(path), "qid": "all", **rec["summary"]}))
        return "".join(line + "\n" for line in lines)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["run", "qid", "measure", "value", "path"])
        for path, tag, res in results:
            if per_query:
                cols = _per_query_numeric(res)
                for i, q in enumerate(res.qids):
                    for j, c in cols:
                        w.writerow([tag, q, c, repr(float(res.values[i, j])), path])
            if summary:
                for c in _numeric(res):
                    if c in res.summary:
                        w.writerow([tag, "all", c, repr(float(res.summary[c])), path])
        return buf.getvalue()
    raise InputError(f"unknown output format {fmt!r}", fix="use trec_eval, table, json, csv or jsonl")


def _run_record(path, tag, res, per_query: bool, summary: bool) -> dict:
    rec: dict = {"run": tag, "path": str(path), "num_q": res.Q}
    if summary:
        rec["summary"] = {c: _json_number(res.summary[c]) for c in _numeric(res) if c in res.summary}
    if per_query:
        cols = _per_query_numeric(res)
        rec["per_query"] = [{"qid": q, **{c: _json_number(float(res.values[i, j])) for j, c in cols}}
                            for i, q in enumerate(res.qids)]
    return rec


def _cell(x: float, kind: str = "double") -> str:
    if math.isnan(x):
        return "-nan"
    return str(int(x)) if kind == "long" else f"{x:.4f}"


TABLE_WIDTH = 160           # --format table's width: a table wider than this is printed one cell per line


def _table(results, per_query: bool, summary: bool) -> str:
    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False, width=TABLE_WIDTH)
    if per_query:
        for path, tag, res in results:       # one table per run: a row per query, then the summary
            buf.write(f"run {tag}: {path}\n")            # written whole: a table title would wrap a long path
            console.print(_per_query_table(res, summary))
    elif summary:
        console.print(_summary_table(results))
    return buf.getvalue()


def _per_query_table(res, summary: bool):
    cols = _per_query_numeric(res)
    # measures of the summary only (gm_map): a column whose one cell is the 'all' row's
    only_summary = [c for c in _numeric(res) if c in res.summary and c not in res.per_query_columns] if summary else []
    names = [c for _, c in cols] + only_summary
    rows = [(q, [_cell(float(res.values[i, j]), res.kinds[c]) for j, c in cols] + [""] * len(only_summary))
            for i, q in enumerate(res.qids)]
    if summary:
        rows.append(("all", [_cell(res.summary[c], res.kinds[c]) if c in res.summary else "" for c in names]))
    return wide_or_long("per query" + ("; 'all' = the summary (mean; sum for counts)" if summary else ""),
                        "qid", names, rows, TABLE_WIDTH, "measure")


def _summary_table(results):
    measures: list[str] = []
    for _, _, res in results:
        measures += [c for c in _numeric(res) if c in res.summary and c not in measures]
    rows = [(m, [(_cell(res.summary[m], res.kinds[m]) if m in res.summary else "") for _, _, res in results])
            for m in measures]
    return wide_or_long("treckit evaluation (mean over queries; counts are sums)", "measure",
                        [f"{tag}\n{path}" for path, tag, _ in results], rows, TABLE_WIDTH, "run")
