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


def code_files(fn) -> list[str] | None:
    """The files holding ``fn``'s code: for each function met through wrappers (``__wrapped__``), partials,
    bound methods and callable objects (their class), the file of its code and of the module defining
    it; None when one of them is not in a file (a built-in, code typed at a prompt or in a notebook)."""
    import functools
    import inspect
    import os

    files: list[str] = []
    todo, seen = [fn], set()
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, functools.partial):
            todo.append(obj.func)
            continue
        if inspect.ismethod(obj):
            todo.append(obj.__func__)
            continue
        wrapped = getattr(obj, "__wrapped__", None)
        if wrapped is not None and wrapped is not obj:
            todo.append(wrapped)
        if inspect.isfunction(obj):
            files.append(obj.__code__.co_filename)
            module_file = obj.__globals__.get("__file__")
            if module_file:
                files.append(module_file)
        elif inspect.isclass(obj):
            try:
                files.append(inspect.getfile(obj))
            except (TypeError, OSError):
                return None
            call = obj.__dict__.get("__call__")
            if call is not None:
                todo.append(call)
        elif callable(obj) and not inspect.isbuiltin(obj) and not inspect.isroutine(obj):
            todo.append(type(obj))                  # a callable object: its class and its __call__
            call = getattr(type(obj), "__call__", None)
            if inspect.isfunction(call):
                todo.append(call)
        else:
            return None
    if not files or not all(os.path.isfile(f) for f in files):
        return None
    return list(dict.fromkeys(files))
