"""evaluate(): read -> rank once -> kernels -> per-query values -> summary.

Semantics are trec_eval 10.0's unless an option names another convention.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import InputError
from .measures.ranking import RankedJudged, build_view, seq_sum
from .measures.registry import Request, resolve
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
    zscores: dict | None = None    # -Z: {qid: {measure: (mean, stddev)}}


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
    o = options or EvalOptions()
    view = build_view(qrels, run, o, source=source, warn=warn)
    complete = o.complete or o.missing == "zero"
    if view.Q == 0:
        raise InputError("no queries with both results and relevance judgments", path=source,
                         fix="check that the run and the qrels use the same query ids")
    columns, blocks, kinds, strings, perq = [], [], {}, {}, set()
    for req in requests:
        m = req.measure
        if m.value == "runid":
            columns.append("runid")
            kinds["runid"] = "runid"
            blocks.append(np.full((view.Q, 1), np.nan))
            continue
        out = m.kernel(view, req.params)
        names = req.columns
        if m.value == "string":
            strings[names[0]] = out
            blocks.append(np.full((view.Q, 1), np.nan))
        else:
            arr = np.asarray(out, np.float64).reshape(view.Q, -1)
            blocks.append(arr)
        for n in names:
            kinds[n] = m.value
            if m.per_query:
                perq.add(n)
        columns.extend(names)
    values = np.concatenate(blocks, axis=1)
    if complete and view.missing.any():
        _placeholder_fixups(values, columns, strings, view.missing)
    if o.zscores is not None:
        values = _to_zscores(values, columns, kinds, view.qids, o.zscores)
    res = EvalResult(view, requests, columns, values, strings, {}, kinds, perq, o.zscores is not None)
    res.summary = _summarise(res, requests, complete, qrels, o)
    return res


def _placeholder_fixups(values, columns, strings, missing):
    """What trec_eval -c resets after scoring a missing query with its one-doc placeholder."""
    for j, c in enumerate(columns):
        if c == "num_ret" or c.startswith("utility") or c.startswith("unj") or c == "rbp_resid" or c.startswith("rbp_resid_"):
            values[missing, j] = 0.0
    for name, lst in strings.items():
        for i in np.flatnonzero(missing):
            lst[i] = ""


def _to_zscores(values, columns, kinds, qids, table):
    out = values.copy()
    for i, q in enumerate(qids):
        per = table.get(q)
        for j, c in enumerate(columns):
            if kinds[c] not in ("double", "long"):
                continue
            if per is None or c not in per:
                out[i, j] = MISSING_ZSCORE
                continue
            mean, sd = per[c]
            if sd:
                out[i, j] = (values[i, j] - mean) / sd
            else:
                out[i, j] = 0.0 if values[i, j] == mean else MISSING_ZSCORE
    return out


def _summarise(res: EvalResult, requests, complete: bool, qrels: Qrels, o: EvalOptions) -> dict[str, Any]:
    n = res.view.Q
    summary: dict[str, Any] = {}
    col = {c: j for j, c in enumerate(res.columns)}
    for req in requests:
        m = req.measure
        for name in req.columns:
            if m.summary == "none":
                if m.value == "runid":
                    summary[name] = res.view.runid
                continue
            v = res.values[:, col[name]]
            if m.summary == "count":
                summary[name] = float(n)
            elif m.summary == "sum":
                summary[name] = seq_sum(v)
                if name == "num_rel" and complete:
                    # trec_eval -c counts every judgment with grade > 0 in the qrels
                    summary[name] = float((qrels.table.column("grade").to_numpy() > 0).sum())
            elif m.summary == "gm":
                summary[name] = math.exp(seq_sum(v) / n)
            else:
                summary[name] = mean(v)
    return summary


def mean(values: np.ndarray) -> float:
    """trec_eval's average: per-query values added in query order, divided by the number of queries."""
    return seq_sum(values) / values.size


def read_zscores(path) -> dict:
    from .io import display_name, read_text
    out: dict = {}
    for no, line in enumerate(read_text(path).splitlines(), 1):
        f = line.split()
        if not f:
            continue
        if len(f) != 4:
            raise InputError("a z-score line is 'qid measure mean stddev'", path=display_name(path), line=no, text=line,
                             fix="write four fields per line")
        out.setdefault(f[0], {})[f[1]] = (float(f[2]), float(f[3]))
    return out


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

    Returns a DataFrame: one row per query (``qid``) and a final row ``qid == "all"`` with the summary.
    """
    import pandas as pd
    from .measures.irm import split_measures

    from .inputs import as_measures, as_qrels, as_run, split_options
    from .reading import warn_python

    trec_args, irm = split_measures(as_measures(measures))
    reading, options = split_options(options)
    opts = EvalOptions(**options)
    q, r = as_qrels(qrels), as_run(run, reading, qrels_source=qrels)
    frames = []
    if trec_args:
        res = evaluate_requests(q, r, resolve(trec_args), opts, warn=warn_python)
        frames.append(res)
    for group in irm:
        frames.append(group.evaluate(q, r, opts, warn=warn_python))
    df = None
    for res in frames:
        cols = [c for c in res.columns if res.kinds[c] in ("double", "long")]
        part = res.to_pandas()[["qid"] + cols]
        summ = {c: res.summary.get(c) for c in cols}
        part = pd.concat([part, pd.DataFrame([{"qid": "all", **summ}])], ignore_index=True)
        df = part if df is None else df.merge(part, on="qid", how="outer", sort=False)
    if not per_query:
        df = df[df["qid"] == "all"].reset_index(drop=True)
    return df
