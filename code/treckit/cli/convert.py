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


def _run_cmd(
    input: str = typer.Argument(..., help="run: TREC 6/3-column, TSV or JSONL ('-' = stdin)"),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="TREC run to write (default: INPUT_trec)"),
    run_name: Optional[str] = typer.Option(None, "--run-name", "--run_name", help="run tag to write"),
    depth: Optional[int] = typer.Option(None, help="keep the top DEPTH docs per query"),
    raw_ids: bool = typer.Option(False, "--raw-ids", help="write doc ids unescaped"),
    reading=None,
) -> None:
    """A run in any supported format -> canonical TREC run that trec_eval reads in the intended order."""
    from ..startup import defer_pandas
    from ..stages import default_run_output, run_stage
    defer_pandas()
    out = output or str(default_run_output(input))
    run_stage(input, out, run_name=run_name, reading=reading, depth=depth, raw_ids=raw_ids)


def register(app) -> None:
    from ..reading import with_reading_options
    app.command("qrels")(qrels_cmd)
    # the reading options are every run-reading command's (treckit.reading.FLAGS); here --format too
    app.command("run")(with_reading_options({"format": ("--format",)})(_run_cmd))
