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
from ..fast.matrix import by_query_slices, laid_out, query_matrix_pays, sort_within
from ..fast.groups import expand_ranges, group_order, id_codes
from ..fast.parallel import for_each, numbers
from ..fast.strings import ByteWords, take

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
    inner, _ = settle_by_text(texts, src, np.cumsum(opens))
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


# ---------------------------------------------------------------- score ties settled by doc text
def settle_by_text(texts, rows: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of equal scores in the order their doc texts put them: ``(order, place)``, where ``order`` sorts
    ``rows`` by ``group`` (integer labels, one per tie group), then doc text in ``texts``' order (trec_eval's:
    the greater first), rows of equal texts in the order given; ``place[i]``: how many rows of its group rank
    above the ``i``-th row so sorted (rows of equal texts share a place).

    O(n log n) time and O(n) memory however large the groups: the texts are compared eight bytes at a time as
    integers (:class:`treckit.fast.strings.ByteWords`), each pass sorting, within its class, only the rows
    still tied on every byte before; then the lengths (a text before its extensions).  Whole groups of about
    ``thresholds.TIE_TEXT_SLICE_ROWS`` rows are settled at a time, side by side."""
    texts = DocTexts.of(texts)
    rows = np.asarray(rows, np.int64)
    group = np.asarray(group)
    m = rows.size
    order_, place = np.empty(m, np.int64), np.empty(m, np.int64)
    if m == 0:
        return order_, place
    by = None if bool((group[1:] >= group[:-1]).all()) else np.argsort(group, kind="stable")
    g = group if by is None else group[by]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    cuts = np.unique(np.append(starts[np.minimum(np.searchsorted(starts, np.arange(0, m, max(
        1, thresholds.TIE_TEXT_SLICE_ROWS))), starts.size - 1)], m))

    def settle(piece: int) -> None:
        a, b = int(cuts[piece]), int(cuts[piece + 1])
        which = np.arange(a, b) if by is None else by[a:b]
        perm, place[a:b] = _settle_slice(texts, rows[which], g[a:b])
        order_[a:b] = which[perm]
    for_each(settle, list(range(cuts.size - 1)))
    return order_, place


def _settle_slice(texts: DocTexts, rows: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`settle_by_text` of rows whose groups ``g`` are already together: (the order, the places)."""
    m = rows.size
    words = ByteWords(texts.take(rows))
    flip = np.uint64(0xFFFFFFFFFFFFFFFF) if texts.descending else np.uint64(0)
    group_heads = np.r_[True, g[1:] != g[:-1]]
    heads = group_heads.copy()          # where a class of rows tied so far starts (a new group, or other bytes)
    perm = np.arange(m)                 # each place's row, as settled so far
    active = _in_classes(heads, np.arange(m), lambda members: np.ones(members.size, bool))
    byte = 0
    while active.size:
        _sort_classes(perm, heads, active, words.at(byte, perm[active]) ^ flip)
        byte += 8
        longer = words.lengths > byte
        active, spent = (_in_classes(heads, active, lambda members: longer[perm[members]], want)
                         for want in (True, False))
        if spent.size:                  # equal on every byte: the shorter text first (last, descending)
            _sort_classes(perm, heads, spent, words.lengths[perm[spent]].astype(np.uint64) ^ flip)
            equal = _in_classes(heads, spent, lambda members: np.zeros(members.size, bool), False)
            _sort_classes(perm, heads, equal, perm[equal].astype(np.uint64), split=False)   # in the order given
    positions = np.arange(m)
    place = (np.maximum.accumulate(np.where(heads, positions, 0))
             - np.maximum.accumulate(np.where(group_heads, positions, 0)))
    return perm, place


def _sort_classes(perm: np.ndarray, heads: np.ndarray, places: np.ndarray, key: np.ndarray,
                  split: bool = True) -> None:
    """Sort the rows at ``places`` (whole classes, ascending) by ``key`` within each class, in place; with
    ``split``, rows of different keys become classes of their own."""
    starts = np.flatnonzero(heads[places])
    within = sort_within(starts, key)
    perm[places] = perm[places][within]
    if split:
        key = key[within]
        heads[places[1:]] |= key[1:] != key[:-1]


def _in_classes(heads: np.ndarray, places: np.ndarray, flag, want: bool = True) -> np.ndarray:
    """The places (of ``places``: whole classes, ascending) in classes of two rows or more for which
    ``flag(places)`` holds somewhere (``want``) or nowhere (not ``want``)."""
    if places.size == 0:
        return places
    cls = np.cumsum(heads[places]) - 1
    size = np.bincount(cls)
    some = np.bincount(cls, weights=flag(places)) > 0
    keep = (size > 1) & (some == want)
    return places[keep[cls]]


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
    mine = key[jrows]
    # scores only fall along a query, so the rows tied with a judged row are one stretch around it, the
    # same for the judged rows of one query and score (ascending: neighbours among the judged rows):
    # binary searches, one per stretch, all at once, for where it starts and ends
    new = np.r_[True, (q[1:] != q[:-1]) | (mine[1:] != mine[:-1])]
    heads = np.flatnonzero(new)
    tails = np.append(heads[1:], jrows.size) - 1
    which = np.cumsum(new) - 1
    hq, score = q[heads], mine[heads]
    first, end = query_start[hq], np.append(query_start[1:], n)[hq]
    lo, hi = jrows[heads], jrows[tails] + 1
    up = np.flatnonzero((lo > first) & (key[np.maximum(lo - 1, 0)] == score))       # searched only where
    down = np.flatnonzero((hi < end) & (key[np.minimum(hi, n - 1)] == score))       # a neighbour ties
    lo[up] = _first_true(first[up], lo[up], lambda i: key[i] == score[up])
    hi[down] = _first_true(hi[down], end[down] - 1, lambda i: key[i] != score[down], end[down])
    out = (lo - first)[which]
    tied = np.flatnonzero(hi - lo > 1)
    if tied.size:                       # every row of the stretches that hold a judged row
        group, members = expand_ranges(np.arange(tied.size), lo[tied], hi[tied])
        out += texts_above(texts, jrows, members, group)
    return out


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


def _comparisons_pay(cells: int, n: int) -> bool:
    """Whether comparing judged rows with their queries' rows (``cells`` comparisons over a run of ``n``
    rows) costs less than sorting the whole run (thresholds.RANK_SORT_*): it keeps ranking O(n log n)."""
    return cells <= thresholds.RANK_SORT_GROWTH * n + thresholds.RANK_SORT_SLACK


def ranks_in_query_rows(query_start: np.ndarray, key: np.ndarray, texts, jrows: np.ndarray) -> np.ndarray | None:
    """Ranks for a run whose queries' lines are together, in any order: the scores are laid out one
    query per row (NaN padding, which is neither greater nor equal; a slice of queries at a time,
    side by side: :func:`treckit.model.query_slices`), and each judged row is compared with its own
    query's row, a block of judged rows at a time.  ``jrows`` must be ascending (each slice takes its
    own stretch of them).  None when the queries' lengths vary too much for such a matrix, or the
    comparisons would cost more than a sort."""
    lengths = np.diff(np.append(query_start, key.size))
    jq = np.searchsorted(query_start, jrows, "right") - 1
    if not query_matrix_pays(lengths, key.size) or not _comparisons_pay(int(lengths[jq].sum()), key.size):
        return None
    assert jrows.size < 2 or bool((jrows[1:] >= jrows[:-1]).all()), "judged rows must be ascending"

    def slice_ranks(queries: range, rows: range) -> tuple[np.ndarray, np.ndarray]:
        """(rows above each judged row of ``queries``, the rows tied with one of them, ascending)."""
        first, stop = np.searchsorted(jrows, [rows.start, rows.stop])
        if first == stop:                              # no judged row in these queries
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        part = lengths[queries.start:queries.stop]
        scores = laid_out(key[rows.start:rows.stop], part, np.nan)
        starts = query_start[queries.start:queries.stop]
        above = np.empty(stop - first, np.int64)
        tied = np.zeros(len(rows), bool)
        block = max(1, thresholds.QUERY_ROWS_BLOCK_CELLS // max(1, scores.shape[1]))
        for a in range(first, stop, block):
            b = min(stop, a + block)
            q = np.searchsorted(starts, jrows[a:b], "right") - 1
            other, mine = scores[q], key[jrows[a:b], None]
            above[a - first:b - first] = np.count_nonzero(other > mine, axis=1)
            r, c = np.nonzero(other == mine)           # ties, itself included
            tied[starts[q[r]] + c - rows.start] = True
        return above, rows.start + np.flatnonzero(tied)

    parts = list(by_query_slices(slice_ranks, query_start, key.size))
    above, members = (np.concatenate([np.zeros(0, np.int64), *(p[i] for p in parts)]) for i in range(2))
    query = np.searchsorted(query_start, members, "right") - 1
    return above + texts_above(texts, jrows, members, score_groups(query, key[members]))


def texts_above(texts, jrows: np.ndarray, members: np.ndarray, group: np.ndarray) -> np.ndarray:
    """For each of ``jrows``, how many rows tied with it rank above it on the doc text: ``members``
    (ascending) are the rows of the tie groups that hold judged rows, ``group`` a label 0, 1, ... for each
    one's group (its query and score); a judged row that is not among them ties with no row."""
    out = np.zeros(jrows.size, np.int64)
    tied = np.bincount(group)[group] > 1 if members.size else np.zeros(0, bool)    # a row alone has no tie
    members, group = members[tied], group[tied]
    if members.size == 0:
        return out
    order_, place = settle_by_text(texts, members, group)
    member_place = np.empty(members.size, np.int64)
    member_place[order_] = place
    at = np.minimum(np.searchsorted(members, jrows), members.size - 1)
    found = members[at] == jrows
    out[found] = member_place[at[found]]
    return out


def score_groups(query: np.ndarray, key: np.ndarray) -> np.ndarray:
    """A label for each row (``query``: small non-negative codes; ``key``: scores), the same for rows of the
    same query and score: one sort of each query's scores."""
    n = query.size
    if n == 0:
        return np.zeros(0, np.int64)
    by = group_order(query)
    q = query[by]
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    bits = _ordered_bits(key[by])
    within = sort_within(starts, bits)
    bits = bits[within]
    new = np.r_[True, (q[1:] != q[:-1]) | (bits[1:] != bits[:-1])]
    label = np.empty(n, np.int64)
    label[by[within]] = np.cumsum(new) - 1
    return label


def _ordered_bits(values: np.ndarray) -> np.ndarray:
    """Doubles as unsigned integers in the same order, equal doubles (0.0 and -0.0) as equal integers."""
    bits = (np.asarray(values, np.float64) + 0.0).view(np.uint64)
    negative = (bits >> np.uint64(63)).astype(bool)
    return np.where(negative, ~bits, bits | np.uint64(1 << 63))


def _ranks_by_comparison(rq: np.ndarray, key: np.ndarray, texts: DocTexts, jrows: np.ndarray, nq: int) -> np.ndarray:
    """Ranks for a run in any order: compare each judged row only with the rows of its own query,
    a block of judged rows at a time against a padded (rows x query length) matrix; when judgments
    are dense a full sort is cheaper, and is used instead."""
    group = np.where(rq >= 0, rq, nq).astype(np.int32)    # ignored lines form one extra group
    n = rq.size
    n_per = np.bincount(group, minlength=nq + 1)
    if not _comparisons_pay(int(n_per[rq[jrows]].sum()), n):
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
    tied = np.zeros(n, bool)                                # rows tied with a judged row, settled on doc texts at the end
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
        tied[flat[tie_r, tie_c] if perm is None else perm[flat[tie_r, tie_c]]] = True
    members = np.flatnonzero(tied)
    return out + texts_above(texts, jrows, members, score_groups(rq[members], key[members]))


def run_ranks(run) -> np.ndarray:
    """0-based rank of every row of ``run`` within its query, in trec_eval's order (for tools that rank
    whole runs: fusion, systems)."""
    codes, _ = id_codes(run.table.column("qid"))
    return ranks(codes, run.table.column("score").to_numpy(), DocTexts.of_run(run))
