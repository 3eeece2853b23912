"""``treckit measures`` and ``treckit detect``."""
from __future__ import annotations

import typer



def measures_cmd() -> None:
    """List every measure: its trec_eval name with default parameters, its ir_measures names, its meaning."""
    from ..measures.registry import NICKNAMES, describe
    print(f"{'trec_eval name':<28} {'ir_measures names':<26} meaning")
    for trec, irm, doc in describe():
        print(f"{trec:<28} {irm or '-':<26} {doc}")
    print("\nnicknames: " + ", ".join(NICKNAMES))
    print("ir_measures parameters: rel=N (default -l), judged_only=True, nDCG(dcg='exp-log2'), nDCG(gains={0:0,1:1}), "
          "SetF(beta=0.5), IPrec@0.5")


def detect_cmd(path: str, role: str = typer.Option("run", help="run | qrels")) -> None:
    """Say which format a file is read as, and why."""
    from ..formats.detect import detect_qrels, detect_run
    from ..startup import defer_pandas
    defer_pandas()
    d = detect_qrels(path) if role == "qrels" else detect_run(path)
    print(f"{d.format}\t{d.reason}")


def eval_cmd(ctx: typer.Context) -> None:
    """Evaluate runs like trec_eval 10.0: same flags, byte-identical output (treckit eval --help)."""
    from .evaluate import eval_main
    eval_main(list(ctx.args))


def register(app) -> None:
    app.command("eval", context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
                add_help_option=False)(eval_cmd)
    app.command("measures")(measures_cmd)
    app.command("detect")(detect_cmd)
