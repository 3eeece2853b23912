"""Qrels built in code from your own records, and verified before they are trusted.

A silently dropped topic inflates every score computed over the qrels, so building and checking are
explicit: :func:`build_qrels` maps records to rows with a :class:`QrelsSpec` (duplicates fail fast by
default), and :class:`QrelsVerification` checks the topics against the ones you expect::

    spec = QrelsSpec(topic_id=lambda r: r["qid"], doc_id=lambda r: doc_id_md5(r["text"]),
                     grade=lambda r: r["label"])
    qrels = build_qrels(records=rows, spec=spec)
    qrels.verify(expected_topic_ids=topics)                 # raises QrelsVerificationError, naming every topic
    write_qrel_file(qrel_out_file=Path("test.qrels"), qrels=qrels)

The qrels built are the one :class:`treckit.model.Qrels` type every reader returns and ``treckit.evaluate``
takes (its :attr:`~treckit.model.Qrels.rows` are the :class:`QrelRow` objects built).  :class:`QrelsBuilder`
builds the same qrels a judgment at a time.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Generic, Iterable, Literal, TypeVar

from .console.errors import InputError
from .model import QrelRow, Qrels, QrelsVerification, QrelsVerificationError
from .output.trec import write_trec_qrels

__all__ = ["QrelRow", "Qrels", "QrelsBuilder", "QrelsSpec", "QrelsVerification", "QrelsVerificationError",
           "build_qrels", "doc_id_md5", "verify_qrels_topics", "write_qrel_file"]

R = TypeVar("R")
OnDuplicate = Literal["error", "keep_max", "keep_last"]


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


@dataclass
class QrelsBuilder:
    """Collect judgments one by one; a repeated (qid, docid) is an error unless ``duplicates`` says otherwise.

    >>> b = QrelsBuilder(); b.add("q1", "Rio 2", 1); len(b.build())
    1
    """

    duplicates: str = "error"          # error | keep-first | keep-max | keep-last
    _grades: dict[tuple[str, str], int] = field(default_factory=dict)

    def add(self, qid: str, docid: str, grade: int = 1) -> "QrelsBuilder":
        if not isinstance(qid, str) or not isinstance(docid, str) or not qid or not docid:
            raise InputError(f"qid and docid must be non-empty strings, got {qid!r}, {docid!r}", fix="pass ids as str")
        if isinstance(grade, bool) or not isinstance(grade, int):
            raise InputError(f"grade must be an int, got {grade!r}", fix="pass an integer grade")
        key = (qid, docid)
        if key in self._grades:
            old = self._grades[key]
            if self.duplicates == "error":
                raise InputError(f"doc {docid!r} judged twice for query {qid!r}", fix="judge each doc once, or pick a duplicates policy")
            grade = {"keep-first": old, "keep-max": max(old, grade), "keep-last": grade}[self.duplicates]
        self._grades[key] = grade
        return self

    def add_relevant(self, qid: str, docids, grade: int = 1) -> "QrelsBuilder":
        for d in docids:
            self.add(qid, d, grade)
        return self

    def build(self) -> Qrels:
        keys = list(self._grades)
        return Qrels.from_columns([k[0] for k in keys], [k[1] for k in keys], list(self._grades.values()))


def build_qrels(*, records: Iterable[R], spec: QrelsSpec[R]) -> Qrels:
    """Rows from ``records`` by ``spec``, in order of first appearance of each (topic, doc) pair.

    A repeated pair fails at once by default, naming the pair and both records' positions;
    ``keep_max`` keeps the larger grade, ``keep_last`` the later record's.
    """
    built = QrelsBuilder(duplicates=spec.on_duplicate.replace("_", "-"))
    first_seen: dict[tuple[str, str], int] = {}
    for i, record in enumerate(records):
        try:
            row = QrelRow(spec.topic_id(record), spec.doc_id(record), spec.grade(record))
        except ValueError as exc:
            raise ValueError(f"record {i}: {exc}") from None
        key = (row.topic_id, row.doc_id)
        if key in first_seen and spec.on_duplicate == "error":
            raise QrelsVerificationError(
                f"record {i}: (topic {key[0]!r}, doc {key[1]!r}) was already judged by record {first_seen[key]}",
                [f"{key[0]}/{key[1]}"])
        first_seen.setdefault(key, i)
        built.add(row.topic_id, row.doc_id, row.grade)
    return built.build()


def doc_id_md5(text: str) -> str:
    """The hex MD5 of ``text``'s UTF-8 bytes: a stable doc id for passages without one."""
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def verify_qrels_topics(*, expected_topic_ids: Iterable[str], qrels: Qrels, require_no_extras: bool = True) -> None:
    """Every expected topic is judged and, with ``require_no_extras``, no other topic is."""
    check = QrelsVerification(qrels, expected_topic_ids=expected_topic_ids)
    check.run("complete", *(["extras"] if require_no_extras else []))


def write_qrel_file(*, qrel_out_file: Path, qrels: Qrels) -> None:
    """TREC qrels ``topic_id 0 doc_id grade``, sorted by (topic_id, doc_id), ids escaped like every
    treckit writer (so ids with spaces survive trec_eval), written atomically."""
    write_trec_qrels(qrels, qrel_out_file, escape_ids=True, sort=True)
