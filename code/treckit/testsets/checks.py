"""The checks of a test set's content, query by query as it is read: what the schema's models
(:mod:`treckit.testsets.schema`) say, word for word, in plain code (a test keeps the two equal), then what the
schema cannot say (unique query ids, a doc of grade > 0, each doc once); every problem with its line."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..ids import field_id_problem, tsv_field_problem
from ..inputs.bounded import BAD, LinesNeeded, Problems
from ..measures.readable import MAX_CUTOFF
from .columns import QueryColumns
from .schema import MAX_GRADE

# the schema's messages, word for word (pydantic's)
_NOT_STR = "Input should be a valid string"
_NOT_UNICODE = "Input should be a valid string, unable to parse raw data as a unicode string"
_EMPTY_STR = "String should have at least 1 character"
_NOT_INT = "Input should be a valid integer"
_NOT_LIST = "Input should be a valid list"
_EMPTY_LIST = "List should have at least 1 item after validation, not 0"
_MISSING = "Field required"
_UNKNOWN = "unknown field (allowed: see the schema)"
_QUERY_FIELDS = ("query_id", "query_text", "query_type", "topK", "relevant_docs")
_DOC_FIELDS = ("doc_id", "grade")
_TOP_FIELDS = ("name", "version", "description", "queries")
# ranks of problems on one line (lines are None for plain data): the reader's first, then the schema's in its
# order (the top level's fields, each query's, the top level's unknown fields), then, query by query, what
# the schema cannot say (a repeated id first)
_SCHEMA_TOP, _SCHEMA_EXTRA = (1, -1), (1, 1 << 62)


def _schema_of_query(i: int) -> tuple:
    return (1, i)


def _repeated(i: int) -> tuple:
    return (2, i, 0)


def _semantics_of_query(i: int) -> tuple:
    return (2, i, 1)


def _not_dict(model: str) -> str:
    return f"Input should be a valid dictionary or instance of {model}"


def _str_problem(value: Any, min_length: int = 1) -> str | None:
    if not isinstance(value, str):
        return _NOT_STR
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return _NOT_UNICODE
    return _EMPTY_STR if len(value) < min_length else None


def _int_problem(value: Any, low: int, high: int | None) -> str | None:
    if not isinstance(value, int) or isinstance(value, bool):
        return _NOT_INT
    if value < low:
        return f"Input should be greater than or equal to {low}"
    if high is not None and value > high:
        return f"Input should be less than or equal to {high}"
    return None


class QueryChecker:
    """The check of each query as it is read (``TestSetModel``'s, or ``QuerySetModel``'s with
    ``allow_unlabeled``), then what the schema cannot say: unique query ids, a doc of grade > 0 per
    query (unless ``allow_unlabeled``), each doc listed once.  Good queries are kept in ``columns``
    (the item itself becomes None); once there is a problem nothing more is kept, since the test set
    will not be built.  Called with a :class:`Problems`, it starts a reading and returns its taker
    (a stream's, :func:`treckit.inputs.bounded.yaml_tree`)."""

    def __init__(self, allow_unlabeled: bool) -> None:
        self.allow_unlabeled = allow_unlabeled
        self.model = "QueryMaybeUnlabelled" if allow_unlabeled else "Query"
        self.columns = QueryColumns()
        self.problems = Problems()      # replaced when a reading starts; a text refused before that has none here

    def __call__(self, problems: Problems) -> Callable:
        self.columns = QueryColumns()
        self.problems = problems
        self._filling = self.columns.filling()
        return self.take

    def take(self, i: int, q: Any, lines: dict | None, line: int | None):
        """Query ``i`` (on ``line``, its fields' lines in ``lines``), checked: None when it is good (kept), else
        BAD (its problems reported)."""
        if q is BAD:
            return BAD
        found = self.problems.total
        if type(q) is dict:
            qid = q.get("query_id")
            if type(qid) is str:               # every text id, for the check that no two are the same
                ids, id_lines, positions = self._filling[:3]
                ids.append(qid)
                id_lines.append(line)
                positions.append(i)
                self.columns.block_full()
            if _well_formed(q, self.allow_unlabeled):           # the common case, checked at once
                self._keep(q)
                return None
        if lines is None and line is not None:
            raise LinesNeeded
        self._report(i, q, lines or {}, line, self.problems)
        if self.problems.total == found:       # nothing wrong after all (only a check the common case skips)
            self._keep(q)
            return None
        return BAD

    def _keep(self, q: dict) -> None:
        """A good query's fields into the columns, while there is no problem (after one, nothing is kept)."""
        if self.problems.total:
            return
        texts, qtypes, top_ks, counts, doc_ids, grades = self._filling[3:]
        texts.append(q["query_text"])
        qtypes.append(q["query_type"])
        top_ks.append(q.get("topK"))
        docs = q.get("relevant_docs") or ()
        for d in docs:
            doc_ids.append(d["doc_id"])
            grades.append(d["grade"])
        counts.append(len(docs))

    def finish(self) -> QueryColumns | None:
        """Once every query is read: the check that no two have the same id; the columns when there is
        no problem."""
        for line, at, qid, first_line, first_at in self.columns.repeated_ids():
            first = f"line {first_line}" if first_line is not None else f"queries.{first_at}"
            self.problems.add(line, f"query_id {qid!r} is used twice (first on {first})", _repeated(at))
        return None if self.problems else self.columns.done()

    def _report(self, i: int, q: Any, lines: dict, line: int | None, problems: Problems) -> None:
        """Every problem of query ``i``, in the schema's order, then the rest's."""
        where = f"queries.{i}"

        def add(loc: tuple, message: str) -> None:
            problems.add(_line(lines, loc, line), f"{where}{''.join(f'.{p}' for p in loc)}: {message}",
                         _schema_of_query(i))

        if not isinstance(q, dict):
            add((), _not_dict(self.model))
            return
        for field_name in ("query_id", "query_text", "query_type"):
            if field_name not in q:
                add((field_name,), _MISSING)
            elif q[field_name] is not BAD and (msg := _str_problem(q[field_name])):
                add((field_name,), msg)
        top_k = q.get("topK")
        if top_k is not None and top_k is not BAD and (msg := _int_problem(top_k, 1, MAX_CUTOFF)):
            add(("topK",), msg)
        self._report_docs(q, add)
        for k in q:
            if k not in _QUERY_FIELDS:
                add((k,), _UNKNOWN)
        for at, message in _query_semantics(q, line, self.allow_unlabeled, lines):
            problems.add(at, message, _semantics_of_query(i))

    def _report_docs(self, q: dict, add: Callable[[tuple, str], None]) -> None:
        """The problems of a query's ``relevant_docs``: the list itself, then each doc's."""
        if "relevant_docs" not in q:
            if not self.allow_unlabeled:
                add(("relevant_docs",), _MISSING)
            return
        docs = q["relevant_docs"]
        if docs is BAD:
            return
        if not isinstance(docs, list):
            add(("relevant_docs",), _NOT_LIST)
        elif not docs and not self.allow_unlabeled:
            add(("relevant_docs",), _EMPTY_LIST)
        else:
            for j, d in enumerate(docs):
                if d is not BAD:
                    _report_doc(j, d, add)


def _well_formed(q: dict, allow_unlabeled: bool) -> bool:
    """Whether query ``q`` has every field as the schema wants it, a doc of grade > 0 (unless ``allow_unlabeled``)
    and each doc once."""
    qid, text, qtype, top_k = q.get("query_id"), q.get("query_text"), q.get("query_type"), q.get("topK")
    return (type(qid) is str and type(text) is str and type(qtype) is str and qid and text and qtype
            and not field_id_problem(qid) and not tsv_field_problem(qtype)
            and (top_k is None or (type(top_k) is int and 1 <= top_k <= MAX_CUTOFF)) and len(q) <= 5
            and (text.isascii() and qid.isascii() and qtype.isascii() or _utf8(qid, text, qtype))
            and all(k in _QUERY_FIELDS for k in q)
            and _docs_well_formed(q.get("relevant_docs", [] if allow_unlabeled else None), allow_unlabeled))


def _docs_well_formed(docs: Any, allow_unlabeled: bool) -> bool:
    if type(docs) is not list or not (docs or allow_unlabeled):
        return False
    relevant, seen = allow_unlabeled, set()
    for d in docs:
        doc_id = d.get("doc_id") if type(d) is dict else None
        grade = d.get("grade") if doc_id is not None else None
        if type(doc_id) is not str or not doc_id or type(grade) is not int \
                or not 0 <= grade <= MAX_GRADE or len(d) != 2 or doc_id in seen \
                or not (doc_id.isascii() or _utf8(doc_id)):
            return False
        relevant = relevant or grade > 0
        seen.add(doc_id)
    return relevant


def _report_doc(j: int, d: Any, add: Callable[[tuple, str], None]) -> None:
    """The problems of relevant doc ``j``: its fields in the schema's order, then the ones it does not know."""
    if not isinstance(d, dict):
        add(("relevant_docs", j), _not_dict("RelevantDoc"))
        return
    for field_name in _DOC_FIELDS:
        if field_name not in d:
            add(("relevant_docs", j, field_name), _MISSING)
        elif d[field_name] is not BAD and (msg := (_str_problem(d[field_name]) if field_name == "doc_id"
                                                   else _int_problem(d[field_name], 0, MAX_GRADE))):
            add(("relevant_docs", j, field_name), msg)
    for k in d:
        if k not in _DOC_FIELDS:
            add(("relevant_docs", j, k), _UNKNOWN)


def _utf8(*texts: str) -> bool:
    """Whether the texts can be written as UTF-8 (they hold no lone surrogate)."""
    try:
        for t in texts:
            t.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _line(lines: dict, loc: tuple, line: int | None) -> int | None:
    for n in range(len(loc), 0, -1):
        if loc[:n] in lines:
            return lines[loc[:n]]
    return line


def _query_semantics(q: dict, line: int | None, allow_unlabeled: bool, lines: dict) -> list[tuple[int | None, str]]:
    """What the schema cannot say about one query but unique ids (see :class:`QueryChecker`)."""
    out = _field_problems(q, line, lines)
    qid = q.get("query_id")
    docs = q.get("relevant_docs")
    if not isinstance(docs, list):
        return out
    grades = [d.get("grade") for d in docs if isinstance(d, dict)]
    ints = [g for g in grades if isinstance(g, int) and not isinstance(g, bool)]
    if not allow_unlabeled and docs and len(ints) == len(docs) and not any(g > 0 for g in ints):
        out.append((line, f"query {qid!r} has no doc with grade > 0: it cannot be scored"))
    seen: set[str] = set()
    for j, d in enumerate(docs):
        did = d.get("doc_id") if isinstance(d, dict) else None
        if isinstance(did, str):
            if did in seen:
                out.append((lines.get(("relevant_docs", j), line), f"query {qid!r} lists doc {did!r} twice"))
            seen.add(did)
    return out


def _field_problems(q: dict, line: int | None, lines: dict) -> list[tuple[int | None, str]]:
    """What ``testset export`` could not write back as read: a query id that is not one TREC field, a query type
    that is not one TSV field (the rules every reader and writer of those files applies, :mod:`treckit.ids`)."""
    out = []
    for name, rule in (("query_id", field_id_problem), ("query_type", tsv_field_problem)):
        value = q.get(name)
        if isinstance(value, str) and value and (problem := rule(value)):
            what = "its id" if name == "query_id" else "its type"
            out.append((lines.get((name,), line), f"query {q.get('query_id')!r}: {what} {problem}"))
    return out


def check_top(data: Any, lines: dict, problems: Problems, model: str) -> None:
    """The top level of a test set (its queries were checked as they were read)."""
    if not isinstance(data, dict):
        problems.add(lines.get(()), f"the file: {_not_dict(model)}", _SCHEMA_TOP)
        return
    for field in ("name", "version"):
        if field not in data:
            problems.add(_line_of_top(lines, field), f"{field}: {_MISSING}", _SCHEMA_TOP)
        elif data[field] is not BAD and (msg := _str_problem(data[field])):
            problems.add(_line_of_top(lines, field), f"{field}: {msg}", _SCHEMA_TOP)
    desc = data.get("description")
    if desc is not None and desc is not BAD and (msg := _str_problem(desc, 0)):
        problems.add(_line_of_top(lines, "description"), f"description: {msg}", _SCHEMA_TOP)
    queries = data.get("queries", BAD)
    if "queries" not in data:
        problems.add(_line_of_top(lines, "queries"), f"queries: {_MISSING}", _SCHEMA_TOP)
    elif queries is not BAD:
        if not isinstance(queries, list):
            problems.add(_line_of_top(lines, "queries"), f"queries: {_NOT_LIST}", _SCHEMA_TOP)
        elif not queries:
            problems.add(_line_of_top(lines, "queries"), f"queries: {_EMPTY_LIST}", _SCHEMA_TOP)
    for k in data:
        if k not in _TOP_FIELDS:
            problems.add(_line_of_top(lines, k), f"{k}: {_UNKNOWN}", _SCHEMA_EXTRA)


def _line_of_top(lines: dict, key: str) -> int | None:
    return lines.get((key,), lines.get(()))


def semantic_problems(data, lines, *, allow_unlabeled: bool = False) -> list[tuple[int | None, str]]:
    """What the schema cannot say about a test set's content as plain data (``lines``: {path: line})."""
    queries = data.get("queries") if isinstance(data, dict) else None
    if not isinstance(queries, list):
        return []
    first: dict[str, int] = {}
    out = []
    for i, q in enumerate(queries):
        if isinstance(q, dict):
            line = lines.get(("queries", i))
            qid = q.get("query_id")
            if isinstance(qid, str):
                if qid in first:
                    was = lines.get(("queries", first[qid]))
                    out.append((line, f"query_id {qid!r} is used twice (first on "
                                      f"{f'line {was}' if was is not None else f'queries.{first[qid]}'})"))
                else:
                    first[qid] = i
            rel = {p[2:]: ln for p, ln in lines.items() if p[:2] == ("queries", i)}
            out.extend(_query_semantics(q, line, allow_unlabeled, rel))
    return sorted(out, key=lambda p: p[0] or 0)
