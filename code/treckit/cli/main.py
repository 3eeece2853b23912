"""Entry point: builds the app and turns treckit's errors into messages and exit codes.

``treckit eval`` is dispatched before typer is imported: it parses trec_eval's flags itself,
and a drop-in trec_eval should start fast.
"""
from __future__ import annotations

import functools
import sys
from functools import lru_cache

from ..console.errors import EXIT_BAD_INPUT, EXIT_INTERRUPTED, Interrupted, OutputClosed

HELP_OPTIONS = ["-h", "--help"]


def version_text() -> str:
    from .. import __version__
    return f"treckit {__version__} (trec_eval 10.0 measures and output)"


def _guarded(command):
    """A command as typer calls it, with Ctrl-C and a closed stdout turned into treckit's own errors
    (typer would turn Ctrl-C into a silent exit code and a closed pipe into exit 1)."""
    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except KeyboardInterrupt:
            raise Interrupted() from None
        except BrokenPipeError as exc:
            if exc.filename is not None:
                raise
            raise OutputClosed() from None
    return wrapper


_VALUE_NAMES = {int: "N", float: "NUMBER", str: "TEXT", bool: None}


def _value_name(param, ctx=None) -> str | None:
    """How an option's value is shown in help: its metavar, its choices (a|b|c), or a plain word
    (N, NUMBER, TEXT, PATH); nothing for flags (typer would show Python types: <bool>, <list[Path]>)."""
    if getattr(param, "metavar", None) is not None:
        # an argument's metavar is already its name in the help's first column
        return None if getattr(param, "param_type_name", "") == "argument" else param.metavar
    if getattr(param, "is_flag", False):
        return None
    desc = getattr(param, "type_descriptor", None)
    if desc is None:
        return None
    if desc.is_choice:
        return "|".join(str(getattr(c, "value", c)) for c in desc.choices)
    import types
    import typing
    from pathlib import PurePath

    annotation = desc.annotation
    while typing.get_origin(annotation) in (list, typing.Union, types.UnionType):
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
    if desc.is_path or (isinstance(annotation, type) and issubclass(annotation, PurePath)):
        return "PATH"
    return _VALUE_NAMES.get(annotation, "TEXT")


def _plain_value_names() -> None:
    """Help shows value names a user reads (see :func:`_value_name`), in every typer version that
    would otherwise print Python type names."""
    from typer import core
    for cls in (getattr(core, "TyperOption", None), getattr(core, "TyperArgument", None)):
        if cls is not None and hasattr(cls, "display_type"):
            cls.display_type = _value_name


@lru_cache(maxsize=None)
def get_app():
    """The typer app with every command registered (command modules register on import)."""
    import typer

    _plain_value_names()
    app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                      context_settings={"help_option_names": HELP_OPTIONS},
                      help="TREC-format conversion and scoring with trec_eval 10.0's exact numbers.")

    def show_version(value: bool) -> None:
        if value:
            print(version_text())
            raise typer.Exit()

    @app.callback()
    def root(version: bool = typer.Option(False, "--version", "-V", callback=show_version, is_eager=True,
                                          help="Show treckit's version and exit.")) -> None:
        """TREC-format conversion and scoring with trec_eval 10.0's exact numbers."""

    from . import compare, convert, info, reference_tools, retrieval, service, testsets
    convert.register(app)
    service.register(app)
    compare.register(app)
    testsets.register(app)
    retrieval.register(app)
    info.register(app)     # eval is listed here too; main() dispatches it before typer loads
    reference_tools.register(app)
    groups = [g.typer_instance for g in app.registered_groups]          # testset, cache, system
    for command in [c for t in [app, *groups] for c in t.registered_commands]:
        command.callback = _guarded(command.callback)
    return app


def _dispatch(argv: list[str]) -> int:
    if argv[:1] == ["eval"]:
        from ..console.process import defer_pandas
        from .evaluate import eval_main
        defer_pandas()
        eval_main(argv[1:])
        return 0
    try:
        if argv[:2] == ["qrels", "verify"]:          # `treckit qrels verify`: the qrels command's sub-action
            argv = ["qrels-verify"] + argv[2:]
        rv = get_app()(args=argv, standalone_mode=False)
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
        raise
    # typer returns an exit code instead of raising when it ends a command itself (Ctrl-C while
    # parsing: 130); our commands return None
    if isinstance(rv, int) and not isinstance(rv, bool):
        if rv == EXIT_INTERRUPTED:
            raise Interrupted()
        return rv
    return 0


def main(argv: list[str] | None = None) -> int:
    from ..console import spelling
    from ..console.process import exit_code_of, keep_freed_memory, native_library_defaults

    argv = sys.argv[1:] if argv is None else list(argv)
    native_library_defaults()                   # before numpy and pyarrow are first imported
    keep_freed_memory()
    code = 0

    def body() -> None:
        nonlocal code
        code = _dispatch(argv)
    with spelling.running(spelling.cli_command(argv)):     # messages name the fixes this command takes
        return exit_code_of(body) or code


def run() -> None:
    from ..console.process import exit_now
    exit_now(main())


if __name__ == "__main__":
    run()
