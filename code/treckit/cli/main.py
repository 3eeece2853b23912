"""Entry point: builds the app and turns treckit's errors into messages and exit codes."""
from __future__ import annotations

import sys

import typer

from ..errors import EXIT_RUNTIME, TreckitError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="TREC-format conversion and scoring with trec_eval 10.0's exact numbers.")


def _register() -> None:
    from . import convert, evaluate, info  # noqa: F401  (commands register themselves on import)


def main(argv: list[str] | None = None) -> int:
    _register()
    try:
        app(args=argv, standalone_mode=False)
    except TreckitError as exc:
        print(f"treckit: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except typer.Exit as exc:
        return exc.exit_code
    except SystemExit as exc:
        return int(exc.code or 0)
    except KeyboardInterrupt:
        print("treckit: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # click usage errors and the like
        import click
        if isinstance(exc, click.ClickException):
            exc.show()
            return 2
        if isinstance(exc, click.exceptions.Abort):
            return 1
        print(f"treckit: internal error: {exc!r}", file=sys.stderr)
        return EXIT_RUNTIME
    return 0


def run() -> None:
    sys.exit(main())
