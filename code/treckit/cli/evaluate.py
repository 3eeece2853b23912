"""``treckit eval``: trec_eval's command line (``-q -c -n -J -M N -l N -m X -Z F``, attached forms such as
``-M100`` and ``-mrelstring.20``), several runs at once, and other output formats."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

from ..errors import InputError
from ..formats.common import atol as _atol

_NO_ARG = {"q": "query", "c": "complete", "n": "nosummary", "J": "judged"}
_ARG = {"m": "measure", "l": "level", "M": "max", "N": "ndocs", "Z": "zscore", "R": "relformat", "T": "resformat", "D": "debug"}
_LONG = {"--query_eval_wanted": "q", "--complete_rel_info_wanted": "c", "--nosummary": "n", "--Judged_docs_only": "J",
         "--measure": "m", "--level_for_rel": "l", "--Max_retrieved_per_topic": "M", "--Number_docs_in_coll": "N",
         "--Zscore": "Z", "--Rel_info_format": "R", "--Results_format": "T"}
_OWN = {"--format": "format", "--missing": "missing", "--order": "order", "--qrels-format": "qrels_format",
        "--run-format": "run_format"}


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
    order: str = "score"
    float32: bool = False
    qrels_format: str | None = None
    run_format: str | None = None
    rel_format: str = "qrels"      # -R: qrels, or prefs / qrels_prefs / qrels_jg (cli/evaluate_prefs.py)
    files: list[str] = field(default_factory=list)


def parse_args(argv: list[str]) -> EvalArgs:
    a = EvalArgs()
    i = 0

    def set_opt(ch: str, val: str | None) -> None:
        if ch == "q":
            a.query = True
        elif ch == "c":
            a.complete = True
        elif ch == "n":
            a.summary = False
        elif ch == "J":
            a.judged = True
        elif ch == "m":
            a.measures.append(val)
        elif ch == "l":
            a.level = _atol(val)
        elif ch == "M":
            a.max_docs = _atol(val)
        elif ch == "N":
            a.ndocs = _atol(val)
        elif ch == "Z":
            a.zscore = val
        elif ch == "R":
            from .evaluate_prefs import check_rel_format
            a.rel_format = check_rel_format(val)
        elif ch == "T":
            if val != "trec_results":
                raise InputError(f"-T {val}: only the trec_results format is supported",
                                 fix="use --qrels-format / --run-format for other input formats")
        # -D (debug level) is accepted and ignored
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            a.files.extend(argv[i + 1:])
            break
        if arg.startswith("--"):
            name, eq, val = arg.partition("=")
            if name == "--float32":
                a.float32 = True
            elif name in _OWN or name in _LONG:
                if not eq:
                    i += 1
                    if i >= len(argv):
                        raise InputError(f"{name} needs a value", fix=f"e.g. {name} VALUE")
                    val = argv[i]
                if name in _OWN:
                    setattr(a, _OWN[name], val)
                else:
                    ch = _LONG[name]
                    set_opt(ch, val if ch in _ARG else None)
            else:
                raise InputError(f"unknown option {name}", fix="see `treckit eval --help`")
        elif arg.startswith("-") and len(arg) > 1:
            j = 1
            while j < len(arg):
                ch = arg[j]
                if ch in _NO_ARG:
                    set_opt(ch, None)
                    j += 1
                elif ch in _ARG:
                    val = arg[j + 1:]
                    if not val:
                        i += 1
                        if i >= len(argv):
                            raise InputError(f"-{ch} needs a value", fix=f"e.g. -{ch} VALUE")
                        val = argv[i]
                    set_opt(ch, val)
                    break
                else:
                    raise InputError(f"unknown option -{ch}", fix="see `treckit eval --help`")
        else:
            a.files.append(arg)
        i += 1
    if len(a.files) < 2:
        raise InputError("usage: treckit eval [flags] QRELS RUN [RUN ...]", fix="give the qrels file, then one or more runs")
    return a


EVAL_HELP = """Evaluate runs like trec_eval 10.0: same flags, byte-identical text output.

  treckit eval [-q] [-c] [-n] [-J] [-M N] [-l N] [-N N] [-Z FILE] [-R FORMAT] [-m MEASURE[.PARAMS]]... QRELS RUN [RUN ...]

With -R prefs | qrels_prefs | qrels_jg the judgments are preferences or per-group qrels, measured with
-m all_prefs / prefs / qrels_jg (see `treckit measures`).

MEASURE is a trec_eval name (map, P.5,10, ndcg_cut.10, official, all_trec ...) or an ir_measures
name (nDCG@10, R@100, RR@10, AP, P(rel=2)@5, Judged@10, nDCG(dcg='exp-log2')@10).

treckit options:
  --format trec_eval|table|json|csv|jsonl   (default: trec_eval; a table on a terminal)
  --missing skip|zero|error   judged queries absent from the run: skip them (default, with a warning),
                              score them 0 (as -c), or fail (as trec_eval 10.0 does)
  --order score|rank          rank by score as trec_eval (default) or trust the rank column
  --float32                   round scores to float32 first (trec_eval 9.x / pytrec_eval)
  --qrels-format F, --run-format F   force an input format instead of detecting it
"""


def eval_main(argv: list[str]) -> None:
    """``treckit eval ARGS``: reached without typer (trec_eval's own flag syntax, and a fast start)."""
    if not argv or argv[0] in ("-h", "--help"):
        print(EVAL_HELP)
        return
    run_eval(parse_args(argv))


def run_eval(a: EvalArgs, out=None) -> None:
    from ..api import read_qrels, read_run
    from ..evaluation import EvalOptions, evaluate_requests, read_zscores
    from ..measures.irm import split_measures
    from ..measures.registry import resolve
    from ..output.records import render
    from ..stages import say

    out = out or sys.stdout
    from .evaluate_prefs import check_measures_for_qrels, run_eval_prefs
    if a.rel_format != "qrels":
        return run_eval_prefs(a, out)
    check_measures_for_qrels(a.measures)
    trec_args, groups = split_measures(a.measures)
    if not trec_args and not groups:
        trec_args = ["official"]
    requests = resolve(trec_args) if trec_args else []
    qrels = read_qrels(a.files[0], a.qrels_format)
    opts = EvalOptions(level=a.level, max_docs=a.max_docs, judged_only=a.judged, complete=a.complete,
                       missing=a.missing, order=a.order, float32=a.float32, num_docs_in_coll=a.ndocs,
                       zscores=read_zscores(a.zscore) if a.zscore else None)
    fmt = a.format or ("table" if out.isatty() else "trec_eval")
    results = []
    for path in a.files[1:]:
        run = read_run(path, a.run_format, lean=a.order != "rank")
        parts = []
        if requests:
            parts.append(evaluate_requests(qrels, run, requests, opts, source=path, warn=say))
        for g in groups:
            parts.append(g.evaluate(qrels, run, opts, source=path, warn=say))
        results.append((path, run.tag, parts))
    out.write(render(results, fmt, per_query=a.query, summary=a.summary))
