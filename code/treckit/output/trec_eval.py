"""trec_eval's text output, byte for byte: ``%-22s\\t%s\\t%6.4f`` (or ``%ld`` for counts)."""
from __future__ import annotations

import math
from typing import Iterator

from .. import thresholds
from ..engines.memory import EvalResult


def _value(kind: str, value: float, z: bool) -> str:
    if kind == "long" and not z:
        return str(int(value))
    if math.isnan(value):
        return "  -nan"      # C's printf of 0.0/0.0 on x86 (sign bit set): trec_eval's only NaN
    return f"{value:6.4f}"


def format_trec_eval(res: EvalResult, *, per_query: bool = False, summary: bool = True) -> str:
    return "".join(trec_eval_chunks(res, per_query=per_query, summary=summary))


def trec_eval_chunks(res: EvalResult, *, per_query: bool = False, summary: bool = True) -> Iterator[str]:
    """:func:`format_trec_eval`'s text in pieces of ``thresholds.OUTPUT_CHUNK_QUERIES`` queries' lines, to be
    written one after the other (the -q text of 100,000 queries is hundreds of MB: never held whole)."""
    out: list[str] = []
    z = res.zscore
    zp = "Z" if z else ""
    if per_query:
        for i, qid in enumerate(res.qids):
            if out and i % thresholds.OUTPUT_CHUNK_QUERIES == 0:
                yield "".join(out)
                out = []
            for j, c in enumerate(res.columns):
                if c not in res.per_query_columns:
                    continue
                kind = res.kinds[c]
                if kind == "string":
                    out.append(f"{c:<22}\t{qid}\t'{res.strings[c][i]}'\n")
                else:
                    out.append(f"{zp}{c:<22}\t{qid}\t{_value(kind, res.values[i, j], z)}\n")
    if summary:
        for c in res.columns:
            kind = res.kinds[c]
            if kind == "runid":
                out.append(f"{'runid':<22}\tall\t{res.summary['runid']}\n")
            elif kind in ("double", "long") and c in res.summary:
                out.append(f"{zp}{c:<22}\tall\t{_value(kind, res.summary[c], z)}\n")
    yield "".join(out)
