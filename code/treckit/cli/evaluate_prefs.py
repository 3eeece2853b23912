"""``treckit eval -R prefs | qrels_prefs | qrels_jg``: trec_eval's other rel-info formats.

Reached from ``cli/evaluate.py`` when ``-R`` names one of them; everything else (flags, output formats,
several runs) is the ordinary ``treckit eval``.  Doc ids are compared as written on both sides, as
trec_eval does; the qrels of ``qrels_prefs`` / ``qrels_jg`` are read by the ordinary qrels reader.
"""
from __future__ import annotations

import sys

from ..console.errors import InputError

REL_FORMATS = ("qrels", "prefs", "qrels_prefs", "qrels_jg")
DEFAULT_MEASURES = {"prefs": "prefs", "qrels_prefs": "prefs", "qrels_jg": "qrels_jg"}


def check_rel_format(value: str) -> str:
    if value not in REL_FORMATS:
        raise InputError(f"-R {value}: unknown rel_info format", fix="use one of " + ", ".join(REL_FORMATS))
    return value


def check_measures_for_qrels(measures: list[str]) -> None:
    """With plain qrels, name the -R a preference measure needs instead of calling it unknown."""
    from ..measures.prefs import JG_MEASURES, is_prefs_name
    for arg in measures:
        if is_prefs_name(arg):
            name = arg.partition(".")[0]
            need = "-R qrels_jg" if name in JG_MEASURES or name == "qrels_jg" else "-R prefs or -R qrels_prefs"
            raise InputError(f"measure {arg!r} needs {need}", fix=f"pass {need.split(' or ')[0]} and a matching judgments file")


def run_eval_prefs(a, out=None) -> None:
    """Evaluate ``a.files[1:]`` against the judgments ``a.files[0]`` read as ``a.rel_format``."""
    from ..inputs.reading import read_qrels, read_run
    from ..engines.memory import EvalOptions, read_zscores
    from ..inputs.formats.prefs import prefs_from_qrels, read_prefs
    from ..engines.prefs import evaluate_prefs, evaluate_qrels_jg
    from ..measures import prefs as pm
    from ..output.records import render
    from ..console.messages import say

    out = out or sys.stdout
    fmt_in = a.rel_format
    requests = pm.resolve(a.measures or [DEFAULT_MEASURES[fmt_in]], fmt_in)
    path = a.files[0]
    if fmt_in == "prefs":
        judgments = read_prefs(path)
    else:
        qrels = read_qrels(path, a.qrels_format or "trec", decode_ids=False)
        judgments = prefs_from_qrels(qrels, str(path)) if fmt_in == "qrels_prefs" else qrels
    opts = EvalOptions(level=a.level, max_docs=a.max_docs, judged_only=a.judged, complete=a.complete,
                       missing=a.missing, order=a.order, float32=a.float32, num_docs_in_coll=a.ndocs,
                       zscores=read_zscores(a.zscore) if a.zscore else None)
    evaluate = evaluate_qrels_jg if fmt_in == "qrels_jg" else evaluate_prefs
    results = []
    for run_path in a.files[1:]:
        # preference judgments rank by EvalOptions.order, not by the reading options
        run = read_run(run_path, a.run_format, decode_ids=False, lean=a.order != "rank", warn=say, order_option=False)
        results.append((run_path, run.tag, evaluate(judgments, run, requests, opts, source=run_path, warn=say)))
    fmt = a.format or ("table" if out.isatty() else "trec_eval")
    out.write(render(results, fmt, per_query=a.query, summary=a.summary))
