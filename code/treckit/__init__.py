"""treckit: TREC-format conversion and scoring, with trec_eval 10.0's exact numbers.

The public API is small; heavy modules load on first use so ``import treckit`` stays fast::

    from treckit import read_qrels, read_run, convert_run, write_run, evaluate
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
    "QrelsBuilder": ("builder", "QrelsBuilder"),
    "InputError": ("errors", "InputError"),
}
__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        import importlib
        mod, attr = _LAZY[name]
        return getattr(importlib.import_module(f".{mod}", __name__), attr)
    raise AttributeError(name)
