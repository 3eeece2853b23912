"""A typed builder for qrels made in code (in-house test sets)."""
from __future__ import annotations

from dataclasses import dataclass, field

from .console.errors import InputError
from .model import Qrels


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
