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
from ..model import Qrels, Run

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
    """The view for ``options`` (an :class:`treckit.evaluate.EvalOptions`); ``level`` overrides its -l."""
    level = options.level if level is None else level
    max_docs, judged_only, missing = options.max_docs, options.judged_only, options.missing
    complete = options.complete
    qt = qrels.table
    qq = qt.column("qid").to_pylist()
    qd = qt.column("docid").to_pylist()
    qg = qt.column("grade").to_numpy()
    qrel_qids = sorted(set(qq), key=_bytes_key)
    qindex = {q: i for i, q in enumerate(qrel_qids)}
    judged: dict[tuple[str, str], int] = {}
    for q, d, g in zip(qq, qd, qg.tolist()):
        if (q, d) in judged:
            raise InputError(f"qrels judge doc {d!r} twice for query {q!r}", fix="remove the duplicate judgment")
        judged[(q, d)] = g
    max_grade = max(int(qg.max()), 0) if qg.size else 0
    Qall = len(qrel_qids)
    rel_levels = np.zeros((Qall, max_grade + 1), np.int64)
    qi_arr = np.fromiter((qindex[q] for q in qq), np.int64, len(qq))
    nonneg = qg >= 0
    np.add.at(rel_levels, (qi_arr[nonneg], qg[nonneg]), 1)

    rt = run.table
    runid = run.tag
    r_qid = rt.column("qid").combine_chunks()
    dict_q = pc.dictionary_encode(r_qid)
    run_qids = dict_q.dictionary.to_pylist()
    codes = dict_q.indices.to_numpy().astype(np.int64)
    code_to_q = np.array([qindex.get(q, -1) for q in run_qids], np.int64)
    rq = code_to_q[codes]
    keep = rq >= 0                       # run lines of queries without qrels are ignored
    if not keep.all():
        idx = np.flatnonzero(keep)
        rt, rq = rt.take(pa.array(idx)), rq[idx]
    if options.order == "rank":
        key = -rt.column("rank").to_numpy().astype(np.float64)
    else:
        key = rt.column("score").to_numpy()
        if options.float32:
            key = key.astype(np.float32).astype(np.float64)
    docid = rt.column("docid").combine_chunks()
    # judged rows: a cheap membership test on doc ids first, exact (qid, docid) after
    cand = np.flatnonzero(pc.is_in(docid, value_set=pa.array(list({d for d in qd}), pa.string())).to_numpy(zero_copy_only=False))
    cand_docs = docid.take(pa.array(cand)).to_pylist()
    absent = np.iinfo(np.int64).min
    grades = np.array([judged.get((qrel_qids[rq[i]], d), absent) for i, d in zip(cand.tolist(), cand_docs)], np.int64)
    in_qrels = grades != absent
    jrows, jgrade = cand[in_qrels], grades[in_qrels]
    jgrade = np.where(jgrade < 0, UNJUDGED, jgrade)
    n_per_q = np.bincount(rq, minlength=Qall)
    _check_duplicates(rq, docid, source)
    jpos = _ranks_of(rq, key, docid, jrows, n_per_q)
    present = n_per_q > 0
    num_ret = n_per_q.copy()
    if max_docs is not None:
        num_ret = np.minimum(num_ret, max_docs)
        ok = jpos < max_docs
        jrows, jgrade, jpos = jrows[ok], jgrade[ok], jpos[ok]
    jq = rq[jrows]
    o = np.lexsort((jpos, jq))
    jq, jpos, jgrade = jq[o], jpos[o], jgrade[o]
    if judged_only:
        ok = jgrade >= 0
        jq, jgrade = jq[ok], jgrade[ok]
        counts = np.bincount(jq, minlength=Qall)
        jpos = np.arange(jq.size) - np.concatenate(([0], np.cumsum(counts)[:-1]))[jq]
        num_ret = np.where(present, counts, 0)
    # which queries are evaluated
    missing_q = ~present
    if complete:
        evaluated = np.ones(Qall, bool)
    else:
        if missing_q.any():
            names = [qrel_qids[i] for i in np.flatnonzero(missing_q)]
            if missing == "error":
                raise InputError(f"{len(names)} judged queries have no results in the run: {', '.join(names[:10])}"
                                 + (" ..." if len(names) > 10 else ""), path=source,
                                 fix="pass --missing skip (evaluate shared queries) or --missing zero (score them 0, like trec_eval -c)")
            if missing == "zero":
                evaluated = np.ones(Qall, bool)
                complete = True
            else:
                evaluated = present
                if warn is not None:
                    warn(f"{len(names)} judged queries have no results in the run and are not evaluated: "
                         f"{', '.join(names[:10])}{' ...' if len(names) > 10 else ''} (--missing zero scores them 0)")
        else:
            evaluated = present
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


def _bytes_key(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")


def _check_duplicates(rq: np.ndarray, docid: pa.Array, source: str) -> None:
    """trec_eval refuses a run that lists a doc twice for a query; so do we (with the doc named)."""
    key = pa.table({"q": rq, "d": docid})
    g = key.group_by(["q", "d"]).aggregate([("q", "count")])
    if g.num_rows != rq.size:
        dup = g.filter(pc.greater(g.column("q_count"), 1))
        raise InputError(f"the run lists doc {dup.column('d')[0].as_py()!r} {dup.column('q_count')[0].as_py()} times for one query",
                         path=source, fix="convert the run first with `treckit run --duplicates keep-first|keep-max|keep-last`")


def _ranks_of(rq: np.ndarray, key: np.ndarray, docid: pa.Array, jrows: np.ndarray, n_per_q: np.ndarray) -> np.ndarray:
    """0-based trec_eval rank of each judged row: the number of rows of its query ranked above it.

    Sparse path: compare each judged row only with the rows of its own query (cost: judged x
    query length); when judgments are dense a full sort is cheaper, and is used instead.
    """
    if jrows.size == 0:
        return np.zeros(0, np.int64)
    n = rq.size
    work = int(n_per_q[rq[jrows]].sum())
    if work > 8 * n + 1_000_000:
        return _ranks_by_sort(rq, key, docid)[jrows]
    change = np.flatnonzero(np.r_[True, rq[1:] != rq[:-1]])
    if change.size == int((n_per_q > 0).sum()):        # each query's lines are contiguous: no sort needed
        perm = None
        skey = key
        starts = np.zeros(n_per_q.size, np.int64)
        starts[rq[change]] = change
    else:
        perm = np.argsort(rq, kind="stable")
        skey = key[perm]
        starts = np.concatenate(([0], np.cumsum(n_per_q)[:-1]))
    out = np.empty(jrows.size, np.int64)
    chunk = max(1, 4_000_000 // max(1, int(n_per_q.max())))
    for a in range(0, jrows.size, chunk):
        rows = jrows[a:a + chunk]
        qs = rq[rows]
        lens = n_per_q[qs]
        flat = np.repeat(starts[qs] - np.concatenate(([0], np.cumsum(lens)[:-1])), lens) + np.arange(int(lens.sum()))
        mine = np.repeat(key[rows], lens)
        other = skey[flat]
        higher = other > mine
        tied = other == mine
        seg_start = np.concatenate(([0], np.cumsum(lens)[:-1]))
        cnt = np.add.reduceat(higher, seg_start) if higher.size else np.zeros(0, np.int64)
        if tied.any():
            owner = np.repeat(np.arange(rows.size), lens)
            t_idx = np.flatnonzero(tied)
            other_rows = flat[t_idx] if perm is None else perm[flat[t_idx]]
            greater = pc.greater(docid.take(pa.array(other_rows)), docid.take(pa.array(rows[owner[t_idx]]))).to_numpy(zero_copy_only=False)
            cnt = cnt + np.bincount(owner[t_idx][greater], minlength=rows.size)
        out[a:a + chunk] = cnt
    return out


def _ranks_by_sort(rq: np.ndarray, key: np.ndarray, docid: pa.Array) -> np.ndarray:
    t = pa.table({"q": rq, "k": key, "d": docid})
    perm = pc.sort_indices(t, sort_keys=[("q", "ascending"), ("k", "descending"), ("d", "descending")]).to_numpy()
    q_sorted = rq[perm]
    starts = np.flatnonzero(np.r_[True, q_sorted[1:] != q_sorted[:-1]])
    counts = np.diff(np.r_[starts, q_sorted.size])
    ranks = np.empty(rq.size, np.int64)
    ranks[perm] = np.arange(rq.size) - np.repeat(starts, counts)
    return ranks
