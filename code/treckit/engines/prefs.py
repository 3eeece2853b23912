"""The engine of preference judgments (:class:`Preferences`, chosen by :func:`treckit.engines.choice.choose` for
``-R prefs`` / ``qrels_prefs`` / ``qrels_jg``): a run ranked once, as trec_eval ranks it, against preference
judgments or judgment groups, each query's counts computed by the kernels of :mod:`treckit.measures.prefs`, and
per-query values and summaries made as the in-memory engine makes them (:mod:`.memory`: the same -c, -M, -Z and the
same result type).

Doc ids are compared as written on both sides, as trec_eval does; the qrels of qrels_prefs / qrels_jg are read by the
ordinary qrels reader, and runs by their format only (the reading options of ``treckit run`` do not apply)."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..dependencies import deferred
from ..console.errors import InputError
from ..console.spelling import pass_options
from ..inputs.formats.prefs import Prefs, byte_order, prefs_from_qrels, read_prefs, string_array
from ..inputs.reading import read_qrels, read_run
from ..measures.prefs import NONPOOL, PLACEHOLDER_DOC, UNJUDGED, JGRanking, query_prefs
from ..measures.declaration import PREFS, QRELS_JG, QRELS_PREFS
from ..measures.registry import Request
from ..ranking.judged import evaluated_queries, seq_sum
from ..ranking.order import sort_key
from .engine import OneAfterAnother
from .memory import EvalResult, mean, to_zscores

np = deferred("numpy")
pa = deferred("pyarrow")


def _ranked_run(run, qids: list[str], options, ascending_ties: bool, extra_docs, source: str):
    """Each wanted query's retrieved docs in trec_eval's order, as codes in one byte-ordered doc space
    shared with ``extra_docs``; returns ({qid: doc codes (after -M)}, code of each extra doc, names)."""
    import pyarrow.compute as pc     # not at import: plain evaluation never loads it (start-up time)

    t = run.table
    wanted = pa.array(qids, pa.string())
    t = t.filter(pc.is_in(string_array(t.column("qid")), value_set=wanted))
    qc = pc.index_in(string_array(t.column("qid")), value_set=wanted).to_numpy(zero_copy_only=False).astype(np.int64)
    key = sort_key(t, options.rank_by, options.float32)
    n = t.num_rows
    codes, names = byte_order(pa.concat_arrays([string_array(t.column("docid")), string_array(extra_docs)]))
    dcode, extra = codes[:n], codes[n:]
    dup = np.unique(qc * len(names) + dcode, return_counts=True)
    if (dup[1] > 1).any():
        k = int(dup[0][np.argmax(dup[1] > 1)])
        raise InputError(f"the run lists doc {names[k % len(names)]!r} more than once for query {qids[k // len(names)]!r}",
                         path=source, fix=pass_options("run", "--duplicates keep-first|keep-max|keep-last"))
    o = np.lexsort((dcode if ascending_ties else -dcode, -key, qc))
    qs, ds = qc[o], dcode[o]
    bounds = np.searchsorted(qs, np.arange(len(qids) + 1))
    limit = options.max_docs
    ranked = {}
    for i, q in enumerate(qids):
        a, b = bounds[i], bounds[i + 1]
        if b > a:
            ranked[q] = ds[a:b if limit is None else min(b, a + limit)]
    return ranked, extra, names


def _with_placeholder(docs) -> pa.Array:
    return pa.concat_arrays([string_array(docs), pa.array([PLACEHOLDER_DOC], pa.string())])


def _evaluated_queries(all_qids: list[str], ranked: dict, options, source: str, warn) -> list[str]:
    present = np.array([q in ranked for q in all_qids])
    ev = evaluated_queries(present, options, [q for q in all_qids if q not in ranked], source, warn)
    qids = [q for q, e in zip(all_qids, ev) if e]
    if not qids:
        raise InputError("no queries with both results and judgments", path=source,
                         fix="check that the run and the judgments use the same query ids")
    return qids


def _check_max(options) -> None:
    if options.max_docs is not None and options.max_docs < 0:
        raise InputError(f"-M {options.max_docs}: the number of docs kept per query cannot be negative",
                         fix="give -M a number >= 0")


@dataclass
class _View:
    """What the trec_eval text output reads of an evaluation: the queries and the run id."""

    qids: list[str]
    runid: str
    missing: np.ndarray

    @property
    def Q(self) -> int:
        return len(self.qids)


def _query_rows(qid_column):
    """(queries in byte order, {qid: its rows})."""
    line_q, all_qids = byte_order(qid_column)
    order = np.argsort(line_q, kind="stable")
    bounds = np.searchsorted(line_q[order], np.arange(len(all_qids) + 1))
    return all_qids, {q: order[bounds[i]:bounds[i + 1]] for i, q in enumerate(all_qids)}


def evaluate_prefs(prefs: Prefs, run, requests: list[Request], options, *, source: str = "run", warn=None):
    """Preference measures of ``run`` against ``prefs`` (see the module doc) as an EvalResult."""
    _check_max(options)
    all_qids, rows_of = _query_rows(prefs.qid)
    ranked, extra, names = _ranked_run(run, all_qids, options, True, _with_placeholder(prefs.docid), source)
    line_doc, placeholder = extra[:-1], extra[-1:]
    qids = _evaluated_queries(all_qids, ranked, options, source, warn)
    jg_code, _ = byte_order(prefs.jg)
    jsg_code, _ = byte_order(prefs.jsg)
    want_pairs = any(r.measure.name.startswith("prefs_pair") for r in requests)
    notes: list[str] = []
    per_query = []
    for q in qids:
        rows = rows_of[q]
        retrieved = ranked.get(q, placeholder)
        judged = np.unique(line_doc[rows])
        # internal ranks: judged docs the run retrieves, in run order; then the rest in doc id order
        pos = np.full(judged.size, np.iinfo(np.int64).max)
        hit = np.isin(retrieved, judged)
        pos[np.searchsorted(judged, retrieved[hit])] = np.flatnonzero(hit)
        internal = np.empty(judged.size, np.int64)
        internal[np.argsort(pos, kind="stable")] = np.arange(judged.size)
        line_rank = internal[np.searchsorted(judged, line_doc[rows])]

        def name(rank, judged=judged, internal=internal):
            return names[int(judged[np.flatnonzero(internal == rank)[0]])]

        per_query.append(query_prefs(line_rank, jg_code[rows], jsg_code[rows], prefs.level[rows], int(hit.sum()),
                                     judged.size, want_pairs, name, f"{prefs.source}: query {q!r}", notes.append))
    if notes and warn is not None:
        warn(f"{prefs.source}: in {len(notes)} judgment group(s) ({notes[0]} ...) the lowest level holds fewer docs "
             "than prefs_avgjg_Rnonrel* pairs with it (levels below 0 split the non-relevant docs); trec_eval reads "
             "past its array there, treckit uses the docs there are")
    return _result(qids, run.tag, per_query, requests, options, ranked, lambda m, qp, p: m.kernel(qp))


def evaluate_qrels_jg(qrels, run, requests: list[Request], options, *, source: str = "run", warn=None):
    """The judgment-group measures of ``run`` against ``qrels`` read as ``-R qrels_jg``."""
    _check_max(options)
    t = qrels.table
    all_qids, rows_of = _query_rows(t.column("qid"))
    ranked, extra, names = _ranked_run(run, all_qids, options, False, _with_placeholder(t.column("docid")), source)
    line_doc, placeholder = extra[:-1], extra[-1:]
    qids = _evaluated_queries(all_qids, ranked, options, source, warn)
    jg_code, jg_names = byte_order(t.column("iter"))
    grade = t.column("grade").to_numpy()
    level = options.level
    per_query = []
    for q in qids:
        rows = rows_of[q]
        rows = rows[np.lexsort((line_doc[rows], jg_code[rows]))]
        same = (jg_code[rows][1:] == jg_code[rows][:-1]) & (line_doc[rows][1:] == line_doc[rows][:-1])
        if same.any():
            k = rows[np.argmax(same) + 1]
            raise InputError(f"qrels judge doc {names[line_doc[k]]!r} twice for query {q!r} in judgment group "
                             f"{jg_names[jg_code[k]]!r}", fix="remove the duplicate judgment")
        retrieved = ranked.get(q, placeholder)
        groups = []
        for g in np.unique(jg_code[rows]):
            r = rows[jg_code[rows] == g]
            d, gr = line_doc[r], grade[r]
            idx = np.searchsorted(d, retrieved)
            found = (idx < d.size) & (d[np.minimum(idx, d.size - 1)] == retrieved)
            rels = np.full(retrieved.size, NONPOOL, np.int64)
            rels[found] = np.where(gr[idx[found]] < 0, UNJUDGED, gr[idx[found]])
            if options.judged_only:
                rels = rels[rels >= 0]
            groups.append(JGRanking(rels, rels.size, int(((gr >= 0) & (gr >= level)).sum()),
                                    int(((rels >= 0) & (rels >= level)).sum())))
        per_query.append(groups)
    return _result(qids, run.tag, per_query, requests, options, ranked,
                   lambda m, groups, p: m.kernel(groups, level, p))


def _result(qids, runid, per_query, requests, options, ranked, call):
    Q = len(qids)
    columns, blocks, kinds, perq = [], [], {}, set()
    for req in requests:
        m = req.measure
        names = req.columns
        if m.value == "runid":
            block = np.full((Q, 1), np.nan)
        elif m.name == "num_q":
            block = np.ones((Q, 1))
        else:
            block = np.array([np.atleast_1d(call(m, x, req.params)) for x in per_query], np.float64).reshape(Q, -1)
        blocks.append(block)
        for n in names:
            kinds[n] = m.value
            if m.per_query:
                perq.add(n)
        columns.extend(names)
    values = np.concatenate(blocks, axis=1) if blocks else np.zeros((Q, 0))
    if options.zscores is not None:
        values = to_zscores(values, columns, kinds, qids, options.zscores)
    view = _View(qids, runid, np.array([q not in ranked for q in qids], bool))
    res = EvalResult(view, requests, columns, values, {}, {}, kinds, perq, options.zscores is not None)
    for req in requests:
        m = req.measure
        for n in req.columns:
            v = values[:, columns.index(n)]
            if m.value == "runid":
                res.summary[n] = runid
            elif m.summary == "count":
                res.summary[n] = float(Q)
            elif m.summary == "sum":
                res.summary[n] = seq_sum(v)
            elif m.summary == "mean":
                res.summary[n] = mean(v) if Q else 0.0
    return res


@dataclass(frozen=True)
class Preferences(OneAfterAnother):
    """Here, in memory, against judgments of ``rel_format`` (prefs, qrels_prefs or qrels_jg): the
    engine (:class:`treckit.engines.engine.Engine`) of preference judgments and judgment groups."""

    rel_format: str
    name = "prefs"

    def read_judgments(self, path, qrels_format, reading):
        """The judgments at ``path`` as ``rel_format`` reads them (doc ids as written)."""
        if self.rel_format == PREFS:
            return read_prefs(path)
        qrels = read_qrels(path, qrels_format or "trec", decode_ids=False)
        return prefs_from_qrels(qrels, str(path)) if self.rel_format == QRELS_PREFS else qrels

    def evaluate(self, qrels, run, requests, options, reading, *, qrels_source=None, warn=None):
        """One run (a path) against judgments read by :meth:`read_judgments`, ranked by ``reading.order``."""
        source = str(run)
        run = read_run(run, reading.format, decode_ids=False, lean=reading.order != "rank", warn=warn,
                       order_option=False)
        evaluate = evaluate_qrels_jg if self.rel_format == QRELS_JG else evaluate_prefs
        return evaluate(qrels, run, requests, replace(options, rank_by=reading.order), source=source, warn=warn)

