"""What several commands share: the reading options as parameters (:func:`with_reading_options`), ``--debug``
for the commands that call the user's functions (:func:`with_debug_option`), the outputs checked against the
inputs before any work (:func:`refuse_overwriting`), and how choices are listed in help (:func:`one_of`).

Each command's module is imported only when its command runs (treckit.cli.main.COMMANDS, so that ``treckit
--help`` and ``treckit eval`` start fast); the choices and flags its options declare come
from the library's light modules (:mod:`treckit.inputs.options`, :mod:`treckit.inputs.formats`,
:mod:`treckit.ranking`, ...), never re-declared here.
"""
from __future__ import annotations

import enum
import functools
import inspect
import math
import typing
from pathlib import Path
from typing import Literal, Mapping, Optional

from ..compare import CORRECTIONS, TESTS
from ..console.errors import InputError
from ..engines import MISSING  # noqa: F401  (the choices the commands offer, from the library)
from ..inputs import is_irds
from ..inputs.formats import LAYOUTS, QRELS_FORMATS, ROLES, RUN_FORMATS, TSV_THIRD
from ..inputs.options import FLAGS, python_name, reading_from_values
from ..output import FORMATS  # noqa: F401
from ..measures import GAINS, KAPPA_WEIGHTINGS
from ..output.files import refuse_overwriting_inputs
from ..ranking import DUPLICATES, ORDERS
from ..retrieval import FUSION_METHODS, METHODS, NORMS
from ..retrieval.callables import debugging
from ..testsets.load import resolve_test_set

# the typed forms of the library's choices, for the commands' parameters (typer lists and checks them)
QrelsFormat = Literal[QRELS_FORMATS]
RunFormat = Literal[RUN_FORMATS]
Order = Literal[ORDERS]
Duplicates = Literal[DUPLICATES]
Layout = Literal[LAYOUTS]
TsvThird = Literal[TSV_THIRD]
Role = Literal[ROLES]


def choice(name: str, values: tuple[str, ...]) -> type[enum.Enum]:
    """A choice type made from the library's names, for the options typer takes a list of or checks by value
    (each member is named and valued as the library spells it)."""
    return enum.Enum(name, [(v, v) for v in values], type=str)


TestName = choice("TestName", TESTS)
Correction = choice("Correction", CORRECTIONS)
Gain = choice("Gain", GAINS)
Weighting = choice("Weighting", KAPPA_WEIGHTINGS)
Method = choice("Method", METHODS)
FusionMethod = choice("FusionMethod", FUSION_METHODS)
Norm = choice("Norm", NORMS)


def number_in(low: float, high: float):
    """The ``parser=`` of an option that takes a number from ``low`` to ``high``: NaN, an infinity or text is said to
    be what it is (typer's own range check would call NaN "not less than or equal to" the bound)."""
    import typer

    span = f"at least {low:g}" if high == math.inf else f"from {low:g} to {high:g}"

    def parse(text) -> float:
        try:
            value = float(text)
        except (TypeError, ValueError):
            raise typer.BadParameter(f"{str(text)[:40]!r} is not a number (give one {span})") from None
        if not math.isfinite(value):
            raise typer.BadParameter(f"{str(text)[:40]!r} is not a finite number (give one {span})")
        if not low <= value <= high:
            raise typer.BadParameter(f"{value:g} is not {span}")
        return value
    return parse


def one_of(values) -> str:
    return " | ".join(values)


def with_reading_options(extra: Mapping[str, tuple[str, ...]] | None = None):
    """Decorate a typer command: the reading options become its parameters (from
    :data:`treckit.inputs.options.FLAGS`), and the command receives them as one ``reading: RunReading`` keyword.  ``extra`` adds names for a
    flag (``{"format": ("--format",)}``)."""
    import typer

    def deco(func):
        hints = typing.get_type_hints(func)          # resolved in the command's module
        sig = inspect.signature(func)
        params = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in sig.parameters.values()
                  if p.name != "reading"]
        added = []
        for f in FLAGS:
            names = (f.flag,) + tuple((extra or {}).get(f.field, ()))
            help_ = f.help
            if f.kind is bool:
                added.append(inspect.Parameter(python_name(f), inspect.Parameter.KEYWORD_ONLY, annotation=bool,
                                               default=typer.Option(False, *names, help=help_)))
                continue
            annotation = Optional[int] if f.kind is int else Optional[str]
            if f.default is not None:
                help_ += f" (default: {f.default})"
            added.append(inspect.Parameter(python_name(f), inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
                                           default=typer.Option(None, *names, help=help_, show_default=False)))
        added.append(inspect.Parameter("break_ties", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
                                       default=typer.Option(False, "--break-ties", help="the same as --ties break")))
        names = {p.name for p in added}

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            values = {k: kwargs.pop(k) for k in list(kwargs) if k in names}
            return func(*args, reading=reading_from_values(values), **kwargs)

        wrapper.__signature__ = sig.replace(parameters=params + added)
        wrapper.__annotations__ = {p.name: p.annotation for p in params + added}
        del wrapper.__wrapped__            # typer must see the new signature, not the original's
        return wrapper
    return deco



def with_debug_option(func):
    """Decorate a typer command (the commands that call the user's functions: ``testset eval --function``,
    ``system eval``, ``compare --config``): it gains ``--debug``, and an exception a function raises is then shown
    with its message and traceback (:func:`treckit.retrieval.callables.debugging`; by default only its type and
    where it was raised, since its message may hold secrets)."""
    import typer

    hints = typing.get_type_hints(func)          # resolved in the command's module
    sig = inspect.signature(func)
    params = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in sig.parameters.values()]
    debug = inspect.Parameter("debug", inspect.Parameter.KEYWORD_ONLY, annotation=bool, default=typer.Option(
        False, "--debug", help="show the message and traceback of an exception raised by a function of yours "
                               "(it may hold secrets; hidden by default; also TRECKIT_DEBUG=1)"))

    @functools.wraps(func)
    def wrapper(*args, debug: bool = False, **kwargs):
        with debugging(debug):
            return func(*args, **kwargs)

    wrapper.__signature__ = sig.replace(parameters=params + [debug])
    wrapper.__annotations__ = {p.name: p.annotation for p in params + [debug]}
    del wrapper.__wrapped__            # typer must see the new signature, not the original's
    return wrapper


def refuse_overwriting(inputs, outputs) -> None:
    """No output may be one of the inputs (test sets named by name included): checked before any work."""
    def path_of(x):
        if x is None or str(x) == "-" or is_irds(x) or Path(str(x)).exists():
            return x
        try:
            return resolve_test_set(x)
        except InputError:                # no such file nor test set: the command itself says so
            return None
    refuse_overwriting_inputs([path_of(x) for x in inputs], outputs)
