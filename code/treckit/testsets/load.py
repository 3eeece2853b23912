"""Loading and validating YAML test sets: every problem reported at once, each with its YAML line
(the YAML is read by :mod:`treckit.yamlsafe`).  Ids are the text as written: ``query_id: 007`` is the
id ``007``, not the number 7.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..io import PathLike, display_name, read_text
from ..yamlsafe import BAD, MAX_YAML_BYTES, yaml_tree
from .schema import QuerySetModel, TestSetModel

ID_KEYS = ("query_id", "doc_id")
TEST_SETS_ENV = "TRECKIT_TEST_SETS"


class TestSetError(InputError):
    """A test set that does not validate; ``problems`` lists (line, message) for every problem."""

    __test__ = False        # a name pytest would otherwise collect

    def __init__(self, path: str, problems: list[tuple[int | None, str]]):
        self.problems = problems
        lines = "\n".join(f"  line {ln}: {msg}" if ln else f"  {msg}" for ln, msg in problems)
        super().__init__(f"{len(problems)} problem{'s' if len(problems) != 1 else ''} in the test set:\n{lines}",
                         path=path, fix="correct each line listed (schema: treckit testset schema)")


@dataclass(frozen=True)
class TestSet:
    """A validated test set: its model, where it came from, and what identifies its content."""

    __test__ = False

    model: TestSetModel
    source: str | None = None
    digest: str = field(default="")

    def __post_init__(self):
        if not self.digest:
            canonical = json.dumps(self.model.model_dump(mode="json"), sort_keys=True, separators=(",", ":"),
                                   ensure_ascii=False)
            object.__setattr__(self, "digest", hashlib.sha256(canonical.encode("utf-8")).hexdigest())

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def version(self) -> str:
        return self.model.version

    @property
    def queries(self):
        return self.model.queries

    @property
    def query_ids(self) -> list[str]:
        return [q.query_id for q in self.model.queries]

    def query_types(self) -> dict[str, str]:
        return {q.query_id: q.query_type for q in self.model.queries}

    def counts_by_type(self) -> dict[str, int]:
        """Queries per query type, types in order of first appearance."""
        out: dict[str, int] = {}
        for q in self.model.queries:
            out[q.query_type] = out.get(q.query_type, 0) + 1
        return out

    def to_qrels(self):
        """The judgments as the engine's columnar qrels (every listed doc, grade 0 included)."""
        from ..model import Qrels
        rows = [(q.query_id, d.doc_id, d.grade) for q in self.model.queries for d in q.relevant_docs]
        return Qrels.from_columns([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])

    def to_yaml(self) -> str:
        import yaml
        data = self.model.model_dump(mode="json", exclude_none=True)
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


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
    import yaml
    return parse_test_set(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100), name)


def resolve_test_set(name_or_path: PathLike) -> Path:
    """A path as given when it exists, else ``NAME``, ``NAME.yaml`` or ``NAME.yml`` in the test-set
    directory (``$TRECKIT_TEST_SETS``, default ``./test_sets``)."""
    p = Path(name_or_path)
    if p.is_file():
        return p
    root = Path(os.environ.get(TEST_SETS_ENV) or "test_sets")
    for cand in (root / p, root / f"{p}.yaml", root / f"{p}.yml"):
        if cand.is_file():
            return cand
    known = sorted(x.stem for x in root.glob("*.y*ml")) if root.is_dir() else []
    raise InputError(f"no test set named {str(name_or_path)!r} (looked for the path, and in {root}/)",
                     fix=("known test sets: " + ", ".join(known)) if known
                     else f"give a path, or set {TEST_SETS_ENV} to the directory holding your test sets")


def load_test_set(name_or_path: PathLike, *, allow_unlabeled: bool = False) -> TestSet:
    """Load and validate a test set by path or by name (see :func:`resolve_test_set`).

    ``allow_unlabeled``: read it as the RQ metric reads a query set, where a query may have no
    ``relevant_docs`` or none of grade > 0 (every other check holds); by default each query needs a
    doc of grade > 0, as the test-set schema asks."""
    path = resolve_test_set(name_or_path) if str(name_or_path) != "-" else "-"
    name = display_name(path)
    if path != "-" and Path(path).stat().st_size > MAX_YAML_BYTES:
        raise InputError(f"larger than {MAX_YAML_BYTES >> 20} MiB: not a hand-labelled test set", path=name,
                         fix="split it, or check that this is the right file")
    return parse_test_set(read_text(path), name, allow_unlabeled=allow_unlabeled)


def parse_test_set(text: str, name: str = "<test set>", *, allow_unlabeled: bool = False) -> TestSet:
    """A test set from its YAML text (``allow_unlabeled``: see :func:`load_test_set`)."""
    data, lines, problems = yaml_tree(text, raw_keys=ID_KEYS)
    if data is None and not problems:
        problems.append((None, "the file is empty"))
    model = None
    if data is not None:
        model, schema_problems = _validate(data, lines, QuerySetModel if allow_unlabeled else TestSetModel)
        problems.extend(schema_problems)
        problems.extend(semantic_problems(data, lines, allow_unlabeled=allow_unlabeled))
    if problems:
        raise TestSetError(name, sorted(problems, key=lambda p: (p[0] or 0)))
    return TestSet(model, name)


# ------------------------------------------------------------------ validation
def _line_of(lines: dict, loc: tuple) -> int | None:
    for n in range(len(loc), -1, -1):
        if loc[:n] in lines:
            return lines[loc[:n]]
    return None


def _validate(data, lines, model: type[TestSetModel]):
    from pydantic import ValidationError

    try:
        return model.model_validate(data), []
    except ValidationError as exc:
        out = []
        for err in exc.errors(include_url=False):
            loc = tuple(err["loc"])
            if err.get("input") is BAD:
                continue
            where = ".".join(str(p) for p in loc) or "the file"
            msg = err["msg"]
            if err["type"] == "extra_forbidden":
                msg = "unknown field (allowed: see the schema)"
            out.append((_line_of(lines, loc), f"{where}: {msg}"))
        return None, out


def semantic_problems(data, lines, *, allow_unlabeled: bool = False) -> list[tuple[int | None, str]]:
    """What the schema cannot say: unique query ids, a relevant doc per query (unless
    ``allow_unlabeled``), each doc listed once."""
    out = []
    queries = data.get("queries") if isinstance(data, dict) else None
    if not isinstance(queries, list):
        return out
    first_line: dict[str, int | None] = {}
    for i, q in enumerate(queries):
        if not isinstance(q, dict):
            continue
        qid = q.get("query_id")
        if isinstance(qid, str):
            if qid in first_line:
                out.append((lines.get(("queries", i)), f"query_id {qid!r} is used twice (first on line {first_line[qid]})"))
            else:
                first_line[qid] = lines.get(("queries", i))
        docs = q.get("relevant_docs")
        if not isinstance(docs, list):
            continue
        grades = [d.get("grade") for d in docs if isinstance(d, dict)]
        ints = [g for g in grades if isinstance(g, int) and not isinstance(g, bool)]
        if not allow_unlabeled and docs and len(ints) == len(docs) and not any(g > 0 for g in ints):
            out.append((lines.get(("queries", i)), f"query {qid!r} has no doc with grade > 0: it cannot be scored"))
        seen: set[str] = set()
        for j, d in enumerate(docs):
            did = d.get("doc_id") if isinstance(d, dict) else None
            if isinstance(did, str):
                if did in seen:
                    out.append((lines.get(("queries", i, "relevant_docs", j)),
                                f"query {qid!r} lists doc {did!r} twice"))
                seen.add(did)
    return out
