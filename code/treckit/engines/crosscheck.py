"""Every number an evaluation printed, recomputed with ir_measures (pytrec_eval, trec_eval's C code, under it).

``treckit eval --cross-check`` and ``evaluate.py --cross-check`` hand ir_measures the judgments and the run as
treckit read them (doc ids in their written form, the bytes trec_eval compares) and compare, within
:data:`TOLERANCE`, each summary number printed and each per-query value behind it.  Like is compared with like:

* pytrec_eval reads scores as float32, so treckit's numbers are recomputed with scores read as float32
  (``--float32``) and those are compared; a printed number that differs from its float32 reading (scores that
  tie only in float32) is said.  The C/W/L names and ``Compat`` are compared through ir_measures' cwl_eval and
  compat providers, handed the same float32 scores in the run's line order.
* the query set is treckit's: the judged queries the run answers (trec_eval's default); ir_measures' own mean
  would count every judged query.
* each measure is compared with the ir_measures measure that is equal to it by definition (:func:`equal_measure`);
  a measure with none, or with a known difference (``RR@k``: ir_measures breaks score ties its own way;
  ``IPrec``: pytrec_eval rounds recall levels as trec_eval 9; ``Judged@k``: its own tie order), is named in the
  confirmation, never skipped silently.
* a query whose judgments are all negative is not handed to pytrec_eval (trec_eval 9's code keeps the previous
  query's grade levels there and may loop forever); it is said, and its own values stand in the summaries.

A difference beyond the tolerance raises :class:`CrossCheckFailed` (exit 3) naming the measure, the query set
and both values.  ir_measures is imported only here, only when a cross-check is asked for.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Callable

from ..console.errors import EXIT_RUNTIME, InputError, TreckitError
from ..ids import written_ids
from .budget import MemoryLimit
from .memory import EvalOptions, EvalResult, evaluate_requests
from ..inputs.reading import read_with
from .stream import evaluate_path, plan

TOLERANCE = 1e-9
TOLERANCE_TEXT = "1e-9"

RR_CUTOFF_DIFFERS = "ir_measures' RR@k breaks score ties its own way, not trec_eval's (docno descending)"
IPREC_DIFFERS = ("pytrec_eval turns a recall level into relevant docs as trec_eval 9, (long)(x*R + 0.9); "
                 "trec_eval 10.0 and treckit use lround(x*R)")
NO_EQUAL = "no equal in ir_measures"
NOT_PYTREC = "ir_measures computes it without pytrec_eval, by another tool's ranking"
JUDGED_CUTOFF_DIFFERS = "ir_measures' Judged@k ranks score ties by docid ascending, not trec_eval's order"
# the measures whose reference is another tool: ir_measures computes them too, but not within the check's terms
BY_OTHER_TOOL = {
    "gdeval.pl": "ir_measures computes it by running gdeval.pl, whose output has 5 decimals; treckit gdeval prints "
                 "gdeval.pl's own output, and the reference fuzz compares the values with it",
    "ndeval": "ir_measures computes it with pyndeval over subtopic qrels, which the check's judgments (one grade "
              "per document) do not carry; the reference fuzz compares the values with it",
}

# the evaluation options a cross-check cannot hand to ir_measures, by the flag that sets them
_NOT_MIRRORED: tuple[tuple[str, Callable[[EvalOptions], bool]], ...] = (
    ("-c", lambda o: o.complete),
    ("--missing zero", lambda o: o.missing == "zero"),
    ("-M", lambda o: o.max_docs is not None),
    ("-Z", lambda o: o.zscores is not None),
    ("ranking by the rank column (rank_by='rank')", lambda o: o.rank_by != "score"),
)


class CrossCheckFailed(TreckitError):
    """A number treckit computed differs from ir_measures' beyond the tolerance."""

    exit_code = EXIT_RUNTIME


def check_options(options: EvalOptions, flags: dict[str, bool] | None = None) -> None:
    """Refuse, before any file is read, the options whose numbers ir_measures cannot recompute."""
    named = [flag for flag, on in _NOT_MIRRORED if on(options)] + [f for f, on in (flags or {}).items() if on]
    if named:
        raise InputError(f"--cross-check recomputes numbers with ir_measures, which has no {' or '.join(named)}",
                         fix=f"leave out {' and '.join(named)} or --cross-check")


@dataclass
class CrossCheck:
    """What a passed cross-check compared, for its confirmation line."""

    source: str
    numbers: int = 0                                       # printed numbers compared
    behind: int = 0                                        # per-query values compared behind them (not printed)
    queries: int = 0
    float32_ties: list[str] = field(default_factory=list)  # printed numbers that differ in float32 only
    not_compared: dict[str, list[str]] = field(default_factory=dict)   # reason -> measures as asked for
    left_out: list[str] = field(default_factory=list)      # queries pytrec_eval cannot be given
    versions: str = ""

    def line(self) -> str:
        out = (f"cross-check {self.source}: {self.numbers} number{'s agree' if self.numbers != 1 else ' agrees'} with "
               f"{self.versions} within {TOLERANCE_TEXT}, scores read as float32 as pytrec_eval reads them")
        if self.behind:
            out += f" (and the {self.behind} values behind them, over {self.queries} queries)"
        if self.float32_ties:
            one = len(self.float32_ties) == 1
            out += (f"; {', '.join(self.float32_ties)} as printed (scores as doubles, as trec_eval 10.0 reads them) "
                    f"differ{'s' if one else ''} from {'its' if one else 'their'} float32 reading: scores that tie "
                    f"only in float32")
        for reason, cols in self.not_compared.items():
            out += f"; not compared: {', '.join(cols)} ({reason})"
        if self.left_out:
            out += (f"; {len(self.left_out)} {'query' if len(self.left_out) == 1 else 'queries'} whose judgments are "
                    f"all negative not given to pytrec_eval "
                    f"(it misreads them): {', '.join(self.left_out[:5])}{' ...' if len(self.left_out) > 5 else ''}")
        return out


# ---------------------------------------------------------------- which ir_measures measure is equal
def equal_measure(req, column: int, options: EvalOptions) -> tuple[Any, str | None]:
    """(the ir_measures measure equal by definition to column ``column`` of request ``req``, None) or
    (None, why there is none).  Only measures ir_measures computes through pytrec_eval qualify (and ``Judged``,
    which ir_measures counts itself): another provider ranks by its own rules."""
    measure, why = _equal_measure(req, column, options)
    if measure is not None and _provider(measure) is None:
        return None, NOT_PYTREC
    return measure, why


def _provider(measure):
    """The ir_measures provider that computes ``measure`` as the cross-check means it, or None."""
    import ir_measures
    for provider in (ir_measures.pytrec_eval, ir_measures.judged, ir_measures.cwl_eval, ir_measures.compat):
        if provider.supports(measure):
            return provider
    return None


def _equal_measure(req, column: int, options: EvalOptions) -> tuple[Any, str | None]:
    terms = _Terms(rel=options.level if req.level is None else req.level,
                   judged_only=options.judged_only if req.judged_only is None else req.judged_only)
    cut = req.params[column] if req.measure.params == "long_cutoffs" else None
    equal = _EQUALS.get(req.measure.name)
    if equal is not None:
        return equal(req, cut, terms)
    return _equal_by_reference(req, terms)


@dataclass(frozen=True)
class _Terms:
    """The relevance level and the judged-only view a measure is asked with, which its equal must share."""

    rel: int
    judged_only: bool

    def measure(self, irm: str, cutoff=None, *, takes_rel=True, takes_judged=True, **extra) -> tuple[Any, str | None]:
        """(ir_measures' ``irm`` with these terms, ``extra`` parameters and ``cutoff``, None), or (None, why not)
        when ``irm`` takes no relevance level or no judged-only view and these terms need one."""
        import ir_measures

        if self.judged_only and not takes_judged:
            return None, f"{NO_EQUAL} with -J"
        if self.rel != 1 and not takes_rel:
            return None, f"{NO_EQUAL} at -l {self.rel}"
        kw = dict(extra)
        if takes_rel and self.rel != 1:
            kw["rel"] = self.rel
        if self.judged_only:
            kw["judged_only"] = True
        m = getattr(ir_measures, irm)
        m = m(**kw) if kw else m
        return (m @ cutoff if cutoff is not None else m), None


@dataclass(frozen=True)
class _SameDefinition:
    """A trec_eval measure that is ir_measures' ``irm`` under another name (at the cutoff asked, with ``cut``)."""

    irm: str
    cut: bool = False
    takes_rel: bool = True
    takes_judged: bool = True
    extra: tuple[tuple[str, Any], ...] = ()

    def __call__(self, req, cut, terms: _Terms) -> tuple[Any, str | None]:
        return terms.measure(self.irm, cut if self.cut else None, takes_rel=self.takes_rel,
                             takes_judged=self.takes_judged, **dict(self.extra))


def _recip_rank(req, cut, terms: _Terms) -> tuple[Any, str | None]:
    return (None, RR_CUTOFF_DIFFERS) if dict(req.options).get("cutoff") else terms.measure("RR")


def _ndcg(req, cut, terms: _Terms) -> tuple[Any, str | None]:
    """nDCG with trec_eval's gains (``ndcg``'s parameters or the ``gains`` option) and its dcg form."""
    opts = dict(req.options)
    extra: dict = {}
    pairs = opts.get("gains") or (req.params if req.measure.name == "ndcg" else ())
    if pairs:
        try:
            extra["gains"] = {int(level): gain for level, gain in pairs}
        except ValueError:
            return None, f"{NO_EQUAL} (gains of non-integer grades)"
    if opts.get("exponential"):
        extra["dcg"] = "exp-log2"
    return terms.measure("nDCG", cut if req.measure.name == "ndcg_cut" else None, takes_rel=False, **extra)


def _num_rel_ret(req, cut, terms: _Terms) -> tuple[Any, str | None]:
    """NumRet(rel=1) is ir_measures' NumRelRet: the level is always given."""
    import ir_measures

    return (None, f"{NO_EQUAL} with -J") if terms.judged_only else (ir_measures.NumRet(rel=terms.rel), None)


def _set_f(req, cut, terms: _Terms) -> tuple[Any, str | None]:
    p = req.params
    return terms.measure("SetF", **({"beta": p[0]} if p and p[0] != 1.0 else {}))


def _iprec_at_recall(req, cut, terms: _Terms) -> tuple[Any, str | None]:
    return None, IPREC_DIFFERS


def _judged(req, cut, terms: _Terms) -> tuple[Any, str | None]:
    """Without a cutoff the share of the whole run: no order involved."""
    if dict(req.options).get("cutoff"):
        return None, JUDGED_CUTOFF_DIFFERS
    return terms.measure("Judged", takes_rel=False, takes_judged=False)


# trec_eval's name -> its equal in ir_measures, (req, cutoff, terms) -> (measure, None) or (None, why there is none)
_EQUALS: dict[str, Callable[[Any, Any, _Terms], tuple[Any, str | None]]] = {
    "map": _SameDefinition("AP"),
    "map_cut": _SameDefinition("AP", cut=True),
    "recip_rank": _recip_rank,
    "P": _SameDefinition("P", cut=True),
    "recall": _SameDefinition("R", cut=True),
    "success": _SameDefinition("Success", cut=True, takes_judged=False),
    "ndcg": _ndcg,
    "ndcg_cut": _ndcg,
    "num_q": _SameDefinition("NumQ", takes_rel=False, takes_judged=False),
    "num_ret": _SameDefinition("NumRet", takes_rel=False, takes_judged=False),
    "num_rel": _SameDefinition("NumRel", takes_judged=False),
    "num_rel_ret": _num_rel_ret,
    "Rprec": _SameDefinition("Rprec"),
    "bpref": _SameDefinition("Bpref", takes_judged=False),
    "infAP": _SameDefinition("infAP", takes_judged=False),
    "set_P": _SameDefinition("SetP"),
    "set_relative_P": _SameDefinition("SetP", extra=(("relative", True),)),
    "set_recall": _SameDefinition("SetR", takes_judged=False),
    "set_map": _SameDefinition("SetAP"),
    "set_F": _set_f,
    "iprec_at_recall": _iprec_at_recall,
    "Judged": _judged,
}


def _equal_by_reference(req, terms: _Terms) -> tuple[Any, str | None]:
    """The equal of a measure named by another tool: the same provider as ir_measures' name for cwl-eval's and
    Compat, handed the run's scores as float32 (as treckit recomputes them); none for the others."""
    import ir_measures

    if req.measure.reference.startswith(("cwl-eval", "ir_measures 0.4 (its compat")):
        if terms.judged_only:
            return None, f"{NO_EQUAL} with -J"
        return ir_measures.parse_measure(req.text), None
    for tool, why in BY_OTHER_TOOL.items():
        if req.measure.reference.startswith(tool):
            return None, why
    return None, NO_EQUAL


# ---------------------------------------------------------------- the check
def cross_check(qrels, run, result: EvalResult, options: EvalOptions | None = None, *, source: str = "run",
                per_query_printed: bool = False, summary_printed: bool = True) -> CrossCheck:
    """Recompute with ir_measures every number of ``result`` (the evaluation of ``run`` against ``qrels``
    with ``options``); raise :class:`CrossCheckFailed` on a difference beyond :data:`TOLERANCE`, else return
    what was compared.  ``per_query_printed`` / ``summary_printed``: which values were printed (``-q``, ``-n``)
    and count as numbers; the others are compared behind them."""
    ir_measures = _ir_measures()
    options = options or EvalOptions()
    check_options(options)
    done = CrossCheck(source, versions=_versions(ir_measures))
    targets = _targets(result, options, done)
    if not targets:
        return done

    # treckit's numbers with scores read as float32, as pytrec_eval reads them
    if options.float32:
        ours = result
    else:
        wanted = [req for req in result.requests if any(t[1] is req for t in targets)]
        ours = evaluate_requests(qrels, run, wanted, dataclasses.replace(options, float32=True), source=source)
    qids = list(result.qids)
    if list(ours.qids) != qids:
        raise CrossCheckFailed(f"cross-check {source}: the float32 reading evaluated other queries "
                               f"({len(ours.qids)}) than the one printed ({len(qids)})")
    qrels_dict, run_dict, left_out = _as_dicts(qrels, run, set(qids))
    done.left_out = sorted(left_out)
    theirs = _ir_measures_values(ir_measures, [t[2] for t in targets], qrels_dict, run_dict)

    done.queries = len(qids)
    comparison = _Comparison(done, result, ours, left_out, options.float32, per_query_printed, summary_printed)
    for col, req, measure in targets:
        comparison.column(col, measure, theirs.get(measure, {}))
    comparison.raise_on_failures()
    return done


def _targets(result: EvalResult, options: EvalOptions, done: CrossCheck) -> list[tuple[str, Any, Any]]:
    """(column, request, ir_measures measure) of every printed number that has an equal; the requests of the
    others are named in ``done.not_compared``."""
    targets: list[tuple[str, Any, Any]] = []
    for req in result.requests:
        for i, col in enumerate(req.columns):
            if col not in result.summary and col not in result.per_query_columns:
                continue                                   # not printed (runid, relstring are not numbers)
            if result.kinds.get(col) not in ("double", "long"):
                if result.kinds.get(col) == "string":
                    _note(done.not_compared.setdefault(NO_EQUAL, []), req.text)
                continue
            measure, why = equal_measure(req, i, options)
            if measure is None:               # named as asked for (iprec_at_recall, not its 11 columns)
                _note(done.not_compared.setdefault(why, []), req.text)
            else:
                targets.append((col, req, measure))
    return targets


class _Comparison:
    """treckit's values, as printed (``result``) and with scores read as float32 (``ours``), against
    ir_measures', column by column: what was compared is counted in ``done``, what differs is listed."""

    def __init__(self, done: CrossCheck, result: EvalResult, ours: EvalResult, left_out: set[str], float32: bool,
                 per_query_printed: bool, summary_printed: bool) -> None:
        self.done, self.result, self.ours, self.left_out = done, result, ours, left_out
        self.float32, self.per_query_printed, self.summary_printed = float32, per_query_printed, summary_printed
        self.qids = list(result.qids)
        self.row = {q: k for k, q in enumerate(ours.qids)}
        self.printed_row = {q: k for k, q in enumerate(result.qids)}
        self.set_name = ("the 1 query judged and in the run" if len(self.qids) == 1
                         else f"all {len(self.qids)} queries judged and in the run")
        self.failures: list[str] = []

    def column(self, col: str, measure, values: dict[str, float]) -> None:
        """Column ``col`` against ir_measures' ``measure`` ({qid: value}): each query's value, then the summary
        (ir_measures' aggregate over treckit's query set, a left-out query counting with treckit's value)."""
        c, pc = self.ours.columns.index(col), self.result.columns.index(col)
        agg = measure.aggregator()
        for q in self.qids:
            mine = float(self.ours.values[self.row[q], c])
            if q in self.left_out:
                agg.add(mine)
                continue
            if q not in values:
                self.failures.append(f"{col} ({measure}), query {q}: treckit {mine!r}, ir_measures gave no value")
                continue
            agg.add(values[q])
            if col in self.result.per_query_columns:
                self.query_value(col, measure, q, mine, values[q], float(self.result.values[self.printed_row[q], pc]))
        if col in self.result.summary:
            self.summary(col, measure, float(agg.result()))

    def query_value(self, col: str, measure, q: str, mine: float, reference: float, printed: float) -> None:
        if not _close(mine, reference):
            self.failures.append(_difference(col, measure, f"query {q}", mine, reference, printed, self.float32))
        if self.per_query_printed:
            self.done.numbers += 1
            if not _close(printed, mine):
                _note(self.done.float32_ties, f"{col} of query {q}")
        else:
            self.done.behind += 1

    def summary(self, col: str, measure, reference: float) -> None:
        mine, printed = float(self.ours.summary[col]), float(self.result.summary[col])
        if self.summary_printed:
            self.done.numbers += 1
        else:
            self.done.behind += 1
        if not _close(mine, reference):
            self.failures.append(_difference(col, measure, self.set_name, mine, reference, printed, self.float32))
        elif not _close(printed, mine):
            _note(self.done.float32_ties, col)

    def raise_on_failures(self) -> None:
        failures = self.failures
        if failures:
            shown = failures[:20] + ([f"... and {len(failures) - 20} more"] if len(failures) > 20 else [])
            raise CrossCheckFailed(f"cross-check {self.done.source} failed: {len(failures)} number(s) differ from "
                                   f"{self.done.versions} by more than {TOLERANCE_TEXT}:\n  " + "\n  ".join(shown)
                                   + "\n  (a difference is a defect to report: treckit's numbers and trec_eval's "
                                     "C code should agree on these measures)")


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= TOLERANCE


def _note(items: list[str], text: str) -> None:
    if text not in items:
        items.append(text)


def _difference(col: str, measure, where: str, mine: float, theirs: float, printed: float, float32: bool) -> str:
    how = "" if float32 or _close(mine, printed) else f" with scores as float32 (printed: {printed!r})"
    return f"{col} ({measure}), {where}: treckit {mine!r}{how}, ir_measures {theirs!r}"


def _ir_measures():
    try:
        import ir_measures
        import pytrec_eval  # noqa: F401  (the provider the measures compared go through)
    except ImportError as exc:
        raise InputError(f"--cross-check needs ir_measures and pytrec_eval, which are not installed ({exc.name})",
                         fix="pip install ir-measures pytrec-eval-terrier (treckit's own dependencies: reinstall treckit)") from None
    return ir_measures


def _versions(ir_measures) -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        pytrec = version("pytrec-eval-terrier")
    except PackageNotFoundError:
        pytrec = "?"
    return f"ir_measures {ir_measures.__version__} (pytrec_eval {pytrec})"


def _as_dicts(qrels, run, qids: set[str]) -> tuple[dict, dict, set[str]]:
    """``{qid: {doc: grade}}`` and ``{qid: {doc: score}}`` of the evaluated queries, and the queries left out
    (judgments all negative).  Docs are named by the run's written form of each id (the bytes trec_eval orders
    ties on, as treckit does), a judged doc the run lacks by the qrels' own: pytrec_eval then joins the two where
    treckit joins them, on the decoded ids."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc


    def rows(table, written, value: str):
        keep = pc.is_in(table.column("qid").cast(pa.string()), value_set=pa.array(sorted(qids), pa.string()))
        t = table.filter(keep)
        return zip(t.column("qid").cast(pa.string()).to_pylist(), t.column("docid").cast(pa.string()).to_pylist(),
                   written_ids(t.column("docid"), t.column("qid"), written).to_pylist(), t.column(value).to_pylist())

    names: dict[tuple[str, str], str] = {}
    run_dict: dict[str, dict[str, float]] = {}
    for q, doc, shown, score in rows(run.table, run.written, "score"):
        names[q, doc] = shown
        run_dict.setdefault(q, {})[shown] = float(np.float32(score))   # pytrec_eval's reading, for every provider
    qrels_dict: dict[str, dict[str, int]] = {}
    for q, doc, shown, grade in rows(qrels.table, qrels.written, "grade"):
        qrels_dict.setdefault(q, {})[names.get((q, doc), shown)] = int(grade)
    left_out = {q for q, judged in qrels_dict.items() if max(judged.values()) < 0}
    for q in left_out:
        del qrels_dict[q]
        run_dict.pop(q, None)
    return qrels_dict, run_dict, left_out


def _ir_measures_values(ir_measures, measures: list, qrels: dict, run: dict) -> dict[Any, dict[str, float]]:
    """measure -> {qid: value}, each from its provider (:func:`_provider`).  Measures that look at different
    relevance levels or judged-only views are computed in separate calls: ir_measures may share one pytrec_eval
    invocation between the measures of a call."""
    groups: dict[tuple, list] = {}
    for m in dict.fromkeys(measures):
        provider = _provider(m)
        groups.setdefault((id(provider), m.params.get("rel"), m.params.get("judged_only")), [provider]).append(m)
    out: dict[Any, dict[str, float]] = {}
    for provider, *group in groups.values():
        for metric in provider.iter_calc(group, qrels, run):
            out.setdefault(metric.measure, {})[metric.query_id] = float(metric.value)
    return out


# ---------------------------------------------------------------- evaluating a run file, then checking it
def evaluate_path_checked(qrels, path, requests, options: EvalOptions, reading, *, memory_limit: MemoryLimit | int | None,
                          warn=None, qrels_source=None, per_query_printed: bool = False, summary_printed: bool = True,
                          check: bool = True) -> tuple[EvalResult, CrossCheck | None]:
    """:func:`treckit.engines.stream.evaluate_path`, and with ``check`` the cross-check of its numbers.  A run
    evaluated in memory is checked as it was read (stdin too); one evaluated in bounded memory is read again,
    whole, for ir_measures."""
    if not check:
        return evaluate_path(qrels, path, requests, options, reading, memory_limit=memory_limit, warn=warn,
                             qrels_source=qrels_source), None
    check_options(options)                     # before anything is read
    memory_limit = MemoryLimit.parse(memory_limit)
    streamed = plan(path, reading, memory_limit.bytes).stream
    held: list = []
    res = evaluate_path(qrels, path, requests, options, reading, memory_limit=memory_limit, warn=warn,
                        qrels_source=qrels_source, on_part=None if streamed else (lambda part, run: held.append(run)))
    run = held[0] if held else read_for_check(path, reading, qrels_source)
    return res, cross_check(qrels, run, res, options, source=str(path), per_query_printed=per_query_printed,
                            summary_printed=summary_printed)


def read_for_check(path, reading, qrels_source=None):
    """The run ``path`` as the evaluation read it (its warnings were said then)."""
    return read_with(reading, path, lean=True, warn=None, qrels_source=qrels_source).run
