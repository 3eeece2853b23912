"""Functions of the user's: ``package.module:function`` (imported) or ``path/to/file.py:function``
(loaded from the file), named on the command line or in a system config, and how they are called.

A function is the user's code, and whatever it does is checked and reported as bad input (exit 2):
an exception it raises (``sys.exit()`` included: a function must answer, not end the program), an
answer that is not a ranking, a signature that does not take what treckit passes.  A message names the
function, the query, the exception's type and the line of the user's code it came from, never the
exception's text, which may carry a password or a token from the user's environment: that text (and the
traceback) is shown only when debugging is asked for, with ``--debug`` on the commands that call functions
or ``TRECKIT_DEBUG=1`` in the environment.  Ctrl-C still interrupts (exit 130).
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import os
import sysconfig
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, TypeVar

from ..console.errors import InputError, TreckitError, shown
from ..inputs.bounded import has_surrogate
from ..inputs.values import score_value

T = TypeVar("T")

DEBUG_ENV = "TRECKIT_DEBUG"
_debug = False           # set by --debug for the command's duration (threads calling functions see it too)

HIDDEN_TEXT_FIX = (f"correct the function; its exception's message is not shown, as it may hold secrets "
                   f"({DEBUG_ENV}=1 in the environment shows it, and the traceback)")


@contextlib.contextmanager
def debugging(on: bool) -> Iterator[None]:
    """Within the block (``on``), errors of user code show the exception's text and traceback."""
    global _debug
    before = _debug
    _debug = before or on
    try:
        yield
    finally:
        _debug = before


def debug_on() -> bool:
    return _debug or os.environ.get(DEBUG_ENV, "") not in ("", "0")


def load_callable(spec: str, role: str = "retrieval function", arguments: int | None = None) -> Callable:
    """The function ``spec`` names; ``arguments``: how many positional arguments treckit will pass it
    (checked now, when its signature says)."""
    if not isinstance(spec, str):
        raise InputError(f"a {role} is named by text (module:function), found {type(spec).__name__}",
                         fix="write module:function or path/to/file.py:function")
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
    except TreckitError:
        raise
    except SyntaxError as exc:               # the compiler's own words, never the source line
        raise InputError(f"the {role} {spec} cannot be loaded: {type(exc).__name__}: {exc.msg}",
                         path=exc.filename, line=exc.lineno, fix="correct the Python file") from None
    except ModuleNotFoundError as exc:
        if exc.name is not None and (target == exc.name or target.startswith(exc.name + ".")):
            raise InputError(f"cannot import {target!r}: no module named {exc.name!r}",
                             fix="check the module name and that it is installed (or on PYTHONPATH)") from None
        raise user_code_error(exc, role, spec, "while it was imported") from None
    except (Exception, SystemExit) as exc:    # noqa: BLE001 -- the module's own code ran and failed
        raise user_code_error(exc, role, spec, "while it was imported") from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise InputError(f"{target!r} has no function {attr!r}", fix="check the name after ':'")
    if arguments is not None:
        check_arguments(fn, arguments, role, spec)
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
    return list(dict.fromkeys(files + _neighbour_modules(files)))


def _neighbour_modules(files: list[str]) -> list[str]:
    """The files of the loaded modules in the folders of ``files`` and below them (the user's own code a
    function imports, such as a helper module beside it), leaving out the installed libraries and the
    standard library unless ``files`` are there themselves."""
    import os
    import sys
    import sysconfig
    libraries = {os.path.realpath(sysconfig.get_paths()[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    folders = {os.path.dirname(os.path.realpath(f)) for f in files}
    out = []
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not path.endswith(".py"):
            continue
        real = os.path.realpath(path)
        for folder in folders:
            if real.startswith(folder + os.sep) and not any(real.startswith(lib + os.sep) and not folder.startswith(lib)
                                                            for lib in libraries):
                out.append(path)
                break
    return sorted(out)


def check_arguments(fn: Callable, n: int, role: str, name: str | None = None) -> None:
    """An error now, when ``fn``'s signature says it cannot be called with ``n`` positional arguments
    (functions whose signature Python cannot tell are left to the call)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    try:
        sig.bind(*range(n))
    except TypeError:
        what = {1: "one argument (the query text, or with a batch function the list of query texts)",
                2: "two arguments (the query text and the candidates, a list of (doc_id, score))"}.get(n, f"{n} arguments")
        raise InputError(f"the {role} {name or function_name(fn)} takes {sig}; treckit calls it with {what}",
                         fix="give the function the signature treckit calls it with") from None


def function_name(fn: Any) -> str:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return f"{name}()"


def call(fn: Callable, role: str, context: str, work: Callable[[], T]) -> T:
    """``work()`` (which calls ``fn``, and takes its answer apart), with whatever the user's code raises
    reported as :func:`user_code_error`.  treckit's own errors pass as they are (an answer that is not a
    ranking; a function calling treckit); so does Ctrl-C."""
    try:
        return work()
    except TreckitError:
        raise
    except (Exception, SystemExit) as exc:    # noqa: BLE001 -- any failure of the user's code
        raise user_code_error(exc, role, function_name(fn), context, fn) from None


def user_code_error(exc: BaseException, role: str, name: str, context: str, fn: Any = None) -> InputError:
    """``exc``, raised by the user's code, as an error naming the function, the query (``context``), the
    exception's type and where it was raised; its text only when debugging."""
    path, line = _where(exc, fn)
    if isinstance(exc, SystemExit):
        code = exc.code if exc.code is None or isinstance(exc.code, int) else "..."
        what = f"called sys.exit({code}) {context}: a function must return its answer, not end the program"
    else:
        what = f"raised {type(exc).__name__} {context}"
    message = f"the {role} {name} {what}"
    if debug_on():
        shown = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip()
        message += "\n  debug (the exception as raised):\n    " + shown.replace("\n", "\n    ")
    return InputError(message, path=path, line=line, fix=HIDDEN_TEXT_FIX if not debug_on() else "correct the function")


def _where(exc: BaseException, fn: Any) -> tuple[str | None, int | None]:
    """The file and line of the innermost frame of the traceback in the user's code (not treckit's, the
    standard library's or an installed package's, unless it is the function's own package); else where
    the function is defined."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return exc.filename, exc.lineno
    own = _own_folder(fn)
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if _is_users(frame.filename, own):
            return frame.filename, frame.lineno
    code = getattr(inspect.unwrap(fn), "__code__", None) if fn is not None else None
    if code is not None:
        return code.co_filename, code.co_firstlineno
    return None, None


_TRECKIT = str(Path(__file__).resolve().parents[1])
_LIBRARIES = tuple({str(Path(p).resolve()) for key in ("stdlib", "platstdlib", "purelib", "platlib")
                    if (p := sysconfig.get_paths().get(key))})


def _own_folder(fn: Any) -> str | None:
    """The folder of the file ``fn`` is defined in (its code counts as the user's, even when installed)."""
    try:
        source = inspect.getsourcefile(inspect.unwrap(fn)) if fn is not None else None
    except TypeError:
        source = None
    return str(Path(source).resolve().parent) if source else None


def _is_users(filename: str, own: str | None) -> bool:
    if filename.startswith("<"):                        # <frozen importlib._bootstrap>, <string>
        return False
    path = str(Path(filename).resolve())
    if own is not None and _under(path, own):
        return True
    return not _under(path, _TRECKIT) and not any(_under(path, lib) for lib in _LIBRARIES)


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def as_list(answer: Any, role: str, name: str, context: str, what: str = "a ranking") -> list:
    """A function's answer (a list, a tuple or any other iterable but text and mappings) as a list; run
    inside :func:`call`, since a generator's code runs as it is read."""
    if answer is None or isinstance(answer, (str, bytes, Mapping)) or not _iterable(answer):
        name_of = type(answer).__name__
        kind = "None" if answer is None else f"{'an' if name_of[:1] in 'aeiou' else 'a'} {name_of}"
        raise InputError(f"the {role} {name} returned {kind} {context}, not {what}",
                         fix="return a list of doc ids, or of (doc_id, score) pairs, in rank order ([] for none)"
                         if what == "a ranking" else "return one ranking (a list) per query text, in their order")
    return list(answer)


def _iterable(x: Any) -> bool:
    try:
        iter(x)
    except TypeError:
        return False
    return True


# ---------------------------------------------------------------- a function's answers, checked
def as_ranking(result: list, qid: str, k: int, role: str = "retrieval function") -> list[tuple[str, float | None]]:
    """A retrieval function's answer for one query (a list: :func:`ask`) as [(doc_id, score or None)], top k:
    doc ids (non-empty text) or (doc_id, score) pairs, each doc once; a score is read as a dict run's is
    (:func:`treckit.inputs.values.score_value`)."""
    out: list[tuple[str, float | None]] = []
    seen: set[str] = set()
    for item in result:
        if isinstance(item, str):
            doc, score = item, None
        elif isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str):
            doc, score = item[0], score_value(item[1], f"query {qid!r}: the {role}'s doc {shown(item[0])}")
        else:
            raise InputError(f"query {qid!r}: the {role} returned {type(item).__name__} items in its ranking",
                             fix="return doc ids as str, or (doc_id, score) pairs")
        if not doc or has_surrogate(doc):
            raise InputError(f"query {qid!r}: the {role} returned the doc id {shown(doc)}, "
                             + ("an empty text" if not doc else "which is not Unicode text (a lone surrogate)"),
                             fix="return doc ids as they are in the corpus and the judgments")
        if doc in seen:
            raise InputError(f"query {qid!r}: doc {shown(doc)} is returned twice", fix="return each doc once")
        seen.add(doc)
        out.append((doc, score))
    return out[:k]


def ask(fn: Callable, qid: str, *args, role: str = "retrieval function") -> list:
    """``fn(*args)``, a function's answer for query ``qid``, as a list (checked: :mod:`treckit.retrieval.callables`)."""
    context = f"for query {qid!r}"
    return call(fn, role, context, lambda: as_list(fn(*args), role, function_name(fn), context))


def ask_batch(fn: Callable, qids: Sequence[str], texts: list[str], role: str = "batch function") -> list[list]:
    """``fn(texts)``, a batch function's answers, one list per query (checked: one answer per query text)."""
    name, context = function_name(fn), f"for a batch of {len(texts)} queries"

    def work() -> list[list]:
        out = as_list(fn(texts), role, name, context, what="a list of rankings")
        if len(out) != len(texts):
            raise InputError(f"the {role} {name} returned {len(out)} rankings for {len(texts)} queries",
                             fix="return one ranking per query text, in the same order")
        return [as_list(r, role, name, f"for query {q!r}") for q, r in zip(qids, out)]
    return call(fn, role, context, work)
