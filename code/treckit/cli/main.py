"""Entry point: builds the app and turns treckit's errors into messages and exit codes.

``treckit eval`` is dispatched before typer is imported: it parses trec_eval's flags itself,
and a drop-in trec_eval should start fast.
"""
from __future__ import annotations

import sys
from functools import lru_cache

from ..errors import EXIT_BAD_INPUT, EXIT_RUNTIME, TreckitError


@lru_cache(maxsize=None)
def get_app():
    """The typer app with every command registered (command modules register on import)."""
    import typer

    app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                      help="TREC-format conversion and scoring with trec_eval 10.0's exact numbers.")

    from . import compare, convert, info, retrieval, service, testsets
    convert.register(app)
    service.register(app)
    compare.register(app)
    testsets.register(app)
    retrieval.register(app)
    info.register(app)     # eval is listed here too; main() dispatches it before typer loads
    return app


def main(argv: list[str] | None = None) -> int:
    from ..startup import defer_pandas, keep_freed_memory

    argv = sys.argv[1:] if argv is None else list(argv)
    keep_freed_memory()
    try:
        if argv[:1] == ["eval"]:
            from .evaluate import eval_main
            defer_pandas()
            eval_main(argv[1:])
            return 0
        if argv[:2] == ["qrels", "verify"]:          # `treckit qrels verify`: the qrels command's sub-action
            argv = ["qrels-verify"] + argv[2:]
        rc = get_app()(args=argv, standalone_mode=False)
        if isinstance(rc, int):             # click returns a command's typer.Exit code here
            return rc
    except TreckitError as exc:
        print(f"treckit: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("treckit: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        # typer carries its own copy of click: recognise its exceptions by what they offer
        name = type(exc).__name__
        if name == "Exit":
            return exc.exit_code
        if hasattr(exc, "show") and hasattr(exc, "exit_code"):      # usage errors
            exc.show()
            return EXIT_BAD_INPUT
        if name == "Abort":
            return 1
        print(f"treckit: internal error: {exc!r}", file=sys.stderr)
        return EXIT_RUNTIME
    return 0


def run() -> None:
    from ..startup import exit_now
    exit_now(main())


if __name__ == "__main__":
    run()
