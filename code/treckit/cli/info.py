"""``treckit measures`` and ``treckit detect``."""
from __future__ import annotations

import typer

from .main import app


@app.command("measures")
def measures_cmd() -> None:
    """List every measure: trec_eval names with defaults, then ir_measures-style names."""
    from ..measures import irm
    from ..measures.registry import MEASURES, NICKNAMES
    for m in MEASURES:
        default = ",".join(str(x) for x in m.default)
        print(f"{m.name:<22} {('[' + default + '] ') if default else ''}{m.doc}")
    print("\nnicknames: " + ", ".join(NICKNAMES))
    print(irm.__doc__)


@app.command("detect")
def detect_cmd(path: str, role: str = typer.Option("run", help="run | qrels")) -> None:
    """Say which format a file is read as, and why."""
    from ..formats.detect import detect_qrels, detect_run
    d = detect_qrels(path) if role == "qrels" else detect_run(path)
    print(f"{d.format}\t{d.reason}")
