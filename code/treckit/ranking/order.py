"""trec_eval's ranking order, the one order treckit ranks by everywhere.

Within a query: score descending, then doc id descending, compared on the bytes trec_eval reads --
each id's written form (:mod:`treckit.ids`: the text of the TREC file it was read from, else its
escape), never the decoded id.  Conversion writes runs in this order and numbers its rank column
by it, evaluation ranks judged documents by it, comparison lists hits by it (through conversion),
so evaluating a run in memory, from its file, or after converting it gives the same numbers.

The order is computed in two shapes, which settle score ties the same way (:class:`DocTexts`):

* :func:`order` -- the whole permutation (conversion; evaluation when judgments are dense);
* :func:`ranks_of` -- the rank of a few rows only (the judged ones), without sorting the run:
  read off the file order when each query is listed best first, else by comparing each row
  with its own query's scores.
"""
from __future__ import annotations

from typing import Mapping

from ..dependencies import deferred
from .. import thresholds
from ..fast.arrow import call
from ..ids import written_ids
from ..fast.matrix import by_query_slices, laid_out, query_matrix_pays
from ..fast.groups import expand_ranges, group_order, id_codes
from ..fast.parallel import numbers
from ..fast.strings import take

np = deferred("numpy")
pa = deferred("pyarrow")



class DocTexts:
    """A run's doc ids as trec_eval compares them: the written form (``escaped``) or, for a file
    written with raw ids, the ids themselves.  Only the few rows a tie involves are ever taken."""

    descending = True            # score ties: the greater text first (trec_eval's order)

    def __init__(self, docid, qid=None, written: Mapping[tuple[str, str], str] | None = None,
                 escaped: bool = True):
        self.docid, self.qid, self.written, self.escaped = docid, qid, written or {}, escaped

    @classmethod
    def of_run(cls, run, escaped: bool = True) -> "DocTexts":
        t = run.table
        return cls(t.column("docid"), t.column("qid"), run.written, escaped)

    @classmethod
    def of(cls, texts) -> "DocTexts":
        """``texts`` itself, or a bare doc id column (ids built in memory) wrapped."""
        return texts if isinstance(texts, DocTexts) else cls(texts)

    def take(self, rows: np.ndarray) -> pa.Array:
        rows = np.asarray(rows, np.int64)
        if not self.escaped:
            return take(self.docid, rows)
        return written_ids(self.docid, self.qid, self.written, rows)

    def greater(self, rows: np.ndarray, than: np.ndarray) -> np.ndarray:
        """Whether the doc of each of ``rows`` ranks above the doc of ``than`` on a score tie."""
        if rows.size == 0:
            return np.zeros(0, bool)
        return call("greater", self.take(rows), self.take(than)).to_numpy(zero_copy_only=False)


class AscendingDocTexts(DocTexts):
    """The same texts with score ties settled the other way, doc id ascending (pyndeval's rule, as ir_measures
    ranks for its diversity measures): a doc ranks above a tied one whose text is greater."""

    descending = False

    def greater(self, rows: np.ndarray, than: np.ndarray) -> np.ndarray:
        if rows.size == 0:
            return np.zeros(0, bool)
        return call("less", self.take(rows), self.take(than)).to_numpy(zero_copy_only=False)


# ---------------------------------------------------------------- the whole permutation
def sort_key(table: pa.Table, order: str = "score", float32: bool = False) -> np.ndarray:
    """Each line's key, greater first: its score (rounded to float32 first with ``float32``, as trec_eval 9.x
    and pytrec_eval read scores), or with ``order == "rank"`` its negated rank column."""
    if order == "rank":
        return -numbers(table.column("rank")).astype(np.float64)
    key = numbers(table.column("score"))
    return key.astype(np.float32).astype(np.float64) if float32 else key


def order(codes: np.ndarray, key: np.ndarray, texts, grouped: bool) -> np.ndarray:
    """The permutation sorting rows by (query code, ``key`` descending, doc text descending).

    ``codes`` are small non-negative query codes; ``grouped``: each query's rows are already
    together in code order.  Runs usually arrive grouped and sorted; only when they are not is a
    sort paid for, and only the rows of score ties have their texts compared.
    """
    texts = DocTexts.of(texts)
    n = codes.size
    if grouped and np.all((codes[1:] != codes[:-1]) | (key[1:] <= key[:-1])):
        perm, c, e = None, codes, key
    else:
        perm = _by_query_then_score(codes, key, grouped)
        c, e = codes[perm], key[perm]
    tie = (c[1:] == c[:-1]) & (e[1:] == e[:-1])
    if not tie.any():
        return np.arange(n) if perm is None else perm
    rows = np.flatnonzero(tied_rows(tie))
    opens = np.ones(rows.size, bool)                 # a tied row opens a group unless it ties with the one before
    later = rows > 0
    opens[later] = ~tie[rows[later] - 1]
    src = rows if perm is None else perm[rows]
    import pyarrow.compute as pc

    sub = pa.table({"g": np.cumsum(opens), "d": texts.take(src)})
    inner = pc.sort_indices(sub, sort_keys=[("g", "ascending"),
                                            ("d", "descending" if texts.descending else "ascending")]).to_numpy()
    perm = np.arange(n) if perm is None else perm.copy()
    perm[rows] = src[inner]
    return perm


def ranks(codes: np.ndarray, key: np.ndarray, texts) -> np.ndarray:
    """0-based rank of every row within its query, by :func:`order`."""
    perm = order(codes, key, texts, grouped=False)
    c = codes[perm]
    starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
    out = np.empty(codes.size, np.int64)
    out[perm] = np.arange(codes.size) - np.repeat(starts, np.diff(np.r_[starts, codes.size]))
    return out


def _by_query_then_score(codes: np.ndarray, key: np.ndarray, grouped: bool) -> np.ndarray:
    """A permutation putting the rows in code order, each query's best score first; the order
    among equal scores is left open (the caller settles ties by doc text).

    Rows are grouped by query (a radix sort of the codes, unless already grouped), then each query's
    scores are sorted as one row of a (queries x longest) matrix -- a slice of queries at a time,
    side by side (:func:`treckit.model.query_slices`) -- much faster than one sort of the whole run by
    two keys; very uneven query lengths take two stable sorts instead.
    """
    by_query = None if grouped else group_order(codes)
    e = key if grouped else key[by_query]
    counts = np.bincount(codes)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    if query_matrix_pays(counts, e.size):
        def sorted_slice(queries: range, rows: range) -> np.ndarray:
            """The rows of ``queries``, each query's best score first (slices sorted side by side)."""
            part = counts[queries.start:queries.stop]
            o = np.argsort(laid_out(-e[rows.start:rows.stop], part, np.nan), axis=1)   # NaN padding sorts last
            return (o + starts[queries.start:queries.stop, None])[np.arange(o.shape[1]) < part[:, None]]
        within = np.concatenate([np.zeros(0, np.intp), *by_query_slices(sorted_slice, starts, e.size)])
    else:
        o = np.argsort(-e, kind="stable")
        within = o[group_order((codes if grouped else codes[by_query])[o])]
    return within if grouped else by_query[within]


def tied_rows(tie_pair: np.ndarray) -> np.ndarray:
    """Rows in a tie, from ``tie_pair`` (row i+1 ties with row i)."""
    in_tie = np.zeros(tie_pair.size + 1, bool)
    in_tie[1:] |= tie_pair
    in_tie[:-1] |= tie_pair
    return in_tie


# ---------------------------------------------------------------- ranks of a few rows
def ranks_of(listed: np.ndarray | None, rq: np.ndarray, key: np.ndarray, texts, jrows: np.ndarray,
             nq: int) -> np.ndarray:
    """0-based rank of each of ``jrows`` (ascending): the number of rows of its query ranked above
    it.  ``rq``: each row's query, 0..nq-1 (-1: a query nobody asks about, whose rows are not
    ranked); ``listed``: the first row of each query when each query's lines are together."""
    texts = DocTexts.of(texts)
    if jrows.size == 0:
        return np.zeros(0, np.int64)
    if listed is not None:
        out = ranks_in_listed_order(listed, key, texts, jrows)
        if out is None:
            out = ranks_in_query_rows(listed, key, texts, jrows)
        if out is not None:
            return out
    return _ranks_by_comparison(rq, key, texts, jrows, nq)


def ranks_in_listed_order(query_start: np.ndarray, key: np.ndarray, texts, jrows: np.ndarray) -> np.ndarray | None:
    """Ranks read off the file order, for the usual run: each query's lines together (starting at
    ``query_start``), best score first.  A row's rank is then where its run of equal scores starts
    within its query, plus the rows of that run with a greater doc text.  None when the scores are
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
    owner, other = expand_ranges(np.arange(jrows.size), lo, hi)
    not_self = other != jrows[owner]
    return (lo - first) + _greater_texts(DocTexts.of(texts), jrows, owner[not_self], other[not_self])


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


def ranks_in_query_rows(query_start: np.ndarray, key: np.ndarray, texts, jrows: np.ndarray) -> np.ndarray | None:
    """Ranks for a run whose queries' lines are together, in any order: the scores are laid out one
    query per row (NaN padding, which is neither greater nor equal; a slice of queries at a time,
    side by side: :func:`treckit.model.query_slices`), and each judged row is compared with its own
    query's row, a block of judged rows at a time.  ``jrows`` must be ascending (each slice takes its
    own stretch of them).  None when the queries' lengths vary too much for such a matrix."""
    lengths = np.diff(np.append(query_start, key.size))
    if not query_matrix_pays(lengths, key.size):
        return None
    assert jrows.size < 2 or bool((jrows[1:] >= jrows[:-1]).all()), "judged rows must be ascending"

    def slice_ranks(queries: range, rows: range) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows above each judged row of ``queries``, then its ties: judged row's index, tied row)."""
        first, stop = np.searchsorted(jrows, [rows.start, rows.stop])
        if first == stop:                              # no judged row in these queries
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
        part = lengths[queries.start:queries.stop]
        scores = laid_out(key[rows.start:rows.stop], part, np.nan)
        starts = query_start[queries.start:queries.stop]
        above = np.empty(stop - first, np.int64)
        owners, others = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
        block = max(1, thresholds.QUERY_ROWS_BLOCK_CELLS // max(1, scores.shape[1]))
        for a in range(first, stop, block):
            b = min(stop, a + block)
            q = np.searchsorted(starts, jrows[a:b], "right") - 1
            other, mine = scores[q], key[jrows[a:b], None]
            above[a - first:b - first] = np.count_nonzero(other > mine, axis=1)
            r, c = np.nonzero(other == mine)           # ties, itself included (never greater than itself)
            owners.append(a + r)
            others.append(starts[q[r]] + c)
        return above, np.concatenate(owners), np.concatenate(others)

    parts = list(by_query_slices(slice_ranks, query_start, key.size))
    above, owner, other = (np.concatenate([np.zeros(0, np.int64), *(p[i] for p in parts)]) for i in range(3))
    return above + _greater_texts(DocTexts.of(texts), jrows, owner, other)


def _greater_texts(texts: DocTexts, jrows: np.ndarray, owner: np.ndarray, other: np.ndarray) -> np.ndarray:
    """For each of ``jrows``, how many of the rows tied with it (``other``, listed with the index of
    its row in ``owner``) have a greater doc text, so rank above it (docno descending)."""
    if owner.size == 0:
        return np.zeros(jrows.size, np.int64)
    return np.bincount(owner[texts.greater(other, jrows[owner])], minlength=jrows.size)


def _ranks_by_comparison(rq: np.ndarray, key: np.ndarray, texts: DocTexts, jrows: np.ndarray, nq: int) -> np.ndarray:
    """Ranks for a run in any order: compare each judged row only with the rows of its own query,
    a block of judged rows at a time against a padded (rows x query length) matrix; when judgments
    are dense a full sort is cheaper, and is used instead."""
    group = np.where(rq >= 0, rq, nq).astype(np.int32)    # ignored lines form one extra group
    n = rq.size
    n_per = np.bincount(group, minlength=nq + 1)
    if int(n_per[rq[jrows]].sum()) > thresholds.RANK_SORT_GROWTH * n + thresholds.RANK_SORT_SLACK:
        return ranks(group, key, texts)[jrows]
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
    order_ = np.argsort(n_per[rq[jrows]], kind="stable")    # similar lengths together: less padding
    block = max(1, thresholds.RANK_BLOCK_CELLS // max(1, int(n_per[rq[jrows]].max())))
    tie_owner, tie_other = [], []                           # score ties, settled on doc texts at the end
    for a in range(0, order_.size, block):
        sel = order_[a:a + block]
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
    return out + _greater_texts(texts, jrows, np.concatenate(tie_owner), np.concatenate(tie_other))


def run_ranks(run) -> np.ndarray:
    """0-based rank of every row of ``run`` within its query, in trec_eval's order (for tools that rank
    whole runs: fusion, systems)."""
    codes, _ = id_codes(run.table.column("qid"))
    return ranks(codes, run.table.column("score").to_numpy(), DocTexts.of_run(run))
