"""Qrels built in code from your own records, and verified before they are trusted.

A silently dropped topic inflates every score computed over the qrels, so building and checking are
explicit: :func:`build_qrels` maps records to rows with a :class:`QrelsSpec` (duplicates fail fast by
default), and :class:`QrelsVerification` checks the topics against the ones you expect::

    spec = QrelsSpec(topic_id=lambda r: r["qid"], doc_id=lambda r: doc_id_md5(r["text"]),
                     grade=lambda r: r["label"])
    qrels = build_qrels(records=rows, spec=spec)
    qrels.verify(expected_topic_ids=topics)                 # raises QrelsVerificationError, naming every topic
    write_qrel_file(qrel_out_file=Path("test.qrels"), qrels=qrels)

This row-oriented :class:`Qrels` converts to and from the columnar :class:`treckit.model.Qrels` the
engine uses (:meth:`Qrels.to_columnar`, :meth:`Qrels.from_columnar`), and ``treckit.evaluate`` takes
either.
"""
from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Generic, Iterable, Literal, Sequence, TypeVar

from .console.errors import InputError, listing

R = TypeVar("R")
OnDuplicate = Literal["error", "keep_max", "keep_last"]
_SHOWN = 50            # offending topics/pairs listed in one message before "... and N more"


class QrelsVerificationError(ValueError):
    """Qrels that failed a check; ``problems`` lists every offending topic or pair."""

    def __init__(self, message: str, problems: Sequence[str] = ()):
        self.problems = list(problems)
        super().__init__(message)


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


@dataclass(frozen=True)
class Qrels:
    """Judgments as rows, in the order given (duplicates are kept: :meth:`verify` finds them)."""

    rows: Sequence[QrelRow]

    def __post_init__(self) -> None:
        rows = tuple(self.rows)
        for i, row in enumerate(rows):
            if not isinstance(row, QrelRow):
                raise TypeError(f"Qrels rows must be QrelRow objects; row {i} is {type(row).__name__}")
        object.__setattr__(self, "rows", rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    @property
    def topic_ids(self) -> list[str]:
        """The topics with at least one row, in order of first appearance."""
        return list(dict.fromkeys(r.topic_id for r in self.rows))

    def verify(self, expected_topic_ids: Iterable[str], warn: bool = False) -> "Qrels":
        """Every check of :class:`QrelsVerification` (complete topics, no extras, no duplicates)."""
        QrelsVerification(self, expected_topic_ids=expected_topic_ids, warn=warn).all()
        return self

    def to_columnar(self):
        """The engine's columnar :class:`treckit.model.Qrels` (same rows, same order, iter ``0``)."""
        from .model import Qrels as Columnar
        return Columnar.from_columns([r.topic_id for r in self.rows], [r.doc_id for r in self.rows],
                                     [r.grade for r in self.rows])

    @classmethod
    def from_columnar(cls, qrels) -> "Qrels":
        """From the engine's columnar qrels; a negative grade (trec_eval's "pooled, unjudged") has no
        place in a QrelRow and is an error rather than a silent change."""
        t = qrels.table
        rows = []
        for q, d, g in zip(t.column("qid").to_pylist(), t.column("docid").to_pylist(), t.column("grade").to_pylist()):
            if g < 0:
                raise InputError(f"query {q!r} doc {d!r} has the negative grade {g}, which a QrelRow cannot hold",
                                 fix="drop or re-grade the negative judgments before converting")
            rows.append(QrelRow(q, d, g))
        return cls(rows)


@dataclass(frozen=True)
class QrelsSpec(Generic[R]):
    """How a record of type ``R`` becomes a row, and what a repeated (topic, doc) pair means."""

    topic_id: Callable[[R], str]
    doc_id: Callable[[R], str]
    grade: Callable[[R], int]
    on_duplicate: OnDuplicate = "error"

    def __post_init__(self) -> None:
        if self.on_duplicate not in ("error", "keep_max", "keep_last"):
            raise ValueError(f"on_duplicate must be 'error', 'keep_max' or 'keep_last', got {self.on_duplicate!r}")


def build_qrels(*, records: Iterable[R], spec: QrelsSpec[R]) -> Qrels:
    """Rows from ``records`` by ``spec``, in order of first appearance of each (topic, doc) pair.

    A repeated pair fails at once by default, naming the pair and both records' positions;
    ``keep_max`` keeps the larger grade, ``keep_last`` the later record's.
    """
    grades: dict[tuple[str, str], int] = {}
    first_seen: dict[tuple[str, str], int] = {}
    for i, record in enumerate(records):
        try:
            row = QrelRow(spec.topic_id(record), spec.doc_id(record), spec.grade(record))
        except ValueError as exc:
            raise ValueError(f"record {i}: {exc}") from None
        key = (row.topic_id, row.doc_id)
        if key in grades:
            if spec.on_duplicate == "error":
                raise QrelsVerificationError(
                    f"record {i}: (topic {key[0]!r}, doc {key[1]!r}) was already judged by record {first_seen[key]}",
                    [f"{key[0]}/{key[1]}"])
            grades[key] = max(grades[key], row.grade) if spec.on_duplicate == "keep_max" else row.grade
        else:
            grades[key] = row.grade
            first_seen[key] = i
    return Qrels([QrelRow(t, d, g) for (t, d), g in grades.items()])


def doc_id_md5(text: str) -> str:
    """The hex MD5 of ``text``'s UTF-8 bytes: a stable doc id for passages without one."""
    return hashlib.md5(text.encode("utf-8")).hexdigest()


class QrelsVerification:
    """Chainable checks of qrels (these rows, or the engine's columnar qrels) against the topics you expect.  Each check raises
    :class:`QrelsVerificationError` naming every offending topic or pair (``warn=True``: a
    ``UserWarning`` instead), and returns ``self`` so checks chain::

        QrelsVerification(qrels, expected_topic_ids=topics).complete_topics().no_duplicates()
    """

    def __init__(self, qrels: Qrels, expected_topic_ids: Iterable[str], warn: bool = False):
        self.qrels = qrels
        self.expected = list(dict.fromkeys(expected_topic_ids))
        self.warn = warn
        if isinstance(qrels, Qrels):
            self._pairs = [(r.topic_id, r.doc_id) for r in qrels.rows]
        else:                                   # the engine's columnar qrels (negative grades and all)
            t = qrels.table
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

    def _run(self, *checks: str) -> "QrelsVerification":
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
        return self._run("complete")

    def no_extra_topics(self) -> "QrelsVerification":
        """No row belongs to a topic that is not expected."""
        return self._run("extras")

    def no_duplicates(self) -> "QrelsVerification":
        """No (topic, doc) pair is judged twice."""
        return self._run("duplicates")

    def all(self) -> "QrelsVerification":
        """All three checks, reported together: one error lists every problem of every kind."""
        return self._run("complete", "extras", "duplicates")


def verify_qrels_topics(*, expected_topic_ids: Iterable[str], qrels: Qrels, require_no_extras: bool = True) -> None:
    """Every expected topic is judged and, with ``require_no_extras``, no other topic is."""
    check = QrelsVerification(qrels, expected_topic_ids=expected_topic_ids)
    check._run("complete", *(["extras"] if require_no_extras else []))


def write_qrel_file(*, qrel_out_file: Path, qrels: Qrels) -> None:
    """TREC qrels ``topic_id 0 doc_id grade``, sorted by (topic_id, doc_id), ids escaped like every
    treckit writer (so ids with spaces survive trec_eval), written atomically."""
    from .formats.trec import write_trec_qrels
    write_trec_qrels(qrels.to_columnar(), qrel_out_file, escape_ids=True, sort=True)
