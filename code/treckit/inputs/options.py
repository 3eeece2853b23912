"""The one reader configuration for runs (:class:`RunReading`), shared by every command, the staged scripts and the Python API.

A run file means one thing wherever it is read: ``treckit run`` (conversion), ``treckit eval``,
``treckit compare``, ``code/evaluation/*.py``, :func:`treckit.read_run` and :func:`treckit.evaluate`
all read it through :func:`treckit.inputs.reading.read_with`, with the same options and the same defaults, so that
evaluating a file and evaluating its conversion give the same numbers.

The reading rules (docs/formats.md, "Reading rules", says the same):

* **format** -- ``trec`` (6 columns), ``trec3`` (``qid docid score``), ``tsv``, ``jsonl``; detected
  when not given.
* **order** (default ``auto``) -- ``desc`` (higher score first), ``asc`` (lower first), ``given`` (the
  rank column, or list order), ``auto``:

  - a TREC 6-column run is ranked by score as written, as trec_eval ranks it: ``auto`` is ``desc``
    (a TREC file is never negated behind the user's back; ``--order asc`` says so when it must be).
    A query whose rank column rises as its score rises (rank 1 on the lowest score: negated scores,
    :mod:`treckit.inputs.formats.rising_ranks`) is ranked so all the same, with a warning naming how many
    queries do so and the fix (``--order asc``, or ``--order given``); ``--order desc`` says that
    trec_eval's order is meant, and reads without the check;
  - a run whose only order is a rank (a TSV ``qid pid rank`` file, or ``--tsv-third rank``) is
    ranked by that rank, lower first: ``auto`` is ``given``;
  - any other run (JSONL predictions, TSV with scores, 3-column files) is sign-aware: per query,
    scores all <= 0 with one < 0 are taken as negated (QUEST's BM25 writes -bm25) and ranked
    ascending (see :mod:`treckit.ranking.convert`).

  ``score`` is accepted for ``desc`` and ``rank`` for ``given`` (the old evaluation spellings).
* A run is evaluated as read when it is a TREC 6-column run ranked ``desc`` with no other option
  (trec_eval's own reading, at full speed); any other run is first converted by
  :func:`treckit.ranking.convert.convert_run`, exactly as ``treckit run`` converts it.
* **ids** -- JSONL lines name their query by an id field (``--id-field`` or id/qid/query_id/...);
  without one they are joined to a gold file by exact query text (``--gold``: a QUEST JSONL, or
  ``irds:<dataset>`` whose queries give the texts), else numbered by line from ``--id-base`` --
  with a warning, and an error when the qrels are a QUEST gold file whose order differs.

This module holds the configuration and its command-line flags only, and loads no reader (the command line's
help builds its options from it); :mod:`.reading` reads.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ..console.errors import InputError
from ..ranking import DUPLICATES, ORDERS, TIES
from .formats import LAYOUTS, RUN_FORMATS, TSV_THIRD, JsonlFields

ORDER_ALIASES = {"score": "desc", "rank": "given"}
# runs whose scores mean "higher first" as written: TREC 6-column files (trec_eval's reading) and runs
# handed over in Python (pytrec_eval, ranx, ir_measures and PyTerrier all rank by score descending)
AS_WRITTEN = ("trec", "memory")


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
    fields: Any = None                    # JsonlFields; None: detect every field
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
        opts["fields"] = JsonlFields(**fields)
    return RunReading(**opts)
