"""``treckit compare``: several runs against a baseline, with paired significance tests and reports."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer


from .. import thresholds
from ..compare.compare import CompareOptions
from ..compare.report import PLOT_FORMATS, table
from ..console.errors import InputError
from ..console.messages import say
from ..engines.budget import DEFAULT_MEMORY, MemoryLimit
from ..engines.choice import choose
from ..engines.dask import check_shared_paths
from ..engines.tie_aware import check_compare_mode, refuse
from ..stages import compare_stage
from .common import Correction, TestName, with_debug_option, with_memory_limit, with_reading_options
from .completion import measure_names


def _open_unit(value: float) -> float:
    if not 0 < value < 1:
        raise typer.BadParameter(f"{value:g} is not strictly between 0 and 1 (e.g. 0.05)")
    return value


def _plot_path(value: Optional[Path]) -> Optional[Path]:
    if value is not None and value.suffix.lower() not in PLOT_FORMATS:
        raise typer.BadParameter(f"{str(value)!r}: end the file name with .png, .pdf or .svg (the format to write)")
    return value


def compare_cmd(
    qrels: Optional[str] = typer.Argument(None, help="qrels (any supported format), or a test-set YAML (see --test-set)"),
    runs: Optional[List[str]] = typer.Argument(None, help="runs; the first is the baseline"),
    measure: Optional[List[str]] = typer.Option(None, "-m", "--measure", autocompletion=measure_names,
                                                help="trec_eval or ir_measures names, or test-set names (ndcg_at_10: "
                                                     "gain 2^grade - 1); repeat the option (default: map ndcg_cut.10 "
                                                     "recall.100 recip_rank; with a test set ndcg_at_10 recall_at_10 mrr)"),
    name: Optional[List[str]] = typer.Option(None, "--name", help="system names, in order (default: run tags)"),
    config: Optional[List[Path]] = typer.Option(None, "--config", help="YAML config naming a run, or describing a "
                                                "retrieval system (components, fusion: run on the queries); configs come first"),
    test_set: Optional[str] = typer.Option(None, "--test-set", help="a test-set YAML in place of QRELS: its judgments, "
                                           "and its queries for the configs that describe systems"),
    k: int = typer.Option(10, "--k", min=1, help="depth for the per-query relevant 'hits'"),
    test: Optional[List[TestName]] = typer.Option(None, "--test", help="paired test; repeat to pick several, the "
                                                  "first marks the means (default: t-test)"),
    correction: Optional[Correction] = typer.Option(None, help="which p decides: none (the raw p) or the p adjusted "
                                                    "by holm or bonferroni over every comparison of a test (default: "
                                                    "holm; none on a test set, seed 004's A/B rule)"),
    alpha: float = typer.Option(0.05, callback=_open_unit,
                                help="significance level: significant = the deciding p < alpha (every test)"),
    permutations: int = typer.Option(10000, min=thresholds.MIN_DRAWS,
                                     help="randomization test draws (exact for <= 16 differing queries)"),
    resamples: int = typer.Option(10000, min=thresholds.MIN_DRAWS, help="bootstrap resamples"),
    seed: int = typer.Option(42, min=0, help="seed of the randomization test and the bootstrap"),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="JSON output ('-': stdout; the table then goes to stderr)"),
    csv: Optional[Path] = typer.Option(None, "--csv", help="CSV output: qid,system,<measures>,hits"),
    markdown: Optional[Path] = typer.Option(None, "--markdown", help="Markdown report"),
    latex: Optional[Path] = typer.Option(None, "--latex", help="LaTeX table"),
    plot: Optional[Path] = typer.Option(None, "--plot", callback=_plot_path,
                                        help="plot of sorted per-query deltas: .png, .pdf or .svg"),
    html: Optional[Path] = typer.Option(None, "--html", help="self-contained HTML report (needs treckit's report extra)"),
    no_query_text: bool = typer.Option(False, "--no-query-text", help="leave the queries' texts out of the HTML report"),
    corpus: Optional[Path] = typer.Option(None, help="corpus file, for its digest only"),
    queries: Optional[Path] = typer.Option(None, help="queries file: the texts systems described by configs run on "
                                           "(not needed when their components are all run files); digested"),
    query_types: Optional[Path] = typer.Option(None, help="qid<TAB>type TSV or id-added QUEST JSONL (metadata.template)"),
    engine: str = typer.Option("local", "--engine", metavar="local|dask",
                               help="dask: the runs read and scored on a Dask cluster, one task per run (same output; "
                                    "needs treckit's dask extra)"),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", metavar="ADDRESS",
                                            help="--engine dask: the scheduler (tcp://host:8786); default: a local "
                                                 "cluster started for the job"),
    tie_aware: Optional[str] = typer.Option(None, "--tie-aware", metavar="range|expected",
                                            help="ties: each pair's difference against the systems' ranges over "
                                                 "the orders of documents with equal scores (is it inside them?); "
                                                 "expected: the means and tests on the expected values over random "
                                                 "tie orders (range: on trec_eval's). docs/ties.md"),
    reading=None,
    memory_limit: MemoryLimit = DEFAULT_MEMORY,
) -> None:
    """Compare systems: per-query deltas, win/tie/loss, the paired t-test (Holm across measures; the raw p on a
    test set's A/B), reports."""
    if tie_aware is not None:                               # checked before any file is read
        check_compare_mode(tie_aware)
        refuse(engine if scheduler is None else "dask")
    if choose(engine, scheduler).name != "local":         # checked before any file is read
        check_shared_paths(runs or [], scheduler)
    opts = CompareOptions(k=k, tests=tuple(t.value for t in test) if test else CompareOptions.tests,
                          correction=correction.value if correction else None, alpha=alpha, permutations=permutations,
                          resamples=resamples, seed=seed, tie_aware=tie_aware)
    if qrels is None and test_set is None:
        raise InputError("compare needs the judgments: QRELS, or --test-set TS.yaml",
                         fix="treckit compare QRELS BASELINE_RUN OTHER_RUN, or --test-set TS.yaml --config A.yaml --config B.yaml")
    runs = list(runs or [])
    if test_set is not None and qrels is not None:       # the judgments are the test set's: every argument is a run
        runs.insert(0, qrels)
        qrels = None
    comp = compare_stage(test_set if qrels is None else qrels, runs, measure, names=name, configs=config,
                         options=opts, out_json=out, out_csv=csv, out_markdown=markdown, out_latex=latex, out_plot=plot,
                         corpus=corpus, queries=queries, query_types=query_types, reading=reading, test_set=test_set,
                         memory_limit=memory_limit, engine=engine, scheduler=scheduler, out_html=html,
                         query_text=not no_query_text)
    outputs = (out, csv, markdown, latex, plot, html)
    stdout_taken = any(p is not None and str(p) == "-" for p in outputs)
    print(table(comp), end="", file=sys.stderr if stdout_taken else sys.stdout)
    for p in outputs:
        if p and str(p) != "-":
            say(f"wrote {p}")


def register(app) -> None:
    # runs are read as every command reads them; --debug for the functions of configs describing systems
    app.command("compare")(with_debug_option(with_reading_options()(with_memory_limit(compare_cmd))))
