"""``treckit measures`` and ``treckit detect``."""
from __future__ import annotations

import typer



def measures_cmd() -> None:
    """List every measure: trec_eval names with defaults, then ir_measures-style names."""
    from ..measures import irm
    from ..measures.registry import MEASURES, NICKNAMES
    from ..measures import prefs

    def show(measures) -> None:
        for m in measures:
            default = ",".join(str(x) for x in m.default)
            print(f"{m.name:<22} {('[' + default + '] ') if default else ''}{m.doc}")

    show(MEASURES)
    print("\nnicknames: " + ", ".join(NICKNAMES))
    print("\nwith -R prefs / qrels_prefs (preferences) or -R qrels_jg (judgment groups):")
    show(m for m in prefs.MEASURES if m.name not in prefs.GENERIC)
    print("nicknames: " + ", ".join(prefs.NICKNAMES))
    print(irm.__doc__)


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
