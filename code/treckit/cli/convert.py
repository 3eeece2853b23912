"""``treckit qrels`` and ``treckit run``: the two conversion stages."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..console.messages import say
from ..stages import qrels_stage, run_stage
from .common import (DUPLICATES, Duplicates, LAYOUTS, Layout, QRELS_FORMATS, QrelsFormat, one_of, with_memory_limit,
                     with_reading_options)


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
                                          help=f"a (qid, doc) judged twice: {one_of(DUPLICATES)} "
                                               "(any format; what is dropped is counted)"),
    layout: Layout = typer.Option("auto", metavar="LAYOUT",
                                  help=f"TREC lines with >4 fields: {one_of(LAYOUTS)} "
                                       "(docs/formats.md: Reading rules)"),
    skip_malformed: bool = typer.Option(False, "--skip-malformed", help="count and skip bad lines instead of failing"),
) -> None:
    """Ground truth -> TREC qrels."""
    r = qrels_stage(input, output, format=format, id_base=id_base, id_field=id_field, raw_ids=raw_ids,
                    duplicates=duplicates, id_added=id_added, skip_malformed=skip_malformed, layout=layout)
    say(f"{r.judgments} judgments for {r.queries} queries written to {output}")


def _run_cmd(
    input: str = typer.Argument(..., metavar="INPUT", help="run: TREC 6/3-column, TSV or JSONL ('-' = stdin)"),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE",
                                         help="TREC run to write ('-' = stdout; default: stdout when INPUT is '-', "
                                              "else INPUT without its extensions + _trec, e.g. preds_trec)"),
    run_name: Optional[str] = typer.Option(None, "--run-name", "--run_name", metavar="NAME", help="run tag to write"),
    depth: Optional[int] = typer.Option(None, min=1, help="keep the top N docs per query"),
    raw_ids: bool = typer.Option(False, "--raw-ids", help="write doc ids unescaped"),
    reading=None,
) -> None:
    """A run in any supported format -> canonical TREC run that trec_eval reads in the intended order."""
    run_stage(input, output, run_name=run_name, reading=reading, depth=depth, raw_ids=raw_ids)


def register(app) -> None:
    app.command("qrels")(with_memory_limit(qrels_cmd))
    # the reading options are every run-reading command's (treckit.inputs.options.FLAGS); here --format too
    app.command("run")(with_reading_options({"format": ("--format",)})(with_memory_limit(_run_cmd)))
