"""The pipeline's stages as functions: ground truth -> qrels, run -> TREC run, evaluation at cutoffs, and the
comparison of runs (its steps are :mod:`treckit.compare.stage`); and what the staged scripts in
``code/evaluation`` share (:func:`run_script`, their reading arguments, :func:`positive_int`).

The CLI and the staged scripts are thin over these.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from .compare.stage import CompareJob, Outputs
from .console import spelling
from .console.messages import say
from .console.process import exit_code_of, prepare_process
from .console.progress import Steps
from .engines.budget import DEFAULT_MEMORY, HELP as MEMORY_LIMIT_HELP, MemoryLimit  # noqa: F401  (MemoryLimit: the scripts' budget)
from .engines.stream import plan
from .inputs import is_irds
from .engines.crosscheck import check_options, evaluate_path_checked
from .engines.memory import EvalOptions
from .inputs.formats.common import check_layout, drop_repeated_judgments, skipped_lines, skipping_on_demand
from .inputs.formats.detect import detect_qrels
from .inputs.formats.jsonl import check_duplicates_policy, read_quest
from .inputs.formats.trec import read_trec_qrels
from .inputs.sources import PathLike, display_name
from .measures.registry import LONG_MAX, resolve
from .output.files import atomic_output, derived_output, outputs, refuse_overwriting_inputs
from .inputs.options import FLAGS, RunReading, python_name
from .inputs.reading import gold_query_map as by_text, read_qrels, read_with
from .output.quest import write_id_added
from .output.trec import write_trec_qrels, write_trec_run


# The pipeline document's reading of TREC files, the staged scripts' default ``--layout``: a qrels line's doc id
# is everything between the second field and the last, a run line's everything between Q0 and the rank, spaces
# included (QUEST's qrels hold raw Wikipedia titles: ``8 0 District 9 1``).  ``treckit`` itself reads ``auto``.
DOCUMENT_LAYOUT = "docid-spaces"
DOCUMENT_LAYOUT_WHY = ("the pipeline document's rule: a doc id is everything between the second field and the last "
                       "(qrels) or between Q0 and the rank (runs), spaces included")
# The run name the staged conversion writes for an input that names no run (JSONL, TSV, 3-column files).
DEFAULT_RUN_NAME = "run"


def run_script(script: PathLike, body) -> int:
    """Run the body of the staged script ``script`` (its file, ``__file__``): errors, OS errors and Ctrl-C become a
    message on stderr and their exit code (never a traceback), as in the CLI; messages name the options as the
    script spells them (:data:`treckit.console.spelling.COMMANDS`)."""
    prepare_process()
    with spelling.running(spelling.command_named(Path(script).name)):
        return exit_code_of(body)


@dataclass
class QrelsStageResult:
    judgments: int
    queries: int
    id_added: Path | None
    repeats_dropped: int = 0


def qrels_stage(input: PathLike, output: PathLike, *, format: str | None = None, id_base: int = 1,
                id_field: str | None = None, raw_ids: bool = False, duplicates: str = "error",
                id_added: PathLike | None = None, skip_malformed: bool = False, layout: str = "auto") -> QrelsStageResult:
    """Ground truth in any qrels format -> TREC qrels.  ``duplicates`` applies to every format (a
    (qid, docid) judged twice); what it dropped is counted and said.  ``layout``: TREC lines with
    more than 4 fields (docs/formats.md: Reading rules)."""
    check_duplicates_policy(duplicates)
    check_layout(layout)
    refuse_overwriting_inputs([input], [output, id_added])
    fmt = format or (None if is_irds(input) else detect_qrels(input).format)   # irds: read_qrels
    written_ids = None
    dropped = 0
    with outputs(output, id_added, inputs=[input]):     # the qrels and the id-added file: both or neither
        if fmt == "quest":
            gt = read_quest(input, id_base=id_base, id_field=id_field, duplicates=duplicates)
            qrels, dropped = gt.qrels, gt.repeats_dropped
            if not gt.ids_were_given and str(input) != "-":
                written_ids = Path(id_added) if id_added else default_id_added_path(input, output)
                refuse_overwriting_inputs([input], [output, written_ids])
                write_id_added(gt, written_ids)
        elif fmt == "trec":      # the layout is a TREC reading rule
            qrels = read_trec_qrels(input, skip_malformed=skip_malformed, layout=layout)
        else:
            qrels = read_qrels(input, fmt, skip_malformed=skip_malformed)
        qrels, more = drop_repeated_judgments(qrels, duplicates, display_name(input))
        dropped += more
        write_trec_qrels(qrels, output, escape_ids=not raw_ids)
    if written_ids is not None:
        say(f"the input had no ids: wrote the id-added JSONL to {written_ids} (qid = line number, base {id_base})")
    if dropped:
        say(f"{display_name(input)}: dropped {dropped} repeated judgment(s) of the same (query, doc) ({duplicates})")
    n_q = len(set(qrels.table.column("qid").to_pylist()))
    return QrelsStageResult(len(qrels), n_q, written_ids, dropped)


def default_id_added_path(input: PathLike, output: PathLike) -> Path:
    src = Path(input)
    stem = src.name[:-3] if src.name.endswith(".gz") else src.name
    stem = stem[:-6] if stem.endswith(".jsonl") else stem
    out_dir = Path(output).parent if str(output) != "-" else src.parent
    return out_dir / f"{stem}_id_added.jsonl"


def gold_query_map(gold: PathLike, id_base: int = 1) -> dict[str, str]:
    """query text -> qid from a QUEST-style gold file (ids from its id field, else line numbers) or ``irds:<id>``."""
    return by_text(gold, id_base)


def run_stage(input: PathLike, output: PathLike | None = None, *, run_name: str | None = None,
              untagged_name: str | None = None, reading=None, depth: int | None = None, raw_ids: bool = False,
              **options):
    """Read ``input`` with the reader configuration (:class:`treckit.inputs.options.RunReading`, or its options as
    keywords), convert it and write the TREC run; the conversion's report goes to stderr.

    ``run_name``: the run tag written on every line.  ``untagged_name``: the tag written only when the input
    names no run (JSONL, TSV and 3-column files); a TREC 6-column file keeps its own tags (said when they are
    not that name).  Without ``output`` the run is written beside the input (:func:`default_run_output`) and
    the path is said."""
    reading = reading or RunReading.from_options(**options)
    defaulted = output is None
    output = default_run_output(input) if defaulted else output
    refuse_overwriting_inputs([input, reading.gold], [output])
    with Steps([f"reading and ordering {input}", f"writing {output}"]) as steps:
        got = skipping_on_demand(lambda skip: read_with(dataclasses.replace(reading, skip_malformed=skip), input,
                                                        convert=True, depth=depth, run_name=run_name, raw_ids=raw_ids,
                                                        warn=say), reading.skip_malformed, input)
        steps.next()
        tag = run_name
        if tag is None and untagged_name is not None:
            tag = None if got.format == "trec" else untagged_name
        write_trec_run(got.run, output, escape_ids=not raw_ids, tag=tag)
        steps.next()
    for line in got.report.lines():
        say(line)
    if run_name is None and untagged_name is not None and got.format == "trec":
        kept = sorted(set(got.run.table.column("tag").unique().to_pylist()) - {None})
        if kept != [untagged_name]:
            shown = ", ".join(kept[:3]) + (f" and {len(kept) - 3} more" if len(kept) > 3 else "")
            say(f"{input}: kept the TREC run's own tag{'s' if len(kept) > 1 else ''} ({shown}); the run name "
                f"{untagged_name!r} is written only for inputs that name no run")
    if defaulted and str(output) != "-":
        say(f"wrote {output}")
    return got.report


def default_run_output(input: PathLike) -> str:
    """``preds.jsonl`` -> ``preds_trec`` (the old script's convention), ``x.trec.gz`` -> ``x_trec``,
    ``-`` (stdin) -> ``-`` (stdout)."""
    return derived_output(input, "_trec")


def cutoff_table(qrels: PathLike, run: PathLike, cutoffs: list[int], *, missing: str = "skip", reading=None,
                 memory_limit=DEFAULT_MEMORY, cross_check: bool = False, qrels_format: str | None = None,
                 **options):
    """Recall@k and nDCG@k (trec_eval's recall_k and ndcg_cut_k) plus MRR and MAP, averaged over queries.

    The run is read with the reader configuration (``reading``, or its options as keywords, e.g. ``order``), and
    evaluated in bounded memory when larger than ``memory_limit`` (a MemoryLimit, or bytes; None: read whole).
    The qrels are read as ``qrels_format`` (default: detected); TREC qrels by the same ``layout`` and
    ``skip_malformed`` as the run: malformed lines are then skipped, each said and counted
    (``malformed_lines_skipped``: {"qrels": n, "run": n}), the files read as they are when they have none.  ``cross_check``: every number is recomputed with ir_measures
    (:mod:`treckit.engines.crosscheck`) before it is returned; a difference raises, agreement is said on stderr."""
    reading = reading or RunReading.from_options(**options)
    opts = EvalOptions(missing=missing)
    if cross_check:
        check_options(opts)                   # before anything is read
    ks = ",".join(str(k) for k in sorted(set(cutoffs)))
    req = resolve([f"recall.{ks}", f"ndcg_cut.{ks}", "recip_rank", "map", "num_q"])
    with skipped_lines() as skipped:
        judged = skipping_on_demand(lambda skip: read_qrels(qrels, qrels_format, layout=reading.layout,
                                                            skip_malformed=skip), reading.skip_malformed, qrels)
        res, checked = skipping_on_demand(
            lambda skip: evaluate_path_checked(judged, run, req, opts, dataclasses.replace(reading, skip_malformed=skip),
                                               memory_limit=memory_limit, warn=say, qrels_source=qrels,
                                               check=cross_check), reading.skip_malformed, run, qrels,
            whole=lambda: _too_large_to_skip(run, reading, memory_limit))
    if checked is not None:
        say(checked.line())
    s = res.summary
    ks_sorted = sorted(set(cutoffs))
    return {
        "cutoffs": ks_sorted,
        "recall": {str(k): s[f"recall_{k}"] for k in ks_sorted},
        "ndcg": {str(k): s[f"ndcg_cut_{k}"] for k in ks_sorted},
        "mrr": s["recip_rank"],
        "map": s["map"],
        "num_queries": int(s["num_q"]),
        "malformed_lines_skipped": {role: sum(n for (r, _), n in skipped.items() if r == role) for role in ("qrels", "run")},
    }


RULE_WIDTH = 60          # the pipeline document's table: "=" and "-" rules of 60 characters


def _too_large_to_skip(run: PathLike, reading, memory_limit) -> str | None:
    """Why the run's malformed lines are not skipped: it is evaluated in bounded memory (over the memory limit),
    and skipping reads a run whole; None when it is read whole anyway."""
    if not plan(run, dataclasses.replace(reading, skip_malformed=False), MemoryLimit.parse(memory_limit).bytes).stream:
        return None
    return ("the run is larger than --memory-limit allows to read whole, which skipping does: correct the line, or "
            "raise --memory-limit (0: read it whole)")


def format_cutoff_table(t: dict) -> str:
    """The pipeline document's "Evaluation Results" table (Cutoff, Recall@k, NDCG@k per cutoff), then MRR, MAP and
    the number of queries."""
    double, single = "=" * RULE_WIDTH, "-" * RULE_WIDTH
    lines = [double, "Evaluation Results", double, "", f"{'Cutoff':<11}{'Recall@k':<16}NDCG@k", single]
    for k in t["cutoffs"]:
        lines.append(f"{k:<11}{t['recall'][str(k)]:<16.4f}{t['ndcg'][str(k)]:.4f}")
    lines += [single, f"MRR {t['mrr']:.4f}   MAP {t['map']:.4f}   queries {t['num_queries']}", double]
    return "\n".join(lines) + "\n"


def write_json(obj, path: PathLike) -> None:
    with atomic_output(path) as fh:
        fh.write(json.dumps(obj, indent=2) + "\n")


def compare_stage(qrels: PathLike, runs: list[PathLike], measures: list[str], *, names: list[str] | None = None,
                  configs: list[PathLike] | None = None, options=None, out_json: PathLike | None = None,
                  out_csv: PathLike | None = None, out_markdown: PathLike | None = None,
                  out_latex: PathLike | None = None, out_plot: PathLike | None = None,
                  corpus: PathLike | None = None, queries: PathLike | None = None,
                  query_types: PathLike | None = None, prepare=None, digests: bool | None = None, reading=None,
                  test_set: PathLike | None = None, depth: int = 1000, memory_limit=DEFAULT_MEMORY,
                  engine: str = "local", scheduler: str | None = None, queries_are_the_set: bool = False,
                  empty_run_retrieves_nothing: bool = False, ranking: str | None = None, order_option: bool = True,
                  out_html: PathLike | None = None, query_text: bool = True):
    """Stage 4: compare runs (or configs naming runs); the first system is the baseline.

    Each run is read (``reading``: a :class:`treckit.inputs.options.RunReading`, as ``treckit eval`` reads
    runs), evaluated once and dropped in turn (progress on a terminal); the files' digests are
    computed beside that, on another thread.  Every output is rendered before the first one is
    written, and all are written or none.  ``prepare`` (optional) turns each read Run into the Run to
    evaluate (the old rq_eval's tie rule).  ``digests``: compute the files' digests (default: when
    writing the JSON, the only output that holds them).  The configs describing retrieval systems
    (``components``) are run first, together (warmed up, then timed in turns: retrieval.system), on the
    queries (of ``test_set``, which also gives the judgments in place of ``qrels``, or of ``queries``;
    a system of run files only is run on the judged queries of ``qrels``), their last stages keeping
    ``depth`` docs and held until scored; their latency is reported.
    ``engine="dask"``: the runs are read and scored on a Dask cluster (``scheduler``, else a local one).
    ``measures`` None: the test set's measures with a test set (its nDCG: gain 2^grade - 1), else
    trec_eval's ``map ndcg_cut.10 recall.100 recip_rank``.  ``ranking``: the ranking rule recorded in
    the definitions (default: the reading's; ``prepare`` may impose another).
    ``queries_are_the_set`` (the old rq_eval's rule): the queries of ``queries`` are the query set, in place
    of the judged ones: a query without judgments scores 0 on every measure, a judged query not among them
    is left out (both said on stderr).  ``empty_run_retrieves_nothing`` (the old rq_eval's rule): a run file
    without run lines is a system that retrieved nothing (every query scores 0), not an error.
    ``out_html``: the HTML report (``query_text`` False: without the queries' texts).
    ``order_option``: whether the caller takes ``--order`` (else a warning about how a run is ordered offers a
    conversion with ``treckit run``, as :func:`treckit.inputs.reading.read_with` says).
    """
    return CompareJob(qrels, runs, measures, names=names, configs=configs, options=options,
                      out=Outputs(out_json, out_csv, out_markdown, out_latex, out_plot, out_html), corpus=corpus,
                      queries=queries, query_types=query_types, prepare=prepare, digests=digests, reading=reading,
                      test_set=test_set, depth=depth, memory_limit=memory_limit, engine=engine, scheduler=scheduler,
                      queries_are_the_set=queries_are_the_set, empty_run_retrieves_nothing=empty_run_retrieves_nothing,
                      ranking=ranking, order_option=order_option, query_text=query_text).run()


SKIPPING = "the default of this script, as the pipeline document says: each said and counted"


def add_strict_argument(parser) -> None:
    """``--strict`` on a staged script whose default is to skip malformed lines (the pipeline document's "Skipping
    malformed line" warnings): stop at the first one instead, exit 2 naming it (``treckit``'s own reading)."""
    parser.add_argument("--strict", dest="skip_malformed", action="store_false",
                        help="stop at the first malformed line (exit 2, naming the file, the line and the fix) instead "
                             "of skipping it")
    parser.set_defaults(skip_malformed=True)


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


def add_memory_limit_argument(parser) -> None:
    """``--memory-limit`` (also ``--memory_limit``) on a staged script's parser, as every command has it: the script
    parses it with :meth:`MemoryLimit.option` and runs its work within it (:meth:`MemoryLimit.governing`)."""
    parser.add_argument("--memory-limit", "--memory_limit", dest="memory_limit", default=None, metavar="SIZE",
                        help=MEMORY_LIMIT_HELP)


def positive_int(text: str) -> int:
    """argparse type of the staged scripts' cutoffs and depths: a whole number from 1 to the largest cutoff
    trec_eval reads (a C long), so that no measure is asked for a cutoff it would refuse."""
    import argparse
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive number")
    if value > LONG_MAX:
        raise argparse.ArgumentTypeError(f"{text[:40]}{'...' if len(text) > 40 else ''} is larger than {LONG_MAX}, the "
                                         "largest cutoff trec_eval reads (a cutoff past a run's depth counts every "
                                         "document it retrieved: e.g. 1000)")
    return value
