"""What every engine shares: a run split into parts of whole queries, the judgments of a part, a
block of a run file read by the one reader, and the evaluation of parts merged into the result the
in-memory path gives (:func:`treckit.engines.memory.evaluate_part` / :func:`~treckit.engines.memory.merge_parts`).

Per-query values depend only on the query's run lines and judgments; what looks at the whole run
(the order of queries, -c's placeholders, --missing, the sanity warnings, -Z, the summary, the run
tag) is applied once, by ``merge_parts``, from what each part reports.
"""
from __future__ import annotations

import zlib
from dataclasses import replace

from ..dependencies import deferred
from ..inputs.formats.trec import RunReadings
from ..ranking.judged import qrels_side
from .memory import EvalOptions, EvalResult, PartValues, empty_run, evaluate_part, merge_parts, restrict_qrels
from ..model import Qrels, Run
from ..fast.groups import id_runs, spread
from ..inputs.reading import read_with

np = deferred("numpy")
pa = deferred("pyarrow")

__all__ = ["EvalOptions", "EvalResult", "PartValues", "QrelsByQuery", "block_readings", "check_qrels", "empty_run", "evaluate_part",
           "bucket_order", "merge_parts", "query_buckets", "read_run_block", "restrict_qrels", "split_by_query",
           "split_rows"]


def query_buckets(qids: list[str], n: int) -> np.ndarray:
    """The part (0..n-1) of each query id: CRC-32 of its UTF-8 bytes modulo ``n``, the same in every
    process and on every machine (Python's ``hash`` of a string is salted per process)."""
    return np.fromiter((zlib.crc32(q.encode("utf-8", "surrogatepass")) % n for q in qids), np.int64, len(qids))


def row_buckets(qid_column, n: int, cache: dict[str, int] | None = None) -> np.ndarray:
    """The part of each row of a qid column (one CRC per distinct query; ``cache`` keeps them across calls)."""
    starts, run_code, ids = id_runs(qid_column)
    if cache is None:
        per_id = query_buckets(ids, n)
    else:
        new = [q for q in ids if q not in cache]
        cache.update(zip(new, query_buckets(new, n).tolist()))
        per_id = np.array([cache[q] for q in ids], np.int64)
    return spread(per_id[run_code], starts, len(qid_column))


def bucket_order(qid_column, n: int, cache: dict[str, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(a stable permutation putting the rows in part order, the bounds of each part in it) for ``n``
    parts by query (:func:`row_buckets`; ``cache`` as there)."""
    bucket = row_buckets(qid_column, n, cache)
    order = np.argsort(bucket, kind="stable")
    return order, np.searchsorted(bucket[order], np.arange(n + 1))


def split_rows(run: Run, n: int) -> list[np.ndarray]:
    """For each of ``n`` parts, the rows of ``run`` whose query falls in it (ascending: file order kept)."""
    order, bounds = bucket_order(run.table.column("qid"), n)
    return [order[bounds[i]:bounds[i + 1]] for i in range(n)]


def split_by_query(run: Run, n: int, rows: list[np.ndarray] | None = None) -> list[Run]:
    """``run`` as ``n`` runs of whole queries, by a stable hash of the qid (deterministic; see
    :func:`query_buckets`); each keeps its lines' order and its ids' written texts.  ``rows``: the
    parts' rows when the caller has them already (:func:`split_rows`)."""
    out = []
    for rows in (rows if rows is not None else split_rows(run, n)):
        t = run.table.take(pa.array(rows, pa.int64()))
        qids = set(id_runs(t.column("qid"))[2])
        out.append(replace(run, table=t, written={k: v for k, v in run.written.items() if k[0] in qids}))
    return out


class QrelsByQuery:
    """The qrels grouped by query once, so that the judgments of any set of queries are cut out without a
    pass over all of them (a streaming engine asks for each chunk's queries)."""

    def __init__(self, qrels: Qrels):
        self.qrels = qrels
        t = qrels.table
        starts, run_code, ids = id_runs(t.column("qid"))
        codes = spread(run_code, starts, t.num_rows)
        order = np.argsort(codes, kind="stable")             # each query's judgments together, in their order
        counts = np.bincount(codes, minlength=len(ids))
        first = np.concatenate(([0], np.cumsum(counts)[:-1]))
        self.table = t.take(pa.array(order, pa.int64()))
        self.span = {q: (int(first[i]), int(counts[i])) for i, q in enumerate(ids)}

    @property
    def qids(self) -> list[str]:
        return list(self.span)

    def take(self, qids) -> Qrels:
        """The judgments of the queries ``qids`` (those without any are left out)."""
        spans = [self.span[q] for q in qids if q in self.span]
        if not spans:
            return Qrels(self.table.slice(0, 0))
        rows = np.concatenate([np.arange(a, a + k) for a, k in spans])
        wanted = set(qids)
        written = {k: v for k, v in self.qrels.written.items() if k[0] in wanted} if self.qrels.written else {}
        return Qrels(self.table.take(pa.array(rows, pa.int64())), written)


def check_qrels(qrels: Qrels) -> None:
    """The checks of the judgments that look at all of them (a doc judged twice for a query, too many
    distinct grades), done once before a run is evaluated in parts (each part sees only its queries)."""
    qrels_side(qrels)


def read_run_block(data: bytes, path: str, first_line: int, reading, *, lean: bool = True, readings=None) -> Run:
    """Whole lines of the TREC run ``path`` (``data``, starting at its line ``first_line``) read by the one
    reader with ``reading``'s options: errors name the file and the true line.  ``readings``: a
    :func:`block_readings` of the file, where lines read by an explicit rule (doc ids with spaces, extra
    columns) are counted, to be said once for the whole file (``readings.report()``); without it each
    block says its own."""
    return read_with(reading, path, data=data, first_line=first_line, lean=lean, warn=None, readings=readings).run


def block_readings(path: str, columns: int = 6):
    """The counter of a file's lines read by an explicit rule, for :func:`read_run_block`."""
    return RunReadings(str(path), columns)
