"""Entry point: builds the app and turns treckit's errors into messages and exit codes.

A command's module is loaded only when that command runs (:data:`COMMANDS`, :func:`load_commands`):
``treckit --help`` lists the commands from the table without importing them, and ``treckit compare -h``
imports the compare command's module and what it imports, nothing else.  ``treckit eval`` is dispatched
before typer is imported: it parses trec_eval's flags itself, and a drop-in trec_eval should start fast.
"""
from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import MutableMapping
from functools import lru_cache

from .. import __version__
from ..console import spelling
from ..console.errors import EXIT_BAD_INPUT, EXIT_INTERRUPTED, InputError, Interrupted, OutputClosed
from ..dependencies import install_hint, missing_extra
from ..console.process import exit_code_of, exit_now, prepare_process

HELP_OPTIONS = ["-h", "--help"]

# Every command, in the order `treckit --help` lists them: {name: (its module in treckit.cli, the first paragraph
# of its help as that list shows it)}.  The module's register(app) declares the command; tests/cli/test_startup.py
# checks that this table lists exactly what the modules register, with their help.
COMMANDS: dict[str, tuple[str, str]] = {
    "qrels": ("convert", "Ground truth -> TREC qrels."),
    "run": ("convert", "A run in any supported format -> canonical TREC run that trec_eval reads in the intended "
                       "order."),
    "serve": ("service", "Serve POST /v1/evaluate, POST /v1/rq, GET /v1/health and GET /metrics (set "
                         "TRECKIT_API_TOKEN to require a\nbearer token)."),
    "alert-rules": ("alerts", "Print Prometheus alert rules for the quality gauges (check them with promtool check "
                               "rules)."),
    "grafana-dashboard": ("alerts", "Print a Grafana dashboard (JSON, to import) of the service's quality gauges, "
                                    "requests and workers."),
    "compare": ("compare", "Compare systems: per-query deltas, win/tie/loss, the paired t-test (Holm across measures; "
                           "the raw p on a\ntest set's A/B), reports."),
    "report": ("report", "Draw a self-contained HTML report from results files written earlier (several of one test "
                         "set: a trend)."),
    "rq": ("testsets", "The RQ acceptance metric: MRR@k over labelled queries, pass when above the threshold; exit 1 "
                       "on\nFAIL (0 on PASS, and when no query is labelled: RQ is then null)."),
    "gate": ("testsets", "Fail (exit 1) when a metric dropped more than allowed against the baseline."),
    "qrels-verify": ("testsets", "Check that every expected topic is judged (and, with --no-extras, no other); exit 1 "
                                 "with the list."),
    "retrieve": ("retrieval", "Retrieve with a baseline over a corpus and write a TREC run (trec_eval-safe ids)."),
    "fuse": ("retrieval", "Fuse runs: RRF, weighted, CombSUM, CombMNZ or CombMAX, with trec_eval's tie order."),
    "eval": ("info", "Evaluate runs like trec_eval 10.0: same flags, byte-identical output (treckit eval -h)."),
    "measures": ("info", "List every measure: its trec_eval name with default parameters, its ir_measures names, its "
                         "meaning and the\nreference tool whose numbers it gives."),
    "detect": ("info", "Say which format a file is read as, and why."),
    "gdeval": ("reference_tools", "nDCG@K and ERR@K exactly as gdeval.pl 1.2a prints them (exponential gain, its tie "
                                  "order), per topic."),
    "ndeval": ("reference_tools", "alpha-nDCG, ERR-IA, NRBP, MAP-IA, P-IA and strec exactly as ndeval prints them, "
                                  "per topic and amean."),
    "testset": ("testsets", "YAML test sets: validate, export, import, evaluate, split, diff, kappa, refresh."),
    "cache": ("testsets", "The cache of evaluations."),
    "system": ("retrieval", "Systems described by YAML configs."),
}
EVAL_MODULE = "evaluate"        # `treckit eval`'s own parser, run before typer loads


def version_text() -> str:
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


def command_module(module: str):
    """``treckit.cli.<module>``; when it needs an extra that is not installed (the service's FastAPI), an error
    naming the extra and the command that installs it."""
    try:
        return importlib.import_module(f"{__package__}.{module}")
    except ImportError as exc:
        extra = missing_extra(exc)
        if extra is None:
            raise
        raise InputError(f"this command needs treckit's {extra} extra ({exc.name} is missing)",
                         fix=install_hint(extra)) from None


@lru_cache(maxsize=None)
def load_commands(module: str) -> dict:
    """{name: click command} of the commands ``treckit.cli.<module>`` registers, wrapped by :func:`_guarded`."""
    import typer

    _plain_value_names()
    app = typer.Typer(add_completion=False)
    command_module(module).register(app)
    groups = [g.typer_instance for g in app.registered_groups]          # testset, cache, system
    for command in [c for t in [app, *groups] for c in t.registered_commands]:
        command.callback = _guarded(command.callback)
    return dict(typer.main.get_group(app).commands)


class _Commands(MutableMapping):
    """The root group's commands: the names of :data:`COMMANDS`, each loaded with its module on first use."""

    def __init__(self) -> None:
        self.loaded: dict = {}

    def __getitem__(self, name: str):
        if name not in self.loaded:
            if name not in COMMANDS:
                raise KeyError(name)
            self.loaded[name] = load_commands(COMMANDS[name][0])[name]
        return self.loaded[name]

    def __setitem__(self, name: str, command) -> None:
        self.loaded[name] = command

    def __delitem__(self, name: str) -> None:
        del self.loaded[name]

    def __iter__(self):
        return iter(list(COMMANDS) + [n for n in self.loaded if n not in COMMANDS])

    def __len__(self) -> int:
        return len(list(iter(self)))


@lru_cache(maxsize=None)
def _lazy_group():
    """typer's group class, its commands loaded when one runs; help lists them from :data:`COMMANDS`."""
    import typer.core

    class LazyGroup(typer.core.TyperGroup):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self.commands = _Commands()
            self.listing = False

        def list_commands(self, ctx) -> list[str]:
            return list(self.commands)

        def get_command(self, ctx, name: str):
            if self.listing and name not in self.commands.loaded:
                if name not in COMMANDS:
                    return None
                return typer.core.TyperCommand(name, help=COMMANDS[name][1])
            return self.commands.get(name)

        def format_help(self, ctx, formatter) -> None:
            self.listing = True
            try:
                super().format_help(ctx, formatter)
            finally:
                self.listing = False

    return LazyGroup


@lru_cache(maxsize=None)
def get_app():
    """The typer app: every command of :data:`COMMANDS`, its module imported when the command runs."""
    import typer

    _plain_value_names()
    app = typer.Typer(cls=_lazy_group(), add_completion=True, no_args_is_help=True, pretty_exceptions_enable=False,
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

    return app


def _dispatch(argv: list[str]) -> int:
    if argv[:1] == ["eval"]:
        command_module(EVAL_MODULE).eval_main(argv[1:])
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
    argv = sys.argv[1:] if argv is None else list(argv)
    prepare_process()                           # before numpy and pyarrow are first imported
    code = 0

    def body() -> None:
        nonlocal code
        code = _dispatch(argv)
    with spelling.running(spelling.cli_command(argv)):     # messages name the fixes this command takes
        return exit_code_of(body) or code


def run() -> None:
    exit_now(main())


if __name__ == "__main__":
    run()
