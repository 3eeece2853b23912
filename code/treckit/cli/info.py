"""``treckit measures``, ``treckit detect`` and the ``eval`` entry in the command list."""
from __future__ import annotations

import sys

from typing import List, Optional

import typer

from ..console.errors import InputError
from ..engines.budget import DEFAULT_MEMORY, MemoryLimit
from ..engines.tie_aware import path_sources
from ..inputs.formats.detect import detect_qrels, detect_run
from ..inputs.options import RunReading
from ..measures.registry import NICKNAMES, QRELS, describe, nickname_formats
from .common import ROLES, Role, with_memory_limit
from .completion import measure_names
from .evaluate import eval_main


def measures_cmd() -> None:
    """List every measure: its trec_eval name with default parameters, its ir_measures names, its meaning and the
    reference tool whose numbers it gives."""
    rows = describe()
    with_qrels = [n for n in NICKNAMES if QRELS in nickname_formats(n)]
    nicknames = ", ".join(with_qrels) + "; with -R: " + ", ".join(n for n in NICKNAMES if n not in with_qrels)
    params = ("ir_measures parameters: rel=N (default -l), judged_only=True, nDCG(dcg='exp-log2'), "
              "nDCG(gains={0:0,1:1}), SetF(beta=0.5), IPrec@0.5")
    if not sys.stdout.isatty():                 # piped or redirected: plain lines, easy to grep
        cells = [("trec_eval name", "ir_measures names", "reference", "meaning")] + [
            (t, irm or "-", ref, doc) for t, irm, doc, ref in rows]
        first, second, third = (max(len(c[i]) for c in cells) for i in (0, 1, 2))   # the longest sets each column
        for trec, irm, ref, doc in cells:
            print(f"{trec:<{first}}  {irm:<{second}}  {ref:<{third}}  {doc}")
        print("\nnicknames: " + nicknames)
        print(params)
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text              # cells as plain text: '[@k]' is not markup

    console = Console()
    table = Table(title="measures (-m NAME)", title_justify="left")
    table.add_column("trec_eval name", style="bold", no_wrap=True)
    table.add_column("ir_measures names", max_width=28, overflow="fold")
    table.add_column("reference", no_wrap=True)
    table.add_column("meaning")
    for trec, irm, doc, ref in rows:
        table.add_row(Text(trec), Text(irm or "-"), Text(ref), Text(doc))
    console.print(table)
    console.print(Text("nicknames: ", style="bold") + Text(nicknames))
    console.print(Text(params))


def detect_cmd(path: str = typer.Argument(..., metavar="FILE", help="the file to look at ('-' = stdin)"),
               role: Role = typer.Option("run", metavar="ROLE", help=f"read it as a {' or '.join(ROLES)}"),
               ties: bool = typer.Option(False, "--ties", help="a run: also say how many of its lines tie, how many "
                                         "score digits it carries, and whether its ties look like rounding or "
                                         "float32 (docs/ties.md)"),
               memory_limit: MemoryLimit = DEFAULT_MEMORY) -> None:
    """Say which format a file is read as, and why."""
    if ties and (role == "qrels" or path == "-"):
        raise InputError("--ties looks at a run file's scores", fix="give a run file (not stdin), without --role qrels")
    d = detect_qrels(path) if role == "qrels" else detect_run(path)
    print(f"{d.format}\t{d.reason}")
    if ties:
        print(f"ties\t{path_sources(path, RunReading(), memory_limit=memory_limit).describe()}")


def eval_cmd(ctx: typer.Context,
             measure: Optional[List[str]] = typer.Option(None, "-m", "--measure", hidden=True,
                                                         autocompletion=measure_names)) -> None:
    """Evaluate runs like trec_eval 10.0: same flags, byte-identical output (treckit eval -h)."""
    # `treckit eval` is run by its own parser before typer loads (treckit.cli.main); -m is declared here for the
    # shell's completion, and handed back to that parser should typer ever run the command
    eval_main([a for m in measure or [] for a in ("-m", m)] + list(ctx.args))


def register(app) -> None:
    app.command("eval", context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
                add_help_option=False)(eval_cmd)
    app.command("measures")(measures_cmd)
    app.command("detect")(with_memory_limit(detect_cmd))
