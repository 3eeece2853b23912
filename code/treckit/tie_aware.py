"""Tie-aware evaluation of a run file: trec_eval's measures with the documents of equal scores ordered
uniformly at random (``expected``), or in their best or worst order (``best``, ``worst``); all of them next
to trec_eval's value (``range``); or a summary of what the ties did (``report``).

The values themselves are :mod:`treckit.measures.ties`'; here they are wired into the engine: each part
of the run the engine evaluates (the whole run in memory, or query group by query group when it is
streamed) gets its tie-aware values beside the plain ones, and the rows, -c's placeholders and the summary
follow the plain evaluation's rules (:func:`treckit.evaluation._summarise`).  -Z, the Dask engine,
--cross-check and preference judgments are refused (:func:`refuse`).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from .errors import InputError
from .evaluation import EvalOptions, EvalResult, _placeholder, _summarise
from .model import Run

TIE_AWARE = ("expected", "best", "worst", "range", "report")
VALUE_MODES = ("expected", "best", "worst")
COMPARE_MODES = ("range", "expected")      # compare: ranges beside trec_eval's values, or the tests on expected values
ENGINES_FIX = "--engine local (the in-memory and streaming engines compute tie-aware values)"


def check_mode(mode: str) -> str:
    if mode not in TIE_AWARE:
        raise InputError(f"--tie-aware {mode}: not one of {', '.join(TIE_AWARE)}", fix="e.g. --tie-aware expected")
    return mode


def check_compare_mode(mode: str) -> str:
    if mode not in COMPARE_MODES:
        raise InputError(f"--tie-aware {mode}: compare takes {' or '.join(COMPARE_MODES)}",
                         fix="--tie-aware range (tests on trec_eval's values) or --tie-aware expected")
    return mode


def modes_of(mode: str) -> tuple[str, ...]:
    """The value modes a --tie-aware choice computes."""
    return (mode,) if mode in VALUE_MODES else VALUE_MODES


def named_measures(measures: list[str]) -> set[str]:
    """The measures (trec_eval family names) asked for by name in ``measures``, not through a nickname
    (``official``, ``all_trec``) or the default set."""
    from .measures.registry import resolve

    named = set()
    for text in measures:
        families = {r.measure.name for r in resolve([text])}
        if len(families) == 1:
            named |= families
    return named


def check_requests(requests, mode: str, *, named: set[str] | None = None, warn=None) -> list:
    """The requests a tie-aware ``mode`` computes.  A measure without tie-aware values is refused (exit 2,
    naming the covered ones) when it was asked for by name (``named``: those; None: every one); one that
    came in through a nickname or the default set is left out with a warning."""
    from .measures.ties import SPECS, NotTieAware, _REFUSED, covered

    kept, left_out = [], []
    for req in requests:
        m = req.measure
        if m.value == "runid":
            kept.append(req)
            continue
        spec = SPECS.get(m.name)
        for value_mode in modes_of(mode):
            if spec is None:
                why = _REFUSED.get(m.name, "it is not among the measures computed over tie orders")
            elif value_mode == "expected" and spec.expected is None:
                why = spec.no_expected
            else:
                continue
            if named is None or m.name in named:
                raise NotTieAware(req.text, value_mode, why)
            left_out.append((req.text, value_mode, why))
            break
        else:
            kept.append(req)
    if left_out and warn is not None:
        for text, value_mode, why in left_out:
            warn(f"{text} left out of the tie-aware {value_mode} values: {why}")
        covering = sorted({vm for _, vm, _ in left_out})
        for value_mode in covering:
            warn(f"tie-aware {value_mode} values cover: {' '.join(covered(value_mode))}")
    return kept


@dataclass
class TieAwareEvaluation:
    """The plain result of a run and, per value mode, its tie-aware result; for a report, ``sources``: where
    its ties come from, and ``per_query_groups``: each judged query's tie groups that hold a judged doc."""

    plain: EvalResult
    values: dict[str, EvalResult]
    sources: object = None
    per_query_groups: dict[str, int] = field(default_factory=dict)


def part_values(tied, part, requests, options: EvalOptions, modes) -> dict[str, np.ndarray]:
    """{mode: (Q, C) tie-aware values} of one part of a run (``tied``: its :class:`TiedRanking`; ``part``: its
    plain :class:`PartValues`, whose queries and columns they follow), -c's placeholder rules applied as to
    plain values."""
    from .measures.ties import tie_values

    if tied.qids != part.qids:
        raise RuntimeError("the tie groups and the plain values do not hold the same queries")
    out = {}
    for mode in modes:
        blocks = []
        for req in requests:
            m = req.measure
            if m.value == "runid":
                blocks.append(np.full((tied.Q, 1), np.nan))
                continue
            judged = options.judged_only if req.judged_only is None else req.judged_only
            level = options.level if req.level is None else req.level
            block = tie_values(tied.judged_only(judged).at_level(level), m.name, req.params, mode, kernel=m.kernel,
                               **dict(req.options)).reshape(tied.Q, len(req.columns))
            if tied.missing.any():
                _placeholder(req, block, None, tied.missing)
            blocks.append(block)
        out[mode] = np.concatenate(blocks, axis=1) if blocks else np.zeros((tied.Q, 0))
    return out


def _judged_groups(tied) -> dict[str, int]:
    """Per query, its tie groups of two docs or more that hold a judged doc (a grade of 0 or more)."""
    keep = (tied.size > 1) & (tied.rel >= 0)
    if not keep.any():
        return {}
    pairs = np.unique(np.stack([tied.q[keep], tied.start[keep]], axis=1), axis=0)
    counts = np.bincount(pairs[:, 0], minlength=tied.Q)
    return {q: int(c) for q, c in zip(tied.qids, counts.tolist()) if c}


def run_sources(run):
    """Where a run's ties come from (:func:`treckit.measures.ties.tie_sources` of its lines)."""
    from .measures.ties import tie_sources
    from .model import id_runs, spread
    from .trec_order import numbers

    t = run.table
    if not t.num_rows:
        return tie_sources(np.zeros(0, np.int64), np.zeros(0))
    starts, code, _ = id_runs(t.column("qid"))
    return tie_sources(spread(code, starts, t.num_rows), numbers(t.column("score")).astype(np.float64))


def evaluate_tie_aware(qrels, path, requests, options: EvalOptions, reading, mode: str, *, memory_limit=-1,
                       warn=None, qrels_source=None) -> TieAwareEvaluation:
    """The run file ``path`` evaluated as ``treckit eval`` evaluates it (in memory, or streamed beyond
    ``memory_limit``), or a :class:`Run` already read, with the tie-aware values of ``mode`` beside the
    plain ones."""
    from .engines.core import QrelsByQuery
    from .engines.stream import evaluate_path
    from .measures.ties import combine_sources, tied_ranking
    from .model import id_runs

    modes = modes_of(mode)
    index = QrelsByQuery(qrels)
    rows: dict[str, tuple[int, int]] = {}
    stored: list[dict[str, np.ndarray]] = []
    sources, groups = [], {}

    def on_part(part, run) -> None:
        if mode == "report":                    # every line of the run, judged or not
            sources.append((set(id_runs(run.table.column("qid"))[2]), run_sources(run)))
        if not part.qids:                       # a part without judged queries (a shard of unjudged ones)
            return
        tied = tied_ranking(index.take(part.qids), run, options, source=str(path))
        stored.append(part_values(tied, part, requests, options, modes))
        rows.update({qid: (len(stored) - 1, i) for i, qid in enumerate(part.qids)})
        if mode == "report":
            groups.update(_judged_groups(tied))

    if isinstance(path, Run):               # a run already read (the Python API): one part, in memory
        from .evaluation import evaluate_part, merge_parts
        part = evaluate_part(qrels, path, requests, options, "run", sanity=warn is not None, keep_view=True)
        on_part(part, path)
        plain = merge_parts([part], qrels, requests, options, runid=path.tag, warn=warn)
    else:
        plain = evaluate_path(qrels, path, requests, options, reading, memory_limit=memory_limit, warn=warn,
                              qrels_source=qrels_source, on_part=on_part)
    values = {}
    for m in modes:
        v = plain.values.copy()
        for i, qid in enumerate(plain.qids):
            if qid in rows:                     # a judged query in no part: -c's placeholder, no ties
                p, r = rows[qid]
                v[i] = stored[p][m][r]
        values[m] = _result(plain, v, requests, options, qrels)
    return TieAwareEvaluation(plain, values, combine_sources(_last_pass(sources)) if mode == "report" else None,
                              groups)


def _last_pass(parts: list[tuple[set, object]]) -> list:
    """The sources of the parts of the engine's last pass over the run: a streamed run found interleaved is
    read again, shard by shard, and every query of the first pass comes again in a later part."""
    seen: set = set()
    kept = []
    for qids, src in reversed(parts):
        if not qids & seen:
            kept.append(src)
            seen |= qids
    return kept[::-1]


def _result(plain: EvalResult, values: np.ndarray, requests, options: EvalOptions, qrels) -> EvalResult:
    kinds = dict(plain.kinds)
    res = dataclasses.replace(plain, values=values, kinds=kinds, summary={})
    res.summary = _summarise(res, requests, options.complete or options.missing == "zero", qrels)
    for j, c in enumerate(res.columns):           # a count whose expectation is fractional prints as a double
        if kinds[c] == "long":
            col = np.append(values[:, j], res.summary.get(c, 0.0))
            if not np.all(np.isnan(col) | (col == np.round(col))):
                kinds[c] = "double"
    return res


def refuse(engine: str = "local", *, zscores: bool = False, cross_check: bool = False, rel_format: str = "qrels") -> None:
    """What tie-aware values do not combine with, refused before anything is read."""
    if engine != "local":
        raise InputError(f"--tie-aware: the {engine} engine does not compute tie-aware values", fix=f"use {ENGINES_FIX}")
    if zscores:
        raise InputError("--tie-aware with -Z: z-scores of tie-aware values are not computed",
                         fix="leave out -Z, or --tie-aware")
    if cross_check:
        raise InputError("--tie-aware with --cross-check: ir_measures computes one order's values only",
                         fix="leave out --cross-check, or --tie-aware")
    if rel_format != "qrels":
        raise InputError(f"--tie-aware with -R {rel_format}: preference measures have no tie-aware values",
                         fix="leave out -R, or --tie-aware")


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
            from .measures.ties import MAX_DECIMALS
            places = f"more than {MAX_DECIMALS} decimal places"
        else:
            places = f"{r['score_decimals']} decimal place{'' if r['score_decimals'] == 1 else 's'} at most"
        out.append(f"  scores carry {r['score_digits']} significant digits at most, {places}"
                   f"{'; every score reads as a float32' if r['source'] == 'float32' else ''}\n")
        out.append("  measure                 trec_eval  expected     worst      best  largest query range\n")
        for m in r["measures"]:
            where = f"{m['largest_query_range']:.4f} ({m['largest_query']})" if m["largest_query"] else "0.0000"
            out.append(f"  {m['measure']:<22}{_num(m['trec_eval']):>11}{_num(m['expected']):>10}"
                       f"{_num(m['worst']):>10}{_num(m['best']):>10}  {where}\n")
        if r["moves_most"]:
            out.append(f"  queries that move most between worst and best order (top {REPORT_TOP}):\n")
            for mv in r["moves_most"]:
                out.append(f"    {mv['qid']:<12} {mv['measure']:<22} {mv['worst']:.4f} - {mv['best']:.4f} "
                           f"(range {mv['range']:.4f}; trec_eval {mv['trec_eval']:.4f})\n")
        else:
            out.append("  no query's value depends on the order of its tied documents\n")
    return "".join(out)


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
    from .engines.stream import memory_limit_of
    from .output.records import write
    from .stages import say

    limit = memory_limit_of(memory_limit)
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
    cols = [c for c in res.columns if res.kinds[c] in ("double", "long")]
    df = res.to_pandas()[["qid"] + cols]
    df = pd.concat([df, pd.DataFrame([{"qid": "all", **{c: res.summary.get(c) for c in cols}}])], ignore_index=True)
    if not per_query:
        df = df[df["qid"] == "all"].reset_index(drop=True)
    return df
