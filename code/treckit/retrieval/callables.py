"""Retrieval functions named on the command line: ``package.module:function`` (imported) or
``path/to/file.py:function`` (loaded from the file)."""
from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import Callable

from ..errors import InputError


def load_callable(spec: str) -> Callable:
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise InputError(f"{spec!r} does not name a function", fix="write module:function or path/to/file.py:function")
    try:
        if target.endswith(".py"):
            path = Path(target)
            if not path.is_file():
                raise InputError("no such file", path=target, fix="check the path before ':'")
            mod_spec = importlib.util.spec_from_file_location(f"treckit_user_{path.stem}", path)
            module = importlib.util.module_from_spec(mod_spec)
            mod_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(target)
    except ImportError as exc:
        raise InputError(f"cannot import {target!r} ({exc})", fix="check the module name and that it is installed") from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise InputError(f"{target!r} has no function {attr!r}", fix="check the name after ':'")
    return fn
