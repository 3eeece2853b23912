"""``--debug``, on the commands that call the user's functions (``testset eval --function``, ``system eval``,
``compare --config``): an exception a function raises is then shown with its message and traceback
(:mod:`treckit.retrieval.callables`; by default only its type and where it was raised, since its message
may hold secrets)."""
from __future__ import annotations

import functools
import inspect
import typing


def with_debug_option(func):
    """Decorate a typer command: it gains ``--debug``, and runs with :func:`treckit.retrieval.callables.debugging`."""
    import typer

    hints = typing.get_type_hints(func)          # resolved in the command's module
    sig = inspect.signature(func)
    params = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in sig.parameters.values()]
    debug = inspect.Parameter("debug", inspect.Parameter.KEYWORD_ONLY, annotation=bool, default=typer.Option(
        False, "--debug", help="show the message and traceback of an exception raised by a function of yours "
                               "(it may hold secrets; hidden by default; also TRECKIT_DEBUG=1)"))

    @functools.wraps(func)
    def wrapper(*args, debug: bool = False, **kwargs):
        from ..retrieval.callables import debugging
        with debugging(debug):
            return func(*args, **kwargs)

    wrapper.__signature__ = sig.replace(parameters=params + [debug])
    wrapper.__annotations__ = {p.name: p.annotation for p in params + [debug]}
    del wrapper.__wrapped__            # typer must see the new signature, not the original's
    return wrapper
