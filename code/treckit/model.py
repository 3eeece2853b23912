"""The data model: qrels and runs as columnar tables (pyarrow), ids always strings.

This module holds data only: the tables, their rows as typed objects, the shapes other tools take (pandas,
pytrec_eval dicts) and the checks of judgments against the topics expected.  Reading is :mod:`treckit.inputs`,
writing :mod:`treckit.output`, ranking :mod:`treckit.ranking`; the speed tricks are :mod:`treckit.fast`.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Iterable, Mapping, Sequence

from .dependencies import deferred
from .console.errors import InputError, listing
from .fast.groups import positions

pa = deferred("pyarrow")

_SHOWN = 50            # offending topics/pairs listed in one message before "... and N more"



# the schemas are built on first use: pyarrow runs only when columns are
@cache
def qrels_schema() -> pa.Schema:
    return pa.schema([("qid", pa.string()), ("iter", pa.string()), ("docid", pa.string()), ("grade", pa.int64())])


@cache
def run_schema() -> pa.Schema:
    return pa.schema([("qid", pa.string()), ("docid", pa.string()), ("score", pa.float64()), ("rank", pa.int64()),
                      ("tag", pa.string())])


def _listed(values) -> Any:
    """A column's values as pyarrow reads them fastest: a list, an Arrow or a numpy array as it is, anything else
    (a pandas Series, a generator) as a list."""
    return values if isinstance(values, list) or type(values).__module__ in ("numpy", "pyarrow.lib") else list(values)


def _table(columns: Mapping[str, Any], schema: pa.Schema) -> pa.Table:
    arrays = []
    for f in schema:
        col = columns[f.name]
        arrays.append(col if isinstance(col, (pa.Array, pa.ChunkedArray)) and col.type == f.type
                      else pa.array(col, type=f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


@dataclass(frozen=True)
class QrelRow:
    """One judgment: ``grade`` (a non-negative int) of ``doc_id`` for ``topic_id``."""

    topic_id: str
    doc_id: str
    grade: int

    def __post_init__(self) -> None:
        for name in ("topic_id", "doc_id"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise ValueError(f"QrelRow.{name} must be a non-empty str, got {value!r}")
        if isinstance(self.grade, bool) or not isinstance(self.grade, int) or self.grade < 0:
            raise ValueError(f"QrelRow.grade must be a non-negative int, got {self.grade!r} "
                             f"(topic {self.topic_id!r}, doc {self.doc_id!r})")


@dataclass(frozen=True, init=False)
class Qrels:
    """Relevance judgments: one row per (qid, docid) with an integer grade (negative grades kept), as a columnar
    table in the order given (a pair judged twice is kept: :meth:`verify` finds it).

    ``Qrels(table)``, or ``Qrels(rows)`` / ``Qrels(rows=rows)`` from :class:`QrelRow` objects (seed 003's
    dataclass form, the typed builder's: :mod:`treckit.qrels`); :attr:`rows` gives them back.  ``written``: as :attr:`Run.written`, the text of the
    few ids whose text in the file they were read from is not the escaped id; writing writes it back, so qrels
    and runs converted together still name each document with the same bytes.
    """

    table: pa.Table
    written: Mapping[tuple[str, str], str] = field(default_factory=dict, hash=False)

    def __init__(self, table: pa.Table | Iterable[QrelRow] | None = None,
                 written: Mapping[tuple[str, str], str] | None = None, *, rows: Iterable[QrelRow] | None = None):
        if (table is None) == (rows is None):
            raise TypeError("Qrels takes its judgments once: a table or QrelRow objects, or rows=[QrelRow, ...]")
        if rows is not None:
            table = rows
        if not isinstance(table, pa.Table):
            table = _rows_table(table)
        object.__setattr__(self, "table", table)
        object.__setattr__(self, "written", {} if written is None else written)

    @classmethod
    def from_columns(cls, qid: Iterable[str], docid: Iterable[str], grade: Iterable[int],
                     iter: Iterable[str] | None = None) -> "Qrels":
        qid, docid, grade = _listed(qid), _listed(docid), _listed(grade)
        it = list(iter) if iter is not None else ["0"] * len(qid)
        return cls(_table({"qid": qid, "iter": it, "docid": docid, "grade": grade}, qrels_schema()))

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

    # ------------------------------------------------------------ as rows, and checked against the topics expected
    @property
    def rows(self) -> tuple[QrelRow, ...]:
        """The judgments as :class:`QrelRow` objects, in order; a negative grade (trec_eval's "pooled, unjudged")
        has no place in a QrelRow and is an error rather than a silent change."""
        t = self.table
        rows = []
        for q, d, g in zip(t.column("qid").to_pylist(), t.column("docid").to_pylist(), t.column("grade").to_pylist()):
            if g < 0:
                raise InputError(f"query {q!r} doc {d!r} has the negative grade {g}, which a QrelRow cannot hold",
                                 fix="drop or re-grade the negative judgments before converting")
            rows.append(QrelRow(q, d, g))
        return tuple(rows)

    def __iter__(self):
        return iter(self.rows)

    @property
    def topic_ids(self) -> list[str]:
        """The topics with at least one judgment, in order of first appearance."""
        return list(dict.fromkeys(self.table.column("qid").to_pylist()))

    def verify(self, expected_topic_ids: Iterable[str], warn: bool = False) -> "Qrels":
        """Every check of :class:`QrelsVerification` (complete topics, no extras, no duplicates)."""
        QrelsVerification(self, expected_topic_ids=expected_topic_ids, warn=warn).all()
        return self

    def to_columnar(self) -> "Qrels":
        """These qrels (the one Qrels type is columnar; kept for code written against the row form)."""
        return self

    @classmethod
    def from_columnar(cls, qrels: "Qrels") -> "Qrels":
        """``qrels``, checked to hold only grades a :class:`QrelRow` can hold (none negative)."""
        qrels.rows
        return cls(qrels.table, qrels.written)


def _rows_table(rows: Iterable[QrelRow]) -> pa.Table:
    rows = tuple(rows)
    for i, row in enumerate(rows):
        if not isinstance(row, QrelRow):
            raise TypeError(f"Qrels rows must be QrelRow objects; row {i} is {type(row).__name__}")
    return _table({"qid": [r.topic_id for r in rows], "iter": ["0"] * len(rows), "docid": [r.doc_id for r in rows],
                   "grade": [r.grade for r in rows]}, qrels_schema())


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
        qid, docid, score = _listed(qid), _listed(docid), _listed(score)
        if isinstance(qid, list):
            qid = pa.array(qid, pa.string())          # once: the positions and the table read the same array
        if rank is None:
            rank = positions(qid)
        tags = pa.repeat(pa.scalar(tag, pa.string()), len(qid)) if isinstance(tag, str) else list(tag)
        return cls(_table({"qid": qid, "docid": docid, "score": score, "rank": _listed(rank), "tag": tags},
                          run_schema()))

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


# ---------------------------------------------------------------- checking qrels against the topics expected
class QrelsVerificationError(ValueError):
    """Qrels that failed a check; ``problems`` lists every offending topic or pair."""

    def __init__(self, message: str, problems: Sequence[str] = ()):
        self.problems = list(problems)
        super().__init__(message)


class QrelsVerification:
    """Chainable checks of qrels against the topics you expect.  Each check raises
    :class:`QrelsVerificationError` naming every offending topic or pair (``warn=True``: a
    ``UserWarning`` instead), and returns ``self`` so checks chain::

        QrelsVerification(qrels, expected_topic_ids=topics).complete_topics().no_duplicates()
    """

    def __init__(self, qrels: Qrels, expected_topic_ids: Iterable[str], warn: bool = False):
        self.qrels = qrels
        self.expected = list(dict.fromkeys(expected_topic_ids))
        self.warn = warn
        t = qrels.table                         # negative grades and all
        self._pairs = list(zip(t.column("qid").to_pylist(), t.column("docid").to_pylist()))
        self._topics = list(dict.fromkeys(t for t, _ in self._pairs))

    # each check: (what the message says, the function finding the offenders)
    _CHECKS = {
        "complete": "expected topics have no judgments",
        "extras": "topics are judged but not expected",
        "duplicates": "(topic/doc) pairs are judged more than once",
    }

    def _offenders(self, check: str) -> list[str]:
        if check == "complete":
            have = set(self._topics)
            return [t for t in self.expected if t not in have]
        if check == "extras":
            want = set(self.expected)
            return [t for t in self._topics if t not in want]
        seen: set[tuple[str, str]] = set()
        dups: dict[tuple[str, str], None] = {}
        for key in self._pairs:
            if key in seen:
                dups[key] = None
            seen.add(key)
        return [f"{t}/{d}" for t, d in dups]

    def run(self, *checks: str) -> "QrelsVerification":
        """Run ``checks`` and report every offender of every one in one error (or warning)."""
        problems, parts = [], []
        for check in checks:
            found = self._offenders(check)
            if found:
                parts.append(f"{len(found)} {self._CHECKS[check]}: {listing(found, _SHOWN)}")
                problems.extend(found)
        if parts:
            if self.warn:
                warnings.warn("; ".join(parts), UserWarning, stacklevel=3)
            else:
                raise QrelsVerificationError("; ".join(parts), problems)
        return self

    def complete_topics(self) -> "QrelsVerification":
        """Every expected topic has at least one row."""
        return self.run("complete")

    def no_extra_topics(self) -> "QrelsVerification":
        """No row belongs to a topic that is not expected."""
        return self.run("extras")

    def no_duplicates(self) -> "QrelsVerification":
        """No (topic, doc) pair is judged twice."""
        return self.run("duplicates")

    def all(self) -> "QrelsVerification":
        """All three checks, reported together: one error lists every problem of every kind."""
        return self.run("complete", "extras", "duplicates")
