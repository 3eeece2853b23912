"""Arrow compute functions called by name, without importing ``pyarrow.compute``.

Importing ``pyarrow.compute`` builds a documented Python wrapper for each of its ~300 functions,
about 60 ms: a sixth of a small evaluation.  The few functions the evaluation path needs go
through the function registry directly instead (the call ``pyarrow.compute`` wraps); everything
else in treckit imports ``pyarrow.compute`` where it is used.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pyarrow as pa


@lru_cache(maxsize=None)
def _call_function():
    try:
        from pyarrow._compute import call_function
    except ImportError:                      # a pyarrow that moved it: the public wrapper
        from pyarrow.compute import call_function
    return call_function


def call(name: str, *args, options=None):
    """``pyarrow.compute.<name>(*args)``."""
    return _call_function()(name, list(args), options)


def take(values, indices):
    """``values.take(indices)`` (indices a numpy array or an Arrow array)."""
    if isinstance(indices, np.ndarray):
        indices = pa.array(indices, pa.int64())
    return call("take", values, indices)
