"""Loading and validating YAML test sets: every problem reported at once (the first
:data:`~treckit.thresholds.MAX_LISTED_PROBLEMS` listed, the rest counted), each with its YAML line.
Ids are the text as written: ``query_id: 007`` is the id ``007``, not the number 7.

The YAML is read by :mod:`treckit.inputs.bounded`, query by query: each query is checked as it is read,
with plain code that says what the schema's models (:mod:`treckit.testsets.schema`) say, word for
word, and kept in columns (a list per field, :class:`TestSetContent`), so a test set of a million
queries is read in bounded time and memory; ``TestSet.queries`` gives each as a :class:`TestQuery`.
The models stay the schema: the JSON Schema and the service's requests are theirs, and a test keeps
the checks here equal to them.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Callable
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

from ..inputs.bounded import BAD, LinesNeeded, Problems, read_document, yaml_tree, without_gc
from ..console.errors import InputError
from ..ids import field_id_problem, tsv_field_problem
from ..inputs.sources import PathLike, display_name
from ..measures.readable import MAX_CUTOFF
from ..console.process import give_back_freed_memory
from .. import thresholds
from ..model import Qrels, qrels_schema
from .schema import MAX_GRADE

ID_KEYS = ("query_id", "doc_id")
TEST_SETS_ENV = "TRECKIT_TEST_SETS"


class TestSetError(InputError):
    """A test set that does not validate; ``problems`` lists (line, message) of the first problems
    (by line), ``total`` counts them all."""

    __test__ = False        # a name pytest would otherwise collect

    def __init__(self, path: str, problems: Problems):
        self.problems = problems.listed()
        self.total = problems.total
        n = problems.total
        super().__init__(f"{n:,} problem{'s' if n != 1 else ''} in the test set:\n{problems.lines_text()}",
                         path=path, fix="correct each line listed (schema: treckit testset schema)")


class Judgment(NamedTuple):
    """A judged document of a query: its id and grade (0 = judged not relevant ... 3)."""
    doc_id: str
    grade: int


class TestQuery(NamedTuple):
    """A query of a test set (the schema's ``Query``)."""
    __test__ = False

    query_id: str
    query_text: str
    query_type: str
    topK: int | None
    relevant_docs: tuple[Judgment, ...]


class _Columns:
    """A test set's queries as Arrow columns, one per field (the judged docs of query ``i`` are rows
    ``doc_starts[i]:doc_starts[i + 1]`` of ``doc_ids`` and ``grades``): about a quarter of the memory of a
    Python string per id and text, and nothing for the garbage collector to walk.  Filled by
    :meth:`add` (or the lists of :meth:`filling`), a block of :data:`treckit.thresholds.TESTSET_BLOCK_QUERIES` queries at a time;
    read once :meth:`done`.  ``lines`` and ``positions`` (the line and index of each query in its file)
    are kept for the check of unique ids, which :meth:`repeated_ids` makes once every id is in."""

    def __init__(self) -> None:
        # ids, lines, positions, texts, types, topKs, doc counts, doc ids, grades
        self._lists: tuple[list, ...] = ([], [], [], [], [], [], [], [], [])
        self._blocks: list[list] = [[] for _ in self._lists]
        self._added = 0

    def filling(self) -> tuple[list, ...]:
        """The lists a block is gathered in: query ids, their lines and positions, texts, types, topKs,
        numbers of judged docs, doc ids, grades; call :meth:`block_full` after each query."""
        return self._lists

    def block_full(self) -> None:
        if len(self._lists[0]) >= thresholds.TESTSET_BLOCK_QUERIES:
            self._flush()

    def add(self, qid: str, text: str, qtype: str, top_k: int | None, docs, line: int | None = None) -> None:
        """One query; ``docs``: (doc_id, grade) pairs."""
        ids, lines, positions, texts, types, top_ks, counts, doc_ids, grades = self._lists
        positions.append(self._added)
        self._added += 1
        ids.append(qid)
        lines.append(line)
        texts.append(text)
        types.append(qtype)
        top_ks.append(top_k)
        n = len(doc_ids)
        for doc_id, grade in docs:
            doc_ids.append(doc_id)
            grades.append(grade)
        counts.append(len(doc_ids) - n)
        self.block_full()

    def _flush(self) -> None:
        import pyarrow as pa

        for lst, blocks, kind in zip(self._lists, self._blocks, _COLUMN_TYPES):
            blocks.append(pa.array(lst, kind()))
            lst.clear()

    def done(self) -> "_Columns":
        """The columns, read-only from here on."""
        import numpy as np
        import pyarrow as pa

        self._flush()
        ids, _, _, texts, types, top_ks, counts, doc_ids, grades = (
            pa.chunked_array(b, kind()) for b, kind in zip(self._blocks, _COLUMN_TYPES))
        self.query_ids, self.query_texts, self.query_types, self.top_ks = ids, texts, types, top_ks
        self.doc_ids, self.grades = doc_ids, grades
        self.doc_starts = np.concatenate([[0], np.cumsum(counts.to_numpy(), dtype=np.int64)])
        del self._lists, self._blocks
        return self

    def repeated_ids(self):
        """(line, position, id, first line, first position) of every query whose id an earlier query has."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        self._flush()
        ids, lines, positions = (pa.chunked_array(b, kind()).combine_chunks()
                                 for b, kind in zip(self._blocks[:3], _COLUMN_TYPES))
        if not len(ids):
            return
        codes = pc.dictionary_encode(ids).indices.to_numpy(zero_copy_only=False)
        _, first = np.unique(codes, return_index=True)
        repeats = np.flatnonzero(first[codes] != np.arange(codes.size))
        if not repeats.size:
            return
        lines, positions = lines.to_pylist(), positions.to_pylist()
        for at in repeats.tolist():
            was = int(first[codes[at]])
            yield lines[at], positions[at], ids[at].as_py(), lines[was], positions[was]

    def __len__(self) -> int:
        return len(self.query_ids)

    def blocks(self, size: int | None = None):
        """(query ids, texts, types, topKs, [(doc ids, grades) of each query]) as Python lists, a block of
        ``size`` queries (default :data:`treckit.thresholds.TESTSET_BLOCK_QUERIES`) at a time."""
        size = size or thresholds.TESTSET_BLOCK_QUERIES
        for a in range(0, len(self), size):
            b = min(a + size, len(self))
            lo, hi = int(self.doc_starts[a]), int(self.doc_starts[b])
            doc_ids = self.doc_ids.slice(lo, hi - lo).to_pylist()
            grades = self.grades.slice(lo, hi - lo).to_pylist()
            starts = (self.doc_starts[a:b + 1] - lo).tolist()
            docs = [(doc_ids[s:e], grades[s:e]) for s, e in zip(starts, starts[1:])]
            yield (self.query_ids.slice(a, b - a).to_pylist(), self.query_texts.slice(a, b - a).to_pylist(),
                   self.query_types.slice(a, b - a).to_pylist(), self.top_ks.slice(a, b - a).to_pylist(), docs)

    def __eq__(self, other) -> bool:
        return isinstance(other, _Columns) and all(
            getattr(self, f).equals(getattr(other, f)) for f in ("query_ids", "query_texts", "query_types", "top_ks",
                                                                 "doc_ids", "grades"))


def _string():
    import pyarrow as pa
    return pa.string()


def _int64():
    import pyarrow as pa
    return pa.int64()


def _int8():
    import pyarrow as pa
    return pa.int8()


_COLUMN_TYPES = (_string, _int64, _int64, _string, _string, _int64, _int64, _string, _int8)


class _Queries(Sequence):
    """The queries of a :class:`TestSetContent`, each made into a :class:`TestQuery` when asked for."""

    def __init__(self, columns: _Columns) -> None:
        self._c = columns

    def __len__(self) -> int:
        return len(self._c)

    def _query(self, i: int) -> TestQuery:
        c = self._c
        s, e = int(c.doc_starts[i]), int(c.doc_starts[i + 1])
        return TestQuery(c.query_ids[i].as_py(), c.query_texts[i].as_py(), c.query_types[i].as_py(),
                         c.top_ks[i].as_py(), tuple(map(Judgment, c.doc_ids.slice(s, e - s).to_pylist(),
                                                        c.grades.slice(s, e - s).to_pylist())))

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._query(j) for j in range(*i.indices(len(self)))]
        return self._query(range(len(self))[i])

    def __iter__(self):
        for ids, texts, types, top_ks, docs in self._c.blocks():
            for q in zip(ids, texts, types, top_ks, docs):
                yield TestQuery(*q[:4], tuple(map(Judgment, *q[4])))

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and len(self) == len(other) and all(a == b for a, b in zip(self, other))

    def __repr__(self) -> str:
        return f"<{len(self)} queries>"


@dataclass(frozen=True)
class TestSetContent:
    """What a test set holds (the schema's ``TestSetModel``): ``queries`` reads as a sequence of
    :class:`TestQuery`, kept as columns."""
    __test__ = False

    name: str
    version: str
    description: str | None
    columns: _Columns = field(repr=False)

    @classmethod
    def of_queries(cls, name: str, version: str, description: str | None, queries: Iterable) -> "TestSetContent":
        """From queries with the fields of :class:`TestQuery` (schema models included)."""
        c = _Columns()
        for q in queries:
            c.add(q.query_id, q.query_text, q.query_type, q.topK, ((d.doc_id, d.grade) for d in q.relevant_docs))
        return cls(name, version, description, c.done())

    @classmethod
    def from_model(cls, model) -> "TestSetContent":
        """The content of a validated :class:`~treckit.testsets.schema.TestSetModel` (or ``QuerySetModel``)."""
        return cls.of_queries(model.name, model.version, model.description, model.queries)

    @property
    def queries(self) -> _Queries:
        return _Queries(self.columns)

    def replace(self, *, queries: Iterable | None = None, **changes) -> "TestSetContent":
        """The same content with other fields (``queries``: :class:`TestQuery` records)."""
        new = dataclasses.replace(self, **changes)
        if queries is not None:
            new = TestSetContent.of_queries(new.name, new.version, new.description, queries)
        return new


@dataclass(frozen=True)
class TestSet:
    """A validated test set: its content (``model``: a :class:`TestSetContent`; a validated schema
    model given here is taken as its content), where it came from, and what identifies its content
    (``digest``)."""

    __test__ = False

    model: TestSetContent
    source: str | None = None

    def __post_init__(self):
        if not isinstance(self.model, TestSetContent):
            object.__setattr__(self, "model", TestSetContent.from_model(self.model))

    @cached_property
    def digest(self) -> str:
        """SHA-256 of the content as canonical JSON (the schema model's fields, keys sorted, compact),
        so reformatting the YAML does not change it; hashed query by query."""
        from json.encoder import encode_basestring as js

        m = self.model
        h = hashlib.sha256()
        h.update(f'{{"description":{"null" if m.description is None else js(m.description)},"name":{js(m.name)},'
                 f'"queries":['.encode("utf-8"))
        first = True
        for ids, texts, types, top_ks, docs in m.columns.blocks():
            for qid, text, qtype, top_k, (doc_ids, grades) in zip(ids, texts, types, top_ks, docs):
                judged = ",".join(f'{{"doc_id":{js(d)},"grade":{g}}}' for d, g in zip(doc_ids, grades))
                h.update(f'{"" if first else ","}{{"query_id":{js(qid)},"query_text":{js(text)},'
                         f'"query_type":{js(qtype)},"relevant_docs":[{judged}],'
                         f'"topK":{"null" if top_k is None else top_k}}}'.encode("utf-8"))
                first = False
        h.update(f'],"version":{js(m.version)}}}'.encode("utf-8"))
        return h.hexdigest()

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def version(self) -> str:
        return self.model.version

    @property
    def queries(self) -> _Queries:
        return self.model.queries

    @property
    def query_ids(self) -> list[str]:
        return self.model.columns.query_ids.to_pylist()

    @property
    def num_judgments(self) -> int:
        return len(self.model.columns.doc_ids)

    def query_types(self) -> dict[str, str]:
        c = self.model.columns
        return dict(zip(c.query_ids.to_pylist(), c.query_types.to_pylist()))

    def query_texts(self) -> dict[str, str]:
        c = self.model.columns
        return dict(zip(c.query_ids.to_pylist(), c.query_texts.to_pylist()))

    def counts_by_type(self) -> dict[str, int]:
        """Queries per query type, types in order of first appearance."""
        out: dict[str, int] = {}
        for t in self.model.columns.query_types.to_pylist():
            out[t] = out.get(t, 0) + 1
        return out

    def to_qrels(self):
        """The judgments as the engine's columnar qrels (every listed doc, grade 0 included)."""
        import numpy as np
        import pyarrow as pa

        c = self.model.columns
        of_judgment = np.repeat(np.arange(len(c), dtype=np.int64), np.diff(c.doc_starts))
        return Qrels(pa.Table.from_arrays([c.query_ids.take(pa.array(of_judgment)), pa.repeat("0", len(c.doc_ids)),
                                           c.doc_ids, c.grades.cast(pa.int64())], schema=qrels_schema()))

    def to_mapping(self) -> dict[str, Any]:
        """The content as the schema writes it (fields in its order, empty optional fields left out)."""
        m = self.model
        out: dict[str, Any] = {"name": m.name, "version": m.version}
        if m.description is not None:
            out["description"] = m.description
        out["queries"] = [{"query_id": q.query_id, "query_text": q.query_text, "query_type": q.query_type,
                           **({"topK": q.topK} if q.topK is not None else {}),
                           "relevant_docs": [{"doc_id": d.doc_id, "grade": d.grade} for d in q.relevant_docs]}
                          for q in m.queries]
        return out

    def to_yaml(self) -> str:
        import yaml
        return yaml.safe_dump(self.to_mapping(), sort_keys=False, allow_unicode=True, width=100)


def test_set_from_mapping(data: Any, source: str = "<test set>", *, allow_unlabeled: bool = False) -> TestSet:
    """A test set from its content as plain data (what the YAML holds), checked as a loaded file is."""
    checker = _QueryChecker(allow_unlabeled)
    problems = Problems()
    take = checker(problems)
    if isinstance(data, dict) and isinstance(data.get("queries"), list):
        data = {**data, "queries": [take(i, q, None, None) for i, q in enumerate(data["queries"])]}
    return _test_set(data, {}, problems, source, checker)


def test_set_from_judgments(judged: dict[str, dict[str, int]], texts: dict[str, str], types: dict[str, str] | None = None,
                            *, name: str, version: str = "1") -> TestSet:
    """A test set from qrels (``{qid: {doc: grade}}``) and query texts, validated like a loaded file;
    every judged query needs a text and every query a judgment."""
    types = types or {}
    missing = [q for q in texts if q not in judged]
    unknown = [q for q in judged if q not in texts]
    if missing or unknown:
        parts = ([f"{len(missing)} queries have no judgments: {', '.join(missing[:20])}"] if missing else []) + \
                ([f"{len(unknown)} judged queries have no text: {', '.join(unknown[:20])}"] if unknown else [])
        raise InputError("; ".join(parts), fix="give qrels and queries for the same query ids")
    data = {"name": name, "version": version, "queries": [
        {"query_id": q, "query_text": t, "query_type": types.get(q, "unspecified"),
         "relevant_docs": [{"doc_id": d, "grade": g} for d, g in judged[q].items()]} for q, t in texts.items()]}
    return test_set_from_mapping(data, f"the test set built from the judgments and texts (name {name!r})")


def resolve_test_set(name_or_path: PathLike) -> Path:
    """A path as given when it is a file, else ``NAME``, ``NAME.yaml`` or ``NAME.yml`` in the test-set
    directory (``$TRECKIT_TEST_SETS``, default ``./test_sets``), else the path as given when it exists
    (a pipe, a folder)."""
    p = Path(name_or_path)
    if p.is_file():
        return p
    root = Path(os.environ.get(TEST_SETS_ENV) or "test_sets")
    for cand in (root / p, root / f"{p}.yaml", root / f"{p}.yml"):
        if cand.is_file():
            return cand
    if p.exists():           # a pipe (<(zcat ...)) is read; a folder or a device is said to be one by the reader
        return p
    known = sorted(x.stem for x in root.glob("*.y*ml")) if root.is_dir() else []
    raise InputError(f"no test set named {str(name_or_path)!r} (looked for the path, and in {root}/)",
                     fix=("known test sets: " + ", ".join(known)) if known
                     else f"give a path, or set {TEST_SETS_ENV} to the directory holding your test sets")


def load_test_set(name_or_path: PathLike, *, allow_unlabeled: bool = False) -> TestSet:
    """Load and validate a test set by path or by name (see :func:`resolve_test_set`); ``.gz`` and
    ``-`` (stdin) are read too, within :data:`~treckit.thresholds.DOCUMENT_READ_LIMIT` bytes.

    ``allow_unlabeled``: read it as the RQ metric reads a query set, where a query may have no
    ``relevant_docs`` or none of grade > 0 (every other check holds); by default each query needs a
    doc of grade > 0, as the test-set schema asks."""
    path = resolve_test_set(name_or_path) if str(name_or_path) != "-" else "-"
    text = read_document(path, None, "test set")
    size = len(text)
    ts = parse_test_set(text, display_name(path), allow_unlabeled=allow_unlabeled)
    del text
    if size > thresholds.TESTSET_GIVE_BACK_MIN_BYTES:
        give_back_freed_memory()          # the file's bytes and text, freed once read
    return ts


def parse_test_set(text: str, name: str = "<test set>", *, allow_unlabeled: bool = False) -> TestSet:
    """A test set from its YAML text (``allow_unlabeled``: see :func:`load_test_set`)."""
    checker = _QueryChecker(allow_unlabeled)
    with without_gc():
        data, lines, problems = yaml_tree(text, ID_KEYS, what="test set", stream=("queries", checker))
        if data is None and not problems:
            problems.add(None, "the file is empty")
        return _test_set(data, lines, problems, name, checker)


def _test_set(data: Any, lines: dict, problems: Problems, source: str, checker: "_QueryChecker") -> TestSet:
    """The test set of ``data`` whose queries ``checker`` checked (into ``problems``) and kept: the
    top level is checked here."""
    if data is not None and data is not BAD:
        _check_top(data, lines, problems, "QuerySetModel" if checker.allow_unlabeled else "TestSetModel")
    columns = checker.finish()
    if problems:
        raise TestSetError(source, problems)
    return TestSet(TestSetContent(data["name"], data["version"], data.get("description"), columns), source)


# ------------------------------------------------------------------ validation
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


class _QueryChecker:
    """The check of each query as it is read (``TestSetModel``'s, or ``QuerySetModel``'s with
    ``allow_unlabeled``), then what the schema cannot say: unique query ids, a doc of grade > 0 per
    query (unless ``allow_unlabeled``), each doc listed once.  Good queries are kept in ``columns``
    (the item itself becomes None); once there is a problem nothing more is kept, since the test set
    will not be built.  Called with a :class:`Problems`, it starts a reading (as a stream's taker)."""

    def __init__(self, allow_unlabeled: bool) -> None:
        self.allow_unlabeled = allow_unlabeled
        self.model = "QueryMaybeUnlabelled" if allow_unlabeled else "Query"
        self.columns = _Columns()
        self.problems = Problems()      # replaced when a reading starts; a text refused before that has none here

    def __call__(self, problems: Problems):
        self.columns = columns = _Columns()
        self.problems = problems
        allow_unlabeled, model = self.allow_unlabeled, self.model
        ids, id_lines, positions, texts, qtypes, top_ks, counts, doc_ids, grades = columns.filling()
        block_full = columns.block_full

        def take(i: int, q: Any, lines: dict | None, line: int | None):
            if q is BAD:
                return BAD
            found = problems.total
            if type(q) is dict:
                qid, text, qtype, top_k = q.get("query_id"), q.get("query_text"), q.get("query_type"), q.get("topK")
                if type(qid) is str:               # every text id, for the check that no two are the same
                    ids.append(qid)
                    id_lines.append(line)
                    positions.append(i)
                    block_full()
                docs = q.get("relevant_docs", [] if allow_unlabeled else None)
                if (type(qid) is str and type(text) is str and type(qtype) is str and qid and text and qtype
                        and not field_id_problem(qid) and not tsv_field_problem(qtype)
                        and (top_k is None or (type(top_k) is int and 1 <= top_k <= MAX_CUTOFF)) and type(docs) is list
                        and (docs or allow_unlabeled) and len(q) <= 5
                        and (text.isascii() and qid.isascii() and qtype.isascii() or _utf8(qid, text, qtype))
                        and all(k in _QUERY_FIELDS for k in q)):
                    # the common case at once: every field as the schema wants it
                    relevant, seen = allow_unlabeled, set()
                    for d in docs:
                        doc_id = d.get("doc_id") if type(d) is dict else None
                        grade = d.get("grade") if doc_id is not None else None
                        if type(doc_id) is not str or not doc_id or type(grade) is not int \
                                or not 0 <= grade <= MAX_GRADE or len(d) != 2 or doc_id in seen \
                                or not (doc_id.isascii() or _utf8(doc_id)):
                            break
                        relevant = relevant or grade > 0
                        seen.add(doc_id)
                    else:
                        if relevant:
                            if not problems.total:
                                texts.append(text)
                                qtypes.append(qtype)
                                top_ks.append(top_k)
                                for d in docs:
                                    doc_ids.append(d["doc_id"])
                                    grades.append(d["grade"])
                                counts.append(len(docs))
                            return None
            if lines is None and line is not None:
                raise LinesNeeded
            self._report(i, q, lines or {}, line, problems)
            if problems.total == found:        # nothing wrong after all (only a check the common case skips)
                if not problems.total:
                    texts.append(q["query_text"])
                    qtypes.append(q["query_type"])
                    top_ks.append(q.get("topK"))
                    docs = q.get("relevant_docs") or ()
                    doc_ids.extend(d["doc_id"] for d in docs)
                    grades.extend(d["grade"] for d in docs)
                    counts.append(len(docs))
                return None
            return BAD
        return take

    def finish(self) -> _Columns | None:
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
    """What the schema cannot say about one query but unique ids (see :class:`_QueryChecker`)."""
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


def _check_top(data: Any, lines: dict, problems: Problems, model: str) -> None:
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
