"""Reading a run or qrels file the one way: by format (detected when not given), with the reader configuration
(:class:`treckit.inputs.options.RunReading`), converted where evaluation would otherwise misread it
(:func:`treckit.ranking.convert.convert_run`), id-less JSONL lines joined to a gold file by query text.

:func:`read_with` and :func:`as_meant` are the run's way in for every command and the Python API;
:func:`read_qrels` the judgments'.
"""
from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from ..dependencies import deferred
from ..console.errors import InputError
from ..console.messages import warn_python
from ..console.spelling import pass_options
from ..model import Qrels, Run
from ..ranking.convert import convert_run
from . import irds
from .formats import QRELS_FORMATS, RUN_FORMATS, beir, jsonl, trec, tsv
from .formats.common import LineErrors
from .formats.detect import detect_qrels, detect_run
from .formats.jsonl import ID_FIELDS, iter_json_lines, read_quest
from .formats.rising_ranks import NOTE as RISING_RANKS
from .options import RunReading
from .sources import PathLike, display_name

np = deferred("numpy")


def read_with(reading: RunReading, path: PathLike, *, convert: bool | None = None, lean: bool = False,
              ranks: bool = True, depth: int | None = None, run_name: str | None = None, raw_ids: bool = False,
              warn: Callable[[str], None] | None = warn_python, qrels_source: PathLike | None = None,
              verbose: bool = False, data: bytes | None = None, first_line: int = 1, readings=None,
              order_option: bool = True) -> "ReadRun":
    """Read ``path``; convert it when asked (``convert=True``, as ``treckit run`` does) or, with
    ``convert=None``, when evaluation would otherwise misread it (anything but a plain TREC run).

    ``qrels_source`` (evaluation): the qrels file; when it is a QUEST gold file and JSONL lines
    without ids are numbered by line, a line order that differs from the gold's is an error.
    ``lean`` / not ``ranks``: a TREC run read as is may skip its rank and tag columns / its rank column
    (evaluation reads neither); a converted run reads its ranks only when they order it.
    ``data`` (a TREC run): whole lines of ``path`` to read instead of the file, the first being its
    line ``first_line`` (a block of a streamed file; errors name the file and its line); ``readings``
    (formats.trec.RunReadings): counts of lines read by an explicit rule, reported by the caller.
    Queries whose rank column rises with the score (:meth:`RunReading.checks_rising_ranks`) are counted and said
    through ``warn``, with the fix (``--order asc``; without ``order_option``, for a caller that takes no
    reading options, a conversion with ``treckit run``); a block (``data``) leaves its evidence in
    ``run.notes`` for the caller, who sees the whole file (:mod:`treckit.inputs.formats.rising_ranks`).
    """
    fmt = reading.format or detect_run_format(path, verbose)
    as_read = not convert and reading.evaluated_as_read(fmt) and depth is None
    needs_ranks = reading.order == "given" or reading.ties == "break"
    run = read_raw_run(path, fmt, reading, lean=lean and as_read, ranks=ranks if as_read else needs_ranks,
                       data=data, first_line=first_line, readings=readings,
                       rising_ranks=reading.checks_rising_ranks(fmt))
    if data is None:
        evidence = run.notes.pop(RISING_RANKS, None)
        if evidence is not None and evidence.settle() and warn is not None:
            warn(rising_ranks_warning(str(path), evidence.flagged, evidence.queries, order_option=order_option))
    if run.notes.get("numbered_by_line"):
        _check_line_numbers(reading, path, fmt, run.notes["numbered_by_line"], qrels_source, warn)
    if fmt == "tsv" and warn is not None and not run.notes.get("scores_from_rank") and _scores_look_like_ranks(run):
        warn(f"{path}: the third column counts 1, 2, 3 ... down every query, as ranks do, and is read as a score "
             "(higher first); if it holds ranks (MS MARCO's qid pid rank), " + pass_options("run", "--tsv-third rank"))
    return as_meant(reading, run, fmt, source=str(path), convert=convert, depth=depth, run_name=run_name,
                    raw_ids=raw_ids, warn=warn)


def as_meant(reading: RunReading, run, fmt: str, *, source: str = "run", convert: bool | None = None,
             depth: int | None = None, run_name: str | None = None, raw_ids: bool = False,
             warn: Callable[[str], None] | None = warn_python) -> "ReadRun":
    """The read run ``run`` of format ``fmt`` (``memory``: given in Python, ranked like a TREC run)
    as it is to be evaluated: as is when that is its reading, else converted (see :func:`read_with`).
    Read for evaluation (not ``convert``), what the conversion changed is said through ``warn``;
    a conversion asked for reports in full (its ``report``)."""
    if not convert and reading.evaluated_as_read(fmt, run.notes) and depth is None:
        return ReadRun(run, fmt, None, "desc")
    order = reading.order_for(fmt, run.notes)
    out, report = convert_run(run, order=order, ties=reading.ties, duplicates=reading.duplicates, depth=depth,
                              run_name=run_name, source=source, raw_ids=raw_ids)
    got = ReadRun(out, fmt, report, order)
    if not convert and warn is not None:
        for note in got.notes():
            warn(f"{source}: {note}")
    return got


def query_map(reading: RunReading) -> Mapping[str, str] | None:
    if reading.query_to_qid is not None:
        return reading.query_to_qid
    return gold_query_map(reading.gold, reading.id_base) if reading.gold else None


def _check_line_numbers(reading: RunReading, path, fmt: str, count: int, qrels_source, warn) -> None:
    """Id-less JSONL lines were numbered by line: an error when the qrels are a QUEST gold file
    listing the same queries in another order, else a warning saying how to join instead."""
    name = str(path)
    if qrels_source is not None and not irds.is_irds(qrels_source):
        gold = _quest_queries(qrels_source)
        if gold is not None:
            by_text = _text_map(gold, str(qrels_source))
            bad, unknown = _first_misnumbered(path, reading, by_text)
            if bad is not None:
                no, text, got, want = bad
                raise InputError(f"the predictions have no ids and are not in the gold file's order: line {no} "
                                 f"(query {text[:60]!r}) would be query {got}, but the gold file has that "
                                 f"query as {want}", path=name,
                                 fix="to join the predictions by query text, "
                                     + pass_options("run", f"--gold {qrels_source}"))
            if warn is not None:
                warn(f"{name}: {unknown} of {count} JSONL lines without a query id have a query text that the gold "
                     f"file {qrels_source} does not have; numbered by line, they may be paired with other queries"
                     if unknown else
                     f"{name}: {count} JSONL lines have no query id and were numbered by line ({reading.id_base}, "
                     f"{reading.id_base + 1}, ...), which is the gold file's order of their queries")
            return
    if warn is not None:
        warn(f"{name}: {count} JSONL lines have no query id and were numbered by line ({reading.id_base}, "
             f"{reading.id_base + 1}, ...); if they are not in the gold file's order, join them by query text: "
             + pass_options("run", "--gold GOLD") + " (or name the id field: " + pass_options("run", "--id-field FIELD")
             + ")")


def read_qrels(path: PathLike, format: str | None = None, *, decode_ids: bool = True, skip_malformed: bool = False,
               layout: str = "auto", verbose: bool = False) -> Qrels:
    """Qrels from TREC, BEIR TSV/JSONL, QUEST JSONL (every listed doc relevant), or ``irds:<dataset-id>``
    (the dataset's qrels through ir_datasets).  ``layout``: TREC lines with more than 4 fields, as
    ``treckit qrels --layout`` reads them (docs/formats.md: Reading rules)."""
    if irds.is_irds(path):
        return irds.irds_qrels(path)
    fmt = format
    if fmt is None:
        det = detect_qrels(path)
        fmt = det.format
        if verbose:
            print(f"treckit: {display_name(path)}: read as {det.format} qrels ({det.reason})", file=sys.stderr)
    if fmt == "trec":
        return trec.read_trec_qrels(path, decode_ids=decode_ids, skip_malformed=skip_malformed, layout=layout)
    if fmt == "beir-tsv":
        return beir.read_beir_tsv(path, skip_malformed=skip_malformed)
    if fmt == "beir-jsonl":
        return beir.read_beir_jsonl(path)
    if fmt == "quest":
        return jsonl.read_quest(path).qrels
    raise InputError(f"unknown qrels format {fmt!r}", fix=f"use one of {', '.join(QRELS_FORMATS)}")


def judgment_line_finder(path: PathLike) -> Callable[[list[int]], list[int]] | None:
    """For the qrels :func:`read_qrels` reads from ``path``: a function giving the line numbers of judgments (their
    0-based rows), where lines can be told (a TREC qrels file read again; not stdin, not ``irds:``), else None."""
    if str(path) == "-" or irds.is_irds(path):
        return None
    try:
        if detect_qrels(path).format != "trec":
            return None
    except InputError:
        return None
    return lambda rows: trec.judgment_lines(path, rows)


def read_run(path: PathLike, format: str | None = None, *, reading: RunReading | None = None, verbose: bool = False,
             lean: bool = False, ranks: bool = True, warn=warn_python, qrels_source: PathLike | None = None,
             order_option: bool = True, **options) -> Run:
    """A run from TREC (6 or 3 columns), TSV or JSONL, as every treckit command reads it.

    ``options`` are :class:`RunReading`'s (``order``, ``gold``, ``tsv_third``, ``fields`` or
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
        reading = dataclasses.replace(reading, **({"format": format} if format else {}), **options)
    return read_with(reading, path, lean=lean, ranks=ranks, warn=warn, qrels_source=qrels_source, verbose=verbose,
                     order_option=order_option).run


@dataclass
class ReadRun:
    """A run as it is to be evaluated, its format, and the conversion report (None: read as is)."""

    run: Any
    format: str
    report: Any
    order: str

    def notes(self) -> list[str]:
        """What the reading changed about the input's meaning, to be said where it is evaluated."""
        r = self.report
        if r is None:
            return []
        out = []
        if r.negated_queries:
            out.append(f"{r.negated_queries} queries had scores all <= 0 and were ranked as negated scores "
                       "(most negative first; to rank them as written, " + pass_options("run", "--order desc") + ")")
        if r.duplicates_dropped:
            out.append(f"{r.duplicates_dropped} duplicate (qid, docid) lines dropped")
        return out + list(r.notes)


def rising_ranks_warning(source: str, flagged: int, queries: int, *, order_option: bool = True) -> str:
    """The one warning about a TREC run whose rank column rises with its scores in ``flagged`` of its ``queries``
    queries; its fix is ``--order asc`` where the reader takes that option (``order_option``), else a conversion."""
    it = "it is" if flagged == 1 else "they are"
    if order_option:
        fix = ("pass --order asc, which ranks every query lowest score first (or --order given to rank by the rank "
               "column); --order desc keeps trec_eval's order without this warning")
    else:
        fix = (f"convert it first, `treckit run {source} --order asc -o FIXED` (or `--order given` to rank by the "
               "rank column), and give FIXED instead")
    return (f"{source}: in {flagged} of its {queries} quer{'y' if queries == 1 else 'ies'} the rank column rises as "
            f"the score rises (rank 1 on the lowest score), the mark of negated scores; {it} ranked by score, highest "
            f"first, as trec_eval does: if lower scores are better, {fix}")


def _scores_look_like_ranks(run) -> bool:
    """Whether every query's scores are its 1-based (or 0-based) positions in the file: ranks, most likely."""
    score = run.table.column("score").to_numpy()
    position = run.table.column("rank").to_numpy()       # the list position when the file gives no rank
    return score.size > 1 and bool(np.array_equal(score, position) or np.array_equal(score, position - 1))



def detect_run_format(path: PathLike, verbose: bool = False) -> str:
    det = detect_run(path)
    if verbose:
        import sys
        print(f"treckit: {display_name(path)}: read as {det.format} run ({det.reason})", file=sys.stderr)
    return det.format


def read_raw_run(path: PathLike, fmt: str, reading: RunReading, *, lean: bool = False, ranks: bool = True,
                 data: bytes | None = None, first_line: int = 1, readings=None, rising_ranks: bool = False):
    """The run exactly as the file states it (scores as written), by format name (``data``: see
    :func:`read_with`; TREC runs only; ``rising_ranks``: see :func:`treckit.inputs.formats.trec.read_trec_run`)."""

    r = reading
    if data is not None and fmt not in ("trec", "trec3"):
        raise ValueError(f"a block of a {fmt} run cannot be read on its own")
    if fmt == "trec":
        return trec.read_trec_run(path, decode_ids=r.decode_ids, skip_malformed=r.skip_malformed, layout=r.layout,
                                  lean=lean, ranks=ranks, data=data, first_line=first_line, readings=readings,
                                  rising_ranks=rising_ranks)
    if fmt == "trec3":
        return trec.read_trec_run(path, decode_ids=r.decode_ids, skip_malformed=r.skip_malformed, layout=r.layout,
                                  columns=3, data=data, first_line=first_line, readings=readings)
    if fmt == "tsv":
        return tsv.read_tsv_run(path, third=r.tsv_third, skip_malformed=r.skip_malformed)
    if fmt == "jsonl":
        return jsonl.read_jsonl_run(path, fields=r.fields, query_to_qid=query_map(r), id_base=r.id_base,
                                    skip_malformed=r.skip_malformed)
    raise InputError(f"unknown run format {fmt!r}", fix=f"use one of {', '.join(RUN_FORMATS)}")


# ---------------------------------------------------------------- the gold join
def gold_queries(gold: PathLike, id_base: int = 1) -> list[tuple[str, str]]:
    """(qid, query text) of a gold file: a QUEST-style JSONL (ids from its id field, else line
    numbers from ``id_base``), or ``irds:<dataset-id>`` (the dataset's queries)."""
    if irds.is_irds(str(gold)):
        return irds.irds_queries(str(gold))
    return read_quest(gold, id_base=id_base).queries


def gold_query_map(gold: PathLike, id_base: int = 1) -> dict[str, str]:
    """query text -> qid from a gold file (see :func:`gold_queries`)."""
    return _text_map(gold_queries(gold, id_base), str(gold))


def _text_map(queries: list[tuple[str, str]], source: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for qid, text in queries:
        if text in out and out[text] != qid:
            raise InputError(f"the gold file has the query text {text[:60]!r} twice (ids {out[text]} and {qid})",
                             path=source, fix="query texts must be unique to join predictions by text")
        out[text] = qid
    return out


def _quest_queries(qrels_source) -> list[tuple[str, str]] | None:
    """The queries of a qrels source when it is a QUEST gold file (which has query texts), else None."""
    if not isinstance(qrels_source, (str, Path)):
        return None
    try:
        if detect_qrels(qrels_source).format != "quest":
            return None
    except InputError:
        return None
    return gold_queries(qrels_source)


def _first_misnumbered(path, reading: RunReading, by_text: Mapping[str, str]):
    """(the first id-less prediction line whose line number is not the gold's qid for its query text, as
    (line, text, qid by line, qid in gold), or None; how many id-less lines have a text the gold lacks)."""
    errors = LineErrors(display_name(path), reading.skip_malformed)
    unknown = 0
    for n, (no, _, obj) in enumerate(iter_json_lines(path, errors if reading.skip_malformed else None)):
        if reading.fields.id is not None or any(k in obj for k in ID_FIELDS):
            continue
        text = obj.get(reading.fields.query)
        got = str(n + reading.id_base)          # as the run reader numbers it: the n-th JSON line
        if text not in by_text:
            unknown += 1
        elif by_text[text] != got:
            return (no, text, got, by_text[text]), unknown
    return None, unknown


