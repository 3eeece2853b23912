"""What ``--tie-aware`` writes: ``range`` (trec_eval's value beside the expected, best and worst ones) and ``report``
(what the ties did) in every output format, ``treckit eval --tie-aware``'s output, and the Python API's answer;
the values are :mod:`treckit.engines.tie_aware`'s."""
from __future__ import annotations

import math

from ..dependencies import deferred
from ..console.messages import say
from ..engines.budget import MemoryLimit
from ..engines.memory import EvalOptions
from ..engines.tie_aware import VALUE_MODES, TieAwareEvaluation, evaluate_tie_aware
from ..measures.ties import MAX_DECIMALS
from .records import frame, write

np = deferred("numpy")

# ---------------------------------------------------------------- range and report
def range_rows(ev: TieAwareEvaluation, per_query: bool, summary: bool) -> list[dict]:
    """One row per (query, column): trec_eval's value, expected, best and worst ("all" rows: the summary)."""
    out = []
    plain = ev.plain
    cols = [(j, c) for j, c in enumerate(plain.columns) if plain.kinds[c] in ("double", "long")]
    if per_query:
        for i, q in enumerate(plain.qids):
            for j, c in cols:
                if c in plain.per_query_columns:
                    out.append({"qid": q, "measure": c, "trec_eval": float(plain.values[i, j]),
                                **{m: float(ev.values[m].values[i, j]) for m in VALUE_MODES}})
    if summary:
        for j, c in cols:
            if c in plain.summary:
                out.append({"qid": "all", "measure": c, "trec_eval": float(plain.summary[c]),
                            **{m: float(ev.values[m].summary[c]) for m in VALUE_MODES}})
    return out


def _num(x: float) -> str:
    return "  -nan" if math.isnan(x) else f"{x:6.4f}"


def render_range(results, fmt: str, per_query: bool, summary: bool) -> str:
    """``results``: (path, tag, TieAwareEvaluation) per run.  trec_eval text: trec_eval's lines with four
    values (trec_eval's, expected, best, worst), under a header line; table, JSON, JSON lines, CSV."""
    import io
    import json

    order = ("trec_eval", "expected", "best", "worst")
    if fmt == "trec_eval":
        buf = [f"{'# measure':<22}\tqid\t" + "\t".join(order) + "\n"]
        for _, _, ev in results:
            buf += [f"{r['measure']:<22}\t{r['qid']}\t" + "\t".join(_num(r[k]) for k in order) + "\n"
                    for r in range_rows(ev, per_query, summary)]
        return "".join(buf)
    if fmt == "json":
        recs = [{"run": tag, "path": str(path), "tie_aware": "range", "rows": [_json_row(r) for r in range_rows(ev, per_query, summary)]}
                for path, tag, ev in results]
        return json.dumps(recs, indent=2) + "\n"
    if fmt == "jsonl":
        return "".join(json.dumps({"run": tag, "path": str(path), **_json_row(r)}) + "\n"
                       for path, tag, ev in results for r in range_rows(ev, per_query, summary))
    if fmt == "csv":
        import csv
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["run", "qid", "measure", *order, "path"])
        for path, tag, ev in results:
            for r in range_rows(ev, per_query, summary):
                w.writerow([tag, r["qid"], r["measure"], *(repr(r[k]) for k in order), path])
        return buf.getvalue()
    from rich.console import Console
    from rich.table import Table
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False, width=160)
    for path, tag, ev in results:
        buf.write(f"run {tag}: {path}\n")
        t = Table(title="tie-aware range: trec_eval's value (ties by doc id) among the expected, best and worst")
        for name in ("qid", "measure", *order):
            t.add_column(name, justify="left" if name in ("qid", "measure") else "right")
        for r in range_rows(ev, per_query, summary):
            t.add_row(r["qid"], r["measure"], *(_num(r[k]).strip() for k in order))
        console.print(t)
    return buf.getvalue()


def _json_row(r: dict) -> dict:
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}


REPORT_TOP = 5
MOVES = 1e-12          # a range below this is the rounding of sums in another order, not a move


def report(ev: TieAwareEvaluation) -> dict:
    """What the ties did to one run: counts, the queries that move most, the largest range per measure,
    and where the ties come from."""
    plain, best, worst = ev.plain, ev.values["best"], ev.values["worst"]
    cols = [(j, c) for j, c in enumerate(plain.columns)
            if plain.kinds[c] in ("double", "long") and c in plain.per_query_columns]
    evaluated = set(plain.qids)
    s = ev.sources
    moves = []
    for i, q in enumerate(plain.qids):
        spans = [(float(best.values[i, j] - worst.values[i, j]), c) for j, c in cols]
        spans = [x for x in spans if not math.isnan(x[0])]
        if spans:
            span, c = max(spans)
            if span > MOVES:
                moves.append({"qid": q, "measure": c, "range": span, "worst": float(worst.values[i, plain.columns.index(c)]),
                              "best": float(best.values[i, plain.columns.index(c)]),
                              "trec_eval": float(plain.values[i, plain.columns.index(c)])})
    moves.sort(key=lambda r: (-r["range"], r["qid"]))
    largest = []
    for j, c in cols:
        span = best.values[:, j] - worst.values[:, j]
        span = np.where(span > MOVES, span, 0.0)
        at = int(np.nanargmax(span)) if span.size and not np.all(np.isnan(span)) else None
        row = {"measure": c, "trec_eval": float(plain.summary.get(c, math.nan)),
               "expected": float(ev.values["expected"].summary.get(c, math.nan)),
               "worst": float(worst.summary.get(c, math.nan)), "best": float(best.summary.get(c, math.nan)),
               "largest_query_range": float(span[at]) if at is not None else 0.0,
               "largest_query": plain.qids[at] if at is not None and span[at] > 0 else None}
        largest.append(row)
    return {"queries": plain.Q, "queries_with_tied_judged_docs": sum(1 for q in ev.per_query_groups if q in evaluated),
            "tied_groups_with_judged_doc": sum(n for q, n in ev.per_query_groups.items() if q in evaluated),
            "run_lines": s.lines, "tied_lines": s.tied_lines, "tied_groups": s.groups,
            "queries_with_ties": s.queries_with_ties, "score_decimals": s.decimals, "score_digits": s.digits,
            "float32": s.float32, "source": s.verdict, "source_note": s.describe(),
            "moves_most": moves[:REPORT_TOP], "measures": largest}


def render_report(results, fmt: str) -> str:
    import json

    reps = [(path, tag, report(ev)) for path, tag, ev in results]
    if fmt in ("json", "jsonl"):
        recs = [{"run": tag, "path": str(path), "tie_aware": "report", **_json_row_deep(r)} for path, tag, r in reps]
        if fmt == "jsonl":
            return "".join(json.dumps(r) + "\n" for r in recs)
        return json.dumps(recs, indent=2) + "\n"
    out = []
    for path, tag, r in reps:
        out.append(f"run {tag}: {path}\n")
        out.append(f"  ties: {r['source_note']}\n")
        out.append(f"  tie groups holding a judged doc: {r['tied_groups_with_judged_doc']} over "
                   f"{r['queries_with_tied_judged_docs']} of {r['queries']} evaluated queries\n")
        if r["score_decimals"] is None:
            places = f"more than {MAX_DECIMALS} decimal places"
        else:
            places = f"{r['score_decimals']} decimal place{'' if r['score_decimals'] == 1 else 's'} at most"
        out.append(f"  scores carry {r['score_digits']} significant digits at most, {places}"
                   f"{'; every score reads as a float32' if r['source'] == 'float32' else ''}\n")
        table = [["measure", "trec_eval", "expected", "worst", "best", "largest query range"]]
        for m in r["measures"]:
            where = f"{m['largest_query_range']:.4f} ({m['largest_query']})" if m["largest_query"] else "0.0000"
            table.append([m["measure"], *(_num(m[k]).strip() for k in ("trec_eval", "expected", "worst", "best")), where])
        out += [f"  {line}\n" for line in aligned(table, right=(1, 2, 3, 4))]
        if r["moves_most"]:
            out.append(f"  queries that move most between worst and best order (top {REPORT_TOP}):\n")
            moves = [[mv["qid"], mv["measure"], f"{mv['worst']:.4f} - {mv['best']:.4f}",
                      f"(range {mv['range']:.4f}; trec_eval {mv['trec_eval']:.4f})"] for mv in r["moves_most"]]
            out += [f"    {line}\n" for line in aligned(moves, right=(2,))]
        else:
            out.append("  no query's value depends on the order of its tied documents\n")
    return "".join(out)


def aligned(rows: list[list[str]], right=()) -> list[str]:
    """Rows of cells as lines of columns as wide as their widest cell, two spaces apart (the columns in ``right``
    right-aligned): however long a name or a value, columns never run together."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.rjust(w) if i in right else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths)))
            .rstrip() for row in rows]


def _json_row_deep(r):
    if isinstance(r, dict):
        return {k: _json_row_deep(v) for k, v in r.items()}
    if isinstance(r, list):
        return [_json_row_deep(v) for v in r]
    if isinstance(r, float) and math.isnan(r):
        return None
    return r


def write_tie_aware(out, qrels, files, requests, options: EvalOptions, reading, mode: str, fmt: str, *,
                    memory_limit=None, per_query: bool = False, summary: bool = True) -> None:
    """``treckit eval --tie-aware MODE``: every run of ``files[1:]`` evaluated (``requests``: as
    :func:`check_requests` keeps them), then written in ``fmt``."""

    limit = MemoryLimit.option(memory_limit)
    results = []
    for path in files[1:]:
        ev = evaluate_tie_aware(qrels, path, requests, options, reading, mode, memory_limit=limit, warn=say,
                                qrels_source=files[0])
        results.append((path, ev.plain.runid, ev))
    if mode in VALUE_MODES:
        write(out, [(p, t, ev.values[mode]) for p, t, ev in results], fmt, per_query=per_query, summary=summary)
    elif mode == "range":
        out.write(render_range(results, fmt, per_query, summary))
    else:
        out.write(render_report(results, fmt))


def api_frame(ev: TieAwareEvaluation, mode: str, per_query: bool):
    """``treckit.evaluate(..., tie_aware=mode)``'s answer: for expected, best and worst the DataFrame plain
    evaluation gives, with those values; for range one row per (qid, measure) with trec_eval's value,
    expected, best and worst; for report the :func:`report` dict."""
    import pandas as pd

    if mode == "report":
        return report(ev)
    if mode == "range":
        df = pd.DataFrame(range_rows(ev, per_query, True), columns=["qid", "measure", "trec_eval", *VALUE_MODES])
        return df.reset_index(drop=True)
    res = ev.values[mode]
    return frame(res, per_query)
