"""Tab-separated runs: ``qid docid score`` (optionally a header naming the columns, or a rank column).

Without a header, three columns are ``qid docid score``; with ``third="rank"`` (MS MARCO's
``qid pid rank``) the third column is a rank and list order follows it.
"""
from __future__ import annotations

import itertools

from ...console.errors import InputError
from ..sources import PathLike, display_name
from ...model import Run
from .common import FIELD_SEPARATORS, LineErrors, check_score, content_lines, is_blank, is_comment, parse_int, parse_score

_Q = ("qid", "query_id", "query-id", "query")
_D = ("docid", "doc_id", "pid", "corpus-id", "corpus_id", "doc")
_S = ("score", "sim", "similarity")
_R = ("rank",)
THIRD_COLUMN = ("score", "rank")


def read_tsv_run(path: PathLike, *, third: str = "score", skip_malformed: bool = False) -> Run:
    name = display_name(path)
    if third not in THIRD_COLUMN:
        raise InputError(f"unknown third-column meaning {third!r}", fix=f"use one of {', '.join(THIRD_COLUMN)}")
    errors = LineErrors(name, skip_malformed)
    body = ((no, ln) for no, ln in content_lines(path) if not is_blank(ln) and not is_comment(ln))
    first = next(body, None)
    if first is None:
        raise InputError("the file is empty: no run lines in it", path=name, fix="check that the right file was given")
    cols, header = _column_positions(first[1], third, name)
    if not header:
        body = itertools.chain([first], body)
    width = max(cols.values()) + 1
    qids, docids, scores, ranks = [], [], [], []
    for no, line in body:
        f = line.split("\t")
        if len(f) < width:
            errors.bad(no, line, f"expected at least {width} tab-separated fields, found {len(f)}", "separate fields with tabs")
            continue
        q, d = f[cols["qid"]].strip(FIELD_SEPARATORS), f[cols["docid"]]
        if not q or not d:
            errors.bad(no, line, "empty query id or doc id", "fill both ids")
            continue
        if "score" in cols:
            text = f[cols["score"]].strip(FIELD_SEPARATORS)
            s = parse_score(text)
            if not check_score(s, text, no, line, errors):
                continue
            r = parse_int(f[cols["rank"]].strip(FIELD_SEPARATORS)) if "rank" in cols else None
        else:
            r = parse_int(f[cols["rank"]].strip(FIELD_SEPARATORS))
            if r is None:
                errors.bad(no, line, f"rank {f[cols['rank']]!r} is not an integer", "the rank column holds integers")
                continue
            s = None        # set below from the rank
        qids.append(q), docids.append(d), scores.append(s), ranks.append(r)
    errors.report()
    return _run_of_columns(name, qids, docids, scores, ranks, from_rank="score" not in cols)


def _column_positions(first: str, third: str, name: str) -> tuple[dict[str, int], bool]:
    """The index of each column ({"qid": .., "docid": .., "score" and/or "rank": ..}) and whether the first content
    line ``first`` is a header: a first line naming a query id and a doc id column is one, and says which column is
    which; without one, the columns are qid, docid and ``third``."""
    head = [h.strip(FIELD_SEPARATORS).lower() for h in first.split("\t")]
    if not (any(h in _Q for h in head) and any(h in _D for h in head)):
        return {"qid": 0, "docid": 1, third: 2}, False
    cols: dict[str, int] = {}
    for i, h in enumerate(head):
        for key, names in (("qid", _Q), ("docid", _D), ("score", _S), ("rank", _R)):
            if h in names and key not in cols:
                cols[key] = i
    if "score" not in cols and "rank" not in cols:
        raise InputError(f"the header {head} names no score or rank column", path=name,
                         fix="name a column 'score' or 'rank'")
    return cols, True


def _run_of_columns(name: str, qids: list[str], docids: list[str], scores: list, ranks: list,
                    from_rank: bool) -> Run:
    """The run of the lines read; ``from_rank``: the file has ranks and no scores, which are made from them."""
    if not qids:
        raise InputError("no run lines found", path=name, fix="check that the right file was given")
    if from_rank:
        # lower rank first: positive scores that fall as the rank grows (largest rank + 1 - rank), so no
        # order rule can take them for negated scores; the reading ranks such a file by its ranks (given)
        top = max(ranks) + 1
        scores = [float(top - r) for r in ranks]
    run = Run.from_columns(qids, docids, scores, ranks if all(r is not None for r in ranks) else None)
    if from_rank:
        run.notes["scores_from_rank"] = True
    return run
