"""``treckit compare``: several runs against a baseline, with paired significance tests and reports."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer


def compare_cmd(
    qrels: str = typer.Argument(..., help="qrels (any supported format)"),
    runs: Optional[List[str]] = typer.Argument(None, help="runs; the first is the baseline"),
    measure: List[str] = typer.Option(["map", "ndcg_cut.10", "recall.100", "recip_rank"], "-m", "--measure",
                                      help="trec_eval or ir_measures names; repeat the option"),
    name: Optional[List[str]] = typer.Option(None, "--name", help="system names, in order (default: run tags)"),
    config: Optional[List[Path]] = typer.Option(None, "--config", help="YAML config naming a run; configs come first"),
    k: int = typer.Option(10, "--k", min=1, help="depth for the per-query relevant 'hits'"),
    test: Optional[List[str]] = typer.Option(None, "--test", help="t-test, wilcoxon, randomization, bootstrap (default: all)"),
    correction: str = typer.Option("holm", help="holm | bonferroni"),
    alpha: float = typer.Option(0.05, help="significance level"),
    permutations: int = typer.Option(10000, help="randomization test draws (exact enumeration for <= 16 queries)"),
    resamples: int = typer.Option(10000, help="bootstrap resamples"),
    seed: int = typer.Option(42, help="seed of the randomization test and the bootstrap"),
    out: Optional[Path] = typer.Option(None, "--out", help="JSON output"),
    csv: Optional[Path] = typer.Option(None, "--csv", help="CSV output: qid,system,<measures>,hits"),
    markdown: Optional[Path] = typer.Option(None, "--markdown", help="Markdown report"),
    latex: Optional[Path] = typer.Option(None, "--latex", help="LaTeX table"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="PNG of sorted per-query deltas"),
    corpus: Optional[Path] = typer.Option(None, help="corpus file, for its digest only"),
    queries: Optional[Path] = typer.Option(None, help="queries file, for its digest only"),
    query_types: Optional[Path] = typer.Option(None, help="qid<TAB>type TSV or id-added QUEST JSONL (metadata.template)"),
    reading=None,
) -> None:
    """Compare systems: per-query deltas, win/tie/loss, paired tests with Holm correction, reports."""
    from ..compare.compare import CompareOptions
    from ..compare.report import table
    from ..startup import defer_pandas
    from ..stages import compare_stage, say
    defer_pandas()
    opts = CompareOptions(k=k, tests=tuple(test) if test else CompareOptions.tests, correction=correction, alpha=alpha,
                          permutations=permutations, resamples=resamples, seed=seed)
    comp = compare_stage(qrels, runs or [], measure, names=name, configs=config, options=opts, out_json=out,
                         out_csv=csv, out_markdown=markdown, out_latex=latex, out_plot=plot, corpus=corpus,
                         queries=queries, query_types=query_types, reading=reading)
    print(table(comp), end="")
    for p in (out, csv, markdown, latex, plot):
        if p:
            say(f"wrote {p}")


def register(app) -> None:
    from ..reading import with_reading_options
    app.command("compare")(with_reading_options()(compare_cmd))    # runs are read as every command reads them
