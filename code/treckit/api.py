"""Reading and writing by format name, with automatic detection when none is given."""
from __future__ import annotations

import sys

from .errors import InputError
from .formats import beir, jsonl, trec, tsv
from .formats.detect import QRELS_FORMATS, RUN_FORMATS, detect_qrels, detect_run
from .io import PathLike
from .model import Qrels, Run


def _format(path, given: str | None, detector, role: str, verbose: bool) -> str:
    if given is not None:
        return given
    det = detector(path)
    if verbose:
        print(f"treckit: {path}: read as {det.format} {role} ({det.reason})", file=sys.stderr)
    return det.format


def read_qrels(path: PathLike, format: str | None = None, *, decode_ids: bool = True, skip_malformed: bool = False,
               verbose: bool = False) -> Qrels:
    """Qrels from TREC, BEIR TSV/JSONL or QUEST JSONL (every listed doc relevant)."""
    fmt = _format(path, format, detect_qrels, "qrels", verbose)
    if fmt == "trec":
        return trec.read_trec_qrels(path, decode_ids=decode_ids, skip_malformed=skip_malformed)
    if fmt == "beir-tsv":
        return beir.read_beir_tsv(path, skip_malformed=skip_malformed)
    if fmt == "beir-jsonl":
        return beir.read_beir_jsonl(path)
    if fmt == "quest":
        return jsonl.read_quest(path).qrels
    raise InputError(f"unknown qrels format {fmt!r}", fix=f"use one of {', '.join(QRELS_FORMATS)}")


def read_run(path: PathLike, format: str | None = None, *, decode_ids: bool = True, skip_malformed: bool = False,
             layout: str = "auto", fields: jsonl.JsonlFields | None = None, query_to_qid: dict | None = None,
             id_base: int = 1, tsv_third: str = "score", verbose: bool = False, lean: bool = False,
             ranks: bool = True) -> Run:
    """A run from TREC (6 or 3 columns), TSV or JSONL.  ``lean``/``ranks``: see :func:`treckit.formats.trec.read_trec_run`."""
    fmt = _format(path, format, detect_run, "run", verbose)
    if fmt == "trec":
        return trec.read_trec_run(path, decode_ids=decode_ids, skip_malformed=skip_malformed, layout=layout, lean=lean,
                                   ranks=ranks)
    if fmt == "trec3":
        return trec.read_trec_run(path, decode_ids=decode_ids, skip_malformed=skip_malformed, columns=3)
    if fmt == "tsv":
        return tsv.read_tsv_run(path, third=tsv_third, skip_malformed=skip_malformed)
    if fmt == "jsonl":
        return jsonl.read_jsonl_run(path, fields=fields, query_to_qid=query_to_qid, id_base=id_base,
                                    skip_malformed=skip_malformed)
    raise InputError(f"unknown run format {fmt!r}", fix=f"use one of {', '.join(RUN_FORMATS)}")


def write_qrels(qrels: Qrels, path: PathLike, *, escape_ids: bool = True, sort: bool = True) -> None:
    trec.write_trec_qrels(qrels, path, escape_ids=escape_ids, sort=sort)


def write_run(run: Run, path: PathLike, *, escape_ids: bool = True, tag: str | None = None) -> None:
    trec.write_trec_run(run, path, escape_ids=escape_ids, tag=tag)
