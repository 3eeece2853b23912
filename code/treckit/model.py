"""The data model: qrels and runs as columnar tables (pyarrow), ids always strings.

Reading and writing live in :mod:`treckit.formats`; this module only holds data
and converts it to the shapes other tools take (pandas, pytrec_eval dicts).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping

import numpy as np
import pyarrow as pa

from . import thresholds
from .parallel import ordered_map

QRELS_SCHEMA = pa.schema([("qid", pa.string()), ("iter", pa.string()), ("docid", pa.string()), ("grade", pa.int64())])
RUN_SCHEMA = pa.schema([("qid", pa.string()), ("docid", pa.string()), ("score", pa.float64()),
                        ("rank", pa.int64()), ("tag", pa.string())])


def _table(columns: Mapping[str, Any], schema: pa.Schema) -> pa.Table:
    arrays = []
    for f in schema:
        col = columns[f.name]
        arrays.append(col if isinstance(col, (pa.Array, pa.ChunkedArray)) and col.type == f.type
                      else pa.array(col, type=f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


@dataclass(frozen=True)
class Qrels:
    """Relevance judgments: one row per (qid, docid) with an integer grade (negative grades kept).

    ``written``: as :attr:`Run.written`, the text of the few ids whose text in the file they were
    read from is not the escaped id; writing writes it back, so qrels and runs converted together
    still name each document with the same bytes.
    """

    table: pa.Table
    written: Mapping[tuple[str, str], str] = field(default_factory=dict, hash=False)

    @classmethod
    def from_columns(cls, qid: Iterable[str], docid: Iterable[str], grade: Iterable[int],
                     iter: Iterable[str] | None = None) -> "Qrels":
        qid, docid, grade = list(qid), list(docid), list(grade)
        it = list(iter) if iter is not None else ["0"] * len(qid)
        return cls(_table({"qid": qid, "iter": it, "docid": docid, "grade": grade}, QRELS_SCHEMA))

    @classmethod
    def from_dict(cls, qrels: Mapping[str, Mapping[str, int]]) -> "Qrels":
        """From pytrec_eval / ir_measures' ``{qid: {docid: grade}}``."""
        rows = [(q, d, int(g)) for q, docs in qrels.items() for d, g in docs.items()]
        return cls.from_columns([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])

    @classmethod
    def from_pandas(cls, df) -> "Qrels":
        cols = {c.lower(): c for c in df.columns}
        q, d = df[cols.get("qid", cols.get("query_id"))], df[cols.get("docid", cols.get("doc_id"))]
        g = df[cols.get("grade", cols.get("relevance", cols.get("rel")))]
        it_col = cols.get("iter", cols.get("iteration"))         # ir_measures' name: the subtopic of diversity qrels
        it = df[it_col].astype(str) if it_col is not None else None
        return cls.from_columns(q.astype(str), d.astype(str), g.astype("int64"), it)

    def __len__(self) -> int:
        return self.table.num_rows

    @property
    def qids(self) -> list[str]:
        return self.table.column("qid").to_pylist()

    def to_pandas(self):
        return self.table.to_pandas()

    def to_dict(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for q, d, g in zip(*(self.table.column(c).to_pylist() for c in ("qid", "docid", "grade"))):
            out.setdefault(q, {})[d] = g
        return out


@dataclass(frozen=True)
class Run:
    """A ranking: one row per (qid, docid) with a double score, the given rank and the run tag.

    ``rank`` is the rank as given (or the list position for formats without ranks);
    trec_eval ignores it, and so does evaluation unless asked (``order="rank"``).

    ``written`` keeps, by (qid, docid), the text a doc id had in the TREC file it was read from,
    for the few ids whose text is not the escaped id (:func:`treckit.ids.keeps_text`: a foreign
    ``a%41b``, a lowercase ``%0a``, a raw no-break space).  Ties are ordered on, and writing
    writes, that text; every other id's written form is its escape (:func:`treckit.ids.written_ids`).
    Keyed by ids rather than rows, it stays true whatever reorders or filters the table.
    """

    table: pa.Table
    name: str | None = None
    notes: dict = field(default_factory=dict, compare=False)
    written: Mapping[tuple[str, str], str] = field(default_factory=dict, hash=False)

    @classmethod
    def from_columns(cls, qid: Iterable[str], docid: Iterable[str], score: Iterable[float],
                     rank: Iterable[int] | None = None, tag: str | Iterable[str] = "treckit") -> "Run":
        qid, docid, score = list(qid), list(docid), list(score)
        if rank is None:
            rank = positions(qid)
        tags = [tag] * len(qid) if isinstance(tag, str) else list(tag)
        return cls(_table({"qid": qid, "docid": docid, "score": score, "rank": list(rank), "tag": tags}, RUN_SCHEMA))

    @classmethod
    def from_dict(cls, run: Mapping[str, Mapping[str, float]], tag: str = "treckit") -> "Run":
        """From pytrec_eval / ir_measures' ``{qid: {docid: score}}``."""
        rows = [(q, d, float(s)) for q, docs in run.items() for d, s in docs.items()]
        return cls.from_columns([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], tag=tag)

    @classmethod
    def from_pandas(cls, df, tag: str = "treckit") -> "Run":
        cols = {c.lower(): c for c in df.columns}
        q, d = df[cols.get("qid", cols.get("query_id"))], df[cols.get("docid", cols.get("doc_id"))]
        s = df[cols["score"]].astype("float64")
        r = df[cols["rank"]].astype("int64") if "rank" in cols else None
        t = df[cols["tag"]].astype(str) if "tag" in cols else tag
        return cls.from_columns(q.astype(str), d.astype(str), s, r, t)

    def __len__(self) -> int:
        return self.table.num_rows

    @property
    def tag(self) -> str:
        """The run tag trec_eval reports: the one on the last line."""
        if self.name:
            return self.name
        n = self.table.num_rows
        last = self.table.column("tag")[n - 1].as_py() if n else None
        return last if last is not None else self.notes.get("tag", "treckit")

    def to_pandas(self):
        return self.table.to_pandas()

    def to_dict(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for q, d, s in zip(*(self.table.column(c).to_pylist() for c in ("qid", "docid", "score"))):
            out.setdefault(q, {})[d] = s
        return out


def as_string(column):
    """A qid/docid/tag column as plain strings (readers may hand them over dictionary-encoded)."""
    return column.cast(pa.string()) if pa.types.is_dictionary(column.type) else column


def repeated_column(n: int, value, type_: pa.DataType = pa.string()) -> pa.ChunkedArray:
    """A column of ``n`` copies of ``value`` (None: nulls) whose chunks share one buffer: a run
    tag, or a reader's column nobody will read, costs next to no memory however long the run."""
    block = min(n, thresholds.CONSTANT_COLUMN_BLOCK_ROWS)

    def piece(k: int) -> pa.Array:
        return pa.nulls(k, type_) if value is None else pa.repeat(pa.scalar(value, type_), k)

    full = piece(block) if block else None
    return pa.chunked_array([full] * (n // block if block else 0) + [piece(n % block if block else 0)], type_)


def id_codes(column) -> tuple[np.ndarray, list[str]]:
    """(code of each row, the distinct ids in order of first appearance) of a string or dictionary column."""
    starts, run_code, ids = id_runs(column)
    return spread(run_code, starts, len(column)), ids


def spread(values: np.ndarray, starts: np.ndarray, n: int) -> np.ndarray:
    """One value per run (runs starting at ``starts`` in ``n`` rows) as one value per row."""
    return np.repeat(values, np.diff(np.append(starts, n)))


def expand_ranges(owner: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (owner[i], j) for every j in lo[i]..hi[i]-1."""
    n = hi - lo
    total = int(n.sum())
    first = np.cumsum(n) - n
    return np.repeat(owner, n), np.repeat(lo, n) + (np.arange(total) - np.repeat(first, n))


def query_matrix_pays(lengths: np.ndarray, n: int) -> bool:
    """Whether queries of these ``lengths`` (``n`` values in all) lay out one query per row, a
    (queries x longest) matrix, in a bounded size: at most about twice as many cells as values
    (thresholds.QUERY_MATRIX_*).  Working on such a matrix row by row (sorting each query's values,
    comparing a row with its own query's) is much faster than on the whole run by two keys."""
    width = int(lengths.max()) if lengths.size else 0
    most_cells = thresholds.QUERY_MATRIX_GROWTH * n + thresholds.QUERY_MATRIX_SLACK
    return lengths.size * width <= most_cells and lengths.size <= thresholds.QUERY_MATRIX_MAX_QUERIES


def query_slices(starts: np.ndarray, n: int) -> list[tuple[range, range]]:
    """Consecutive slices of the queries (their rows together, starting at ``starts``; ``n`` rows in
    all) of about ``thresholds.ROW_SORT_SLICE_CELLS`` matrix cells each, as (queries, rows): each slice
    is laid out on its own (:func:`laid_out`), as wide as its longest query, so that slices take little
    memory at a time and can be worked on side by side."""
    bounds = np.append(starts, n)
    step = max(1, thresholds.ROW_SORT_SLICE_CELLS // max(1, int(np.diff(bounds).max()) if starts.size else 1))
    cuts = list(range(0, starts.size, step)) + [starts.size]
    return [(range(a, b), range(int(bounds[a]), int(bounds[b]))) for a, b in zip(cuts[:-1], cuts[1:])]


def by_query_slices(fn: Callable[[range, range], Any], starts: np.ndarray, n: int) -> Iterator[Any]:
    """``fn(queries, rows)`` of each of :func:`query_slices`, computed side by side, yielded in order."""
    return ordered_map(lambda s: fn(*s), query_slices(starts, n))


def laid_out(values: np.ndarray, lengths: np.ndarray, pad) -> np.ndarray:
    """``values``, queries of ``lengths`` one after the other, one query per row, short rows ended with ``pad``."""
    width = int(lengths.max()) if lengths.size else 0
    if (lengths == width).all():
        return values.reshape(lengths.size, width)
    m = np.empty((lengths.size, width), values.dtype)
    m[:] = pad[:width] if isinstance(pad, np.ndarray) else pad
    # each row's first cells, in row-major order, are its query's values in the order given
    m[np.arange(width) < lengths[:, None]] = values
    return m


def id_runs(column) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The column as runs of equal ids: (first row of each run, code of each run, the distinct ids
    in order of first appearance).  A run file lists each query's lines together, so its qid
    column is a few thousand runs however many lines it has: one comparison of neighbours finds
    them, and only each run's first value becomes a Python string."""
    from .strings import run_starts, take

    arr = column if isinstance(column, (pa.Array, pa.ChunkedArray)) else pa.array(column, pa.string())
    n = len(arr)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int32), []
    if not pa.types.is_dictionary(arr.type):
        starts = run_starts(arr, most=max(n // thresholds.FEW_RUNS_FRACTION, thresholds.FEW_RUNS_MIN))
        if starts is not None:                     # few runs (or few rows): a Python pass over run heads
            return (starts,) + _first_appearance(take(arr, starts).to_pylist())
        # scattered values: Arrow's dictionary encoding gives the codes (chunk by chunk, then unified)
        import pyarrow.compute as pc
        arr = pc.dictionary_encode(arr)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.unify_dictionaries()
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    codes = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in chunks]).astype(np.int32)
    dictionary = chunks[0].dictionary.to_pylist()
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    if starts.size <= max(n // thresholds.FEW_RUNS_FRACTION, thresholds.FEW_RUNS_MIN):
        run_code, ids = _first_appearance([dictionary[c] for c in codes[starts].tolist()])
        return starts, run_code, ids
    # scattered: renumber the dictionary codes by first appearance (the first row of each code)
    first = np.full(len(dictionary), codes.size, np.int64)
    step = thresholds.ID_RENUMBER_SLICE_ROWS
    for a in range(0, codes.size, step):           # in slices: no index array as long as the column
        np.minimum.at(first, codes[a:a + step], np.arange(a, min(a + step, codes.size)))
    used = np.flatnonzero(first < codes.size)
    by_first = used[np.argsort(first[used], kind="stable")]
    rank = np.empty(len(dictionary), np.int32)
    rank[by_first] = np.arange(by_first.size, dtype=np.int32)
    codes = rank[codes]
    return starts, codes[starts], [dictionary[i] for i in by_first.tolist()]


def _first_appearance(values: list[str]) -> tuple[np.ndarray, list[str]]:
    """(code of each value, the distinct values), codes numbered by first appearance."""
    seen: dict[str, int] = {}
    codes = np.fromiter((seen.setdefault(v, len(seen)) for v in values), np.int32, len(values))
    return codes, list(seen)


def group_order(codes: np.ndarray) -> np.ndarray:
    """The stable permutation that puts equal codes (small non-negative integers) together; codes
    that fit 16 bits are radix-sorted (numpy does so for 16-bit keys), three times as fast."""
    if codes.size and int(codes.max()) < thresholds.RADIX_MAX_CODES:
        return np.argsort(codes.astype(np.uint16), kind="stable")
    return np.argsort(codes, kind="stable")


def positions(qid) -> np.ndarray:
    """1-based position of each row among the rows of its query, in input order."""
    codes, _ = id_codes(qid)
    if codes.size == 0:                 # (np.repeat of the empty counts would fail)
        return np.zeros(0, np.int64)
    order = group_order(codes)
    counts = np.bincount(codes)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    pos = np.empty(codes.size, np.int64)
    pos[order] = np.arange(codes.size) - np.repeat(starts, counts) + 1
    return pos
