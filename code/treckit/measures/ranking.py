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

from ..arrow_calls import call
from ..errors import InputError
from ..model import Qrels, Run, group_order, id_runs, query_matrix, spread
from ..repeats import BITMAP, first_repeat, suspects
from ..strings import hash64, take

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
    qrel_qids, rel_levels, qi_arr, qkeys = _qrels_side(qrels)
    Qall = len(qrel_qids)
    qindex = {q: i for i, q in enumerate(qrel_qids)}

    rt = run.table
    runid = run.tag
    starts, run_code, run_qids = id_runs(rt.column("qid"))
    lengths = np.diff(np.append(starts, rt.num_rows))
    run_q = np.array([qindex.get(q, -1) for q in run_qids], np.int32)[run_code]
    rq = spread(run_q, starts, rt.num_rows)       # -1: a query without qrels, whose lines are ignored
    if options.order == "rank":
        key = -rt.column("rank").to_numpy().astype(np.float64)
    else:
        key = rt.column("score").to_numpy()
        if options.float32:
            key = key.astype(np.float32).astype(np.float64)
    docid = rt.column("docid")            # left chunked: only a few strings are ever taken from it
    jrows, jgrade, dupkeys = _match_judged(docid, rq, qt, qi_arr, qkeys)
    n_per_q = np.bincount(run_q[run_q >= 0], weights=lengths[run_q >= 0], minlength=Qall).astype(np.int64)
    listed = starts if run_code.size == len(run_qids) else None     # each query's lines together
    _check_duplicates(rq, dupkeys, docid, qrel_qids, source, listed)
    del dupkeys
    jpos = _ranks_of(listed, rq, key, docid, jrows, Qall)
    del key
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
    """Queries in trec_eval's order (byte order of qid), docs per grade per query, each judgment's
    query index and (query, doc) hash; a doc judged twice for a query is an error."""
    qt = qrels.table
    qg = qt.column("grade").to_numpy()
    starts, run_code, ids = id_runs(qt.column("qid"))
    qrel_qids = sorted(ids, key=_bytes_key)
    qindex = {q: i for i, q in enumerate(qrel_qids)}
    qi_arr = spread(np.array([qindex[q] for q in ids], np.int32)[run_code], starts, qt.num_rows)
    qkeys = hash64(qt.column("docid"), qi_arr)
    repeat = first_repeat(suspects(qkeys), qi_arr, qt.column("docid"))
    if repeat is not None:
        _, q, d = repeat
        raise InputError(f"qrels judge doc {d!r} twice for query {qrel_qids[q]!r}", fix="remove the duplicate judgment")
    rel_levels = np.zeros((len(qrel_qids), max(int(qg.max()), 0) + 1 if qg.size else 1), np.int64)
    nonneg = qg >= 0
    np.add.at(rel_levels, (qi_arr[nonneg], qg[nonneg]), 1)
    return qrel_qids, rel_levels, qi_arr, qkeys


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


def _match_judged(docid, rq: np.ndarray, qt, qi_arr: np.ndarray, qkeys: np.ndarray):
    """Rows of the run whose (qid, docid) is in the qrels, their grades (UNJUDGED for negative
    ones), and a 32-bit key per row for the duplicate check.

    One hashing pass over the run's doc ids (with the query mixed in) does both jobs, piece by
    piece: a bitmap of the judgments' hashes nominates candidates, and each candidate is then
    confirmed on the strings, so a hash collision can never make a doc judged.
    """
    bits = np.zeros(BITMAP + 1, bool)
    bits[(qkeys & np.uint64(BITMAP)).astype(np.intp)] = True
    dupkeys = np.empty(rq.size, np.uint32)
    found: list[tuple[np.ndarray, np.ndarray]] = []

    def scan(first: int, h: np.ndarray) -> None:
        dupkeys[first:first + h.size] = h                  # the low 32 bits
        hit = np.flatnonzero(bits[np.bitwise_and(h, np.uint64(BITMAP)).view(np.int64)])
        if hit.size:
            found.append((first + hit, h[hit]))

    hash64(docid, rq, each=scan)
    if found:
        rows = np.concatenate([f[0] for f in found])
        keys = np.concatenate([f[1] for f in found])
    else:
        rows, keys = np.zeros(0, np.int64), np.zeros(0, np.uint64)
    ok = rq[rows] >= 0
    rows, keys = rows[ok], keys[ok]
    # every judgment with an equal hash is a candidate (several only on a hash collision)
    order = np.argsort(qkeys, kind="stable")
    sq = qkeys[order]
    lo, hi = np.searchsorted(sq, keys, "left"), np.searchsorted(sq, keys, "right")
    rows, qrow = _expand_ranges(rows, lo, hi)
    qrow = order[qrow]
    same = rq[rows] == qi_arr[qrow]
    rows, qrow = rows[same], qrow[same]
    if rows.size:
        same = call("equal", take(docid, rows), take(qt.column("docid"), qrow))
        same = same.to_numpy(zero_copy_only=False)
        rows, qrow = rows[same], qrow[same]
    o = np.argsort(rows, kind="stable")                   # the pieces were hashed in any order
    rows, grade = rows[o], qt.column("grade").to_numpy()[qrow[o]]
    return rows, np.where(grade < 0, UNJUDGED, grade), dupkeys


def _expand_ranges(owner: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (owner[i], j) for every j in lo[i]..hi[i]-1."""
    n = hi - lo
    total = int(n.sum())
    first = np.cumsum(n) - n
    return np.repeat(owner, n), np.repeat(lo, n) + (np.arange(total) - np.repeat(first, n))


def _check_duplicates(rq, dupkeys, docid, qrel_qids, source: str, listed: np.ndarray | None = None) -> None:
    """trec_eval refuses a run that lists a doc twice for a query; so do we (with the doc named).
    Lines of queries without judgments are not looked at, as trec_eval ignores them."""
    rows = suspects(dupkeys, listed)
    repeat = first_repeat(rows[rq[rows] >= 0], rq, docid)
    if repeat is not None:
        _, q, d = repeat
        raise InputError(f"the run lists doc {d!r} more than once for query {qrel_qids[q]!r}", path=source,
                         fix="convert the run first with `treckit run --duplicates keep-first|keep-max|keep-last`")


def _ranks_of(listed: np.ndarray | None, rq: np.ndarray, key: np.ndarray, docid, jrows: np.ndarray,
              nq: int) -> np.ndarray:
    """0-based trec_eval rank of each judged row: the number of rows of its query ranked above it.
    ``listed``: the first row of each query when each query's lines are together, else None."""
    if jrows.size == 0:
        return np.zeros(0, np.int64)
    if listed is not None:
        ranks = _ranks_in_listed_order(listed, key, docid, jrows)
        if ranks is None:
            ranks = _ranks_in_query_rows(listed, key, docid, jrows)
        if ranks is not None:
            return ranks
    return _ranks_by_comparison(rq, key, docid, jrows, nq)


def _ranks_in_listed_order(query_start: np.ndarray, key: np.ndarray, docid, jrows: np.ndarray) -> np.ndarray | None:
    """Ranks read off the file order, for the usual run: each query's lines together (starting at
    ``query_start``), best score first.  A row's rank is then where its run of equal scores starts
    within its query, plus the rows of that run with a greater doc id.  None when the scores are
    not in that order."""
    n = key.size
    same_query = np.ones(max(n - 1, 0), bool)
    same_query[query_start[1:] - 1] = False
    if ((key[1:] > key[:-1]) & same_query).any():
        return None
    del same_query
    q = np.searchsorted(query_start, jrows, "right") - 1
    first = query_start[q]
    end = np.append(query_start[1:], n)[q]
    mine = key[jrows]
    # scores only fall along a query, so the rows tied with a judged row are one stretch around it:
    # binary searches, all judged rows at once, for where that stretch starts and ends
    lo = _first_true(first, jrows, lambda i: key[i] == mine)
    hi = _first_true(jrows, end - 1, lambda i: key[i] != mine, end)
    owner, other = _expand_ranges(np.arange(jrows.size), lo, hi)
    not_self = other != jrows[owner]
    return (lo - first) + _greater_docids(docid, jrows, owner[not_self], other[not_self])


def _first_true(lo: np.ndarray, hi: np.ndarray, pred, none: np.ndarray | None = None) -> np.ndarray:
    """Elementwise binary search: the first i in lo..hi where ``pred(i)`` holds (it must hold from
    some point on up to hi, or nowhere: then ``none``, default hi)."""
    lo, hi = lo.copy(), hi.copy()
    top = hi.copy()
    while True:
        active = lo < hi
        if not active.any():
            break
        mid = (lo + hi) // 2
        ok = pred(mid)
        hi = np.where(active & ok, mid, hi)
        lo = np.where(active & ~ok, mid + 1, lo)
    if none is not None:
        last = lo == top
        lo = np.where(last & ~pred(top), none, lo)
    return lo


def _ranks_in_query_rows(query_start: np.ndarray, key: np.ndarray, docid, jrows: np.ndarray) -> np.ndarray | None:
    """Ranks for a run whose queries' lines are together, in any order: the scores are a (queries x
    longest) matrix (NaN padding, which is neither greater nor equal), and each judged row is
    compared with its own query's row of it, a block of judged rows at a time.  None when the
    queries' lengths vary too much for the matrix."""
    scores = query_matrix(key, query_start, np.nan)
    if scores is None:
        return None
    width = scores.shape[1]
    q = np.searchsorted(query_start, jrows, "right") - 1
    mine = key[jrows]
    above = np.empty(jrows.size, np.int64)
    tie_owner, tie_other = [], []
    block = max(1, (1 << 20) // width)
    for a in range(0, jrows.size, block):
        other = scores[q[a:a + block]]
        m = mine[a:a + block, None]
        above[a:a + block] = np.count_nonzero(other > m, axis=1)
        r, c = np.nonzero(other == m)                  # ties, itself included (never greater than itself)
        tie_owner.append(a + r)
        tie_other.append(query_start[q[a + r]] + c)
    return above + _greater_docids(docid, jrows, np.concatenate(tie_owner), np.concatenate(tie_other))


def _greater_docids(docid, jrows: np.ndarray, owner: np.ndarray, other: np.ndarray) -> np.ndarray:
    """For each judged row, how many of the rows tied with it (``other``, listed with the index of
    the judged row in ``owner``) have a greater doc id, so rank above it (docno descending)."""
    if owner.size == 0:
        return np.zeros(jrows.size, np.int64)
    greater = call("greater", take(docid, other), take(docid, jrows[owner]))
    return np.bincount(owner[greater.to_numpy(zero_copy_only=False)], minlength=jrows.size)


def _ranks_by_comparison(rq: np.ndarray, key: np.ndarray, docid, jrows: np.ndarray, nq: int) -> np.ndarray:
    """Ranks for a run in any order: compare each judged row only with the rows of its own query,
    a block of judged rows at a time against a padded (rows x query length) matrix; when judgments
    are dense a full sort is cheaper, and is used instead."""
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
        perm = group_order(group)
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
    return out + _greater_docids(docid, jrows, np.concatenate(tie_owner), np.concatenate(tie_other))


def _ranks_by_sort(rq: np.ndarray, key: np.ndarray, docid) -> np.ndarray:
    import pyarrow.compute as pc

    t = pa.table({"q": rq, "k": key, "d": docid})
    perm = pc.sort_indices(t, sort_keys=[("q", "ascending"), ("k", "descending"), ("d", "descending")]).to_numpy()
    q_sorted = rq[perm]
    starts = np.flatnonzero(np.r_[True, q_sorted[1:] != q_sorted[:-1]])
    counts = np.diff(np.r_[starts, q_sorted.size])
    ranks = np.empty(rq.size, np.int64)
    ranks[perm] = np.arange(rq.size) - np.repeat(starts, counts)
    return ranks


def trec_ranks(run: Run) -> np.ndarray:
    """0-based rank of every row of ``run`` within its query in trec_eval's order (score descending,
    then docno descending), for tools that rank whole runs (fusion)."""
    from ..model import id_codes
    codes, _ = id_codes(run.table.column("qid"))
    return _ranks_by_sort(codes, run.table.column("score").to_numpy(), run.table.column("docid"))
