"""evaluate(): read -> rank once -> kernels -> per-query values -> summary.

Semantics are trec_eval 10.0's unless an option names another convention.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .errors import InputError
from .measures.ranking import RankedJudged, build_view, seq_sum
from .measures.registry import EMPTY_IF_BARE, ZERO, ZERO_IF_BARE, Request, resolve
from .model import Qrels, Run

MISSING_ZSCORE = -1000000.0
MIN_GEO_MEAN = 0.00001


@dataclass
class EvalOptions:
    level: int = 1                 # -l: lowest grade that counts as relevant
    max_docs: int | None = None    # -M: ranks kept per query
    judged_only: bool = False      # -J
    complete: bool = False         # -c: every judged query counts; missing ones score 0
    missing: str = "skip"          # without -c: skip | zero | error | trec_eval (exit like 10.0)
    order: str = "score"           # score (trec_eval) | rank (trust the rank column)
    float32: bool = False          # scores as float32, like trec_eval 9.x / pytrec_eval
    num_docs_in_coll: int = 0      # -N
    zscores: Any = None            # -Z: a ZScores table (read_zscores)


@dataclass
class EvalResult:
    view: RankedJudged
    requests: list[Request]
    columns: list[str]
    values: np.ndarray                          # (Q, C) per-query values (NaN where a column is per-query-less)
    strings: dict[str, list[str]] = field(default_factory=dict)   # relstring columns
    summary: dict[str, Any] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)           # column -> double | long | string | runid
    per_query_columns: set[str] = field(default_factory=set)
    zscore: bool = False

    @property
    def qids(self) -> list[str]:
        return self.view.qids

    def to_pandas(self):
        import pandas as pd
        num = [c for c in self.columns if self.kinds[c] in ("double", "long")]
        df = pd.DataFrame(self.values[:, [self.columns.index(c) for c in num]], columns=num)
        df.insert(0, "qid", self.qids)
        return df


def evaluate_requests(qrels: Qrels, run: Run, requests: list[Request], options: EvalOptions | None = None,
                      source: str = "run", warn=None) -> EvalResult:
    """The one evaluation path, for trec_eval's and ir_measures' names alike: rank once, compute each
    request on the view it asks for (relevance level, judged docs only), then -c, -Z and the summary."""
    o = options or EvalOptions()
    base = build_view(qrels, run, replace(o, judged_only=False), source=source, warn=warn)
    complete = o.complete or o.missing == "zero"
    if base.Q == 0:
        raise InputError("no queries with both results and relevance judgments", path=source,
                         fix="check that the run and the qrels use the same query ids")
    views: dict[tuple, RankedJudged] = {}

    def view_at(judged: bool, level: int) -> RankedJudged:
        if (judged, level) not in views:       # one view per distinct (-J, level): the ranking itself is shared
            views[judged, level] = (base.judged_only() if judged else base).at_level(level)
        return views[judged, level]

    def view_for(req: Request) -> RankedJudged:
        return view_at(o.judged_only if req.judged_only is None else req.judged_only,
                       o.level if req.level is None else req.level)

    view = view_at(o.judged_only, o.level)      # the options' own view: qids, runid, missing queries
    columns, blocks, kinds, strings, perq = [], [], {}, {}, set()
    for req in requests:
        m = req.measure
        names = list(req.columns)
        if m.value == "runid":
            blocks.append(np.full((view.Q, 1), np.nan))
        else:
            out = m.kernel(view_for(req), req.params, **dict(req.options))
            if m.value == "string":
                strings[names[0]] = out
                blocks.append(np.full((view.Q, 1), np.nan))
            else:
                blocks.append(np.asarray(out, np.float64).reshape(view.Q, -1))
            if complete and view.missing.any():
                _placeholder(req, blocks[-1], strings.get(names[0]), view.missing)
        for n in names:
            kinds[n] = m.value
            if req.per_query:
                perq.add(n)
        columns.extend(names)
    values = np.concatenate(blocks, axis=1)
    if o.zscores is not None:
        values = _to_zscores(values, columns, kinds, view.qids, o.zscores)
    res = EvalResult(view, requests, columns, values, strings, {}, kinds, perq, o.zscores is not None)
    res.summary = _summarise(res, requests, complete, qrels)
    return res


def _placeholder(req: Request, block: np.ndarray, strings: list[str] | None, missing: np.ndarray) -> None:
    """What a judged query missing from the run contributes under -c, as the measure declares it: the
    kernel's value on trec_eval's one-doc placeholder, or the reset trec_eval applies afterwards."""
    rule = req.measure.placeholder
    if rule == ZERO or (rule == ZERO_IF_BARE and req.bare):
        block[missing] = 0.0
    elif rule == EMPTY_IF_BARE and req.bare and strings is not None:
        for i in np.flatnonzero(missing):
            strings[i] = ""


def _to_zscores(values, columns, kinds, qids, table: "ZScores"):
    out = values.copy()
    numeric = [j for j, c in enumerate(columns) if kinds[c] in ("double", "long")]
    for i, q in enumerate(qids):
        qi = table.query(q)
        for j in numeric:
            found = None if qi is None else table.measure(qi, columns[j])
            if found is None:
                out[i, j] = MISSING_ZSCORE
                continue
            mean, sd = found
            if sd:
                out[i, j] = (values[i, j] - mean) / sd
            else:
                out[i, j] = 0.0 if values[i, j] == mean else MISSING_ZSCORE
    return out


def _summarise(res: EvalResult, requests, complete: bool, qrels: Qrels) -> dict[str, Any]:
    n = res.view.Q
    summary: dict[str, Any] = {}
    col = {c: j for j, c in enumerate(res.columns)}
    for req in requests:
        m = req.measure
        for name in req.columns:
            if req.summary == "none":
                if m.value == "runid":
                    summary[name] = res.view.runid
                continue
            v = res.values[:, col[name]]
            if req.summary == "count":
                summary[name] = float(n)
            elif req.summary == "sum":
                summary[name] = seq_sum(v)
                if m.complete_sum_from_qrels and req.bare and complete:
                    # trec_eval -c counts every judgment with grade > 0 in the qrels
                    summary[name] = float((qrels.table.column("grade").to_numpy() > 0).sum())
            elif req.summary == "gm":
                summary[name] = math.exp(seq_sum(v) / n)
            else:
                summary[name] = mean(v)
    return summary


def mean(values: np.ndarray) -> float:
    """trec_eval's average: per-query values added in query order, divided by the number of queries."""
    return seq_sum(values) / values.size


@dataclass
class ZScores:
    """-Z's table, looked up as trec_eval 10.0 does: lines sorted by (qid, measure) on the bytes, then a
    binary search whose upper bound is one past the end, so a name greater than every name of its
    query is compared with the first line of the next query (and matches if that is its name)."""

    qids: list[str]                 # distinct, sorted
    first: list[int]                # index in ``lines`` of each query's first line
    count: list[int]
    lines: list[tuple[str, float, float]]    # (measure, mean, stddev) in (qid, measure) order

    def query(self, qid: str) -> int | None:
        return _te_search(lambda i: self.qids[i], 0, len(self.qids), len(self.qids), qid)

    def measure(self, q: int, measure: str) -> tuple[float, float] | None:
        i = _te_search(lambda i: self.lines[i][0], self.first[q], self.count[q], len(self.lines), measure)
        return None if i is None else self.lines[i][1:]

    def find(self, qid: str, measure: str) -> tuple[float, float] | None:
        q = self.query(qid)
        return None if q is None else self.measure(q, measure)


def _bytes(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")


def _te_search(name_at, first: int, count: int, total: int, key: str) -> int | None:
    """convert_zscores.c's binary search over entries first .. first+count *inclusive* (its upper bound
    is one past the end); an index past the whole table finds nothing (trec_eval reads stray memory)."""
    want = _bytes(key)
    lo, hi = 0, count
    while lo <= hi:
        cur = (lo + hi) // 2
        if first + cur >= total:
            return None
        name = _bytes(name_at(first + cur))
        if want < name:
            hi = cur - 1
        elif want > name:
            lo = cur + 1
        else:
            return first + cur
    return None


def read_zscores(path) -> ZScores:
    from .formats.common import atof
    from .io import display_name, read_text
    rows = []
    for no, line in enumerate(read_text(path).splitlines(), 1):
        f = line.split()
        if not f:
            continue
        if len(f) != 4:
            raise InputError("a z-score line is 'qid measure mean stddev'", path=display_name(path), line=no, text=line,
                             fix="write four fields per line")
        for text in f[2:]:
            try:
                float(text)
            except ValueError:
                raise InputError(f"{text!r} is not a number", path=display_name(path), line=no, text=line,
                                 fix="write the mean and standard deviation as numbers") from None
        rows.append((_bytes(f[0]), _bytes(f[1]), f[0], f[1], atof(f[2]), atof(f[3])))
    if not rows:                                  # trec_eval: "Cannot read zscores file"
        raise InputError("the z-score file holds no 'qid measure mean stddev' line", path=display_name(path),
                         fix="give -Z the file of per-query means and standard deviations")
    rows.sort(key=lambda r: (r[0], r[1]))          # stable, as glibc's merge sort behind qsort
    qids, first, count, lines = [], [], [], []
    for qb, _, q, meas, mu, sd in rows:
        if not qids or qids[-1] != q:
            qids.append(q)
            first.append(len(lines))
            count.append(0)
        count[-1] += 1
        lines.append((meas, mu, sd))
    return ZScores(qids, first, count, lines)


# ------------------------------------------------------------------ the Python API
def evaluate(qrels, run, measures=("map", "ndcg_cut.10", "recall.100", "recip_rank"), *, per_query: bool = True,
             **options):
    """Evaluate ``run`` against ``qrels``.  Both may be paths (any format, CSV, Parquet, ranx JSON; qrels also
    ``irds:<dataset-id>``), DataFrames (PyTerrier's or ir_measures' columns), ``{qid: {docid: value}}`` dicts,
    ranx objects, ir_measures namedtuples, ``(qid, docid, value)`` tuples or model objects (see
    :mod:`treckit.inputs`).  ``measures`` takes trec_eval names (``ndcg_cut.10``), ir_measures names
    (``nDCG@10``) and ir_measures measure objects.  ``options`` are :class:`EvalOptions`' and the reading
    options of :class:`treckit.reading.RunReading` (``order``, ``gold``, ``tsv_third`` ...), as on the
    command line; warnings are :class:`treckit.InputWarning` (the :mod:`warnings` module).
    Every measure asked for is returned (``["P.5", "P.10"]`` gives P_5 and P_10, as pytrec_eval does).

    Returns a DataFrame: one row per query (``qid``) and a final row ``qid == "all"`` with the summary.
    """
    import pandas as pd

    from .inputs import as_measures, as_qrels, as_run, split_options
    from .reading import warn_python

    reading, options = split_options(options)
    opts = EvalOptions(**options)
    requests = resolve(as_measures(measures), first_params_win=False)
    q, r = as_qrels(qrels), as_run(run, reading, qrels_source=qrels)
    res = evaluate_requests(q, r, requests, opts, warn=warn_python)
    cols = [c for c in res.columns if res.kinds[c] in ("double", "long")]
    df = res.to_pandas()[["qid"] + cols]
    df = pd.concat([df, pd.DataFrame([{"qid": "all", **{c: res.summary.get(c) for c in cols}}])], ignore_index=True)
    if not per_query:
        df = df[df["qid"] == "all"].reset_index(drop=True)
    return df
