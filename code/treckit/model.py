"""The data model: qrels and runs as columnar tables (pyarrow), ids always strings.

Reading and writing live in :mod:`treckit.formats`; this module only holds data
and converts it to the shapes other tools take (pandas, pytrec_eval dicts).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import pyarrow as pa

from .fast.groups import positions

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
        it = df[cols["iter"]].astype(str) if "iter" in cols else None
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
