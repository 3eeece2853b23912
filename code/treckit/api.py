"""Reading and writing by format name, with automatic detection when none is given.

Runs are read through :class:`treckit.reading.RunReading`, the one reader configuration every
command shares: :func:`read_run` returns the run as ``treckit eval`` ranks it.
"""
from __future__ import annotations

import sys

from .errors import InputError
from .formats import beir, jsonl, trec
from .formats.detect import QRELS_FORMATS, detect_qrels
from .io import PathLike
from .model import Qrels, Run
from .reading import RunReading, warn_python


def read_qrels(path: PathLike, format: str | None = None, *, decode_ids: bool = True, skip_malformed: bool = False,
               layout: str = "auto", verbose: bool = False) -> Qrels:
    """Qrels from TREC, BEIR TSV/JSONL, QUEST JSONL (every listed doc relevant), or ``irds:<dataset-id>``
    (the dataset's qrels through ir_datasets).  ``layout``: TREC lines with more than 4 fields, as
    ``treckit qrels --layout`` reads them (docs/formats.md: Reading rules)."""
    if isinstance(path, str) and path.startswith("irds:"):
        from .inputs import irds_qrels
        return irds_qrels(path)
    fmt = format
    if fmt is None:
        det = detect_qrels(path)
        fmt = det.format
        if verbose:
            print(f"treckit: {path}: read as {det.format} qrels ({det.reason})", file=sys.stderr)
    if fmt == "trec":
        return trec.read_trec_qrels(path, decode_ids=decode_ids, skip_malformed=skip_malformed, layout=layout)
    if fmt == "beir-tsv":
        return beir.read_beir_tsv(path, skip_malformed=skip_malformed)
    if fmt == "beir-jsonl":
        return beir.read_beir_jsonl(path)
    if fmt == "quest":
        return jsonl.read_quest(path).qrels
    raise InputError(f"unknown qrels format {fmt!r}", fix=f"use one of {', '.join(QRELS_FORMATS)}")


def read_run(path: PathLike, format: str | None = None, *, reading: RunReading | None = None, verbose: bool = False,
             lean: bool = False, ranks: bool = True, warn=warn_python, qrels_source: PathLike | None = None,
             order_option: bool = True, **options) -> Run:
    """A run from TREC (6 or 3 columns), TSV or JSONL, as every treckit command reads it.

    ``options`` are :class:`treckit.reading.RunReading`'s (``order``, ``gold``, ``tsv_third``, ``fields`` or
    ``id_field=``..., ``duplicates``, ``id_base``, ``layout``, ``skip_malformed``, ``decode_ids``,
    ``query_to_qid``), or pass a ready ``reading``.  A TREC 6-column run comes back as written; any other
    run comes back converted (:func:`treckit.convert_run`): ranked as it is meant, with scores that
    trec_eval ranks that way.  ``lean``: skip a TREC run's rank and tag columns (evaluation does not
    read them).  Warnings (e.g. JSONL lines numbered by line) are :class:`treckit.InputWarning`, or go to
    ``warn``; a caller whose own users cannot pass ``order`` says so with ``order_option=False`` (a warning then
    offers a conversion as the fix).
    """
    if reading is None:
        reading = RunReading.from_options(format=format, **options)
    elif format is not None or options:
        import dataclasses
        reading = dataclasses.replace(reading, **({"format": format} if format else {}), **options)
    return reading.read(path, lean=lean, ranks=ranks, warn=warn, qrels_source=qrels_source, verbose=verbose,
                        order_option=order_option).run


def write_qrels(qrels: Qrels, path: PathLike, *, escape_ids: bool = True, sort: bool = True) -> None:
    trec.write_trec_qrels(qrels, path, escape_ids=escape_ids, sort=sort)


def write_run(run: Run, path: PathLike, *, escape_ids: bool = True, tag: str | None = None) -> None:
    trec.write_trec_run(run, path, escape_ids=escape_ids, tag=tag)
