"""Loading and validating YAML test sets: every problem reported at once, each with its YAML line.

The YAML is read as a tree of nodes (no Python objects are built from tags), so that every value
keeps its line, and hostile files stay cheap: anchors/aliases, explicit tags (dates, ``!!binary``,
``!!set``), duplicate keys, deep nesting and oversized files are errors.  Ids are the text as
written: ``query_id: 007`` is the id ``007``, not the number 7.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..io import PathLike, display_name, read_text
from .schema import TestSetModel

MAX_TEST_SET_BYTES = 64 << 20     # a test set is labelled by hand: anything larger is not one
MAX_DEPTH = 16                    # the schema nests four levels deep
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


def load_test_set(name_or_path: PathLike) -> TestSet:
    """Load and validate a test set by path or by name (see :func:`resolve_test_set`)."""
    path = resolve_test_set(name_or_path) if str(name_or_path) != "-" else "-"
    name = display_name(path)
    if path != "-" and Path(path).stat().st_size > MAX_TEST_SET_BYTES:
        raise InputError(f"larger than {MAX_TEST_SET_BYTES >> 20} MiB: not a hand-labelled test set", path=name,
                         fix="split it, or check that this is the right file")
    return parse_test_set(read_text(path), name)


def parse_test_set(text: str, name: str = "<test set>") -> TestSet:
    data, lines, problems = _yaml_tree(text, name)
    if data is None and not problems:
        problems.append((None, "the file is empty"))
    model = None
    if data is not None:
        model, schema_problems = _validate(data, lines)
        problems.extend(schema_problems)
        problems.extend(_semantic_problems(data, lines))
    if problems:
        raise TestSetError(name, sorted(problems, key=lambda p: (p[0] or 0)))
    return TestSet(model, name)


# ------------------------------------------------------------------ YAML as a tree with lines
def _yaml_tree(text: str, name: str):
    """(data, {path: line}, problems) from the YAML text, building only str/int/float/bool/None."""
    import yaml

    problems: list[tuple[int | None, str]] = []
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                return None, {}, [(event.start_mark.line + 1,
                                   "YAML anchors and aliases (&, *) are not allowed in a test set; write the values out")]
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return None, {}, [(mark.line + 1 if mark else None, f"not valid YAML: {getattr(exc, 'problem', None) or exc}")]
    if root is None:
        return None, {}, problems
    lines: dict[tuple, int] = {}
    data = _node_value(root, (), lines, problems, 0, None)
    return data, lines, problems


def _node_value(node, path: tuple, lines: dict, problems: list, depth: int, key: str | None):
    import yaml

    line = node.start_mark.line + 1
    lines[path] = line
    if depth > MAX_DEPTH:
        problems.append((line, f"nested more than {MAX_DEPTH} levels deep"))
        return _BAD
    if isinstance(node, yaml.MappingNode):
        if node.tag != "tag:yaml.org,2002:map":
            problems.append((line, f"the tag {node.tag} is not allowed in a test set"))
            return _BAD
        out: dict = {}
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode) or k.tag != "tag:yaml.org,2002:str":
                problems.append((k.start_mark.line + 1, "keys must be plain names"))
                continue
            if k.value in out:
                problems.append((k.start_mark.line + 1, f"the key {k.value!r} appears twice in one mapping"))
                continue
            out[k.value] = _node_value(v, path + (k.value,), lines, problems, depth + 1, k.value)
        return out
    if isinstance(node, yaml.SequenceNode):
        if node.tag != "tag:yaml.org,2002:seq":
            problems.append((line, f"the tag {node.tag} is not allowed in a test set"))
            return _BAD
        return [_node_value(v, path + (i,), lines, problems, depth + 1, None) for i, v in enumerate(node.value)]
    return _scalar(node, key, line, problems)


_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_BAD = object()          # a value already reported: validation does not report it a second time
_SCALAR_TAGS = {"tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
                "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null"}


def _scalar(node, key: str | None, line: int, problems: list):
    import yaml

    if key in ID_KEYS and node.tag != "tag:yaml.org,2002:null" and node.tag in _SCALAR_TAGS | {_TIMESTAMP}:
        return node.value                 # ids are the text as written (007 stays 007, 2024-01-01 a date-like id)
    if node.tag not in _SCALAR_TAGS:
        kind = node.tag.rsplit(":", 1)[-1]
        problems.append((line, f"the value {node.value[:40]!r} is read by YAML as a {kind}; quote it to make it text"))
        return _BAD
    if node.tag == "tag:yaml.org,2002:str":
        return node.value
    return yaml.SafeLoader("").construct_object(node)


# ------------------------------------------------------------------ validation
def _line_of(lines: dict, loc: tuple) -> int | None:
    for n in range(len(loc), -1, -1):
        if loc[:n] in lines:
            return lines[loc[:n]]
    return None


def _validate(data, lines):
    from pydantic import ValidationError

    try:
        return TestSetModel.model_validate(data), []
    except ValidationError as exc:
        out = []
        for err in exc.errors(include_url=False):
            loc = tuple(err["loc"])
            if err.get("input") is _BAD:
                continue
            where = ".".join(str(p) for p in loc) or "the file"
            msg = err["msg"]
            if err["type"] == "extra_forbidden":
                msg = "unknown field (allowed: see the schema)"
            out.append((_line_of(lines, loc), f"{where}: {msg}"))
        return None, out


def _semantic_problems(data, lines) -> list[tuple[int | None, str]]:
    """What the schema cannot say: unique query ids, a relevant doc per query, each doc listed once."""
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
        if docs and len(ints) == len(docs) and not any(g > 0 for g in ints):
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
