"""``treckit qrels`` and ``treckit run``: the two conversion stages."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..options import (DUPLICATES, LAYOUTS, ORDERS, QRELS_FORMATS, RUN_FORMATS, TSV_THIRD, Duplicates, Layout, Order,
                       QrelsFormat, RunFormat, TsvThird)


def one_of(values) -> str:
    return " | ".join(values)


def qrels_cmd(
    input: str = typer.Argument(..., metavar="INPUT",
                                help="ground truth: QUEST JSONL, BEIR TSV/JSONL or TREC qrels ('-' = stdin)"),
    output: str = typer.Option(..., "--output", "-o", metavar="FILE", help="TREC qrels to write ('-' = stdout)"),
    format: Optional[QrelsFormat] = typer.Option(None, "--format", metavar="FORMAT",
                                                 help=f"{one_of(QRELS_FORMATS)} (default: detect)"),
    id_base: int = typer.Option(1, help="first qid when the input has no ids (QUEST: 1-based line number)"),
    id_field: Optional[str] = typer.Option(None, metavar="FIELD", help="JSONL field that holds the query id"),
    id_added: Optional[Path] = typer.Option(None, metavar="FILE",
                                            help="where to write the id-added JSONL (default: beside the output)"),
    raw_ids: bool = typer.Option(False, "--raw-ids", help="write doc ids unescaped (trec_eval cannot read ids with spaces)"),
    duplicates: Duplicates = typer.Option("error", metavar="POLICY",
                                          help=f"a (qid, doc) judged twice: {one_of(DUPLICATES)}"),
    skip_malformed: bool = typer.Option(False, "--skip-malformed", help="count and skip bad lines instead of failing"),
) -> None:
    """Ground truth -> TREC qrels."""
    from ..startup import defer_pandas
    from ..stages import qrels_stage, say
    defer_pandas()
    r = qrels_stage(input, output, format=format, id_base=id_base, id_field=id_field, raw_ids=raw_ids,
                    duplicates=duplicates, id_added=id_added, skip_malformed=skip_malformed)
    say(f"{r.judgments} judgments for {r.queries} queries written to {output}")


def run_cmd(
    input: str = typer.Argument(..., metavar="INPUT", help="run: TREC 6/3-column, TSV or JSONL ('-' = stdin)"),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE",
                                         help="TREC run to write ('-' = stdout; default: stdout when INPUT is '-', "
                                              "else INPUT without its extensions + _trec, e.g. preds_trec)"),
    run_name: Optional[str] = typer.Option(None, "--run-name", "--run_name", metavar="NAME", help="run tag to write"),
    format: Optional[RunFormat] = typer.Option(None, "--format", metavar="FORMAT",
                                               help=f"{one_of(RUN_FORMATS)} (default: detect)"),
    order: Order = typer.Option("auto", metavar="ORDER", help=f"{one_of(ORDERS)} (see README: order rules)"),
    break_ties: bool = typer.Option(False, "--break-ties", help="keep input order among equal scores (rank-derived scores)"),
    duplicates: Duplicates = typer.Option("error", metavar="POLICY",
                                          help=f"a (qid, doc) listed twice: {one_of(DUPLICATES)}"),
    depth: Optional[int] = typer.Option(None, min=1, help="keep the top N docs per query"),
    raw_ids: bool = typer.Option(False, "--raw-ids", help="write doc ids unescaped"),
    gold: Optional[Path] = typer.Option(None, metavar="FILE", help="QUEST gold JSONL: map id-less predictions by exact query text"),
    id_base: int = typer.Option(1, help="first qid for id-less lines without --gold"),
    layout: Layout = typer.Option("auto", metavar="LAYOUT", help=f"TREC lines with >6 fields: {one_of(LAYOUTS)}"),
    id_field: Optional[str] = typer.Option(None, metavar="FIELD", help="JSONL: query id field"),
    docs_field: Optional[str] = typer.Option(None, metavar="FIELD", help="JSONL: list of doc ids"),
    scores_field: Optional[str] = typer.Option(None, metavar="FIELD", help="JSONL: list of scores"),
    hits_field: Optional[str] = typer.Option(None, metavar="FIELD", help="JSONL: list of hit objects"),
    hit_doc_field: Optional[str] = typer.Option(None, metavar="FIELD", help="JSONL: doc id field inside a hit"),
    hit_score_field: Optional[str] = typer.Option(None, metavar="FIELD", help="JSONL: score field inside a hit"),
    query_field: str = typer.Option("query", metavar="FIELD", help="JSONL: query text field (for --gold)"),
    tsv_third: TsvThird = typer.Option("score", metavar="KIND",
                                        help=f"TSV without header: the third column is {one_of(TSV_THIRD)}"),
    skip_malformed: bool = typer.Option(False, "--skip-malformed", help="count and skip bad lines instead of failing"),
) -> None:
    """A run in any supported format -> canonical TREC run that trec_eval reads in the intended order."""
    from ..formats.jsonl import JsonlFields
    from ..startup import defer_pandas
    from ..stages import default_run_output, run_stage
    defer_pandas()
    fields = JsonlFields(id_field, docs_field, scores_field, hits_field, hit_doc_field, hit_score_field, query_field)
    out = output or default_run_output(input)
    run_stage(input, out, run_name=run_name, format=format, order=order, ties="break" if break_ties else "keep",
              duplicates=duplicates, depth=depth, raw_ids=raw_ids, gold=gold, id_base=id_base, layout=layout,
              fields=fields, skip_malformed=skip_malformed, tsv_third=tsv_third)


def register(app) -> None:
    app.command("qrels")(qrels_cmd)
    app.command("run")(run_cmd)
