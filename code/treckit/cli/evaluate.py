"""``treckit eval``: trec_eval's command line (``-q -c -n -J -M N -l N -m X -Z F``, attached forms such as
``-M100`` and ``-mrelstring.20``), several runs at once, and other output formats."""
from __future__ import annotations

import dataclasses
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

from .. import __version__
from ..console import spelling
from ..console.errors import InputError, OutputClosed
from ..console.messages import say
from ..console.process import silence_stdout
from .main import command_module
from ..engines import MISSING as EVAL_MISSING
from ..engines.budget import HELP as MEMORY_LIMIT_HELP, MemoryLimit
from ..engines.choice import choose
from ..engines.crosscheck import check_options, cross_check, evaluate_path_checked, read_for_check
from ..engines.memory import EvalOptions, read_zscores
from ..engines.tie_aware import check_mode, check_requests, named_measures, refuse
from ..inputs.formats import QRELS_FORMATS
from ..inputs.formats.common import parse_int
from ..measures.registry import resolve
from ..output import FORMATS as EVAL_FORMATS
from ..output.files import outputs, refuse_overwriting_inputs
from ..output.records import write
from ..output.tie_aware import write_tie_aware
from ..service.metrics import check_prefix, check_pushgateway, export, gauge_measures
from ..inputs.options import FLAGS as _READ_FLAGS, RunReading, python_name, reading_from_values
from ..measures.declaration import REL_FORMATS

_NO_ARG = {"q": "query", "c": "complete", "n": "nosummary", "J": "judged"}
_ARG = {"m": "measure", "l": "level", "M": "max", "N": "ndocs", "Z": "zscore", "R": "relformat", "T": "resformat", "D": "debug"}
_LONG = {"--query_eval_wanted": "q", "--complete_rel_info_wanted": "c", "--nosummary": "n", "--Judged_docs_only": "J",
         "--measure": "m", "--level_for_rel": "l", "--Max_retrieved_per_topic": "M", "--Number_docs_in_coll": "N",
         "--Zscore": "Z", "--Rel_info_format": "R", "--Results_format": "T"}
_OWN = {"--format": "format", "--missing": "missing", "--qrels-format": "qrels_format",
        "--prometheus-textfile": "prometheus_textfile", "--memory-limit": "memory_limit", "--pushgateway": "pushgateway",
        "--metrics-prefix": "metrics_prefix", "--engine": "engine", "--scheduler": "scheduler",
        "--tie-aware": "tie_aware", "--html": "html", "--plot": "plot"}
# how runs are read: the options every run-reading command shares (treckit.inputs.options.FLAGS)
READING_FLAGS = {f.flag: f for f in _READ_FLAGS}
_READ_BOOL = {f.flag for f in _READ_FLAGS if f.kind is bool} | {"--break-ties"}


@dataclass
class EvalArgs:
    measures: list[str] = field(default_factory=list)
    query: bool = False
    complete: bool = False
    summary: bool = True
    judged: bool = False
    level: int = 1
    max_docs: int | None = None
    ndocs: int = 0
    zscore: str | None = None
    format: str | None = None
    missing: str = "skip"
    float32: bool = False
    cross_check: bool = False                 # every number recomputed with ir_measures (treckit.engines.crosscheck)
    qrels_format: str | None = None
    prometheus_textfile: str | None = None    # the summary values as gauges, for node_exporter's textfile collector
    pushgateway: str | None = None
    metrics_prefix: str = "treckit"
    memory_limit: str | None = None           # --memory-limit SIZE (default: thresholds.MEMORY_LIMIT_DEFAULT)
    reading: RunReading = field(default_factory=RunReading)
    rel_format: str = "qrels"      # -R: qrels, or prefs / qrels_prefs / qrels_jg (engines.prefs.Preferences)
    engine: str = "local"          # local | dask (engines/dask.py)
    scheduler: str | None = None   # --engine dask: a running scheduler's address (default: a LocalCluster)
    tie_aware: str | None = None   # expected | best | worst | range | report (treckit.engines.tie_aware)
    html: str | None = None        # --html FILE: the HTML report (treckit.report), the first run the baseline
    plot: str | None = None        # --plot FILE: the precision-recall curves as a picture (matplotlib)
    files: list[str] = field(default_factory=list)
    chosen: Any = None             # the engine the flags choose (engines.choice), set when they are checked

    @property
    def order(self) -> str:
        return self.reading.order

    @property
    def run_format(self) -> str | None:
        return self.reading.format


_INT = re.compile(r"[+-]?[0-9]+")
_LONG_MAX = (1 << 63) - 1


def _int_option(flag: str, val: str, minimum: int | None, what: str) -> int:
    """A whole number for ``flag``.  trec_eval reads these with atol, so ``-M abc`` silently means 0 and
    ``-M -1`` crashes it; here both are errors.  Beyond a C long, the value saturates as strtol does."""
    text = val.strip()
    if not _INT.fullmatch(text):
        raise InputError(f"{flag} {val}: not a whole number", fix=f"give {what}")
    n = max(min(int(text), _LONG_MAX), -_LONG_MAX - 1)
    if minimum is not None and n < minimum:
        raise InputError(f"{flag} {val}: must be at least {minimum}", fix=f"give {what}")
    return n


def parse_args(argv: list[str]) -> EvalArgs:
    """``treckit eval``'s arguments: trec_eval's flags (:data:`_TREC_EVAL_FLAGS`), treckit's own and the files."""
    return _EvalArgv(argv).parse()


class _EvalArgv:
    """trec_eval's command line: flags and files in any order, ``--`` ends the flags; a flag's value attached
    (``-M100``, ``--measure=map``) or the next argument."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.i = 0                      # the argument being read
        self.args = EvalArgs()
        self.read_values: dict = {}     # how runs are read (reading_from_values), by option name

    def parse(self) -> EvalArgs:
        argv = self.argv
        while self.i < len(argv):
            arg = argv[self.i]
            if arg == "--":
                self.args.files.extend(argv[self.i + 1:])
                break
            if arg.startswith("--"):
                self.long_flag(arg)
            elif arg.startswith("-") and len(arg) > 1:
                self.short_flags(arg)
            else:
                self.args.files.append(arg)
            self.i += 1
        if len(self.args.files) < 2:
            raise InputError("usage: treckit eval [flags] QRELS RUN [RUN ...]",
                             fix="give the qrels file, then one or more runs")
        self.args.reading = reading_from_values(self.read_values)
        return self.args

    def value_after(self, flag: str) -> str:
        """The next argument, as the value of ``flag`` given apart from it (``-M 100``)."""
        self.i += 1
        if self.i >= len(self.argv):
            raise InputError(f"{flag} needs a value", fix=f"e.g. {flag} VALUE")
        return self.argv[self.i]

    def long_flag(self, arg: str) -> None:
        name, eq, val = arg.partition("=")
        if name == "--float32":
            self.args.float32 = True
        elif name == "--cross-check":
            self.args.cross_check = True
        elif name in _READ_BOOL:
            self.read_values["break_ties" if name == "--break-ties" else python_name(READING_FLAGS[name])] = True
        elif name in _OWN or name in _LONG or name in READING_FLAGS:
            self.long_flag_value(name, val if eq else self.value_after(name))
        else:
            raise InputError(f"unknown option {name}", fix="see `treckit eval --help`")

    def long_flag_value(self, name: str, val: str) -> None:
        if name in READING_FLAGS:
            f = READING_FLAGS[name]
            self.read_values[python_name(f)] = _integer(name, val) if f.kind is int else val
        elif name in _OWN:
            setattr(self.args, _OWN[name], val)
        else:
            ch = _LONG[name]
            _TREC_EVAL_FLAGS[ch](self.args, val if ch in _ARG else None)

    def short_flags(self, arg: str) -> None:
        """``-qc``: letters without a value, and at most one that takes one, ending the argument (``-qM100``)
        or taking the next (``-qM 100``)."""
        for j in range(1, len(arg)):
            ch = arg[j]
            if ch in _NO_ARG:
                _TREC_EVAL_FLAGS[ch](self.args, None)
            elif ch in _ARG:
                _TREC_EVAL_FLAGS[ch](self.args, arg[j + 1:] or self.value_after(f"-{ch}"))
                return
            else:
                raise InputError(f"unknown option -{ch}", fix="see `treckit eval --help`")


def _switch(attr: str, value: bool) -> Callable[[EvalArgs, str | None], None]:
    """A flag without a value, which sets ``attr`` to ``value``."""
    def handle(a: EvalArgs, _val: str | None) -> None:
        setattr(a, attr, value)
    return handle


def _whole_number(attr: str, flag: str, minimum: int | None, what: str) -> Callable[[EvalArgs, str], None]:
    """A flag whose value is a whole number (:func:`_int_option`) kept in ``attr``."""
    def handle(a: EvalArgs, val: str) -> None:
        setattr(a, attr, _int_option(flag, val, minimum, what))
    return handle


def _add_measure(a: EvalArgs, val: str) -> None:
    a.measures.append(val)


def _set_zscore(a: EvalArgs, val: str) -> None:
    a.zscore = val


def _set_rel_format(a: EvalArgs, val: str) -> None:
    a.rel_format = check_rel_format(val)


def _check_results_format(a: EvalArgs, val: str) -> None:
    if val != "trec_results":
        raise InputError(f"-T {val}: only the trec_results format is supported",
                         fix="use --qrels-format / --run-format for other input formats")


def _ignore(a: EvalArgs, val: str | None) -> None:
    """-D (trec_eval's debug level) is accepted and ignored."""


# trec_eval's flags by letter (_NO_ARG, _ARG) -> what each does with the arguments and its value (None without one)
_TREC_EVAL_FLAGS: dict[str, Callable[[EvalArgs, Any], None]] = {
    "q": _switch("query", True),
    "c": _switch("complete", True),
    "n": _switch("summary", False),
    "J": _switch("judged", True),
    "m": _add_measure,
    "l": _whole_number("level", "-l", 0, "the lowest grade that counts as relevant, e.g. -l 2"),
    "M": _whole_number("max_docs", "-M", 0, "the number of docs kept per query, e.g. -M 1000"),
    "N": _whole_number("ndocs", "-N", None, "the number of docs in the collection, e.g. -N 500000"),
    "Z": _set_zscore,
    "R": _set_rel_format,
    "T": _check_results_format,
    "D": _ignore,
}


def _integer(flag: str, text: str) -> int:
    n = parse_int(text.strip())
    if n is None:
        raise InputError(f"{flag} takes an integer, got {text!r}", fix=f"e.g. {flag} 1")
    return n


EVAL_USAGE = "treckit eval [OPTIONS] QRELS RUN [RUN ...]"
PAGES_MODULE = "eval_pages"      # --html and --plot: loaded only when asked for (the report's modules)
EVAL_ABOUT = ("Evaluate runs like trec_eval 10.0: same flags, byte-identical text output. Each RUN is evaluated "
              "against QRELS in turn; options may come before, between or after the files.")

# The help of `treckit eval`, as sections of (short option, long option, value, explanation): rendered like the other
# commands' help (rich panels) without loading typer.
EVAL_HELP_SECTIONS: list[tuple[str, list[tuple[str, str, str, str]]]] = [
    ("Arguments", [
        ("QRELS", "", "", "judgments: TREC qrels, BEIR TSV/JSONL or QUEST JSONL (detected; see --qrels-format)"),
        ("RUN ...", "", "", "one or more runs: TREC (6 or 3 columns), TSV or JSONL (detected); '-' reads stdin"),
    ]),
    ("trec_eval options", [
        ("-m", "--measure", "NAME[.PARAMS]",
         "a measure to print; repeat for more (default: official). trec_eval names with optional parameters "
         "(map, P.5,10, ndcg_cut.10, relstring.20), nicknames (official, all_trec, set) or ir_measures names "
         "(nDCG@10, R@100, RR@10, AP, P(rel=2)@5, nDCG(dcg='exp-log2')@10); `treckit measures` lists them all"),
        ("-q", "--query_eval_wanted", "", "also print each query's values, not only the summary over queries"),
        ("-c", "--complete_rel_info_wanted", "",
         "average over every query in QRELS: a judged query without results scores 0 (default: only the "
         "queries that are both judged and in the run)"),
        ("-n", "--nosummary", "", "leave out the summary lines (with -q: per-query lines only)"),
        ("-l", "--level_for_rel", "N", "lowest grade that counts as relevant (default: 1)"),
        ("-M", "--Max_retrieved_per_topic", "N", "use only the first N documents of each query (after sorting by score)"),
        ("-N", "--Number_docs_in_coll", "N", "number of documents in the collection, for the measures that use it"),
        ("-J", "--Judged_docs_only", "",
         "drop unjudged documents from the run before scoring; the numbers look reasonable but are not "
         "comparable with ordinary ones (trec_eval: do not use unless you know why)"),
        ("-Z", "--Zscore", "FILE",
         "print Z scores, (value - mean) / std, with the mean and std of each query and measure read from "
         "FILE's 'qid measure mean std' lines (-1000000 where FILE has none)"),
        ("-R", "--Rel_info_format", "FORMAT",
         "qrels (default), or prefs | qrels_prefs | qrels_jg for preference judgments and judgment groups, "
         "measured with -m all_prefs / prefs / qrels_jg (use --qrels-format for other qrels formats)"),
        ("-T", "--Results_format", "FORMAT", "trec_results only (use --run-format for other run formats)"),
        ("-D", "", "N", "trec_eval's debug level: accepted and ignored"),
        ("-v", "--version", "", "print the version (on stderr, as trec_eval) and exit"),
        ("-h", "--help", "", "show this message and exit"),
    ]),
    ("treckit options", [
        ("", "--format", "FORMAT", f"{' | '.join(EVAL_FORMATS)} (default: trec_eval; a table on a terminal)"),
        ("", "--prometheus-textfile", "FILE",
         "also write the summary values as Prometheus gauges (<prefix>_retrieval_recall_at_k{k=...}, ..._ndcg_at_k, "
         "..._mrr, one per measure) for node_exporter's textfile collector"),
        ("", "--pushgateway", "URL", "also push those gauges to a Prometheus Pushgateway"),
        ("", "--metrics-prefix", "PREFIX", "the gauges' name prefix (default: treckit)"),
        ("", "--missing", "POLICY",
         "judged queries absent from a run (without -c): skip (default: not scored, with a warning) | "
         "zero (scored 0, as -c) | error (fail)"),
        ("", "--float32", "", "round scores to float32 first (as trec_eval 9.x and pytrec_eval)"),
        ("", "--cross-check", "",
         "recompute every number printed with ir_measures (pytrec_eval under it), scores read as float32 as "
         "pytrec_eval reads them, before printing; exit 3 naming the measure, the queries and both values on "
         "any difference beyond 1e-9 (a line on stderr says what agreed and what has no equal in ir_measures)"),
        ("", "--html", "FILE",
         "also write a self-contained HTML report: every run's means with their intervals, per-query values, "
         "precision-recall curves; with several runs, the first is the baseline of the differences and paired tests "
         "(needs treckit's report extra)"),
        ("", "--plot", "FILE",
         "also draw the precision-recall curves (iprec_at_recall, one line per run) as .png, .pdf or .svg "
         "(needs treckit's plots extra)"),
        ("", "--memory-limit", "SIZE", MEMORY_LIMIT_HELP),
        ("", "--qrels-format", "FORMAT",
         f"read QRELS as {' | '.join(QRELS_FORMATS)} instead of detecting it; QRELS may be irds:<dataset-id>"),
        ("", "--tie-aware", "MODE",
         "values over the orders of documents with equal scores (trec_eval orders them by doc id): expected (the "
         "exact mean over uniformly random orders), best, worst (trec_eval's output layout, each measure and query "
         "at its own extreme; counts whose expectation is fractional print with 4 decimals), range (trec_eval's "
         "value, expected, best and worst side by side) or report (what the ties did: counts, the queries that "
         "move most, the largest range per measure, where the ties come from). docs/ties.md"),
        ("", "--engine", "local|dask",
         "local (default), or dask: the runs evaluated on a Dask cluster, one task per run, a huge TREC run "
         "partitioned by query; same output (needs treckit's dask extra). QRELS and RUN may be URLs "
         "(s3://, gs://, http(s)://) with either engine"),
        ("", "--scheduler", "ADDRESS", "--engine dask: the scheduler to use (tcp://host:8786; its workers must "
         "read the runs: URLs, or paths on a file system they share); default: a local cluster of one worker "
         "process per core, started for the job"),
    ]),
    ("Reading runs: the options of `treckit run` and `treckit compare` (docs/formats.md: Reading rules). A TREC run is "
     "ranked by score as written, as trec_eval ranks it; any other run, or an option that changes the ranking, is "
     "evaluated as `treckit run` converts it; --layout and --skip-malformed read TREC qrels too", [
        ("", f.flag, "" if f.kind is bool else ("|".join(f.choices) if f.choices else f.flag[2:].upper()),
         f.help + (f" (default: {f.default})" if f.default not in (None, False) else ""))
        for f in _READ_FLAGS]),
]


def _row_name(short: str, long: str, value: str) -> str:
    return f"{f'{short}, {long}' if short and long else short or long} {value}".strip()


def _plain_help() -> str:
    import textwrap

    width = 100
    name_w = max(len(_row_name(*row[:3])) for _, rows in EVAL_HELP_SECTIONS for row in rows) + 2
    out = [f"Usage: {EVAL_USAGE}", "", *textwrap.wrap(EVAL_ABOUT, width), ""]
    for title, rows in EVAL_HELP_SECTIONS:
        heading, _, intro = title.partition(": ")
        out.append(f"{heading}:")
        out.extend("  " + line for line in textwrap.wrap(intro[:1].upper() + intro[1:] + ".", width - 2) if intro)
        for short, long, val, text in rows:
            name = _row_name(short, long, val)
            lines = textwrap.wrap(text, width - name_w - 2) or [""]
            out.append(f"  {name:<{name_w}}{lines[0]}")
            out.extend(" " * (name_w + 2) + ln for ln in lines[1:])
        out.append("")
    return "\n".join(out)




def print_eval_help() -> None:
    """The help in the other commands' style (rich panels, as typer draws them), or plain lines
    where rich is unavailable."""
    try:
        from rich import box
        from rich.console import Console, Group
        from rich.padding import Padding
        from rich.panel import Panel
        from rich.table import Table
        from rich.text import Text
    except ImportError:
        print(_plain_help())
        return
    console = Console()

    def closed() -> None:            # rich would exit 1 on a closed pipe (`| head`): end quietly, as every command
        silence_stdout()
        raise OutputClosed()
    console.on_broken_pipe = closed
    console.print(Padding(Text.assemble(("Usage: ", "yellow"), (EVAL_USAGE, "bold")), (1, 1, 1, 1)))
    console.print(Padding(Text(EVAL_ABOUT), (0, 1, 1, 1)))
    for title, rows in EVAL_HELP_SECTIONS:
        # a panel's heading is its title's first words, which fit any width; what follows them opens the panel
        heading, _, intro = title.partition(": ")
        grid = Table(box=None, show_header=False, pad_edge=False, padding=(0, 1), expand=True)
        grid.add_column(style="bold green", no_wrap=True)
        grid.add_column(style="bold yellow", no_wrap=True)
        grid.add_column(ratio=1)
        for short, long, val, text in rows:
            help_text = Text(text)
            if short and long:
                help_text.append(f" [long form: {long}]", style="dim")
            grid.add_row(Text(short or long, style="bold cyan" if not short else ""), Text(val), help_text)
        body = Group(Text(intro[:1].upper() + intro[1:] + "."), grid) if intro else grid
        console.print(Panel(body, title=heading, title_align="left", border_style="dim", box=box.ROUNDED))


def version_line() -> str:
    return f"treckit eval {__version__} (trec_eval version 10.0-rc3 measures and output)"


def _check_choices(a: EvalArgs) -> EvalArgs:
    """treckit's own enumerated options, checked before any file is read."""
    for flag, value, allowed in (("--format", a.format, EVAL_FORMATS), ("--missing", a.missing, EVAL_MISSING)):
        if value is not None and value not in allowed:
            raise InputError(f"{flag} {value}: not one of {', '.join(allowed)}", fix=f"e.g. {flag} {allowed[0]}")
    check_prefix(a.metrics_prefix)                   # the gauges' options too: a bad one is said before any result
    if a.pushgateway:
        check_pushgateway(a.pushgateway)
    limit = MemoryLimit.option(a.memory_limit)
    a.chosen = choose(a.engine, a.scheduler, memory_limit=limit, rel_format=a.rel_format)
    check_drawings(a)
    if a.tie_aware is not None:
        check_mode(a.tie_aware)
        refuse(a.engine, zscores=a.zscore is not None, cross_check=a.cross_check, rel_format=a.rel_format)
    if a.cross_check:
        check_options(eval_options(a), {"-Z": a.zscore is not None, f"-R {a.rel_format}": a.rel_format != "qrels"})
    return a


def eval_options(a: EvalArgs):
    """The evaluation options the flags give, but -Z's table (its file is read only when evaluating)."""
    return EvalOptions(level=a.level, max_docs=a.max_docs, judged_only=a.judged, complete=a.complete,
                       missing=a.missing, float32=a.float32, num_docs_in_coll=a.ndocs)


def eval_main(argv: list[str]) -> None:
    """``treckit eval ARGS``: reached without typer (trec_eval's own flag syntax, and a fast start)."""
    flags = argv[: argv.index("--")] if "--" in argv else argv
    if not argv or any(f in ("-h", "--help") for f in flags):
        print_eval_help()
        return
    if any(f in ("-v", "--version") for f in flags):
        print(version_line(), file=sys.stderr)      # trec_eval -v prints its version on stderr
        return
    a = parse_args(argv)
    if a.rel_format != "qrels":
        spelling.now("treckit eval -R")        # runs read by their format only (engines.prefs.Preferences)
    a = _check_choices(a)
    with MemoryLimit.option(a.memory_limit).governing(own_process=True):
        run_eval(a)


def run_eval(a: EvalArgs, out=None) -> None:
    out = out or sys.stdout
    refuse_overwriting_inputs([*a.files, a.zscore], [a.prometheus_textfile, a.html, a.plot])     # before any reading
    requests = resolve(a.measures, warn=say, rel_format=a.rel_format)
    if a.tie_aware is not None:                  # refused or left out before anything is read
        requests = check_requests(requests, a.tie_aware, named=named_measures(a.measures), warn=say)
    engine = a.chosen or _check_choices(a).chosen
    qrels = engine.read_judgments(a.files[0], a.qrels_format, a.reading)
    opts = dataclasses.replace(eval_options(a), zscores=read_zscores(a.zscore) if a.zscore else None)
    fmt = a.format or ("table" if out.isatty() else "trec_eval")
    printed = {"per_query_printed": a.query, "summary_printed": a.summary}
    if a.tie_aware is not None:
        return write_tie_aware(out, qrels, a.files, requests, opts, a.reading, a.tie_aware, fmt, memory_limit=a.memory_limit,
                               per_query=a.query, summary=a.summary)
    if engine.name != "local":                  # the same results, computed on a Dask cluster, or preferences
        results = engine.evaluate_files(qrels, a.files[1:], requests, opts, a.reading, qrels_source=a.files[0],
                                        warn=say)
        if a.cross_check:                       # each run read again here, whole
            for path, _, res in results:
                say(cross_check(qrels, read_for_check(path, a.reading, a.files[0]), res, opts, source=str(path),
                                **printed).line())
    else:
        results, confirmed = [], []
        for path in a.files[1:]:
            res, checked = evaluate_path_checked(qrels, path, requests, opts, a.reading, memory_limit=engine.memory_limit,
                                                 warn=say, qrels_source=a.files[0], check=a.cross_check, **printed)
            if checked is not None:
                confirmed.append(checked.line())
            results.append((path, res.runid, res))
        for line in confirmed:                  # after every run's own notes, as the Dask engine says them
            say(line)
    write(out, results, fmt, per_query=a.query, summary=a.summary)
    if a.html or a.plot:
        command_module(PAGES_MODULE).draw(a, results, requests)
    if a.prometheus_textfile or a.pushgateway:
        from pathlib import Path
        with outputs(a.prometheus_textfile):        # a failed push leaves no textfile: both or neither
            export([(tag, "all", gauge_measures(res.summary, res.kinds)) for _, tag, res in results],
                   test_set=Path(a.files[0]).name, prefix=a.metrics_prefix, textfile=a.prometheus_textfile,
                   pushgateway=a.pushgateway)


def check_drawings(a: EvalArgs) -> None:
    """--html and --plot: their extras installed, the plot's format known, and values they can draw; before any
    file is read."""
    if a.html is None and a.plot is None:
        return
    if a.tie_aware is not None or a.zscore is not None or a.rel_format != "qrels":
        raise InputError("--html and --plot draw trec_eval's values of qrels judgments, not with --tie-aware, -Z or -R",
                         fix="leave them out (compare --tie-aware range --html draws tie ranges)")
    command_module(PAGES_MODULE).check(a.html, a.plot)


# ---------------------------------------------------------------- -R prefs | qrels_prefs | qrels_jg
# trec_eval's other rel-info formats (measured by engines.prefs.Preferences): everything else (flags, output formats,
# several runs) is the ordinary eval.


def check_rel_format(value: str) -> str:
    if value not in REL_FORMATS:
        raise InputError(f"-R {value}: unknown rel_info format", fix="use one of " + ", ".join(REL_FORMATS))
    return value
