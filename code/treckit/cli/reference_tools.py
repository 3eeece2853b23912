"""``treckit gdeval`` and ``treckit ndeval``: drop-ins for the TREC Web track's two evaluation tools, printing
their output byte for byte (gdeval.pl 1.2a's CSV, ndeval 4.5's table)."""
from __future__ import annotations

import sys
from typing import Optional

import typer
from ..output.gdeval import gdeval_csv
from ..output.ndeval import ndeval_table
from .common import with_memory_limit


def gdeval_cmd(
    qrels: str = typer.Argument(..., metavar="QRELS", help="qrels: TOPIC 0 DOCNO JUDGMENT (judgments up to 4; '-' = stdin)"),
    run: str = typer.Argument(..., metavar="RUN", help="run: TOPIC Q0 DOCNO RANK SCORE RUNID ('-' = stdin)"),
    k: str = typer.Argument(..., metavar="K", help="the depth: nDCG@K and ERR@K"),
    amean: bool = typer.Option(False, "--amean", help="add the TREC 2010-2012 versions' line of means (runid,amean,...)"),
    amean_only: bool = typer.Option(False, "--amean-only", help="print the header and the line of means only"),
) -> None:
    """nDCG@K and ERR@K exactly as gdeval.pl 1.2a prints them (exponential gain, its tie order), per topic."""
    sys.stdout.buffer.write(gdeval_csv(qrels, run, k, topics=not amean_only, amean=amean or amean_only))
    sys.stdout.flush()


def ndeval_cmd(
    qrels: str = typer.Argument(..., metavar="QRELS",
                                help="subtopic qrels: TOPIC SUBTOPIC DOCNO JUDGMENT (the iteration field is the subtopic)"),
    run: str = typer.Argument(..., metavar="RUN", help="run: TOPIC Q0 DOCNO RANK SCORE RUNID"),
    alpha: float = typer.Option(0.5, "--alpha", metavar="NUMBER", help="redundancy intolerance, 0 to 1 (ndeval -alpha)"),
    beta: float = typer.Option(0.5, "--beta", metavar="NUMBER", help="patience of NRBP, 0 to 1 (ndeval -beta)"),
    traditional: bool = typer.Option(False, "--traditional",
                                     help="rank by score then docno, not by the rank column (ndeval -traditional)"),
    depth: Optional[int] = typer.Option(None, "-M", "--depth", metavar="N", help="keep the top N documents per topic (ndeval -M)"),
    complete: bool = typer.Option(False, "-c", "--complete",
                                  help="average over every judged topic, not those of the run (ndeval -c)"),
) -> None:
    """alpha-nDCG, ERR-IA, NRBP, MAP-IA, P-IA and strec exactly as ndeval prints them, per topic and amean."""
    sys.stdout.buffer.write(ndeval_table(qrels, run, alpha=alpha, beta=beta, traditional=traditional, depth=depth,
                                         complete=complete))
    sys.stdout.flush()


def register(app) -> None:
    app.command("gdeval")(with_memory_limit(gdeval_cmd))
    app.command("ndeval")(with_memory_limit(ndeval_cmd))
