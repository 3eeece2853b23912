"""Queries of a TREC run whose rank column rises as the score rises: the signature of negated scores.

trec_eval ranks a run by score, highest first, and ignores the rank column.  A tool that writes
negated scores (-BM25, a distance) and numbers its ranks from the most negative score puts rank 1
on the lowest score, and trec_eval ranks such a query upside down.  The rule: a query with at least
two distinct scores is flagged when, for every two of its lines with score_i < score_j,
rank_i < rank_j.  Constant ranks are never flagged (equal ranks are not rising).

The check is made while a file is read and costs almost nothing on a run whose ranks agree with
trec_eval's order.  The file is taken in *pieces* (a query's lines next to each other in one block of
the file).  A piece is *cleared* -- its query cannot be flagged -- by one pair of its lines with
different scores whose ranks do not rise with them; the first and last lines of the piece are tried
first, then the lines holding its lowest and its highest score, so only those lines' ranks are
read.  The lines of the pieces not cleared (a negated run: all of them) are kept with their ranks,
and each of their queries gets the exact check once every piece of it has been read
(:meth:`RisingRanks.settle`), unless another of its pieces cleared it.
"""
from __future__ import annotations

from functools import cache
from typing import Callable, Sequence

from ...dependencies import deferred
from ... import thresholds
from ...fast.arrow import call, take as arrow_take
from ...fast.groups import group_order, id_runs, spread
from ...fast.parallel import numbers
from ...fast.strings import run_starts, take

np = deferred("numpy")
pa = deferred("pyarrow")

NOTE = "rising_ranks"        # Run.notes key of the evidence a reading gathered (see inputs.reading.read_with)

@cache
def _pending_schema() -> pa.Schema:
    return pa.schema([("qid", pa.string()), ("score", pa.float64()), ("rank", pa.int64())])


class RisingRanks:
    """What the pieces of a run read so far tell of its queries' rank columns: the queries some piece
    cleared, the lines (qid, score, rank) of the pieces not cleared, and how many queries :meth:`settle`
    decided and found flagged."""

    def __init__(self, cleared: list[pa.Array] | None = None, pending: list[pa.Table] | None = None) -> None:
        self.cleared: list[pa.Array] = list(cleared or [])     # query ids, repeated at will
        self.pending: list[pa.Table] = list(pending or [])     # (qid, score, rank) lines
        self.flagged = 0          # queries settled and flagged ...
        self.queries = 0          # ... of the queries settled

    @classmethod
    def of_lines(cls, qid, score, rank) -> "RisingRanks":
        """The evidence of consecutive lines of a run: ``qid`` (an Arrow text column), ``score``, ``rank``
        (an Arrow int64 column, or a binary column of 1 to 18 ASCII digits per value, as the fast reader
        checks them: only the ranks looked at are converted)."""
        out = cls()
        n = len(qid)
        if n == 0:
            return out
        qid = _one_chunk(qid)
        if qid.type != pa.string():
            from pyarrow.compute import CastOptions
            qid = call("cast", qid, options=CastOptions.safe(pa.string()))
        file_score = score = numbers(score)
        ranks_at = _rank_reader(_one_chunk(rank))
        # the pieces: runs of one qid, or, when a block's queries are interleaved line by line, the lines
        # of each query gathered (stable: file order kept within each)
        starts = run_starts(qid, most=max(n // thresholds.FEW_RUNS_FRACTION, 1))
        position = None                           # row of the file at each place of the pieces' order
        if starts is None:
            codes = call("dictionary_encode", qid).indices.to_numpy(zero_copy_only=False)
            position = group_order(codes)
            grouped = codes[position]
            starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
            score = score[position]
        ends = np.r_[starts[1:], n]

        def row(places: np.ndarray) -> np.ndarray:
            return places if position is None else position[places]

        undecided = ~_cleared(score[starts], score[ends - 1], ranks_at(row(starts)), ranks_at(row(ends - 1)))
        tried = np.flatnonzero(undecided)
        if tried.size:          # the pieces whose first and last lines tell nothing: their lowest and highest scores
            places = _places(starts[tried], ends[tried], n)
            low, high = _extreme_places(score[places], ends[tried] - starts[tried])
            undecided[tried[_cleared(score[places[low]], score[places[high]], ranks_at(row(places[low])),
                                     ranks_at(row(places[high])))]] = False
        done = np.flatnonzero(~undecided)
        if done.size:
            out.cleared.append(take(qid, row(starts[done])))
        still = np.flatnonzero(undecided)
        if still.size:
            rows = row(_places(starts[still], ends[still], n))
            out.pending.append(pa.Table.from_arrays([take(qid, rows), pa.array(file_score[rows]),
                                                     pa.array(ranks_at(rows))], schema=_pending_schema()))
        return out

    def add(self, other: "RisingRanks | None") -> None:
        """Take in the evidence of other lines of the same run."""
        if other is not None:
            self.cleared += other.cleared
            self.pending += other.pending
            self.flagged += other.flagged
            self.queries += other.queries

    def settle(self, keep: Sequence[str] = ()) -> int:
        """Decide every query read so far but those of ``keep`` (their lines may go on in the part of the file
        still to be read): count how many there are (:attr:`queries`) and how many are flagged (:attr:`flagged`),
        and forget them.  Each query must be decided once: a caller settles a query only when all its lines are in.
        Returns :attr:`flagged`, the count so far."""
        keep = pa.array(list(keep), pa.string())
        cleared = pa.concat_arrays(self.cleared) if self.cleared else pa.array([], pa.string())
        now = pa.concat_tables(self.pending).combine_chunks() if self.pending else _pending_schema().empty_table()
        self.pending, self.cleared = [], []
        if len(keep):
            held = _in(now.column("qid"), keep)
            if held.true_count:
                self.pending = [_filter(now, held)]
                now = _filter(now, _not(held))
            held = _in(cleared, keep)
            if held.true_count:
                self.cleared = [_filter(cleared, held)]
                cleared = _filter(cleared, _not(held))
        if len(cleared):
            self.queries += call("count_distinct", cleared).as_py()
            if now.num_rows:
                now = _filter(now, _not(_in(now.column("qid"), cleared)))
        flagged, queries = _flagged_queries(now)
        self.flagged += flagged
        self.queries += queries
        return self.flagged

    def split(self, order_of: Callable[[pa.Array], tuple[np.ndarray, np.ndarray]], n: int) -> "list[RisingRanks]":
        """The evidence in ``n`` parts by query: ``order_of(qid column)`` gives a permutation putting the rows
        in part order and the bounds of each part in it (:func:`treckit.engines.core.bucket_order`)."""
        out = [RisingRanks() for _ in range(n)]
        for kind, items in (("cleared", self.cleared), ("pending", self.pending)):
            for x in items:
                order, bounds = order_of(x.column("qid") if kind == "pending" else x)
                for i in np.flatnonzero(np.diff(bounds)).tolist():
                    getattr(out[i], kind).append(arrow_take(x, order[bounds[i]:bounds[i + 1]]))
        return out

    @property
    def pending_lines(self) -> int:
        return sum(t.num_rows for t in self.pending)


def _cleared(s_a: np.ndarray, s_b: np.ndarray, r_a: np.ndarray, r_b: np.ndarray) -> np.ndarray:
    """Whether each pair of lines (a, b) of a query shows that its ranks do not rise with its scores:
    different scores, and ranks that do not go the same way (equal ranks included)."""
    rising = ((s_a < s_b) & (r_a < r_b)) | ((s_a > s_b) & (r_a > r_b))
    return (s_a != s_b) & ~rising


def _places(lo: np.ndarray, hi: np.ndarray, n: int) -> np.ndarray:
    """Every place of the ranges lo[i]..hi[i]-1, in order."""
    lengths = hi - lo
    total = int(lengths.sum())
    if total == n:
        return np.arange(n)
    return np.repeat(lo - (np.cumsum(lengths) - lengths), lengths) + np.arange(total)


def _extreme_places(score: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For consecutive segments of ``score`` of ``lengths``: the first place of each holding its lowest, and
    its highest, score."""
    first = np.cumsum(lengths) - lengths
    out = []
    for reduce in (np.minimum, np.maximum):
        hits = np.flatnonzero(score == np.repeat(reduce.reduceat(score, first), lengths))
        out.append(hits[np.searchsorted(hits, first)])
    return out[0], out[1]


def _flagged_queries(t: pa.Table) -> tuple[int, int]:
    """(how many queries of the lines ``t`` -- every line of each -- are flagged by the rule, how many queries they
    are): sorted by score, each group of equal scores has ranks all below the next group's, and there are two
    groups at least."""
    n = t.num_rows
    if n == 0:
        return 0, 0
    starts, run_code, ids = id_runs(_one_chunk(t.column("qid")))
    codes = spread(run_code, starts, n)
    score, rank = numbers(t.column("score")), numbers(t.column("rank"))
    if run_code.size == len(ids) and np.all((codes[1:] != codes[:-1]) | (score[1:] >= score[:-1])):
        c, s, r = codes, score, rank      # each query's lines together, lowest score first (a negated run as written)
    else:
        order = np.lexsort((score, codes))
        c, s, r = codes[order], score[order], rank[order]
    group = np.flatnonzero(np.r_[True, (c[1:] != c[:-1]) | (s[1:] != s[:-1])])
    low, high = np.minimum.reduceat(r, group), np.maximum.reduceat(r, group)
    owner = c[group]
    broken = (owner[1:] == owner[:-1]) & ~(high[:-1] < low[1:])
    queries = len(ids)
    groups = np.bincount(owner, minlength=queries)
    bad = np.bincount(owner[1:][broken], minlength=queries)
    return int(np.count_nonzero((groups >= 2) & (bad == 0))), queries


def _rank_reader(rank: pa.Array) -> Callable[[np.ndarray], np.ndarray]:
    """A function giving the rank (int64) of given rows: of a rank column of integers, or of ASCII digits (only
    the rows asked for are converted)."""
    if pa.types.is_integer(rank.type):
        values = rank.to_numpy(zero_copy_only=False)
        return lambda rows: values[rows]
    from pyarrow.compute import CastOptions
    text, to_int = rank.view(pa.string()), CastOptions.safe(pa.int64())
    return lambda rows: call("cast", arrow_take(text, rows), options=to_int).to_numpy(zero_copy_only=False)


def _one_chunk(col):
    if isinstance(col, pa.ChunkedArray):
        return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()
    return col


def _in(col, values: pa.Array) -> pa.BooleanArray:
    from pyarrow.compute import SetLookupOptions
    return call("is_in", _one_chunk(col), options=SetLookupOptions(values))


def _not(mask):
    return call("invert", mask)


def _filter(x, mask):
    return call("filter", x, mask)
