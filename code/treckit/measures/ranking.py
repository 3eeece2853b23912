"""The ranked-and-judged view every kernel reads.

The run is ranked once per query the trec_eval way (score descending, then docno
descending; the rank column ignored) and joined with the qrels once.  Only the
retrieved documents that appear in the qrels are kept, as flat arrays sorted by
(query, rank): every other retrieved document is "not in the pool", and all a
measure needs of those is how many there are (``num_ret``).  That keeps the view
small however deep the run, and turns every measure into segmented reductions.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from ..model import Qrels, Run, id_codes
from ..strings import hash64, take_strings

NONPOOL = -1      # retrieved, not in the qrels
UNJUDGED = -2     # in the qrels with a negative grade: pooled but not judged


@dataclass
class RankedJudged:
    qids: list[str]               # evaluated queries, in trec_eval's order (byte order of qid)
    num_ret: np.ndarray           # (Q,) retrieved docs after -M / -J
    rel_levels: np.ndarray        # (Q, L) count of judged docs per grade 0..L-1
    num_rel: np.ndarray           # (Q,) judged docs with grade >= level
    q: np.ndarray                 # (E,) query index of each judged retrieved doc
    pos: np.ndarray               # (E,) 0-based rank
    rel: np.ndarray               # (E,) grade, or UNJUDGED
    level: int                    # relevance level (-l)
    missing: np.ndarray           # (Q,) bool: no run lines (scored with -c's placeholder)
    runid: str
    num_docs_in_coll: int = 0

    @property
    def Q(self) -> int:
        return len(self.qids)

    @property
    def isrel(self) -> np.ndarray:
        return self.rel >= self.level

    def rel_so_far(self, mask: np.ndarray | None = None) -> np.ndarray:
        """For each entry, how many entries of its query up to and including it satisfy ``mask``."""
        m = self.isrel if mask is None else mask
        c = np.cumsum(m, dtype=np.int64)
        first = np.searchsorted(self.q, self.q, side="left")
        return c - np.concatenate(([0], c))[first]

    def count_before(self, mask: np.ndarray, cutoff: int | np.ndarray) -> np.ndarray:
        """(Q,) number of entries with ``mask`` ranked above ``cutoff`` (scalar or per query)."""
        lim = cutoff if np.isscalar(cutoff) else np.asarray(cutoff)[self.q]
        return np.bincount(self.q[mask & (self.pos < lim)], minlength=self.Q)

    def per_query_sum(self, values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """(Q,) sum of ``values`` (one per entry, or one per entry selected by ``mask``), added in rank
        order one by one as trec_eval does, so the doubles come out bit-identical to its loops."""
        return seq_segment_sum(values, self.q if mask is None else self.q[mask], self.Q)


def seq_segment_sum(values: np.ndarray, seg: np.ndarray, nseg: int, cumulative: bool = False):
    """Sequential (left-to-right) sums of ``values`` grouped by sorted ``seg``.

    Scatters into a (segments x longest) matrix and adds column by column: vectorized over
    segments, yet each segment's additions happen in order, unlike pairwise reductions.
    With ``cumulative`` returns the running sum at each input element instead.
    """
    if values.size == 0:
        return np.zeros(values.size if cumulative else nseg)
    counts = np.bincount(seg, minlength=nseg)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    col = np.arange(values.size) - starts[seg]
    width = int(counts.max())
    m = np.zeros((nseg, width))
    m[seg, col] = values
    if cumulative:
        return np.cumsum(m, axis=1)[seg, col]
    acc = m[:, 0].copy()
    for j in range(1, width):
        acc += m[:, j]
    return acc


def seq_sum(values: np.ndarray) -> float:
    """Left-to-right sum, the way trec_eval accumulates over queries."""
    return float(np.cumsum(values)[-1]) if values.size else 0.0


# ---------------------------------------------------------------- building the view
def build_view(qrels: Qrels, run: Run, options, *, level: int | None = None, source: str = "run",
               warn=None) -> RankedJudged:
    """The view for ``options`` (an :class:`treckit.evaluation.EvalOptions`); ``level`` overrides its -l."""
    level = options.level if level is None else level
    qt = qrels.table
    qrel_qids, judged, rel_levels, qi_arr = _qrels_side(qrels)
    Qall = len(qrel_qids)
    qindex = {q: i for i, q in enumerate(qrel_qids)}

    rt = run.table
    runid = run.tag
    codes, run_qids = id_codes(rt.column("qid"))
    code_to_q = np.array([qindex.get(q, -1) for q in run_qids], np.int32)
    rq = code_to_q[codes]                # -1: a query without qrels, whose lines are ignored
    del codes
    if options.order == "rank":
        key = -rt.column("rank").to_numpy().astype(np.float64)
    else:
        key = rt.column("score").to_numpy()
        if options.float32:
            key = key.astype(np.float32).astype(np.float64)
    docid = rt.column("docid")            # left chunked: only a few strings are ever taken from it
    rkeys = hash64(docid, rq)                        # one key per (query, doc id)
    qkeys = hash64(qt.column("docid"), qi_arr)
    jrows, jgrade = _judged_rows(rq, rkeys, docid, qkeys, judged, qrel_qids)
    _check_duplicates(rq, rkeys, docid, qrel_qids, source)
    n_per_q = np.bincount(rq[rq >= 0], minlength=Qall)
    jpos = _ranks_of(rq, key, docid, jrows, Qall)
    present = n_per_q > 0
    num_ret = n_per_q.copy()
    if options.max_docs is not None:
        num_ret = np.minimum(num_ret, options.max_docs)
        ok = jpos < options.max_docs
        jrows, jgrade, jpos = jrows[ok], jgrade[ok], jpos[ok]
    jq = rq[jrows]
    o = np.lexsort((jpos, jq))
    jq, jpos, jgrade = jq[o], jpos[o], jgrade[o]
    if options.judged_only:
        ok = jgrade >= 0
        jq, jgrade = jq[ok], jgrade[ok]
        counts = np.bincount(jq, minlength=Qall)
        jpos = np.arange(jq.size) - np.concatenate(([0], np.cumsum(counts)[:-1]))[jq]
        num_ret = np.where(present, counts, 0)
    missing_q = ~present
    evaluated = _evaluated(present, options, [qrel_qids[i] for i in np.flatnonzero(missing_q)], source, warn)
    num_ret = np.where(missing_q, 1, num_ret)      # trec_eval -c's placeholder: one unjudged doc
    sel = np.flatnonzero(evaluated)
    remap = np.full(Qall, -1)
    remap[sel] = np.arange(sel.size)
    ek = evaluated[jq]
    view_levels = rel_levels[sel]
    return RankedJudged(qids=[qrel_qids[i] for i in sel], num_ret=num_ret[sel], rel_levels=view_levels,
                        num_rel=view_levels[:, level:].sum(axis=1) if level >= 0 else view_levels.sum(axis=1),
                        q=remap[jq[ek]], pos=jpos[ek], rel=jgrade[ek], level=level, missing=missing_q[sel],
                        runid=runid, num_docs_in_coll=options.num_docs_in_coll)


def _qrels_side(qrels: Qrels):
    """Queries in trec_eval's order (byte order of qid), each judgment's grade by (qid, docid), docs per
    grade per query, and each judgment's query index."""
    qt = qrels.table
    qq = qt.column("qid").to_pylist()
    qg = qt.column("grade").to_numpy()
    qrel_qids = sorted(set(qq), key=_bytes_key)
    qindex = {q: i for i, q in enumerate(qrel_qids)}
    judged: dict[tuple[str, str], int] = {}
    for q, d, g in zip(qq, qt.column("docid").to_pylist(), qg.tolist()):
        if (q, d) in judged:
            raise InputError(f"qrels judge doc {d!r} twice for query {q!r}", fix="remove the duplicate judgment")
        judged[(q, d)] = g
    rel_levels = np.zeros((len(qrel_qids), max(int(qg.max()), 0) + 1 if qg.size else 1), np.int64)
    qi_arr = np.fromiter((qindex[q] for q in qq), np.int64, len(qq))
    nonneg = qg >= 0
    np.add.at(rel_levels, (qi_arr[nonneg], qg[nonneg]), 1)
    return qrel_qids, judged, rel_levels, qi_arr


def _evaluated(present: np.ndarray, options, missing_names: list[str], source: str, warn) -> np.ndarray:
    """Which judged queries are scored: all with -c or --missing zero; else those the run answers
    (--missing skip, with a warning naming the others) or an error (--missing error)."""
    if options.complete or options.missing == "zero":
        return np.ones(present.size, bool)
    if not missing_names:
        return present
    shown = ", ".join(missing_names[:10]) + (" ..." if len(missing_names) > 10 else "")
    if options.missing == "error":
        raise InputError(f"{len(missing_names)} judged queries have no results in the run: {shown}", path=source,
                         fix="pass --missing skip (evaluate shared queries) or --missing zero (score them 0, like trec_eval -c)")
    if warn is not None:
        warn(f"{len(missing_names)} judged queries have no results in the run and are not evaluated: {shown} "
             "(--missing zero scores them 0)")
    return present


def _bytes_key(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")


def _judged_rows(rq, rkeys, docid, qkeys, judged, qrel_qids):
    """Rows of the run whose (qid, docid) is in the qrels, and their grades (UNJUDGED for negative ones).

    Hashed keys nominate candidates through a bitmap and a sorted search; each candidate is then
    confirmed on the strings, so a hash collision can never make a doc judged.
    """
    mask = np.uint64((1 << 22) - 1)
    bits = np.zeros(1 << 22, bool)
    bits[(qkeys & mask).view(np.int64)] = True
    step = 1 << 20                     # in slices: small temporaries however long the run
    cand = np.concatenate([a + np.flatnonzero(bits[(rkeys[a:a + step] & mask).view(np.int64)])
                           for a in range(0, rkeys.size, step)] or [np.zeros(0, np.int64)])
    cand = cand[rq[cand] >= 0]
    sq = np.sort(qkeys)
    at = np.minimum(np.searchsorted(sq, rkeys[cand]), sq.size - 1)
    cand = cand[sq[at] == rkeys[cand]]
    docs = take_strings(docid, cand)
    absent = np.iinfo(np.int64).min
    grades = np.array([judged.get((qrel_qids[rq[i]], d), absent) for i, d in zip(cand.tolist(), docs)], np.int64)
    ok = grades != absent
    return cand[ok], np.where(grades[ok] < 0, UNJUDGED, grades[ok])


def _check_duplicates(rq, rkeys, docid, qrel_qids, source: str) -> None:
    """trec_eval refuses a run that lists a doc twice for a query; so do we (with the doc named)."""
    k = np.sort(rkeys if rq.size and rq.min() >= 0 else rkeys[rq >= 0])
    same = k[1:] == k[:-1]
    if not same.any():
        return
    suspects = np.flatnonzero(np.isin(rkeys, np.unique(k[1:][same])) & (rq >= 0))
    seen: dict[tuple[int, str], int] = {}
    for r, d in zip(suspects.tolist(), take_strings(docid, suspects)):
        key = (int(rq[r]), d)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            raise InputError(f"the run lists doc {d!r} more than once for query {qrel_qids[key[0]]!r}",
                             path=source, fix="convert the run first with `treckit run --duplicates keep-first|keep-max|keep-last`")


def _ranks_of(rq: np.ndarray, key: np.ndarray, docid, jrows: np.ndarray, nq: int) -> np.ndarray:
    """0-based trec_eval rank of each judged row: the number of rows of its query ranked above it.

    Sparse path: compare each judged row only with the rows of its own query, a block of judged
    rows at a time against a padded (rows x query length) matrix; when judgments are dense a full
    sort is cheaper, and is used instead.
    """
    if jrows.size == 0:
        return np.zeros(0, np.int64)
    group = np.where(rq >= 0, rq, nq).astype(np.int32)    # ignored lines form one extra group
    n = rq.size
    n_per = np.bincount(group, minlength=nq + 1)
    if int(n_per[rq[jrows]].sum()) > 8 * n + 1_000_000:
        return _ranks_by_sort(group, key, docid)[jrows]
    change = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    if change.size == int((n_per > 0).sum()):        # each query's lines are contiguous: no sort needed
        perm = None
        starts = np.zeros(nq + 1, np.int64)
        starts[group[change]] = change
    else:
        perm = np.argsort(group, kind="stable")
        starts = np.concatenate(([0], np.cumsum(n_per)[:-1]))
    skey = key if perm is None else key[perm]
    out = np.empty(jrows.size, np.int64)
    order = np.argsort(n_per[rq[jrows]], kind="stable")    # similar lengths together: less padding
    block = max(1, 1_000_000 // max(1, int(n_per[rq[jrows]].max())))
    tie_owner, tie_other = [], []                           # score ties, settled on doc ids at the end
    for a in range(0, order.size, block):
        sel = order[a:a + block]
        rows = jrows[sel]
        qs = rq[rows]
        lens = n_per[qs]
        col = np.arange(int(lens.max()))
        valid = col[None, :] < lens[:, None]
        flat = np.minimum(starts[qs][:, None] + col[None, :], n - 1)
        other = skey[flat]
        mine = key[rows][:, None]
        out[sel] = ((other > mine) & valid).sum(axis=1)
        tie_r, tie_c = np.nonzero((other == mine) & valid)
        tie_owner.append(sel[tie_r])
        tie_other.append(flat[tie_r, tie_c] if perm is None else perm[flat[tie_r, tie_c]])
    owner = np.concatenate(tie_owner)
    if owner.size:
        # one pair of takes for all ties: is the other doc id greater (so ranked above, docno descending)?
        greater = pc.greater(docid.take(pa.array(np.concatenate(tie_other))),
                             docid.take(pa.array(jrows[owner]))).to_numpy(zero_copy_only=False)
        out += np.bincount(owner[greater], minlength=jrows.size)
    return out


def _ranks_by_sort(rq: np.ndarray, key: np.ndarray, docid) -> np.ndarray:
    t = pa.table({"q": rq, "k": key, "d": docid})
    perm = pc.sort_indices(t, sort_keys=[("q", "ascending"), ("k", "descending"), ("d", "descending")]).to_numpy()
    q_sorted = rq[perm]
    starts = np.flatnonzero(np.r_[True, q_sorted[1:] != q_sorted[:-1]])
    counts = np.diff(np.r_[starts, q_sorted.size])
    ranks = np.empty(rq.size, np.int64)
    ranks[perm] = np.arange(rq.size) - np.repeat(starts, counts)
    return ranks
