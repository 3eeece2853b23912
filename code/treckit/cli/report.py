"""``treckit report``: an HTML report drawn from results files written earlier."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..console.messages import say
from ..inputs.bounded import read_json
from ..inputs.sources import display_name, file_digest
from ..output.files import atomic_output
from ..report.html import render, require_plotly
from ..report.results import page_of_files
from ..testsets import load_test_set
from .common import refuse_overwriting


def report_cmd(results: List[str] = typer.Argument(..., metavar="RESULTS.json...",
                                                   help="the --out files of compare, testset eval or system eval; "
                                                        "several results of one test set, in order, make a trend"),
               output: Path = typer.Option(..., "--output", "-o", help="the HTML file to write"),
               test_set: Optional[str] = typer.Option(None, "--test-set", help="the test set, for its queries' texts"),
               no_query_text: bool = typer.Option(False, "--no-query-text",
                                                  help="leave the queries' texts out of the page")) -> None:
    """Draw a self-contained HTML report from results files written earlier (several of one test set: a trend)."""
    refuse_overwriting([*results, test_set], [output])
    require_plotly()
    files = [(display_name(p), read_json(p, fix="pass the --out file of treckit compare, testset eval or system "
                                                "eval"), file_digest(p)) for p in results]
    texts = load_test_set(test_set).query_texts() if test_set and not no_query_text else None
    page = render(page_of_files(files, texts), not no_query_text)
    with atomic_output(output) as fh:
        fh.write(page)
    say(f"wrote {output}")


def register(app) -> None:
    app.command("report")(report_cmd)
