"""evaluate(): read -> rank once -> kernels -> per-query values -> summary.

Semantics are trec_eval 10.0's unless an option names another convention.
"""
from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

from ..dependencies import deferred
from ..console.errors import InputError
from ..console.messages import warn_python
from ..fast.groups import id_runs
from ..inputs.formats.common import atof, numbered_lines
from ..inputs.objects import as_measures, as_qrels, as_run
from ..inputs.options import RunReading
from ..inputs.sources import display_name
from ..measures import compat, subtopics
from ..ranking.judged import RankedJudged, RunFacts, evaluated_queries, rank_and_judge, sanity_warnings, seq_sum
from ..measures.registry import EMPTY_IF_BARE, ZERO, ZERO_IF_BARE, Request, column_of, resolve
from ..model import Qrels, Run

np = deferred("numpy")

MISSING_ZSCORE = -1000000.0
MIN_GEO_MEAN = 0.00001


@dataclass
class EvalOptions:
    level: int = 1                 # -l: lowest grade that counts as relevant
    max_docs: int | None = None    # -M: ranks kept per query
    judged_only: bool = False      # -J
    complete: bool = False         # -c: every judged query counts; missing ones score 0
    missing: str = "skip"          # without -c: skip | zero | error | trec_eval (exit like 10.0)
    rank_by: str = "score"         # score (trec_eval) | rank (trust the rank column)
    float32: bool = False          # scores as float32, like trec_eval 9.x / pytrec_eval
    num_docs_in_coll: int = 0      # -N
    zscores: Any = None            # -Z: a ZScores table (read_zscores)

    @property
    def order(self) -> str:
        """Deprecated name of :attr:`rank_by` (``order`` is the run reading's: auto, desc, asc, given)."""
        warnings.warn(_ORDER_RENAMED, DeprecationWarning, stacklevel=2)
        return self.rank_by

    @order.setter
    def order(self, value: str) -> None:
        warnings.warn(_ORDER_RENAMED, DeprecationWarning, stacklevel=2)
        self.rank_by = value


_ORDER_RENAMED = ("EvalOptions.order is now EvalOptions.rank_by (score | rank); the name order is the run reading's "
                  "(auto, desc, asc, given), and EvalOptions(order=...) goes in the next release")


def _taking_order(init):
    """``EvalOptions.__init__`` that takes the deprecated keyword ``order`` for ``rank_by``, warning."""
    @functools.wraps(init)
    def __init__(self, *args, order: str | None = None, **kwargs):
        if order is not None:
            warnings.warn(_ORDER_RENAMED, DeprecationWarning, stacklevel=2)
            if "rank_by" in kwargs:
                raise TypeError("EvalOptions: give rank_by, not both rank_by and its old name order")
            kwargs["rank_by"] = order
        init(self, *args, **kwargs)
    return __init__


EvalOptions.__init__ = _taking_order(EvalOptions.__init__)     # type: ignore[method-assign]


@dataclass
class EvalResult:
    view: RankedJudged | None                   # the whole run's ranking, when it was evaluated in one piece
    requests: list[Request]
    columns: list[str]
    values: np.ndarray                          # (Q, C) per-query values (NaN where a column is per-query-less)
    strings: dict[str, list[str]] = field(default_factory=dict)   # relstring columns
    summary: dict[str, Any] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)           # column -> double | long | string | runid
    per_query_columns: set[str] = field(default_factory=set)
    zscore: bool = False
    qids: list[str] | None = None               # evaluated queries, in trec_eval's order (default: the view's)
    runid: str | None = None                    # the run tag trec_eval reports (default: the view's)

    def __post_init__(self) -> None:
        if self.qids is None:
            self.qids = self.view.qids
        if self.runid is None:
            self.runid = self.view.runid

    @property
    def Q(self) -> int:
        return len(self.qids)

    def per_query(self, measure) -> dict[str, float]:
        """{qid: value} of one measure for every evaluated query: ``measure`` a name in either syntax (``P.10``,
        ``nDCG@10``) or a Request, its column found through the registry (:func:`~treckit.measures.registry.column_of`)."""
        values = self.values[:, self.columns.index(column_of(self.requests, measure))]
        return dict(zip(self.qids, values.astype("float64").tolist()))

    def per_query_numbers(self) -> tuple[list[str], np.ndarray]:
        """(columns, (Q, C) values) of every numeric measure with per-query values, in the printed order."""
        keep = [j for j, c in enumerate(self.columns) if c in self.per_query_columns and self.kinds[c] in ("double", "long")]
        return [self.columns[j] for j in keep], self.values[:, keep]

    def to_pandas(self):
        import pandas as pd
        num = [c for c in self.columns if self.kinds[c] in ("double", "long")]
        df = pd.DataFrame(self.values[:, [self.columns.index(c) for c in num]], columns=num)
        df.insert(0, "qid", self.qids)
        return df


@dataclass
class PartValues:
    """The per-query values of one part of a run (a set of whole queries) against the judgments of those
    queries: every judged query of the part, answered by the run or not (those carry -c's placeholder
    values), and what :func:`merge_parts` needs to apply the rules that look at the whole run.  Small and
    picklable (the view is kept only when asked, for the in-memory path)."""

    qids: list[str]                  # the part's judged queries, in byte order
    answered: np.ndarray             # (Q,) bool: the run has lines for it
    values: np.ndarray               # (Q, C)
    strings: dict[str, list[str]]    # relstring columns
    facts: RunFacts | None           # for the sanity warnings (None: not gathered)
    lines: int = 0                   # run lines in the part
    view: RankedJudged | None = None


def columns_of(requests: list[Request]) -> tuple[list[str], dict[str, str], set[str]]:
    """(columns, kind of each, the per-query ones) that ``requests`` print."""
    columns, kinds, perq = [], {}, set()
    for req in requests:
        for n in req.columns:
            kinds[n] = req.measure.value
            if req.per_query:
                perq.add(n)
        columns.extend(req.columns)
    return columns, kinds, perq


def evaluate_requests(qrels: Qrels, run: Run, requests: list[Request], options: EvalOptions | None = None,
                      source: str = "run", warn=None) -> EvalResult:
    """The one evaluation path, for trec_eval's and ir_measures' names alike: rank once, compute each
    request on the view it asks for (relevance level, judged docs only), then -c, -Z and the summary.
    In memory, the run is one part (:func:`evaluate_part`, :func:`merge_parts`); the engines evaluate
    larger runs in several."""
    part = evaluate_part(qrels, run, requests, options, source, sanity=warn is not None, keep_view=True)
    return merge_parts([part], qrels, requests, options, runid=run.tag, source=source, warn=warn)


def evaluate_objects(qrels, run, measures: list[str], *, warn=None, order: str = "auto", **options) -> EvalResult:
    """``run`` against ``qrels`` in memory, both in any form :mod:`treckit.inputs.objects` takes (model objects,
    dicts, DataFrames ...), read as :func:`treckit.evaluate` reads them (``order``: the reading's; ``options``:
    :class:`EvalOptions`'; warnings to ``warn``, by default :class:`treckit.InputWarning`): the library's own
    callers (test sets, fusion tuning) evaluate through it."""
    warn = warn or warn_python
    requests = resolve(as_measures(measures), first_params_win=False)
    return evaluate_requests(as_qrels(qrels), as_run(run, RunReading(order=order), qrels_source=qrels, warn=warn),
                             requests, EvalOptions(**options), warn=warn)


def evaluate_part(qrels: Qrels, run: Run, requests: list[Request], options: EvalOptions | None = None,
                  source: str = "run", *, row_offset: int = 0, sanity: bool = True,
                  keep_view: bool = False) -> PartValues:
    """Per-query values of ``run`` (or a part of a run: a set of whole queries) for every query of
    ``qrels``, which must hold every judgment of the run's queries (it may hold more queries: those
    the run does not answer get -c's placeholder values).  ``row_offset``: the part's first line in
    the whole run; ``sanity``: gather the facts of the sanity warnings."""
    o = options or EvalOptions()
    listed = [r for r in requests if r.measure.ties == "listed"]
    if listed and o.max_docs is not None:
        raise InputError(f"-M {o.max_docs} with {listed[0].text}: -M keeps the first documents of trec_eval's order, "
                         "while the C/W/L measures rank score ties in the run's line order (as cwl-eval does), so "
                         "the documents kept would not be the first of theirs",
                         fix=f"evaluate {listed[0].text} without -M (cwl-eval reads at most 1000 ranks), in a treckit "
                             "eval of its own")
    diverse = subtopics.asked(requests)
    subtopics.refuse_cut(requests, o.max_docs)
    judged = subtopics.judged_docs(qrels, requests) if diverse else qrels
    base, facts = rank_and_judge(judged, run, replace(o, judged_only=False), source=source, facts=sanity,
                                 row_offset=row_offset, listed_ties=bool(listed),
                                 ascending_ties=any(r.measure.ties == "ascending" for r in requests))
    # the measures that read the qrels and the run themselves, beside the shared ranking
    whole = {**(subtopics.blocks(qrels, run, base, diverse, o) if diverse else {}),
             **compat.blocks(qrels, run, base, compat.asked(requests), o)}
    views: dict[tuple, RankedJudged] = {}

    def view_at(judged: bool, level: int) -> RankedJudged:
        if (judged, level) not in views:       # one view per distinct (-J, level): the ranking itself is shared
            views[judged, level] = (base.judged_only() if judged else base).at_level(level)
        return views[judged, level]

    def view_for(req: Request) -> RankedJudged:
        return view_at(o.judged_only if req.judged_only is None else req.judged_only,
                       o.level if req.level is None else req.level)

    view = view_at(o.judged_only, o.level)      # the options' own view
    if view.Q == 0:                             # a part without judged queries: nothing to compute
        columns, kinds, _ = columns_of(requests)
        return PartValues([], np.zeros(0, bool), np.zeros((0, len(columns))),
                          {c: [] for c in columns if kinds[c] == "string"}, facts, run.table.num_rows,
                          view if keep_view else None)
    blocks, strings = [], {}
    for req in requests:
        m = req.measure
        names = list(req.columns)
        if m.value == "runid":
            blocks.append(np.full((view.Q, 1), np.nan))
            continue
        out = whole[req.key] if req.key in whole else m.kernel(view_for(req), req.params, **dict(req.options))
        if m.value == "string":
            strings[names[0]] = out
            blocks.append(np.full((view.Q, 1), np.nan))
        else:
            blocks.append(np.asarray(out, np.float64).reshape(view.Q, len(names)))
        if view.missing.any():                 # rows dropped later unless -c / --missing zero keeps them
            placeholder(req, blocks[-1], strings.get(names[0]), view.missing)
    values = np.concatenate(blocks, axis=1) if blocks else np.zeros((view.Q, 0))
    return PartValues(view.qids, ~view.missing, values, strings, facts, run.table.num_rows,
                      view if keep_view else None)


def merge_parts(parts: list[PartValues], qrels: Qrels, requests: list[Request], options: EvalOptions | None = None,
                *, runid: str, source: str = "run", warn=None) -> EvalResult:
    """The evaluation of a whole run from the values of its parts (each query in one part; judged
    queries in no part count as not in the run): rows in trec_eval's order, the sanity warnings,
    --missing and -c, the no-shared-query error, -Z, and the summary over queries in that order."""
    o = options or EvalOptions()
    complete = o.complete or o.missing == "zero"
    columns, kinds, perq = columns_of(requests)
    qrel_qids = sorted(id_runs(qrels.table.column("qid"))[2], key=_bytes)
    where = _part_of_each_query(parts)
    uncovered = [q for q in qrel_qids if q not in where]
    if uncovered and complete:                 # judged queries no part holds: -c's placeholder values
        parts = _with_placeholder_part(parts, where, qrels, uncovered, requests, o, source)
    answered = _answered_queries(parts, where, qrel_qids)
    if warn is not None:
        facts = RunFacts.combine([p.facts for p in parts])
        sanity_warnings(warn, source, qrels, qrel_qids, answered, facts)
    missing_names = [q for q, a in zip(qrel_qids, answered.tolist()) if not a]
    evaluated = evaluated_queries(answered, o, missing_names, source, warn)
    qids = [q for q, e in zip(qrel_qids, evaluated.tolist()) if e]
    if not qids:
        raise InputError("No overlapping query IDs between ground truth and run file (no queries with both results "
                         "and relevance judgments)", path=source,
                         fix="check that the run and the qrels use the same query ids (same format, no extra whitespace)")
    rows = _rows_of_queries(parts, where, qids)
    values, strings = _gathered_rows(parts, rows, len(columns))
    if o.zscores is not None:
        values = to_zscores(values, columns, kinds, qids, o.zscores)
    res = EvalResult(_whole_run_view(parts, evaluated), requests, columns, values, strings, {}, kinds, perq,
                     o.zscores is not None, qids=qids, runid=runid)
    res.summary = summarise_result(res, requests, complete, qrels)
    return res


def _part_of_each_query(parts: list[PartValues]) -> dict[str, tuple[int, int]]:
    """{qid: (part, row in the part)}; a query evaluated in two parts is a defect of the engine that split the run."""
    where: dict[str, tuple[int, int]] = {}
    for p, part in enumerate(parts):
        for i, q in enumerate(part.qids):
            if where.setdefault(q, (p, i)) != (p, i):
                raise RuntimeError(f"query {q!r} was evaluated in two parts of the run")
    return where


def _with_placeholder_part(parts: list[PartValues], where: dict[str, tuple[int, int]], qrels: Qrels,
                          uncovered: list[str], requests: list[Request], options: EvalOptions,
                          source: str) -> list[PartValues]:
    """``parts`` and one more: the -c placeholder values of the judged queries ``uncovered`` no part holds
    (``where`` learns their rows)."""
    extra = evaluate_part(restrict_qrels(qrels, uncovered), empty_run(), requests, options, source, sanity=False)
    parts = parts + [extra]
    where.update({q: (len(parts) - 1, i) for i, q in enumerate(extra.qids)})
    return parts


def _answered_queries(parts: list[PartValues], where: dict[str, tuple[int, int]], qrel_qids: list[str]) -> np.ndarray:
    """Which of the judged queries ``qrel_qids`` the run answers (a (Q,) bool mask)."""
    return np.array([q in where and bool(parts[where[q][0]].answered[where[q][1]]) for q in qrel_qids], bool)


def _rows_of_queries(parts: list[PartValues], where: dict[str, tuple[int, int]], qids: list[str]) -> np.ndarray:
    """The row of each query of ``qids`` in the parts' values stacked in order."""
    first = np.cumsum([0] + [len(p.qids) for p in parts])
    return np.array([first[where[q][0]] + where[q][1] for q in qids], np.int64)


def _gathered_rows(parts: list[PartValues], rows: np.ndarray,
                   n_columns: int) -> tuple[np.ndarray, dict[str, list[str]]]:
    """The values and the string columns of the parts stacked in order, at ``rows``."""
    values = np.concatenate([p.values for p in parts])[rows] if parts else np.zeros((0, n_columns))
    strings = {c: [s for p in parts for s in p.strings[c]] for c in parts[0].strings}
    strings = {c: [col[i] for i in rows.tolist()] for c, col in strings.items()}
    return values, strings


def _whole_run_view(parts: list[PartValues], evaluated: np.ndarray) -> RankedJudged | None:
    """The ranking of the evaluated queries when the run was evaluated in one piece that kept it, else None."""
    if len(parts) == 1 and parts[0].view is not None:
        return parts[0].view.select(evaluated)
    return None


def empty_run() -> Run:
    """A run without lines (the part of the judged queries a run does not answer)."""
    return Run.from_columns([], [], [], rank=[])


def restrict_qrels(qrels: Qrels, qids) -> Qrels:
    """The judgments of the queries ``qids`` (in the qrels' order, with their ids' written texts)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = qrels.table
    keep = pc.is_in(t.column("qid"), value_set=pa.array(list(qids), pa.string()))
    wanted = set(qids)
    return Qrels(t.filter(keep), {k: v for k, v in qrels.written.items() if k[0] in wanted})


def placeholder(req: Request, block: np.ndarray, strings: list[str] | None, missing: np.ndarray) -> None:
    """What a judged query missing from the run contributes under -c, as the measure declares it: the
    kernel's value on trec_eval's one-doc placeholder, or the reset trec_eval applies afterwards."""
    rule = req.measure.placeholder
    if rule == ZERO or (rule == ZERO_IF_BARE and req.bare):
        block[missing] = 0.0
    elif rule == EMPTY_IF_BARE and req.bare and strings is not None:
        for i in np.flatnonzero(missing):
            strings[i] = ""


def to_zscores(values, columns, kinds, qids, table: "ZScores"):
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


def summarise_result(res: EvalResult, requests, complete: bool, qrels: Qrels) -> dict[str, Any]:
    n = res.Q
    summary: dict[str, Any] = {}
    col = {c: j for j, c in enumerate(res.columns)}
    for req in requests:
        m = req.measure
        for name in req.columns:
            if req.summary == "none":
                if m.value == "runid":
                    summary[name] = res.runid
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
    rows = []
    for no, line in numbered_lines(path):
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
