"""Run conversion: from any reader's Run to the canonical TREC run that trec_eval reads back as intended.

Rules (each documented with an example in docs/formats.md):

* **order** -- ``desc`` (higher score first), ``asc`` (lower first), ``given`` (list/rank order),
  ``auto``: per query, scores that are all <= 0 with at least one < 0 are taken as negated
  (QUEST's BM25 writes -bm25, non-matching docs score 0.0) and ranked ascending; other
  queries descending.
* **written scores** reproduce the intended order under trec_eval's sort (score
  descending, then docno descending; the rank column ignored): ascending queries are
  written negated back to positive; ``given`` keeps the scores when they already agree
  with the order, else writes rank-derived scores ``n, n-1, ..., 1``.
* **ties** (equal scores inside a query) are counted and reported; trec_eval breaks them
  by docno descending on the bytes of the file, and the output ranks say so: the order is
  :mod:`treckit.ranking.order`'s, on each id's written form (``a b`` is written ``a%20b``, which
  ranks above ``a!``; an id read from a TREC file keeps its text).  ``ties="break"`` keeps the
  input order among tied docs instead, by writing rank-derived scores; ``ties="docid-asc"``
  orders tied docs by doc id ascending (the convention of some older evaluators, on the ids
  themselves), likewise.
* **duplicates** (same qid and docid): ``error`` (default), ``keep-first``, ``keep-max``, ``keep-last``.
* **depth**: keep the top ``depth`` docs of each query.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..dependencies import deferred
from ..console.errors import InputError
from ..console.spelling import pass_options, spell
from ..model import Run, run_schema
from ..fast.groups import group_order, id_runs, spread
from ..fast.arrow import repeated_column
from ..fast.parallel import numbers
from ..fast.repeats import first_repeat, pair_keys, suspects
from . import order as trec_order
from ..fast.strings import run_starts, take
from . import DUPLICATES, ORDERS, TIES, TIES_SETTLED
from .order import DocTexts

np = deferred("numpy")
pa = deferred("pyarrow")

Order = Literal[ORDERS]
Ties = Literal[TIES]
Duplicates = Literal[DUPLICATES]


@dataclass
class ConversionReport:
    queries: int = 0
    docs: int = 0
    negated_queries: int = 0
    tied_queries: int = 0
    tied_docs: int = 0
    duplicates_dropped: int = 0
    depth_dropped: int = 0
    rank_derived_queries: int = 0
    notes: list[str] = field(default_factory=list)
    ties: str = "keep"                   # the policy the tied docs were ordered by

    def lines(self) -> list[str]:
        out = [f"{self.queries} queries, {self.docs} docs written"]
        if self.negated_queries:
            out.append(f"{self.negated_queries} queries had scores all <= 0 and were treated as negated "
                       "(ranked most negative first, written back as positive scores)")
        if self.tied_queries:
            how = {"keep": "trec_eval orders them by docno descending (use --break-ties to keep the input order instead)",
                   "break": "they keep their input order (--break-ties)",
                   "docid-asc": "they are ordered by doc id ascending (--ties docid-asc)"}[self.ties]
            out.append(f"{self.tied_docs} docs in {self.tied_queries} queries share a score with another doc of their "
                       f"query; " + spell(how))
        if self.duplicates_dropped:
            out.append(f"{self.duplicates_dropped} duplicate (qid, docid) lines dropped")
        if self.depth_dropped:
            out.append(f"{self.depth_dropped} docs below the depth cut dropped")
        if self.rank_derived_queries:
            out.append(f"{self.rank_derived_queries} queries written with rank-derived scores (n..1)")
        return out + self.notes


def convert_run(run: Run, *, order: Order = "auto", ties: Ties = "keep", duplicates: Duplicates = "error",
                depth: int | None = None, run_name: str | None = None, source: str = "run",
                raw_ids: bool = False) -> tuple[Run, ConversionReport]:
    """The run in its intended order, with the scores and ranks to write (see the module's rules).
    Ties are ordered as trec_eval will order them in the written file: on the ids' written form
    (:mod:`treckit.ranking.order`), or with ``raw_ids`` (the file will hold the ids unescaped) on the ids."""
    if order not in ORDERS:
        raise InputError(f"unknown order {order!r}", fix=f"use one of {', '.join(ORDERS)}")
    if duplicates not in DUPLICATES:
        raise InputError(f"unknown duplicates policy {duplicates!r}", fix=f"use one of {', '.join(DUPLICATES)}")
    if ties not in ("keep", "break", "docid-asc"):
        raise InputError(f"unknown ties policy {ties!r}", fix="use keep, break or docid-asc")
    if depth is not None and depth < 1:
        raise InputError(f"depth must be at least 1, got {depth}", fix="pass a positive --depth")
    t = run.table
    if t.num_rows == 0:
        raise InputError("the run has no documents", path=source, fix="check the input")
    from concurrent.futures import ThreadPoolExecutor

    def texts(table: pa.Table) -> DocTexts:          # the ids' written form: Run.written keeps by id
        return DocTexts(table.column("docid").combine_chunks(), table.column("qid"), run.written, not raw_ids)

    codes, listed, ids = _query_layout(t)
    report = ConversionReport(ties=ties)
    # the check for repeated (query, doc) pairs runs beside the ordering (both spread their numpy work
    # over the cores); the ordering is only redone in the rare case that a keep-* policy drops repeats
    with ThreadPoolExecutor(max_workers=1) as pool:
        repeated = pool.submit(_has_repeat, t, codes, listed)
        out = _ordered(t, codes, listed, ids, order, ties, depth, run_name, report, texts(t))
        has_repeat = repeated.result()
    if has_repeat:
        report = ConversionReport(ties=ties)
        t = _drop_duplicates(t, codes, duplicates, report, source)
        codes, listed, ids = _query_layout(t)
        out = _ordered(t, codes, listed, ids, order, ties, depth, run_name, report, texts(t))
    report.queries = len(ids)
    report.docs = out.num_rows
    if run.notes.get("given_order_queries"):
        report.notes.append(f"{run.notes['given_order_queries']} queries had no scores: their list order is the ranking")
    if run.notes.get("joined_by_query_text"):
        report.notes.append(f"{run.notes['joined_by_query_text']} queries had no id and were matched to the gold file by query text")
    settled = {TIES_SETTLED: True} if order == "given" or ties in ("break", "docid-asc") else {}
    return Run(out, run_name, notes=settled, written=run.written), report


def _query_layout(t: pa.Table) -> tuple[np.ndarray, np.ndarray | None, list[str]]:
    """(query code of each row, first row of each query when each query's rows are together,
    the query ids by code)."""
    starts, run_code, ids = id_runs(t.column("qid"))
    return spread(run_code, starts, t.num_rows), (starts if run_code.size == len(ids) else None), ids


def _ordered(t: pa.Table, codes: np.ndarray, listed: np.ndarray | None, ids: list[str], order: str, ties: str,
             depth: int | None, run_name: str | None, report: ConversionReport, texts: DocTexts) -> pa.Table:
    """The rows in their intended order, with the scores and ranks to write (see the module's rules)."""
    import pyarrow.compute as pc     # not at import: a run evaluated as read needs none (start-up)
    n_queries = len(ids)
    grouped = listed is not None          # first-appearance codes: each query's rows together, in code order
    score = numbers(t.column("score"))
    # the score that ranks descending: negated for queries ranked ascending (+ 0.0 turns -0.0 into 0.0)
    if order == "auto":
        qmax, qmin = _max_min_by(codes, score, n_queries, listed)
        negated = (qmax <= 0) & (qmin < 0)
        report.negated_queries = int(negated.sum())
        effective = np.where(negated[codes], -score, score) + 0.0 if negated.any() else score + 0.0
    else:
        effective = (-score if order == "asc" else score) + 0.0
    docid = texts.docid                            # one chunk: taking rows from it is cheap
    if order == "given":
        given = t.column("rank").to_numpy()
        perm = np.lexsort((np.arange(codes.size), given, codes))
    elif ties == "break":
        given = t.column("rank").to_numpy()
        perm = np.lexsort((np.arange(codes.size), given, -effective, codes))
    elif ties == "docid-asc":           # on the ids themselves (rq_eval.py documents this rule)
        perm = pc.sort_indices(pa.table({"c": codes, "e": effective, "d": docid}),
                               sort_keys=[("c", "ascending"), ("e", "descending"), ("d", "ascending")]).to_numpy()
    else:
        perm = trec_order.order(codes, effective, texts, grouped)
    # every ordering sorts by query first, so queries already together stay where they are
    codes_s, eff_s = codes if grouped else codes[perm], effective[perm]
    starts = np.flatnonzero(np.r_[True, codes_s[1:] != codes_s[:-1]])
    counts = np.diff(np.r_[starts, codes_s.size])
    position = np.arange(codes_s.size)
    position -= np.repeat(starts, counts)
    same_q = codes_s[1:] == codes_s[:-1]
    tie_pair = same_q & (eff_s[1:] == eff_s[:-1])
    if tie_pair.any():
        in_tie = trec_order.tied_rows(tie_pair)
        report.tied_docs = int(in_tie.sum())
        tied_codes = codes_s[in_tie]                     # sorted by query: count the changes
        report.tied_queries = int(np.count_nonzero(tied_codes[1:] != tied_codes[:-1]) + 1)
    written = eff_s.copy()
    rank_derived = np.zeros(n_queries, bool)
    if order == "given" or (ties in ("break", "docid-asc") and report.tied_docs):
        # a query keeps its scores when trec_eval's order of them is the intended one: each row
        # above the next on score, or on a tie on its doc id's written form
        ok_pair = eff_s[:-1] > eff_s[1:]
        tied = np.flatnonzero(tie_pair)
        ok_pair[tied] = texts.greater(perm[tied], perm[tied + 1])
        bad_q = np.unique(codes_s[1:][same_q & ~ok_pair])
        rank_derived[bad_q] = True
        rd_rows = rank_derived[codes_s]
        written[rd_rows] = (np.repeat(counts, counts) - position)[rd_rows].astype(np.float64)
        report.rank_derived_queries = int(rank_derived.sum())
    keep = slice(None)
    if depth is not None:
        mask = position < depth
        report.depth_dropped = int((~mask).sum())
        keep = np.flatnonzero(mask)
    perm_k, written_k, position_k = perm[keep], written[keep], position[keep]
    identity = perm_k.size == codes.size and bool(np.all(perm_k[1:] > perm_k[:-1]))

    def reordered(col):
        if identity:
            return col
        if _single_value(col):                 # one value throughout (a run tag): only the length changes
            return col.slice(0, perm_k.size)
        return take(col, perm_k)

    qid = t.column("qid")
    # rows that only moved within their query leave the qid column as it was; otherwise the qids
    # are the (sorted) query codes over the ids, no strings taken
    if grouped and perm_k.size == codes.size:
        out_qid = qid
    else:
        out_qid = pa.DictionaryArray.from_arrays(pa.array(codes_s[keep], pa.int32()), pa.array(ids, pa.string()))
    tag_col = repeated_column(len(perm_k), run_name) if run_name else reordered(t.column("tag"))
    # qid and tag may stay dictionary-encoded: the writer decodes them once
    return pa.Table.from_arrays([out_qid, reordered(docid), pa.array(written_k + 0.0),
                                 pa.array(position_k + 1), tag_col], names=run_schema().names)


def _has_repeat(t: pa.Table, codes: np.ndarray, listed: np.ndarray | None) -> bool:
    """Whether some query lists a doc more than once (hashed keys nominate, strings decide)."""
    docid = t.column("docid")
    return first_repeat(suspects(pair_keys(docid, codes), listed), codes, docid) is not None


def _drop_duplicates(t: pa.Table, codes: np.ndarray, policy: str, report: ConversionReport, source: str) -> pa.Table:
    """Apply the duplicates policy to a run known to list some doc twice for a query."""
    import pyarrow.compute as pc     # not at import: a run evaluated as read needs none (start-up)
    n = t.num_rows
    key = pa.table({"c": codes, "d": t.column("docid"), "s": t.column("score"), "i": np.arange(n)})
    groups = key.group_by(["c", "d"]).aggregate([("i", "count")])
    if policy == "error":
        dup = groups.filter(pc.greater(groups.column("i_count"), 1))
        c0, d0, k0 = dup.column("c")[0].as_py(), dup.column("d")[0].as_py(), dup.column("i_count")[0].as_py()
        q0 = t.column("qid")[int(np.flatnonzero(codes == c0)[0])].as_py()
        raise InputError(f"duplicate document: query {q0!r} lists doc {d0!r} {k0} times "
                         f"({n - groups.num_rows} duplicate lines in all)", path=source,
                         fix="remove the repeats, or " + pass_options("run", "--duplicates keep-first|keep-max|keep-last"))
    sort_keys = [("c", "ascending"), ("d", "ascending")]
    if policy == "keep-max":
        sort_keys.append(("s", "descending"))
    sort_keys.append(("i", "descending" if policy == "keep-last" else "ascending"))
    perm = pc.sort_indices(key, sort_keys=sort_keys).to_numpy()
    c = codes[perm]
    d = take(key.column("d"), perm)
    new_group = np.r_[True, (c[1:] != c[:-1]) | pc.not_equal(d.slice(0, n - 1), d.slice(1)).to_numpy(zero_copy_only=False)]
    kept = np.sort(perm[new_group])
    report.duplicates_dropped = n - kept.size
    return t.take(pa.array(kept))


def _single_value(col) -> bool:
    """Whether a string or dictionary column holds one value throughout (cheaply: no decoding)."""
    if len(col) and col.null_count == len(col):
        return True
    if pa.types.is_dictionary(col.type):
        chunks = [c for c in (col.chunks if isinstance(col, pa.ChunkedArray) else [col]) if len(c)]
        dicts = {tuple(c.dictionary.to_pylist()) for c in chunks}
        return len(dicts) == 1 and len(next(iter(dicts))) == 1 and not any(c.null_count for c in chunks)
    return len(col) > 0 and col.null_count == 0 and run_starts(col, most=1) is not None


def _max_min_by(codes: np.ndarray, values: np.ndarray, n: int, listed: np.ndarray | None):
    """(max, min) of ``values`` per code; runs whose queries are together (``listed``) need no sort."""
    if listed is None:
        order = group_order(codes)
        codes, values = codes[order], values[order]
        listed = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    qmax, qmin = np.full(n, -np.inf), np.full(n, np.inf)
    qmax[codes[listed]] = np.maximum.reduceat(values, listed)
    qmin[codes[listed]] = np.minimum.reduceat(values, listed)
    return qmax, qmin
