"""``treckit qrels`` and ``treckit run``: the two conversion stages."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer



def qrels_cmd(
    input: str = typer.Argument(..., help="ground truth: QUEST JSONL, BEIR TSV/JSONL or TREC qrels ('-' = stdin)"),
    output: str = typer.Option(..., "--output", "-o", help="TREC qrels to write ('-' = stdout)"),
    format: Optional[str] = typer.Option(None, "--format", help="trec | beir-tsv | beir-jsonl | quest (default: detect)"),
    id_base: int = typer.Option(1, help="first qid when the input has no ids (QUEST: 1-based line number)"),
    id_field: Optional[str] = typer.Option(None, help="JSONL field that holds the query id"),
    id_added: Optional[Path] = typer.Option(None, help="where to write the id-added JSONL (default: beside the output)"),
    raw_ids: bool = typer.Option(False, "--raw-ids", help="write doc ids unescaped (trec_eval cannot read ids with spaces)"),
    duplicates: str = typer.Option("error", help="a (qid, doc) judged twice: error | keep-first | keep-max | keep-last "
                                                 "(any format; what is dropped is counted)"),
    layout: str = typer.Option("auto", help="TREC lines with >4 fields: auto | docid-spaces | extra-columns "
                                            "(README: Reading rules)"),
    skip_malformed: bool = typer.Option(False, "--skip-malformed", help="count and skip bad lines instead of failing"),
) -> None:
    """Ground truth -> TREC qrels."""
    from ..startup import defer_pandas
    from ..stages import qrels_stage, say
    defer_pandas()
    r = qrels_stage(input, output, format=format, id_base=id_base, id_field=id_field, raw_ids=raw_ids,
                    duplicates=duplicates, id_added=id_added, skip_malformed=skip_malformed, layout=layout)
    say(f"{r.judgments} judgments for {r.queries} queries written to {output}")


def run_cmd(
    input: str = typer.Argument(..., help="run: TREC 6/3-column, TSV or JSONL ('-' = stdin)"),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="TREC run to write (default: INPUT_trec)"),
    run_name: Optional[str] = typer.Option(None, "--run-name", "--run_name", help="run tag to write"),
    format: Optional[str] = typer.Option(None, "--format", help="trec | trec3 | tsv | jsonl (default: detect)"),
    order: str = typer.Option("auto", help="auto | desc | asc | given (see README: order rules)"),
    break_ties: bool = typer.Option(False, "--break-ties", help="keep input order among equal scores (rank-derived scores)"),
    duplicates: str = typer.Option("error", help="error | keep-first | keep-max | keep-last"),
    depth: Optional[int] = typer.Option(None, help="keep the top DEPTH docs per query"),
    raw_ids: bool = typer.Option(False, "--raw-ids", help="write doc ids unescaped"),
    gold: Optional[Path] = typer.Option(None, help="QUEST gold JSONL: map id-less predictions by exact query text"),
    id_base: int = typer.Option(1, help="first qid for id-less lines without --gold"),
    layout: str = typer.Option("auto", help="TREC lines with >6 fields: auto | docid-spaces | extra-columns"),
    id_field: Optional[str] = typer.Option(None, help="JSONL: query id field"),
    docs_field: Optional[str] = typer.Option(None, help="JSONL: list of doc ids"),
    scores_field: Optional[str] = typer.Option(None, help="JSONL: list of scores"),
    hits_field: Optional[str] = typer.Option(None, help="JSONL: list of hit objects"),
    hit_doc_field: Optional[str] = typer.Option(None, help="JSONL: doc id field inside a hit"),
    hit_score_field: Optional[str] = typer.Option(None, help="JSONL: score field inside a hit"),
    query_field: str = typer.Option("query", help="JSONL: query text field (for --gold)"),
    tsv_third: str = typer.Option("score", help="TSV without header: third column is score | rank"),
    skip_malformed: bool = typer.Option(False, "--skip-malformed", help="count and skip bad lines instead of failing"),
) -> None:
    """A run in any supported format -> canonical TREC run that trec_eval reads in the intended order."""
    from ..formats.jsonl import JsonlFields
    from ..startup import defer_pandas
    from ..stages import default_run_output, run_stage
    defer_pandas()
    fields = JsonlFields(id_field, docs_field, scores_field, hits_field, hit_doc_field, hit_score_field, query_field)
    out = output or str(default_run_output(input))
    run_stage(input, out, run_name=run_name, format=format, order=order, ties="break" if break_ties else "keep",
              duplicates=duplicates, depth=depth, raw_ids=raw_ids, gold=gold, id_base=id_base, layout=layout,
              fields=fields, skip_malformed=skip_malformed, tsv_third=tsv_third)


def register(app) -> None:
    app.command("qrels")(qrels_cmd)
    app.command("run")(run_cmd)
