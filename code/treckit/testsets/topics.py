"""Query ids and texts from the files people keep them in: a queries TSV (``qid<TAB>text``), a
queries JSONL (BEIR's ``_id``/``text``; ``id``/``qid``/``query_id`` with ``query``/``query_text``;
QUEST's lines without ids, numbered from 1 as ``treckit qrels`` numbers them), a YAML test set,
``irds:<dataset-id>`` (through ir_datasets), or (ids only) a qrels file."""
from __future__ import annotations

import json

from ..console.errors import InputError
from ..inputs import is_irds
from ..ids import field_id_problem
from ..inputs.formats.common import text_lines
from ..inputs.formats.detect import detect_qrels
from ..inputs.formats.jsonl import as_id
from ..inputs.irds import irds_queries
from ..inputs.reading import read_qrels
from ..inputs.sources import PathLike, display_name, read_text
from ..inputs.bounded import loads_json
from .load import load_test_set

QUERY_ID_FIELDS = ("_id", "query_id", "qid", "id")
QUERY_TEXT_FIELDS = ("text", "query_text", "query")


def _is_test_set(path: PathLike) -> bool:
    return str(path).endswith((".yaml", ".yml"))


def read_queries(path: PathLike) -> dict[str, str]:
    """{qid: text} in file order; a repeated qid is an error."""
    return {r["query_id"]: r["query_text"] for r in read_query_records(path)}


def read_query_records(path: PathLike) -> list[dict]:
    """[{query_id, query_text, query_type (None unless the file gives one)}] in file order."""
    if is_irds(path):                                  # an ir_datasets id (the irds extra)
        return _irds_records(str(path))
    if _is_test_set(path):
        return _test_set_records(path)
    name = display_name(path)
    out: dict[str, dict] = {}
    quest_lines = False
    for no, line in enumerate(read_text(path).split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        if line.lstrip().startswith("{"):
            try:
                obj = loads_json(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"not a JSON object ({exc.msg})", path=name, line=no, fix="one JSON object per line") from None
            qf = next((f for f in QUERY_ID_FIELDS if f in obj), None)
            tf = next((f for f in QUERY_TEXT_FIELDS if isinstance(obj.get(f), str)), None)
            if qf is None and "docs" in obj and tf == "query":
                quest_lines = True              # QUEST gold/prediction lines: the qid is the 1-based line number
            if qf is None and quest_lines:
                obj = {**obj, "qid": str(no)}
                qf = "qid"
            if qf is None or tf is None:
                raise InputError("a query line needs an id (_id, query_id, qid, id) and a text (text, query_text, query)",
                                 path=name, line=no, fix="add the missing field")
            qid, text = as_id(obj[qf], "query id", name, no, line), obj[tf]
            qtype = _query_type(obj, name, no, line)
        else:
            fields = line.split("\t")
            if len(fields) != 2:
                raise InputError(f"a queries TSV line is 'qid<TAB>text' ({len(fields)} tab-separated fields here)",
                                 path=name, line=no, fix="separate the id and the text with one tab")
            qid, text = fields
            qtype = None
            if no == 1 and qid.lower() in ("qid", "query_id", "query-id", "id", "_id"):
                continue                                # a header
        if field_id_problem(qid):
            raise InputError(f"the query id {field_id_problem(qid)}", path=name, line=no, text=line,
                             fix="give each query an id without spaces (e.g. replace them with underscores)")
        if qid in out:
            raise InputError(f"query id {qid!r} appears twice", path=name, line=no, fix="give each query one line")
        out[qid] = {"query_id": qid, "query_text": text, "query_type": qtype}
    return list(out.values())


def _irds_records(dataset: str) -> list[dict]:
    return [{"query_id": q, "query_text": t, "query_type": None} for q, t in irds_queries(dataset)]


def _test_set_records(path: PathLike) -> list[dict]:
    return [{"query_id": q.query_id, "query_text": q.query_text, "query_type": q.query_type}
            for q in load_test_set(path).queries]


def _query_type(obj: dict, name: str, no: int, line: str) -> str | None:
    """A JSON query line's ``query_type``: non-empty text, or None when the line gives none."""
    qtype = obj.get("query_type")
    if qtype is not None and not (isinstance(qtype, str) and qtype):
        raise InputError(f"query_type must be non-empty text, found {json.dumps(qtype, default=str)}",
                         path=name, line=no, text=line, fix="give query_type as text, or leave it out")
    return qtype


def read_topic_ids(path: PathLike) -> list[str]:
    """Topic ids from a queries file, a test set, or a qrels file (detected as such)."""
    if not _is_test_set(path):
        try:
            fmt = detect_qrels(path).format
        except InputError:
            fmt = None
        if fmt in ("trec", "beir-tsv", "beir-jsonl"):
            return list(dict.fromkeys(read_qrels(path, fmt).table.column("qid").to_pylist()))
    return list(read_queries(path))


def read_query_types(path: PathLike) -> dict[str, str]:
    """qid -> type from a TSV (``qid<TAB>type``) or an id-added QUEST JSONL (``metadata.template``)."""
    text = read_text(path)
    out: dict[str, str] = {}
    for no, line in enumerate(text_lines(text), 1):
        if not line.strip():
            continue
        if line.lstrip().startswith("{"):
            try:
                obj = loads_json(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"not valid JSON ({exc.msg})", path=str(path), line=no, text=line,
                                 fix="each line must be one complete JSON object") from None
            if not isinstance(obj, dict):
                raise InputError("a JSON line must be an object", path=str(path), line=no, text=line,
                                 fix="write one {...} object per line")
            meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
            qid = str(obj.get("id", obj.get("qid", no)))
            qtype = str(meta.get("template") or meta.get("type") or obj.get("type") or "(unknown)")
        else:
            f = line.split("\t")
            if len(f) != 2 or not f[1]:
                raise InputError(f"a query-types line is 'qid<TAB>type' ({len(f)} tab-separated fields here)",
                                 path=str(path), line=no, text=line,
                                 fix="separate qid and type with one tab (a type holds no tab)")
            qid, qtype = f
        if qid in out:
            raise InputError(f"query id {qid!r} has a type twice", path=str(path), line=no,
                             fix="give each query one line")
        out[qid] = qtype
    return out
