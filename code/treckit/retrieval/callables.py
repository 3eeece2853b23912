"""Functions of the user's: ``package.module:function`` (imported) or ``path/to/file.py:function``
(loaded from the file), named on the command line or in a system config, and how they are called.

A function is the user's code, and whatever it does is one handler's business (:func:`call`), reported as
bad input (exit 2): any exception it raises, ``BaseException`` itself, ``SystemExit`` (``sys.exit()``: a
function must answer, not end the program), ``GeneratorExit`` and a ``KeyboardInterrupt`` of its own
included; the same while its module is imported (:func:`load_callable`); a standard stream it closes; an
answer that is not a ranking; a signature that does not take what treckit passes.  A message names the
function, the query, the exception's type and the line of the user's code it came from, never the
exception's text, which may carry a password or a token from the user's environment: that text (and the
traceback) is shown only when debugging is asked for, with ``--debug`` on the commands that call functions
or ``TRECKIT_DEBUG=1`` in the environment.  A real Ctrl-C still interrupts (exit 130): treckit's commands
record SIGINT, so a KeyboardInterrupt is told from one a function raises
(:func:`treckit.console.process.is_interrupt`).  A function that ends the process itself (``os._exit``)
cannot be caught: nothing is written then (outputs are written after every query is answered).
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import itertools
import os
import sys
import threading
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, TypeVar

from ..console.errors import EXIT_BAD_INPUT, InputError, Interrupted, TreckitError, shown
from ..console.process import (interrupted, is_foreign_file, is_interrupt, settings_now, settings_put_back,
                               standard_streams_now, streams_closed_since)
from ..console.spelling import command_running
from ..inputs.bounded import has_surrogate
from ..inputs.values import score_value

T = TypeVar("T")

DEBUG_ENV = "TRECKIT_DEBUG"
_debug = False           # set by --debug for the command's duration (threads calling functions see it too)

HIDDEN_TEXT_FIX = (f"correct the function; its exception's message is not shown, as it may hold secrets "
                   f"({DEBUG_ENV}=1 in the environment shows it, and the traceback)")
HIDDEN_TEXT_FIX_COMMAND = (f"correct the function; its exception's message is not shown, as it may hold secrets "
                           f"(--debug shows it, and the traceback; so does {DEBUG_ENV}=1 in the environment)")


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
    before = _process_now()
    try:
        module = _imported(target)
    except BaseException as exc:             # noqa: BLE001 -- the module's own code ran and failed, or treckit's
        _left_as_found(before, None, role, spec, "while it was imported")
        raise _import_failure(exc, target, role, spec) from None
    _left_as_found(before, None, role, spec, "while it was imported")
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise InputError(f"{target!r} has no function {attr!r}", fix="check the name after ':'")
    if arguments is not None:
        check_arguments(fn, arguments, role, spec)
    return fn


def _imported(target: str):
    """The module ``target`` names (a path to a ``.py`` file, or a module's name), its code run."""
    if not target.endswith(".py"):
        return importlib.import_module(target)
    path = Path(target)
    if not path.is_file():
        raise InputError("no such file", path=target, fix="check the path before ':'")
    mod_spec = importlib.util.spec_from_file_location(f"treckit_user_{path.stem}", path)
    module = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(module)
    return module


def _import_failure(exc: BaseException, target: str, role: str, spec: str) -> BaseException:
    """What to raise for ``exc``, which ended the import of ``target``: treckit's own errors and a real Ctrl-C as
    they are; a missing module named; anything the module's code raised as :func:`user_code_error`."""
    if isinstance(exc, TreckitError) or is_interrupt(exc):
        return exc
    if interrupted():                         # a real Ctrl-C, which the module's code turned into another exception
        return Interrupted()
    if isinstance(exc, SyntaxError):          # the compiler's own words, never the source line
        return InputError(f"the {role} {spec} cannot be loaded: {type(exc).__name__}: {exc.msg}",
                          path=exc.filename, line=exc.lineno, fix="correct the Python file")
    if isinstance(exc, ModuleNotFoundError) and exc.name is not None and (
            target == exc.name or target.startswith(exc.name + ".")):
        return InputError(f"cannot import {target!r}: no module named {exc.name!r}",
                          fix="check the module name and that it is installed (or on PYTHONPATH)")
    return user_code_error(exc, role, spec, "while it was imported")


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
    (any BaseException) reported as :func:`user_code_error`, and what it did to the process (a standard stream
    closed, a process forked) reported too (:func:`_left_as_found`).  treckit's own errors pass as they are (an
    answer that is not a ranking; a function calling treckit); so does a real Ctrl-C
    (:func:`treckit.console.process.is_interrupt`)."""
    before = _process_now()
    try:
        answer = work()
    except TreckitError:
        _left_as_found(before, fn, role, function_name(fn), context)
        raise
    except BaseException as exc:             # noqa: BLE001 -- any failure of the user's code
        _left_as_found(before, fn, role, function_name(fn), context)
        if is_interrupt(exc):
            raise
        if interrupted():                    # a real Ctrl-C, which the function turned into another exception
            raise Interrupted() from None
        raise user_code_error(exc, role, function_name(fn), context, fn) from None
    _left_as_found(before, fn, role, function_name(fn), context)
    if interrupted():                        # a real Ctrl-C, which the function caught and went on
        raise Interrupted()
    return answer


class UserCodeError(InputError):
    """What a user's function raised or did (bad input: exit 2), said without the exception's text."""


def in_threads(work: Callable[[int], T], n: int, workers: int) -> list[T]:
    """``[work(0), ..., work(n - 1)]``, called from ``workers`` threads.  After a failure no new call starts,
    and once the running ones are done the failure of the first ``i`` that failed is raised.  Ctrl-C (anything
    raised in the waiting thread) returns at once: the threads are abandoned, never waited for, so a function
    that never returns cannot hold the process (daemon threads, which the interpreter does not wait for)."""
    results: list = [None] * n
    failures: dict[int, BaseException] = {}
    lock = threading.Lock()
    state = {"next": 0, "stop": False}

    def worker() -> None:
        while True:
            with lock:
                if state["stop"] or state["next"] >= n:
                    return
                i = state["next"]
                state["next"] += 1
            try:
                results[i] = work(i)
            except BaseException as exc:      # noqa: BLE001 -- handed to the waiting thread
                with lock:
                    failures[i] = exc
                    state["stop"] = True
    threads = [threading.Thread(target=worker, daemon=True, name=f"treckit-function-{k}")
               for k in range(min(workers, n))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    except BaseException:
        with lock:
            state["stop"] = True
        raise
    if failures:
        raise failures[min(failures)]
    return results


class _Forks(threading.local):
    made = 0                                  # processes forked by this thread (os.fork: Python's own fork)


def _counted_fork() -> None:
    _forks.made += 1


_forks = _Forks()
os.register_at_fork(after_in_parent=_counted_fork)


def _process_now() -> tuple:
    """What :func:`_left_as_found` compares with after a user's code ran: the process, the forks this thread made,
    the standard streams, the settings a function may change (:func:`treckit.console.process.settings_now`)."""
    return os.getpid(), _forks.made, standard_streams_now(), settings_now()


def _left_as_found(before: tuple, fn: Any, role: str, name: str, context: str) -> None:
    """After a user's code returned or raised (``before``: :func:`_process_now`): a process it forked that returns
    into treckit ends there at once, its outputs untouched (only the process treckit started goes on); that
    process reports the fork as the function's error, as it does a standard stream the code closed (put back
    first, so the message can be written: :func:`treckit.console.process.streams_closed_since`).  The working
    directory and SIGINT's handler are put back quietly (:func:`treckit.console.process.settings_put_back`)."""
    pid, forks, streams, settings = before
    if os.getpid() != pid:
        os._exit(EXIT_BAD_INPUT)
    settings_put_back(settings)
    closed = streams_closed_since(streams)
    did = (f"closed {' and '.join(closed)}" if closed else
           "forked a process (os.fork)" if _forks.made != forks else None)
    if did is None:
        return
    path, line = _where(None, fn)
    raise UserCodeError(f"the {role} {name} {did} {context}", path=path, line=line,
                        fix="leave the standard streams open (a function prints, or writes to files of its own); "
                            "treckit reports on them" if closed else
                        "start other processes with subprocess, or multiprocessing's 'spawn' or 'forkserver' "
                        "methods: a forked copy of treckit's process would go on evaluating")


def user_code_error(exc: BaseException, role: str, name: str, context: str, fn: Any = None) -> UserCodeError:
    """``exc``, raised by the user's code, as an error naming the function, the query (``context``), the
    exception's type and where it was raised; its text only when debugging."""
    path, line = _where(exc, fn)
    if isinstance(exc, SystemExit):
        code = exc.code if exc.code is None or isinstance(exc.code, int) else "..."
        what = f"called sys.exit({code}) {context}: a function must return its answer, not end the program"
    else:
        what = f"raised {type(exc).__name__} {context}"
    message = f"the {role} {name} {what}"
    if isinstance(exc, KeyboardInterrupt):
        message += " (itself: no Ctrl-C was received)"
    if debug_on():
        shown = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip()
        message += "\n  debug (the exception as raised):\n    " + shown.replace("\n", "\n    ")
    hidden = HIDDEN_TEXT_FIX_COMMAND if command_running() else HIDDEN_TEXT_FIX
    return UserCodeError(message, path=path, line=line, fix=hidden if not debug_on() else "correct the function")


def _where(exc: BaseException | None, fn: Any) -> tuple[str | None, int | None]:
    """The file and line of the innermost frame of the traceback in the user's code (not treckit's, the
    standard library's or an installed package's, unless it is the function's own package); else where
    the function is defined."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return exc.filename, exc.lineno
    own = _own_folder(fn)
    for frame in reversed(traceback.extract_tb(exc.__traceback__) if exc is not None else []):
        if is_foreign_file(frame.filename, own):
            return frame.filename, frame.lineno
    code = getattr(inspect.unwrap(fn), "__code__", None) if fn is not None else None
    if code is not None:
        return code.co_filename, code.co_firstlineno
    return None, None


def _own_folder(fn: Any) -> str | None:
    """The folder of the file ``fn`` is defined in (its code counts as the user's, even when installed)."""
    try:
        source = inspect.getsourcefile(inspect.unwrap(fn)) if fn is not None else None
    except TypeError:
        source = None
    return str(Path(source).resolve().parent) if source else None


def as_list(answer: Any, role: str, name: str, context: str, what: str = "a ranking", most: int | None = None) -> list:
    """A function's answer (a list, a tuple or any other iterable but text and mappings) as a list of its first
    ``most`` items (all without it: what is kept of a ranking is read, so an endless generator costs no more);
    run inside :func:`call`, since a generator's code runs as it is read."""
    if answer is None or isinstance(answer, (str, bytes, Mapping)) or not _iterable(answer):
        name_of = type(answer).__name__
        kind = "None" if answer is None else f"{'an' if name_of[:1] in 'aeiou' else 'a'} {name_of}"
        raise InputError(f"the {role} {name} returned {kind} {context}, not {what}",
                         fix="return a list of doc ids, or of (doc_id, score) pairs, in rank order ([] for none)"
                         if what == "a ranking" else "return one ranking (a list) per query text, in their order")
    return list(answer) if most is None else list(itertools.islice(answer, most))


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
            doc, score = str.__str__(item), None            # a subclass's own methods stay behind
        elif isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str):
            doc = str.__str__(item[0])
            score = score_value(item[1], f"query {qid!r}: the {role}'s doc {shown(doc)}")
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


def ranking_of(fn: Callable, answer: list, qid: str, k: int, role: str = "retrieval function") -> list:
    """:func:`as_ranking` of ``fn``'s answer for query ``qid``, within :func:`call`: the items it returned are its
    code too (a ``str`` subclass's ``__hash__``, a number's ``__float__``), and what they raise is its error."""
    return call(fn, role, f"for query {qid!r}", lambda: as_ranking(answer, qid, k, role))


def ask(fn: Callable, qid: str, *args, role: str = "retrieval function", most: int | None = None) -> list:
    """``fn(*args)``, a function's answer for query ``qid``, as a list of its first ``most`` items (checked:
    :mod:`treckit.retrieval.callables`)."""
    context = f"for query {qid!r}"
    return call(fn, role, context, lambda: as_list(fn(*args), role, function_name(fn), context, most=most))


def ask_batch(fn: Callable, qids: Sequence[str], texts: list[str], role: str = "batch function",
              most: int | None = None) -> list[list]:
    """``fn(texts)``, a batch function's answers, one list per query of its first ``most`` items (checked: one
    answer per query text)."""
    name, context = function_name(fn), f"for a batch of {len(texts)} queries"

    def work() -> list[list]:
        out = as_list(fn(texts), role, name, context, what="a list of rankings", most=len(texts) + 1)
        if len(out) != len(texts):
            got = f"more than {len(texts)}" if len(out) > len(texts) else len(out)
            raise InputError(f"the {role} {name} returned {got} rankings for {len(texts)} queries",
                             fix="return one ranking per query text, in the same order")
        return [as_list(r, role, name, f"for query {q!r}", most=most) for q, r in zip(qids, out)]
    return call(fn, role, context, work)
