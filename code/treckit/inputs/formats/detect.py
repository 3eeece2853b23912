"""Format sniffing: look at the first content lines and say what was seen and why."""
from __future__ import annotations

import json
from dataclasses import dataclass

from ...console.errors import InputError
from ..sources import PathLike, display_name
from ..bounded import loads_json
from ...console.spelling import pass_options
from . import QRELS_FORMATS, RUN_FORMATS  # noqa: F401  (the formats it detects, declared in the package)
from .common import FIELD_SEPARATORS, head_lines, is_nan_text, parse_int, parse_score, split_fields



@dataclass(frozen=True)
class Detection:
    format: str
    reason: str


def _sample(path: PathLike, what: str, role: str, n: int = 20) -> list[str]:
    """The first content lines (no blanks, no comments), each whole; an empty file is an error naming ``what``."""
    lines = head_lines(path, n, what, role)
    if not lines:
        raise InputError(f"the file is empty: no {what} in it", path=display_name(path), fix="check that the right file was given")
    return lines


def detect_qrels(path: PathLike) -> Detection:
    lines = _sample(path, "judgments", "qrels")
    name = display_name(path)
    first = lines[0]
    if first.lstrip(FIELD_SEPARATORS).startswith("{"):
        try:
            obj = loads_json(first)
        except json.JSONDecodeError:
            obj = {}
        if "docs" in obj and "query" in obj:
            return Detection("quest", "first line is a JSON object with 'query' and 'docs' (QUEST)")
        if any(k in obj for k in ("query-id", "query_id")) and any(k in obj for k in ("corpus-id", "corpus_id", "doc_id")):
            return Detection("beir-jsonl", "first line is a JSON object with query-id and corpus-id (BEIR)")
        raise InputError(f"JSON lines, but neither QUEST (query, docs) nor BEIR (query-id, corpus-id); keys: {sorted(obj)}",
                         path=name, line=1, text=first, fix="say which: " + pass_options("qrels", "--qrels-format beir-jsonl|quest")
                         + ", or rename the fields")
    head = first.split("\t")
    if head[0].strip(FIELD_SEPARATORS).lower() in ("query-id", "query_id", "qid") and len(head) == 3:
        return Detection("beir-tsv", f"tab-separated header {first.strip(FIELD_SEPARATORS)!r}")
    f = split_fields(first)
    if all(_run_like(split_fields(ln)) for ln in lines):
        raise InputError("the first lines look like a TREC run (qid Q0 docid rank score tag), not qrels", path=name,
                         line=1, text=first, fix="give the qrels file here (lines 'qid 0 docid grade'); to read these "
                         "as judgments whose doc ids contain spaces, "
                         + pass_options("qrels", "--qrels-format trec --layout docid-spaces"))
    if len(f) >= 4 and parse_int(f[-1]) is not None:
        return Detection("trec", "lines of 4+ fields ending in an integer grade (TREC qrels)")
    if len(head) == 3 and parse_int(head[2].strip(FIELD_SEPARATORS)) is not None:
        return Detection("beir-tsv", "3 tab-separated fields ending in an integer (BEIR TSV without header)")
    raise InputError("cannot tell the qrels format from the first line", path=name, line=1, text=first,
                     fix="say which: " + pass_options("qrels", "--qrels-format trec|beir-tsv|beir-jsonl|quest"))


def _run_like(f: list[str]) -> bool:
    """6 fields with an integer rank and a score that is not an integer (qrels grades are)."""
    return (len(f) == 6 and parse_int(f[3]) is not None and parse_score(f[4]) is not None
            and parse_int(f[4]) is None)


def detect_run(path: PathLike) -> Detection:
    lines = _sample(path, "run lines", "run")
    name = display_name(path)
    first = lines[0]
    if first.lstrip(FIELD_SEPARATORS).startswith("{"):
        return Detection("jsonl", "first line is a JSON object")
    tabs = [ln.split("\t") for ln in lines]
    if all(len(t) >= 6 for t in tabs):
        return Detection("trec", "6+ tab-separated fields (TREC run)")
    f = split_fields(first)
    if len(f) >= 6 and (parse_score(f[4]) is not None or parse_score(f[-2]) is not None):
        return Detection("trec", f"{len(f)} whitespace-separated fields with rank and score (TREC run)")
    if "\t" in first and len(tabs[0]) in (3, 4):
        return Detection("tsv", f"{len(tabs[0])} tab-separated fields")
    if len(f) == 3 and parse_score(f[2]) is not None:
        return Detection("trec3", "3 fields: qid docid score")
    # a TREC line but for a NaN score: read as such, so that the reader names the NaN, its line and field
    if len(f) == 6 and parse_int(f[3]) is not None and is_nan_text(f[4]):
        return Detection("trec", "6 whitespace-separated fields with a rank (TREC run; the score is NaN)")
    if len(f) == 3 and is_nan_text(f[2]):
        return Detection("trec3", "3 fields: qid docid score (the score is NaN)")
    raise InputError("cannot tell the run format from the first line", path=name, line=1, text=first,
                     fix="say which: " + pass_options("run", "--run-format trec|trec3|tsv|jsonl"))
