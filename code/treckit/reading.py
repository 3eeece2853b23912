"""One reader configuration for runs, shared by every command, the staged scripts and the Python API.

A run file means one thing wherever it is read: ``treckit run`` (conversion), ``treckit eval``,
``treckit compare``, ``code/evaluation/*.py``, :func:`treckit.read_run` and :func:`treckit.evaluate`
all read it through :meth:`RunReading.read`, with the same options and the same defaults, so that
evaluating a file and evaluating its conversion give the same numbers.

The reading rules (docs/formats.md, "Reading rules", says the same):

* **format** -- ``trec`` (6 columns), ``trec3`` (``qid docid score``), ``tsv``, ``jsonl``; detected
  when not given.
* **order** (default ``auto``) -- ``desc`` (higher score first), ``asc`` (lower first), ``given`` (the
  rank column, or list order), ``auto``:

  - a TREC 6-column run is ranked by score as written, as trec_eval ranks it: ``auto`` is ``desc``
    (a TREC file is never negated behind the user's back; ``--order asc`` says so when it must be).
    A query whose rank column rises as its score rises (rank 1 on the lowest score: negated scores,
    :mod:`treckit.formats.rising_ranks`) is ranked so all the same, with a warning naming how many
    queries do so and the fix (``--order asc``, or ``--order given``); ``--order desc`` says that
    trec_eval's order is meant, and reads without the check;
  - a run whose only order is a rank (a TSV ``qid pid rank`` file, or ``--tsv-third rank``) is
    ranked by that rank, lower first: ``auto`` is ``given``;
  - any other run (JSONL predictions, TSV with scores, 3-column files) is sign-aware: per query,
    scores all <= 0 with one < 0 are taken as negated (QUEST's BM25 writes -bm25) and ranked
    ascending (see :mod:`treckit.convert`).

  ``score`` is accepted for ``desc`` and ``rank`` for ``given`` (the old evaluation spellings).
* A run is evaluated as read when it is a TREC 6-column run ranked ``desc`` with no other option
  (trec_eval's own reading, at full speed); any other run is first converted by
  :func:`treckit.convert.convert_run`, exactly as ``treckit run`` converts it.
* **ids** -- JSONL lines name their query by an id field (``--id-field`` or id/qid/query_id/...);
  without one they are joined to a gold file by exact query text (``--gold``: a QUEST JSONL, or
  ``irds:<dataset>`` whose queries give the texts), else numbered by line from ``--id-base`` --
  with a warning, and an error when the qrels are a QUEST gold file whose order differs.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from .errors import InputError
from .io import PathLike
from .spelling import pass_options

# (no pyarrow at import: the command-line help builds its options from this module)

RUN_FORMATS = ("trec", "trec3", "tsv", "jsonl")
ORDERS = ("auto", "desc", "asc", "given")
ORDER_ALIASES = {"score": "desc", "rank": "given"}
TIES = ("keep", "break", "docid-asc")
DUPLICATES = ("error", "keep-first", "keep-max", "keep-last")
TSV_THIRD = ("score", "rank")
LAYOUTS = ("auto", "docid-spaces", "extra-columns")
# runs whose scores mean "higher first" as written: TREC 6-column files (trec_eval's reading) and runs
# handed over in Python (pytrec_eval, ranx, ir_measures and PyTerrier all rank by score descending)
AS_WRITTEN = ("trec", "memory")


class InputWarning(UserWarning):
    """A reading that is allowed but may not be what was meant (filter it with :mod:`warnings`)."""


def warn_python(message: str, category: type[Warning] = InputWarning) -> None:
    """The library's way to warn: a catchable ``category`` (:class:`InputWarning` unless another is
    given), attributed to the caller's code (the first frame outside treckit), naming options as the
    Python API's keywords.  Inside one of treckit's commands (a command reading a run through the
    API's defaults), said on stderr as the command's other warnings are, with its options
    (:mod:`treckit.spelling`)."""
    import os
    import sys

    from . import spelling
    if spelling.command_running():
        print(f"treckit: {spelling.spell(message)}", file=sys.stderr)
        return
    package = os.path.dirname(os.path.abspath(__file__))
    level, frame = 2, sys._getframe(1)          # stacklevel 2 is the frame that called warn_python
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    warnings.warn(spelling.spell(message), category, stacklevel=level)


_FLAG = re.compile(r"--([a-z][a-z0-9-]*)(?: ([a-z0-9][\w.|-]*|[A-Z]+)\b)?")


def respelled(message: str, spell: Callable[[str, str | None], str | None]) -> str:
    """``message`` with each command-line option (``--name [value]``) written ``spell(name, value)`` (None: as
    it is); a command quoted in backticks (`` `treckit run RUN --order asc` ``) is left as the shell command it is."""
    def one(m: re.Match) -> str:
        got = spell(m.group(1), m.group(2))
        return m.group(0) if got is None else got
    spans = message.split("`")
    return "`".join(span if i % 2 else _FLAG.sub(one, span) for i, span in enumerate(spans))


def _choice(value, allowed: tuple[str, ...], what: str, flag: str, aliases: Mapping[str, str] | None = None) -> str:
    value = (aliases or {}).get(value, value)
    if value not in allowed:
        raise InputError(f"unknown {what} {value!r}", fix=f"pass {flag} with one of: {', '.join(allowed)}")
    return value


@dataclass(frozen=True)
class RunReading:
    """How to read a run: every option of every command that reads one, with its one default."""

    format: Optional[str] = None          # trec | trec3 | tsv | jsonl; None: detect
    order: str = "auto"                   # auto | desc | asc | given (score = desc, rank = given)
    ties: str = "keep"                    # keep (trec_eval: docno descending) | break (input order) | docid-asc
    duplicates: str = "error"             # error | keep-first | keep-max | keep-last
    gold: Optional[str] = None            # QUEST gold JSONL or irds:<id>: joins id-less JSONL lines by query text
    id_base: int = 1                      # first qid of id-less JSONL lines numbered by line
    fields: Any = None                    # formats.jsonl.JsonlFields; None: detect every field
    tsv_third: str = "score"              # TSV without header: third column is score | rank
    layout: str = "auto"                  # TREC lines with > 6 fields: auto | docid-spaces | extra-columns
    skip_malformed: bool = False
    decode_ids: bool = True               # undo the %-escapes treckit writes into ids
    query_to_qid: Optional[Mapping[str, str]] = None   # API: a ready text -> qid map instead of ``gold``

    def __post_init__(self) -> None:
        set_ = functools.partial(object.__setattr__, self)
        if self.format is not None:
            set_("format", _choice(self.format, RUN_FORMATS, "run format", "--run-format"))
        set_("order", _choice(self.order, ORDERS, "order", "--order", ORDER_ALIASES))
        set_("ties", _choice(self.ties, TIES, "ties policy", "--ties"))
        set_("duplicates", _choice(self.duplicates, DUPLICATES, "duplicates policy", "--duplicates"))
        set_("tsv_third", _choice(self.tsv_third, TSV_THIRD, "TSV third column", "--tsv-third"))
        set_("layout", _choice(self.layout, LAYOUTS, "layout", "--layout"))
        if isinstance(self.id_base, bool) or not isinstance(self.id_base, int):
            raise InputError(f"id base must be an integer, got {self.id_base!r}", fix="pass --id-base N")
        if self.fields is None:
            from .formats.jsonl import JsonlFields
            set_("fields", JsonlFields())
        if self.gold is not None:
            set_("gold", str(self.gold))

    @property
    def ranking(self) -> str:
        """The ranking rule this reading gives a run (a key of treckit.measures.definitions.RANKINGS): ties
        are what the reading options change; scores always rank higher first once read."""
        return {"keep": "trec_eval", "docid-asc": "lex-id", "break": "input-order"}[self.ties]

    @classmethod
    def from_options(cls, **options) -> "RunReading":
        """From keyword options, JSONL field names given flat (``id_field=``, ``docs_field=`` ...) or as ``fields``."""
        flat = {k: options.pop(k) for k in list(options) if k in _FIELD_OPTIONS}
        unknown = set(options) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise InputError(f"unknown reading option(s): {', '.join(sorted(unknown))}",
                             fix=f"use {', '.join(f.name for f in dataclasses.fields(cls))}")
        if any(v is not None for k, v in flat.items() if k != "query_field") or flat.get("query_field", "query") != "query":
            from .formats.jsonl import JsonlFields
            base = options.get("fields") or JsonlFields()
            options["fields"] = dataclasses.replace(base, **{_FIELD_OPTIONS[k]: v for k, v in flat.items()
                                                             if v is not None})
        return cls(**options)

    # ------------------------------------------------------------ what a format's ``auto`` means
    def order_for(self, fmt: str, notes: Mapping[str, Any]) -> str:
        """The order that ranks a run of format ``fmt`` (see the module's rules)."""
        if self.order != "auto":
            return self.order
        if notes.get("scores_from_rank"):
            return "given"
        if fmt in AS_WRITTEN:
            return "desc"
        return "auto"

    def checks_rising_ranks(self, fmt: str) -> bool:
        """Whether reading a run of format ``fmt`` looks for queries whose rank column rises with the score:
        a TREC 6-column run ranked by score as trec_eval ranks it, by default (not by an explicit order)."""
        return fmt == "trec" and self.order == "auto"

    def evaluated_as_read(self, fmt: str, notes: Mapping[str, Any] | None = None) -> bool:
        """Whether evaluation may rank the run as read (trec_eval's reading) rather than its conversion."""
        return (fmt in AS_WRITTEN and self.order_for(fmt, notes or {}) == "desc" and self.ties == "keep"
                and self.duplicates == "error")

    # ------------------------------------------------------------ reading
    def read(self, path: PathLike, *, convert: bool | None = None, lean: bool = False, ranks: bool = True,
             depth: int | None = None, run_name: str | None = None, raw_ids: bool = False, warn: Callable[[str], None] | None = warn_python,
             qrels_source: PathLike | None = None, verbose: bool = False, data: bytes | None = None,
             first_line: int = 1, readings=None, order_option: bool = True) -> "ReadRun":
        """Read ``path``; convert it when asked (``convert=True``, as ``treckit run`` does) or, with
        ``convert=None``, when evaluation would otherwise misread it (anything but a plain TREC run).

        ``qrels_source`` (evaluation): the qrels file; when it is a QUEST gold file and JSONL lines
        without ids are numbered by line, a line order that differs from the gold's is an error.
        ``lean`` / not ``ranks``: a TREC run read as is may skip its rank and tag columns / its rank column
        (evaluation reads neither); a converted run reads its ranks only when they order it.
        ``data`` (a TREC run): whole lines of ``path`` to read instead of the file, the first being its
        line ``first_line`` (a block of a streamed file; errors name the file and its line); ``readings``
        (formats.trec.RunReadings): counts of lines read by an explicit rule, reported by the caller.
        Queries whose rank column rises with the score (:meth:`checks_rising_ranks`) are counted and said
        through ``warn``, with the fix (``--order asc``; without ``order_option``, for a caller that takes no
        reading options, a conversion with ``treckit run``); a block (``data``) leaves its evidence in
        ``run.notes`` for the caller, who sees the whole file (:mod:`treckit.formats.rising_ranks`).
        """
        fmt = self.format or detect_run_format(path, verbose)
        as_read = not convert and self.evaluated_as_read(fmt) and depth is None
        needs_ranks = self.order == "given" or self.ties == "break"
        run = read_raw_run(path, fmt, self, lean=lean and as_read, ranks=ranks if as_read else needs_ranks,
                           data=data, first_line=first_line, readings=readings,
                           rising_ranks=self.checks_rising_ranks(fmt))
        if data is None:
            from .formats.rising_ranks import NOTE
            evidence = run.notes.pop(NOTE, None)
            if evidence is not None and evidence.settle() and warn is not None:
                warn(rising_ranks_warning(str(path), evidence.flagged, evidence.queries, order_option=order_option))
        if run.notes.get("numbered_by_line"):
            self._check_line_numbers(path, fmt, run.notes["numbered_by_line"], qrels_source, warn)
        if fmt == "tsv" and warn is not None and not run.notes.get("scores_from_rank") and _scores_look_like_ranks(run):
            warn(f"{path}: the third column counts 1, 2, 3 ... down every query, as ranks do, and is read as a score "
                 "(higher first); if it holds ranks (MS MARCO's qid pid rank), " + pass_options("run", "--tsv-third rank"))
        return self.apply(run, fmt, source=str(path), convert=convert, depth=depth, run_name=run_name,
                          raw_ids=raw_ids, warn=warn)

    def apply(self, run, fmt: str, *, source: str = "run", convert: bool | None = None, depth: int | None = None,
              run_name: str | None = None, raw_ids: bool = False, warn: Callable[[str], None] | None = warn_python) -> "ReadRun":
        """The read run ``run`` of format ``fmt`` (``memory``: given in Python, ranked like a TREC run)
        as it is to be evaluated: as is when that is its reading, else converted (see :meth:`read`).
        Read for evaluation (not ``convert``), what the conversion changed is said through ``warn``;
        a conversion asked for reports in full (its ``report``)."""
        if not convert and self.evaluated_as_read(fmt, run.notes) and depth is None:
            return ReadRun(run, fmt, None, "desc")
        from .convert import convert_run       # not before: a run evaluated as read needs no pyarrow.compute
        order = self.order_for(fmt, run.notes)
        out, report = convert_run(run, order=order, ties=self.ties, duplicates=self.duplicates, depth=depth,
                                  run_name=run_name, source=source, raw_ids=raw_ids)
        got = ReadRun(out, fmt, report, order)
        if not convert and warn is not None:
            for note in got.notes():
                warn(f"{source}: {note}")
        return got

    def query_map(self) -> Mapping[str, str] | None:
        if self.query_to_qid is not None:
            return self.query_to_qid
        return gold_query_map(self.gold, self.id_base) if self.gold else None

    def _check_line_numbers(self, path, fmt: str, count: int, qrels_source, warn) -> None:
        """Id-less JSONL lines were numbered by line: an error when the qrels are a QUEST gold file
        listing the same queries in another order, else a warning saying how to join instead."""
        name = str(path)
        if qrels_source is not None and not _is_irds(qrels_source):
            gold = _quest_queries(qrels_source)
            if gold is not None:
                by_text = _text_map(gold, str(qrels_source))
                bad, unknown = _first_misnumbered(path, self, by_text)
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
                         f"{name}: {count} JSONL lines have no query id and were numbered by line ({self.id_base}, "
                         f"{self.id_base + 1}, ...), which is the gold file's order of their queries")
                return
        if warn is not None:
            warn(f"{name}: {count} JSONL lines have no query id and were numbered by line ({self.id_base}, "
                 f"{self.id_base + 1}, ...); if they are not in the gold file's order, join them by query text: "
                 + pass_options("run", "--gold GOLD") + " (or name the id field: " + pass_options("run", "--id-field FIELD")
                 + ")")


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
    import numpy as np
    score = run.table.column("score").to_numpy()
    position = run.table.column("rank").to_numpy()       # the list position when the file gives no rank
    return score.size > 1 and bool(np.array_equal(score, position) or np.array_equal(score, position - 1))


def _is_irds(source) -> bool:
    return isinstance(source, str) and source.startswith("irds:")


def detect_run_format(path: PathLike, verbose: bool = False) -> str:
    from .formats.detect import detect_run
    det = detect_run(path)
    if verbose:
        import sys
        print(f"treckit: {path}: read as {det.format} run ({det.reason})", file=sys.stderr)
    return det.format


def read_raw_run(path: PathLike, fmt: str, reading: RunReading, *, lean: bool = False, ranks: bool = True,
                 data: bytes | None = None, first_line: int = 1, readings=None, rising_ranks: bool = False):
    """The run exactly as the file states it (scores as written), by format name (``data``: see
    :meth:`RunReading.read`; TREC runs only; ``rising_ranks``: see :func:`treckit.formats.trec.read_trec_run`)."""
    from .formats import jsonl, trec, tsv

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
        return jsonl.read_jsonl_run(path, fields=r.fields, query_to_qid=r.query_map(), id_base=r.id_base,
                                    skip_malformed=r.skip_malformed)
    raise InputError(f"unknown run format {fmt!r}", fix=f"use one of {', '.join(RUN_FORMATS)}")


# ---------------------------------------------------------------- the gold join
def gold_queries(gold: PathLike, id_base: int = 1) -> list[tuple[str, str]]:
    """(qid, query text) of a gold file: a QUEST-style JSONL (ids from its id field, else line
    numbers from ``id_base``), or ``irds:<dataset-id>`` (the dataset's queries)."""
    if _is_irds(str(gold)):
        from .inputs import irds_queries
        return irds_queries(str(gold))
    from .formats.jsonl import read_quest
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
    from .formats.detect import detect_qrels
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
    from .formats.common import LineErrors
    from .formats.jsonl import ID_FIELDS, iter_json_lines
    from .io import display_name

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


# ---------------------------------------------------------------- one table of command-line options
@dataclass(frozen=True)
class ReadFlag:
    """A reading option on the command line: its RunReading field (``fields.x`` for a JSONL field)."""

    field: str
    flag: str
    help: str
    kind: type = str
    choices: tuple[str, ...] | None = None
    default: Any = None


def python_name(flag: ReadFlag) -> str:
    """The option's keyword in Python (and its parameter name in the commands): ``id_field``, ``tsv_third``."""
    return flag.field.replace("fields.", "") + ("_field" if flag.field.startswith("fields.") else "")


_DEFAULTS = type("Defaults", (), {f.name: f.default for f in dataclasses.fields(RunReading)})
FLAGS: tuple[ReadFlag, ...] = (
    ReadFlag("format", "--run-format", "run format: trec | trec3 | tsv | jsonl (default: detect)", choices=RUN_FORMATS),
    ReadFlag("order", "--order", "auto | desc | asc | given (score = desc, rank = given); auto: TREC runs by score "
             "as written, rank-only files by rank, other formats sign-aware (docs/formats.md: reading rules)",
             choices=ORDERS + tuple(ORDER_ALIASES), default=_DEFAULTS.order),
    ReadFlag("ties", "--ties", "equal scores: keep (trec_eval: docno descending) | break (input order) | docid-asc",
             choices=TIES, default=_DEFAULTS.ties),
    ReadFlag("duplicates", "--duplicates", "a doc listed twice for a query: error | keep-first | keep-max | keep-last",
             choices=DUPLICATES, default=_DEFAULTS.duplicates),
    ReadFlag("gold", "--gold", "QUEST gold JSONL or irds:<dataset>: join id-less JSONL predictions by exact query text"),
    ReadFlag("id_base", "--id-base", "first qid of id-less JSONL lines numbered by line (without --gold)", int,
             default=_DEFAULTS.id_base),
    ReadFlag("layout", "--layout", "TREC lines with more fields than the format has: auto | docid-spaces | extra-columns",
             choices=LAYOUTS, default=_DEFAULTS.layout),
    ReadFlag("tsv_third", "--tsv-third", "TSV without header: the third column is a score or a rank (lower first)",
             choices=TSV_THIRD, default=_DEFAULTS.tsv_third),
    ReadFlag("fields.id", "--id-field", "JSONL: query id field"),
    ReadFlag("fields.docs", "--docs-field", "JSONL: list of doc ids"),
    ReadFlag("fields.scores", "--scores-field", "JSONL: list of scores"),
    ReadFlag("fields.hits", "--hits-field", "JSONL: list of hit objects"),
    ReadFlag("fields.hit_doc", "--hit-doc-field", "JSONL: doc id field inside a hit"),
    ReadFlag("fields.hit_score", "--hit-score-field", "JSONL: score field inside a hit"),
    ReadFlag("fields.query", "--query-field", "JSONL: query text field (for --gold)", default="query"),
    ReadFlag("skip_malformed", "--skip-malformed", "count and skip malformed run lines instead of failing", bool,
             default=False),
)
_FIELD_OPTIONS = {python_name(f): f.field[len("fields."):] for f in FLAGS if f.field.startswith("fields.")}


def reading_from_values(values: Mapping[str, Any]) -> RunReading:
    """A RunReading from ``{python name of the flag: value}`` (None or absent: the default);
    ``break_ties=True`` is the old spelling of ``ties="break"``."""
    opts: dict[str, Any] = {}
    fields: dict[str, Any] = {}
    for f in FLAGS:
        v = values.get(python_name(f))
        if v is None:
            continue
        if f.field.startswith("fields."):
            fields[f.field[len("fields."):]] = v
        else:
            opts[f.field] = v
    if values.get("break_ties"):
        opts["ties"] = "break"
    if fields:
        from .formats.jsonl import JsonlFields
        opts["fields"] = JsonlFields(**fields)
    return RunReading(**opts)


def add_reading_arguments(parser, defaults: Mapping[str, tuple[Any, str]] | None = None,
                          notes: Mapping[str, str] | None = None) -> None:
    """The reading options on an argparse parser (the staged scripts), each also spelled with
    underscores (``--id_base``), the scripts' older style.  ``defaults``: ``{python name: (value, why)}``
    for the options whose default differs in these scripts (said in their help); ``notes``: ``{python name:
    text}`` added to an option's help."""
    for f in FLAGS:
        names = [f.flag] + ([f.flag.replace("-", "_").replace("__", "--", 1)] if "-" in f.flag[2:] else [])
        note = (notes or {}).get(python_name(f))
        if f.kind is bool:
            parser.add_argument(*names, dest=python_name(f), action="store_true",
                                help=f.help + (f" ({note})" if note else ""))
        else:
            default, why = (defaults or {}).get(python_name(f), (None, ""))
            help_ = f.help + (f" ({note})" if note else "") + (f" (default: {default}, {why})" if default is not None else "")
            parser.add_argument(*names, dest=python_name(f), type=f.kind, default=default, help=help_,
                                metavar=f.flag[2:].upper().replace("-", "_"))
    parser.add_argument("--break-ties", "--break_ties", dest="break_ties", action="store_true",
                        help="the same as --ties break")


def with_reading_options(extra: Mapping[str, tuple[str, ...]] | None = None):
    """Decorate a typer command: the reading options become its parameters (from :data:`FLAGS`), and
    the command receives them as one ``reading: RunReading`` keyword.  ``extra`` adds names for a
    flag (``{"format": ("--format",)}``)."""
    import typer

    def deco(func):
        import typing
        hints = typing.get_type_hints(func)          # resolved in the command's module
        sig = inspect.signature(func)
        params = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in sig.parameters.values()
                  if p.name != "reading"]
        added = []
        for f in FLAGS:
            names = (f.flag,) + tuple((extra or {}).get(f.field, ()))
            help_ = f.help
            if f.kind is bool:
                added.append(inspect.Parameter(python_name(f), inspect.Parameter.KEYWORD_ONLY, annotation=bool,
                                               default=typer.Option(False, *names, help=help_)))
                continue
            annotation = Optional[int] if f.kind is int else Optional[str]
            if f.default is not None:
                help_ += f" (default: {f.default})"
            added.append(inspect.Parameter(python_name(f), inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
                                           default=typer.Option(None, *names, help=help_, show_default=False)))
        added.append(inspect.Parameter("break_ties", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
                                       default=typer.Option(False, "--break-ties", help="the same as --ties break")))
        names = {p.name for p in added}

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            values = {k: kwargs.pop(k) for k in list(kwargs) if k in names}
            return func(*args, reading=reading_from_values(values), **kwargs)

        wrapper.__signature__ = sig.replace(parameters=params + added)
        wrapper.__annotations__ = {p.name: p.annotation for p in params + added}
        del wrapper.__wrapped__            # typer must see the new signature, not the original's
        return wrapper
    return deco

