"""treckit: TREC-format conversion and scoring, with trec_eval 10.0's exact numbers.

The public API is :mod:`treckit.api`, named here and loaded on first use so ``import treckit`` stays fast::

    from treckit import read_qrels, read_run, convert_run, write_run, evaluate
"""
from __future__ import annotations

__version__ = "0.1.0"

_PUBLIC = ("read_qrels", "read_run", "write_qrels", "write_run", "convert_run", "evaluate", "Qrels", "Run",
           "InputError", "InputWarning", "RunReading", "EvalOptions")
_LAZY = {name: ("api", name) for name in _PUBLIC}       # treckit.api is the public API; loaded on first use
__all__ = sorted(_LAZY)


def __dir__() -> list[str]:
    """The public API (loaded lazily, so not yet in the module's namespace) and the module's own names."""
    return sorted(set(_LAZY) | {n for n in globals() if n.startswith("__")})


def __getattr__(name: str):
    if name in _LAZY:
        import importlib
        mod, attr = _LAZY[name]
        return getattr(importlib.import_module(f".{mod}", __name__), attr)
    raise AttributeError(name)
