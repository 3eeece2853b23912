"""JSON-lines inputs: QUEST ground truth, and runs of two shapes.

Run shapes recognised without options:

* ``{"id"|"qid"|"query_id": ..., "docs": [...], "scores": [...]}`` -- ``scores`` may be
  ``null`` or missing, and then the list order is the ranking;
* hit objects: ``{"qid": ..., "retrieved"|"results"|"hits"|"ctxs": [{"docid"|"doc_id"|"id"|"title": ..,
  "score"|"rank": ..}, ...]}``.

Options name the fields for anything else.  A run line without an id is mapped to
the gold file's id through its exact ``query`` text (QUEST's own join; prediction
files may be shuffled), else to its 1-based line number.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterator

from ... import thresholds
from ...console.errors import InputError
from ...fast.arrow import repeated_column
from ...fast.strings import has_empty, take
from ...ranking import DUPLICATES
from ..sources import PathLike, Source, display_name
from ..bounded import json_number
from ...model import Qrels, Run
from ...console.spelling import pass_options
from . import JsonlFields
from .common import LineErrors, content_lines, head_lines, notice

ID_FIELDS = ("id", "qid", "query_id", "query-id", "_id")
DOCS_FIELDS = ("docs", "doc_ids", "docids", "pids")
SCORES_FIELDS = ("scores",)
HITS_FIELDS = ("retrieved", "results", "hits", "ctxs")
HIT_DOC_FIELDS = ("docid", "doc_id", "id", "title")
HIT_SCORE_FIELDS = ("score",)


class _Refused(ValueError):
    """JSON that Python's json module would accept but that has no single meaning."""


class _RepeatedKeys(dict):
    """An object with a key given twice: an error where treckit reads the object (a line, a hit);
    objects it does not read (metadata) are not its business, as in the Arrow path."""

    repeated = ""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        obj = _RepeatedKeys(obj)
        obj.repeated = next(k for k, _ in pairs if k in seen or seen.add(k))
    return obj


def _check_keys(obj: Any) -> None:
    if isinstance(obj, _RepeatedKeys):
        raise _Refused(f"the key {obj.repeated!r} appears twice in one object",
                       "keep one of them (readers disagree on which a repeated key means)")


class _NotJsonNumber:
    """What Python's json module reads ``NaN``, ``Infinity`` and ``-Infinity`` as here: they are not JSON
    (RFC 8259), so a score or id holding one is an error; elsewhere (fields treckit does not read)
    they are left alone, as the Arrow reader leaves them."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return self.name


_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
_JSON_BLANK = " \t\r"
_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_constant=_NotJsonNumber,
                            parse_int=lambda s: json_number(s, int), parse_float=lambda s: json_number(s, float))


def load_json_line(line: str):
    """One JSON value, strictly: no repeated keys at the top, no lone surrogates; NaN/Infinity are
    marked (:class:`_NotJsonNumber`) for the readers of scores and ids to refuse."""
    try:
        obj = _DECODER.decode(line)
    except json.JSONDecodeError:
        raise
    except ValueError as exc:              # a number too long to be one (json_number)
        raise json.JSONDecodeError(str(exc), line, 0) from None
    _check_keys(obj)
    if _SURROGATE.search(line):
        try:
            json.dumps(obj, ensure_ascii=False, default=str).encode("utf-8")
        except UnicodeEncodeError:
            raise _Refused("a \\u escape is a lone surrogate (not a character)", "fix the escaped text") from None
    return obj


def iter_json_lines(path: PathLike, errors: LineErrors | None = None) -> Iterator[tuple[int, str, Any]]:
    name = display_name(path)
    found = False
    for no, line in content_lines(path, _JSON_BLANK):
        if not line.strip(_JSON_BLANK):
            continue
        try:
            obj = load_json_line(line)
        except json.JSONDecodeError as exc:
            if errors is None:
                raise InputError(f"not valid JSON ({exc.msg} at column {exc.colno})", path=name, line=no, text=line,
                                 fix="each line must be one complete JSON object") from None
            errors.bad(no, line, f"not valid JSON ({exc.msg} at column {exc.colno})", "each line must be one complete JSON object")
            continue
        except _Refused as exc:
            raise InputError(exc.args[0], path=name, line=no, text=line, fix=exc.args[1]) from None
        except RecursionError:
            raise InputError("JSON nested too deeply", path=name, line=no, text=line,
                             fix="each line must be one flat JSON object") from None
        if not isinstance(obj, dict):
            raise InputError(f"a JSON line must be an object, found {type(obj).__name__}", path=name, line=no, text=line,
                             fix="write one {...} object per line")
        found = True
        yield no, line, obj
    if not found:
        raise InputError("the file is empty: no JSON lines in it", path=name, fix="check that the right file was given")


def _first_key(obj: dict, names: tuple[str, ...]) -> str | None:
    return next((k for k in names if k in obj), None)


def as_id(value: Any, what: str, name: str, no: int, line: str) -> str:
    """A JSON string as it is, a JSON integer as its decimal text; anything else is refused
    (a float id such as 1.0 has no single spelling, true/null/lists are not ids)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError(f"{what} must be a string or an integer, found {json.dumps(value, default=str)}", path=name, line=no,
                         text=line, fix=f"give every {what} as a string")
    s = str(value)
    if not s:
        raise InputError(f"empty {what}", path=name, line=no, text=line, fix=f"every {what} must be non-empty")
    return s


# ---------------------------------------------------------------- QUEST ground truth
@dataclass
class GroundTruth:
    qrels: Qrels
    queries: list[tuple[str, str]]          # (qid, query text)
    ids_were_given: bool
    objects: list[dict] = field(default_factory=list)
    repeats_dropped: int = 0                  # docs listed twice on a line, dropped by the duplicates policy
    empty_queries: list[str] = field(default_factory=list)   # lines with an empty docs list


def check_duplicates_policy(policy: str) -> None:
    if policy not in DUPLICATES:
        raise InputError(f"unknown duplicates policy {policy!r}", fix=f"use one of {', '.join(DUPLICATES)}")


def read_quest(path: PathLike, *, id_base: int = 1, id_field: str | None = None, grade: int = 1,
               duplicates: str = "error") -> GroundTruth:
    """QUEST-style JSONL (``query``, ``docs``, ...): every listed doc is relevant with ``grade``.

    The qid is an id field when present, else the 1-based (``id_base``) number of the
    non-blank line.  ``metadata`` may be null or lack keys: it is not read.  A doc listed twice
    on one line is an error, or with ``duplicates`` keep-first/keep-max/keep-last (all the same
    here: one grade) kept once and counted in ``repeats_dropped``.  A line with an empty ``docs``
    list keeps its query (``queries``) without judgments, counted in ``empty_queries``.
    """
    check_duplicates_policy(duplicates)
    name = display_name(path)
    qids, docids, queries, objects = [], [], [], []
    given = None
    dropped = 0
    empty: list[str] = []
    for n, (no, line, obj) in enumerate(iter_json_lines(path)):
        key = _quest_id_key(obj, id_field, name, no, line)
        if given is None:
            given = key is not None
        elif given != (key is not None):
            raise InputError("some lines have an id field and some do not", path=name, line=no, text=line,
                             fix="give every line an id, or none (then line numbers are the ids)")
        qid = as_id(obj[key], "query id", name, no, line) if key is not None else str(n + id_base)
        docs, repeats = _quest_docs(obj, qid, duplicates, name, no, line)
        dropped += repeats
        if not docs:
            empty.append(qid)
        qids.extend([qid] * len(docs))
        docids.extend(docs)
        queries.append((qid, obj.get("query", "")))
        objects.append(obj)
    _check_one_line_per_query(queries, name)
    _report_unjudged(name, empty)
    return GroundTruth(Qrels.from_columns(qids, docids, [grade] * len(docids)), queries, bool(given), objects,
                       repeats_dropped=dropped, empty_queries=empty)


def _quest_id_key(obj: dict, id_field: str | None, name: str, no: int, line: str) -> str | None:
    """The key of a QUEST line's id: ``id_field`` when given (which the line must have), else the first of
    :data:`ID_FIELDS` the line has, if any."""
    if id_field is None:
        return _first_key(obj, ID_FIELDS)
    if id_field not in obj:
        raise InputError(f"no {id_field!r} field", path=name, line=no, text=line, fix="check --id-field")
    return id_field


def _quest_docs(obj: dict, qid: str, duplicates: str, name: str, no: int, line: str) -> tuple[list[str], int]:
    """A QUEST line's relevant docs, each once, and how many repeats ``duplicates`` dropped (a repeat is an
    error under "error")."""
    docs_key = _first_key(obj, DOCS_FIELDS)
    if docs_key is None or not isinstance(obj[docs_key], list):
        raise InputError("no 'docs' list", path=name, line=no, text=line,
                         fix="a QUEST line lists its relevant documents as \"docs\": [...]")
    docs: list[str] = []
    seen: set[str] = set()
    for d in obj[docs_key]:
        doc = as_id(d, "doc id", name, no, line)
        if doc in seen:
            if duplicates == "error":
                raise InputError(f"doc {doc!r} is listed twice for query {qid}", path=name, line=no, text=line,
                                 fix="remove the repeat, or " + pass_options("qrels", "--duplicates keep-first"))
            continue
        seen.add(doc)
        docs.append(doc)
    return docs, len(obj[docs_key]) - len(docs)


def _check_one_line_per_query(queries: list[tuple[str, str]], name: str) -> None:
    if len({q for q, _ in queries}) != len(queries):
        dup = next(q for q in (q for q, _ in queries) if sum(1 for x, _ in queries if x == q) > 1)
        raise InputError(f"query id {dup!r} appears on more than one line", path=name,
                         fix="give each line a distinct id")


def _report_unjudged(name: str, empty: list[str]) -> None:
    if empty:
        notice(name, f"{len(empty)} quer{'y lists' if len(empty) == 1 else 'ies list'} no relevant documents "
                     f"(first: {empty[0]}): kept without judgments, so trec_eval will not evaluate "
                     f"{'it' if len(empty) == 1 else 'them'}")


# ---------------------------------------------------------------- runs
def read_jsonl_run(path: PathLike, *, fields: JsonlFields | None = None, query_to_qid: dict[str, str] | None = None,
                   id_base: int = 1, skip_malformed: bool = False) -> Run:
    """A JSONL run.  Every line has an id field or none does (then the gold file's query text, else
    the 1-based line number, is the id: counted in ``run.notes``, which :class:`treckit.inputs.options.RunReading`
    says with how to join the lines by text instead).  A line with no documents keeps no row
    (a TREC run cannot hold an empty query): its qid is counted on stderr and listed in
    ``run.notes["empty_queries"]``."""
    f = fields or JsonlFields()
    name = display_name(path)
    if not skip_malformed:
        fast = read_jsonl_run_fast(path, f)
        if fast is not None:
            _report_empty(name, fast.notes.get("empty_queries"))
            return fast
    errors = LineErrors(name, skip_malformed)
    qids: list[str] = []
    docids: list[str] = []
    scores: list[float] = []
    ranks: list[int] = []
    no_scores = 0
    by_text = by_line = 0
    given: bool | None = None
    empty: list[str] = []
    seen_qids: dict[str, int] = {}
    for n, (no, line, obj) in enumerate(iter_json_lines(path, errors)):
        has_id = f.id is not None or _first_key(obj, ID_FIELDS) is not None
        if given is None:
            given = has_id
        elif given != has_id:
            raise InputError("some lines have an id field and some do not", path=name, line=no, text=line,
                             fix="give every line an id, or none (then the --gold query text or the line number is the id)")
        qid = _run_qid(obj, f, query_to_qid, n + id_base, name, no, line)
        if qid in seen_qids:
            raise InputError(f"query {qid!r} appears again (first on line {seen_qids[qid]})", path=name, line=no,
                             text=line, fix="give each query one line")
        seen_qids[qid] = no
        if not has_id:
            if query_to_qid is not None:
                by_text += 1
            else:
                by_line += 1
        docs, sc = _run_docs(obj, f, name, no, line, errors)
        if docs is None:
            continue
        if not docs:
            empty.append(qid)
            continue
        if sc is None:
            no_scores += 1
            sc = [float(len(docs) - i) for i in range(len(docs))]
        qids.extend([qid] * len(docs))
        docids.extend(docs)
        scores.extend(sc)
        ranks.extend(range(1, len(docs) + 1))
    errors.report()
    _report_empty(name, empty)
    if not qids:
        raise errors.nothing_read("retrieved documents", "no retrieved documents in the file")
    run = Run.from_columns(qids, docids, scores, ranks)
    if no_scores:
        run.notes["given_order_queries"] = no_scores
    if by_text:
        run.notes["joined_by_query_text"] = by_text
    if by_line:
        run.notes["numbered_by_line"] = by_line
    if empty:
        run.notes["empty_queries"] = empty
    return run


def _report_empty(name: str, empty: list[str] | None) -> None:
    if empty:
        notice(name, f"{len(empty)} quer{'y has' if len(empty) == 1 else 'ies have'} no documents (first: {empty[0]}): "
                     f"a TREC run cannot list {'it' if len(empty) == 1 else 'them'}; trec_eval counts such a query "
                     f"(as retrieving nothing) only with -c")


def read_jsonl_run_fast(path: PathLike, f: JsonlFields) -> Run | None:
    """pyarrow's JSON reader for large files of the plain shape {id, docs: [str], scores: [number]};
    None (the line-by-line reader takes over, with its precise errors) for anything else."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj


    src = Source(path)
    keys = _plain_run_keys(src, path, f)
    if keys is None:
        return None
    schema = _plain_run_schema(f, *keys)
    src.admit(thresholds.IN_MEMORY_BYTES_PER_FILE_BYTE)
    read = pj.ReadOptions(block_size=thresholds.ARROW_BLOCK_BYTES)
    parse = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    try:
        if src.gzip:            # a block of whole lines at a time, as it is inflated
            t = pa.concat_tables([pj.read_json(pa.py_buffer(part), read_options=read, parse_options=parse)
                                  for part in src.parts(thresholds.ARROW_BLOCK_BYTES)])
        else:
            t = pj.read_json(src.arrow(), read_options=read, parse_options=parse)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    lists = _plain_run_lists(t, keys)
    if lists is None:
        return None
    ids, docs, flat_docs, flat_scores, lens = lists
    n = len(flat_docs)
    dictionary = ids.combine_chunks()           # one id per line: small
    first_line = np.cumsum([0] + [len(c) for c in docs.chunks])
    qid = pa.chunked_array([pa.DictionaryArray.from_arrays(pc.list_parent_indices(c).cast(pa.int32()).to_numpy()
                                                           + np.int32(first_line[i]), dictionary)
                            for i, c in enumerate(docs.chunks)])
    starts = np.repeat(np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
    table = pa.table({"qid": qid, "docid": flat_docs, "score": flat_scores,
                      "rank": np.arange(n, dtype=np.int64) - starts + 1, "tag": repeated_column(n, None)})
    notes: dict = {"tag": "treckit"}
    if not lens.all():
        notes["empty_queries"] = take(ids, np.flatnonzero(lens == 0)).to_pylist()
    return Run(table, notes=notes)


def _plain_run_keys(src: Source, path: PathLike, f: JsonlFields) -> tuple[str, str, str] | None:
    """The id, docs and scores keys of a file for Arrow: one large enough, whose first line has the plain
    shape {id: string, docs: list, scores: list}; None for any other file."""
    if not src.at_least(thresholds.JSONL_FAST_MIN_BYTES):     # small files: the line reader is as fast and says more
        return None
    try:
        first = load_json_line(head_lines(path, 1, "run")[0])
    except (ValueError, IndexError, RecursionError, InputError):     # the line reader says what is wrong
        return None
    id_key = f.id or _first_key(first, ID_FIELDS)
    docs_key = f.docs or _first_key(first, DOCS_FIELDS)
    scores_key = f.scores or _first_key(first, SCORES_FIELDS)
    if not (id_key and docs_key and scores_key and isinstance(first.get(id_key), str)
            and isinstance(first.get(docs_key), list) and isinstance(first.get(scores_key), list)):
        return None
    return id_key, docs_key, scores_key


def _plain_run_schema(f: JsonlFields, id_key: str, docs_key: str, scores_key: str):
    """The Arrow schema of a plain run: a string id, a list of string docs, a list of double scores."""
    import pyarrow as pa

    # a later line holding a key the line reader would prefer (e.g. "id" where the first line had only
    # "qid") must not be read by another key here: such keys are declared null, so any value there
    # sends the file to the line reader
    preferred = [k for keys, chosen, given in ((ID_FIELDS, id_key, f.id), (DOCS_FIELDS, docs_key, f.docs))
                 if given is None for k in keys[: keys.index(chosen)]]
    return pa.schema([(id_key, pa.string()), (docs_key, pa.list_(pa.string())), (scores_key, pa.list_(pa.float64()))]
                     + [(k, pa.null()) for k in preferred])


def _plain_run_lists(t, keys: tuple[str, str, str]):
    """(ids, docs, flat docs, flat scores, list lengths) of a table that reads as the line reader reads it: no
    nulls, distinct non-empty ids, a score per doc, finite scores, non-empty doc ids and at least one doc;
    None for any other table."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    ids, docs, scores = (t.column(k) for k in keys)
    if (ids.null_count or docs.null_count or scores.null_count or len(pc.unique(ids)) != len(ids)
            or has_empty(ids)):
        return None
    lens = pc.list_value_length(docs).to_numpy(zero_copy_only=False)
    if not np.array_equal(lens, pc.list_value_length(scores).to_numpy(zero_copy_only=False)):
        return None
    # chunk by chunk, so the flattened columns are views of what the reader produced (no copy)
    flat_docs = pa.chunked_array([pc.list_flatten(c) for c in docs.chunks], pa.string())
    flat_scores = pa.chunked_array([pc.list_flatten(c) for c in scores.chunks], pa.float64())
    # Arrow reads NaN/Infinity literals and overflowing numbers that the line reader refuses: such a
    # file goes to the line reader, which names the line
    if (flat_docs.null_count or flat_scores.null_count or len(flat_docs) == 0
            or not all(np.isfinite(c.to_numpy()).all() for c in flat_scores.chunks) or has_empty(flat_docs)):
        return None
    return ids, docs, flat_docs, flat_scores, lens


def _run_qid(obj: dict, f: JsonlFields, query_to_qid: dict[str, str] | None, line_id: int, name: str, no: int, line: str) -> str:
    key = f.id if f.id is not None else _first_key(obj, ID_FIELDS)
    if key is not None:
        if key not in obj:
            raise InputError(f"no {key!r} field", path=name, line=no, text=line, fix="check --id-field")
        return as_id(obj[key], "query id", name, no, line)
    if query_to_qid is not None:
        text = obj.get(f.query)
        if not isinstance(text, str):
            raise InputError(f"no id field and no {f.query!r} text to join with the gold file", path=name, line=no,
                             text=line, fix="add an id field or --query-field")
        if text not in query_to_qid:
            raise InputError(f"query text {text[:80]!r} is not in the gold file", path=name, line=no, text=line,
                             fix="predictions are joined to gold by exact query text; check both files come from the same split")
        return query_to_qid[text]
    return str(line_id)


def _run_docs(obj: dict, f: JsonlFields, name: str, no: int, line: str, errors: LineErrors):
    hits_key = f.hits if f.hits is not None else (None if f.docs else _first_key(obj, HITS_FIELDS))
    if hits_key is not None and isinstance(obj.get(hits_key), list) and (f.hits or _first_key(obj, DOCS_FIELDS) is None):
        return _hits(obj[hits_key], f, name, no, line, errors)
    docs_key = f.docs if f.docs is not None else _first_key(obj, DOCS_FIELDS)
    if docs_key is None or not isinstance(obj.get(docs_key), list):
        errors.bad(no, line, "no list of documents found (looked for docs/doc_ids or retrieved/results/hits/ctxs)",
                   "name the field: " + pass_options("run", "--docs-field FIELD", "--hits-field FIELD"))
        return None, None
    docs = [as_id(d, "doc id", name, no, line) for d in obj[docs_key]]
    sk = f.scores if f.scores is not None else _first_key(obj, SCORES_FIELDS)
    raw = obj.get(sk) if sk is not None else None
    if raw is None:
        return docs, None
    if not isinstance(raw, list) or len(raw) != len(docs):
        errors.bad(no, line, f"'{sk}' must be a list as long as the docs ({len(docs)})", "give one score per document")
        return None, None
    return docs, [_score(x, name, no, line) for x in raw]


def _hits(hits: list, f: JsonlFields, name: str, no: int, line: str, errors: LineErrors):
    docs, scores, ranks = [], [], []
    for h in hits:
        if not isinstance(h, dict):
            errors.bad(no, line, "a hit must be an object", "write hits as {\"docid\": ..., \"score\": ...}")
            return None, None
        try:
            _check_keys(h)
        except _Refused as exc:
            raise InputError(exc.args[0], path=name, line=no, text=line, fix=exc.args[1]) from None
        dk = f.hit_doc if f.hit_doc is not None else _first_key(h, HIT_DOC_FIELDS)
        if dk is None or dk not in h:
            errors.bad(no, line, "a hit has no doc id field (docid/doc_id/id/title)", "name it: " + pass_options("run", "--hit-doc-field FIELD"))
            return None, None
        docs.append(as_id(h[dk], "doc id", name, no, line))
        sk = f.hit_score if f.hit_score is not None else _first_key(h, HIT_SCORE_FIELDS)
        scores.append(_score(h[sk], name, no, line) if sk is not None and h.get(sk) is not None else None)
        ranks.append(h.get("rank"))
    if all(s is not None for s in scores):
        return docs, scores
    if any(s is not None for s in scores):
        errors.bad(no, line, "some hits have a score and some do not", "give every hit a score, or none")
        return None, None
    if all(isinstance(r, int) and not isinstance(r, bool) for r in ranks):
        order = sorted(range(len(docs)), key=lambda i: ranks[i])
        docs = [docs[i] for i in order]
    return docs, None


def _score(x: Any, name: str, no: int, line: str) -> float:
    """A score is a JSON number (not true/false, not a string such as "2.5"), finite as a double."""
    if isinstance(x, _NotJsonNumber):
        raise InputError(f"score {x} is not a JSON number (RFC 8259)", path=name, line=no, text=line,
                         fix="give every document a finite score; drop or rescore such rows")
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise InputError(f"score {json.dumps(x, default=str)} is not a JSON number", path=name, line=no, text=line,
                         fix="write scores as JSON numbers (2.5, not \"2.5\"; no true/false)")
    try:
        v = float(x)
    except OverflowError:
        v = math.inf
    if not math.isfinite(v):
        raise InputError(f"score {x!r} does not fit a double (not finite)", path=name, line=no, text=line,
                         fix="give every document a finite score")
    return v
