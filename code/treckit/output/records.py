"""Output of evaluation results: trec_eval text, a rich table, JSON, CSV, JSON lines.

Floats in JSON/CSV are written with ``repr`` (shortest round-trip), so the same numbers
give the same bytes everywhere.
"""
from __future__ import annotations

import csv
import io
import json

from .trec_eval import format_trec_eval


def _numeric(res):
    return [c for c in res.columns if res.kinds[c] in ("double", "long")]


def _summary_rows(results):
    for path, tag, parts in results:
        for res in parts:
            for c in _numeric(res):
                if c in res.summary:
                    yield path, tag, c, res.summary[c]


def render(results, fmt: str, *, per_query: bool = False, summary: bool = True) -> str:
    if fmt == "trec_eval":
        return "".join(format_trec_eval(res, per_query=per_query, summary=summary)
                       for _, _, parts in results for res in parts)
    if fmt == "table":
        return _table(results, per_query)
    if fmt == "json":
        return json.dumps([_run_record(path, tag, parts, per_query) for path, tag, parts in results], indent=2) + "\n"
    if fmt == "jsonl":
        lines = []
        for path, tag, parts in results:
            rec = _run_record(path, tag, parts, True)
            rows = rec["per_query"] if per_query else []
            for row in rows:
                lines.append(json.dumps({"run": tag, **row}))
            lines.append(json.dumps({"run": tag, "qid": "all", **rec["summary"]}))
        return "\n".join(lines) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["run", "qid", "measure", "value"])
        for path, tag, parts in results:
            for res in parts:
                if per_query:
                    for i, q in enumerate(res.qids):
                        for j, c in enumerate(res.columns):
                            if c in res.per_query_columns and res.kinds[c] in ("double", "long"):
                                w.writerow([tag, q, c, repr(float(res.values[i, j]))])
                for c in _numeric(res):
                    if c in res.summary:
                        w.writerow([tag, "all", c, repr(float(res.summary[c]))])
        return buf.getvalue()
    from ..errors import InputError
    raise InputError(f"unknown output format {fmt!r}", fix="use trec_eval, table, json, csv or jsonl")


def _run_record(path, tag, parts, per_query):
    rec = {"run": tag, "path": str(path), "num_q": parts[0].view.Q, "summary": {}}
    rows: dict[str, dict] = {}
    for res in parts:
        for c in _numeric(res):
            if c in res.summary:
                rec["summary"][c] = res.summary[c]
        if per_query:
            for i, q in enumerate(res.qids):
                row = rows.setdefault(q, {"qid": q})
                for j, c in enumerate(res.columns):
                    if c in res.per_query_columns and res.kinds[c] in ("double", "long"):
                        row[c] = float(res.values[i, j])
    if per_query:
        rec["per_query"] = list(rows.values())
    return rec


def _table(results, per_query: bool) -> str:
    from rich.console import Console
    from rich.table import Table

    measures: list[str] = []
    values: dict[tuple[str, str], float] = {}
    tags = []
    for path, tag, parts in results:
        tags.append(tag)
        for res in parts:
            for c in _numeric(res):
                if c in res.summary:
                    if c not in measures:
                        measures.append(c)
                    values[(tag, c)] = res.summary[c]
    t = Table(title="treckit evaluation (mean over queries; num_* are sums)")
    t.add_column("measure")
    for tag in tags:
        t.add_column(tag, justify="right")
    for m in measures:
        t.add_row(m, *[(f"{values[(tag, m)]:.4f}" if (tag, m) in values else "") for tag in tags])
    buf = io.StringIO()
    Console(file=buf, force_terminal=False, width=120).print(t)
    return buf.getvalue()
