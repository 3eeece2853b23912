"""BEIR qrels: ``qrels/*.tsv`` (header ``query-id corpus-id score``) and the same as JSON lines."""
from __future__ import annotations

import itertools

from ...console.errors import InputError
from ..sources import PathLike, display_name
from ...model import Qrels
from .common import FIELD_SEPARATORS, LineErrors, content_lines, is_blank, parse_int
from .jsonl import as_id, iter_json_lines

_Q = ("query-id", "query_id", "qid")
_D = ("corpus-id", "corpus_id", "doc_id", "docid")
_G = ("score", "relevance", "grade", "rel")


def read_beir_tsv(path: PathLike, *, skip_malformed: bool = False) -> Qrels:
    name = display_name(path)
    errors = LineErrors(name, skip_malformed, "qrels")
    lines = ((no, ln) for no, ln in content_lines(path) if not is_blank(ln))
    first = next(lines, None)
    if first is None:
        raise InputError("the file is empty: no judgments in it", path=name, fix="check that the right file was given")
    if first[1].split("\t")[0].strip(FIELD_SEPARATORS) not in _Q:          # no header: the first line is a judgment
        lines = itertools.chain([first], lines)
    qids, docids, grades = [], [], []
    for no, line in lines:
        f = line.split("\t")
        if len(f) != 3:
            errors.bad(no, line, f"a BEIR qrels line has 3 tab-separated fields (query-id, corpus-id, score), found {len(f)}",
                       "separate the fields with single tabs")
            continue
        g = parse_int(f[2].strip(FIELD_SEPARATORS))
        if g is None:
            errors.bad(no, line, f"score {f[2]!r} is not an integer", "the third field is an integer relevance grade")
            continue
        q, d = f[0].strip(FIELD_SEPARATORS), f[1]
        if not q or not d:
            errors.bad(no, line, "empty query id or corpus id", "fill both ids")
            continue
        qids.append(q), docids.append(d), grades.append(g)
    errors.report()
    if not qids:
        raise InputError("no judgments found", path=name, fix="check that the right file was given")
    return Qrels.from_columns(qids, docids, grades)


def read_beir_jsonl(path: PathLike) -> Qrels:
    name = display_name(path)
    qids, docids, grades = [], [], []
    for no, line, obj in iter_json_lines(path):
        q = next((obj[k] for k in _Q if k in obj), None)
        d = next((obj[k] for k in _D if k in obj), None)
        g = next((obj[k] for k in _G if k in obj), None)
        if q is None or d is None or not isinstance(g, int) or isinstance(g, bool):
            raise InputError("a BEIR qrels JSON line needs query-id, corpus-id and an integer score", path=name,
                             line=no, text=line, fix='write {"query-id": "1", "corpus-id": "d1", "score": 1}')
        qids.append(as_id(q, "query id", name, no, line)), docids.append(as_id(d, "corpus id", name, no, line))
        grades.append(g)
    return Qrels.from_columns(qids, docids, grades)
