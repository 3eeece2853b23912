"""Loading and validating YAML test sets: every problem reported at once (the first
:data:`~treckit.thresholds.MAX_LISTED_PROBLEMS` listed, the rest counted), each with its YAML line.
Ids are the text as written: ``query_id: 007`` is the id ``007``, not the number 7.

The YAML is read by :mod:`treckit.inputs.bounded`, query by query: each query is checked as it is read
(:mod:`treckit.testsets.checks`: what the schema's models, :mod:`treckit.testsets.schema`, say, word for word)
and kept in columns (:mod:`treckit.testsets.columns`), so a test set of a million queries is read in bounded
time and memory; ``TestSet.queries`` gives each as a :class:`TestQuery`.  The models stay the schema: the JSON
Schema and the service's requests are theirs, and a test keeps the checks equal to them.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ..inputs.bounded import BAD, Problems, read_document, yaml_tree, without_gc
from ..console.errors import InputError
from ..inputs.sources import PathLike, display_name
from ..console.process import memory_freed
from .. import thresholds
from ..model import Qrels, qrels_schema
from .checks import QueryChecker, check_top, semantic_problems
from .columns import Judgment, Queries, QueryColumns, TestQuery

__all__ = ["ID_KEYS", "Judgment", "TEST_SETS_ENV", "TestQuery", "TestSet", "TestSetContent", "TestSetError",
           "load_test_set", "parse_test_set", "resolve_test_set", "semantic_problems", "test_set_from_judgments",
           "test_set_from_mapping"]

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


@dataclass(frozen=True)
class TestSetContent:
    """What a test set holds (the schema's ``TestSetModel``): ``queries`` reads as a sequence of
    :class:`TestQuery`, kept as columns."""
    __test__ = False

    name: str
    version: str
    description: str | None
    columns: QueryColumns = field(repr=False)

    @classmethod
    def of_queries(cls, name: str, version: str, description: str | None, queries: Iterable) -> "TestSetContent":
        """From queries with the fields of :class:`TestQuery` (schema models included)."""
        c = QueryColumns()
        for q in queries:
            c.add(q.query_id, q.query_text, q.query_type, q.topK, ((d.doc_id, d.grade) for d in q.relevant_docs))
        return cls(name, version, description, c.done())

    @classmethod
    def from_model(cls, model) -> "TestSetContent":
        """The content of a validated :class:`~treckit.testsets.schema.TestSetModel` (or ``QuerySetModel``)."""
        return cls.of_queries(model.name, model.version, model.description, model.queries)

    @property
    def queries(self) -> Queries:
        return Queries(self.columns)

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
    def queries(self) -> Queries:
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
    checker = QueryChecker(allow_unlabeled)
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
        memory_freed()                    # the file's bytes and text, freed once read
    return ts


def parse_test_set(text: str, name: str = "<test set>", *, allow_unlabeled: bool = False) -> TestSet:
    """A test set from its YAML text (``allow_unlabeled``: see :func:`load_test_set`)."""
    checker = QueryChecker(allow_unlabeled)
    with without_gc():
        data, lines, problems = yaml_tree(text, ID_KEYS, what="test set", stream=("queries", checker))
        if data is None and not problems:
            problems.add(None, "the file is empty")
        return _test_set(data, lines, problems, name, checker)


def _test_set(data: Any, lines: dict, problems: Problems, source: str, checker: "QueryChecker") -> TestSet:
    """The test set of ``data`` whose queries ``checker`` checked (into ``problems``) and kept: the
    top level is checked here."""
    if data is not None and data is not BAD:
        check_top(data, lines, problems, "QuerySetModel" if checker.allow_unlabeled else "TestSetModel")
    columns = checker.finish()
    if problems:
        raise TestSetError(source, problems)
    return TestSet(TestSetContent(data["name"], data["version"], data.get("description"), columns), source)

