"""treckit: TREC-format conversion and scoring, with trec_eval 10.0's exact numbers.

The public API is small; heavy modules load on first use so ``import treckit`` stays fast::

    from treckit import read_qrels, read_run, convert_run, write_run, evaluate

``read_run`` and ``evaluate`` read runs with :class:`RunReading`, the reader configuration every
command shares; ``evaluate`` also takes DataFrames, dicts, ranx and ir_measures objects
(:mod:`treckit.inputs`) and ``irds:<dataset-id>`` qrels.  Warnings are :class:`InputWarning`.
"""
from __future__ import annotations

__version__ = "0.1.0"

_LAZY = {
    "read_qrels": ("api", "read_qrels"),
    "read_run": ("api", "read_run"),
    "write_qrels": ("api", "write_qrels"),
    "write_run": ("api", "write_run"),
    "convert_run": ("convert", "convert_run"),
    "evaluate": ("evaluation", "evaluate"),
    "Qrels": ("model", "Qrels"),
    "Run": ("model", "Run"),
    "InputError": ("errors", "InputError"),
    "InputWarning": ("reading", "InputWarning"),
    "RunReading": ("reading", "RunReading"),
    "EvalOptions": ("evaluation", "EvalOptions"),
}
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
