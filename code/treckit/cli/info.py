"""``treckit measures``, ``treckit detect`` and the ``eval`` entry in the command list."""
from __future__ import annotations

import re
import sys

import typer

from ..options import ROLES, Role


def _irm_rows(doc: str) -> list[tuple[str, str]]:
    """The rows of the name/meaning table in :mod:`treckit.measures.irm`'s docstring (its one listing)."""
    lines = doc.splitlines()
    rules = [i for i, ln in enumerate(lines) if ln.startswith("====")]
    rows = []
    for ln in lines[rules[1] + 1: rules[2]] if len(rules) >= 3 else []:
        name, meaning = (re.split(r"\s{2,}", ln.strip(), maxsplit=1) + [""])[:2]
        rows.append((name.replace("``", ""), meaning))
    return rows


def measures_cmd() -> None:
    """List every measure: trec_eval names with defaults, then ir_measures-style names."""
    from ..measures import irm
    from ..measures.registry import MEASURES, NICKNAMES
    if not sys.stdout.isatty():                 # piped or redirected: plain lines, easy to grep
        for m in MEASURES:
            default = ",".join(str(x) for x in m.default)
            print(f"{m.name:<22} {('[' + default + '] ') if default else ''}{m.doc}")
        print("\nnicknames: " + ", ".join(NICKNAMES))
        print(irm.__doc__)
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text              # cells as plain text: '[@k]' is not markup

    console = Console()
    trec = Table(title="trec_eval measures (-m NAME[.PARAMS])", title_justify="left", show_lines=False)
    trec.add_column("name", style="bold", no_wrap=True)
    trec.add_column("defaults", max_width=24, overflow="fold")
    trec.add_column("meaning")
    for m in MEASURES:
        trec.add_row(Text(m.name), Text(",".join(str(x) for x in m.default)), Text(m.doc))
    console.print(trec)
    console.print(Text("nicknames: ", style="bold") + Text(", ".join(NICKNAMES) + "\n"))
    names = Table(title="ir_measures names (-m NAME)", title_justify="left")
    names.add_column("name", style="bold")
    names.add_column("meaning")
    for name, meaning in _irm_rows(irm.__doc__):
        names.add_row(Text(name), Text(meaning))
    console.print(names)


def detect_cmd(path: str = typer.Argument(..., metavar="FILE", help="the file to look at ('-' = stdin)"),
               role: Role = typer.Option("run", metavar="ROLE", help=f"read it as a {' or '.join(ROLES)}")) -> None:
    """Say which format a file is read as, and why."""
    from ..formats.detect import detect_qrels, detect_run
    from ..startup import defer_pandas
    defer_pandas()
    d = detect_qrels(path) if role == "qrels" else detect_run(path)
    print(f"{d.format}\t{d.reason}")


def eval_cmd(ctx: typer.Context) -> None:
    """Evaluate runs like trec_eval 10.0: same flags, byte-identical output (treckit eval -h)."""
    from .evaluate import eval_main
    eval_main(list(ctx.args))


def register(app) -> None:
    app.command("eval", context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
                add_help_option=False)(eval_cmd)
    app.command("measures")(measures_cmd)
    app.command("detect")(detect_cmd)
