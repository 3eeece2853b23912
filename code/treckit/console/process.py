"""treckit's own processes: how they are tuned, and how they end.

The tuning is done by the entry points only -- the CLI's main, the staged scripts (:func:`prepare_process`), a
service worker's and a Dask worker's start-up -- never on ``import treckit``: a user's process is left exactly as
its libraries set it up.

- pyarrow imports pandas (about half a second) the first time any array is built, only to check whether the
  input is a pandas object.  In our own processes nothing handed to pyarrow is a pandas object, so the check is
  made to find no pandas, right after pyarrow loads (:func:`defer_pandas_when_pyarrow_loads`); pyarrow's shim
  still imports pandas for real the moment something asks for it (``to_pandas``).
- glibc's malloc is told to keep freed memory for reuse (:func:`keep_freed_memory`), and what the library lets
  go of in large pieces is handed back to the system when it says so (:func:`memory_freed`,
  :func:`give_memory_back_when_freed`).
"""
from __future__ import annotations

import contextlib
import errno
import importlib.machinery
import io
import os
import signal
import sys
import sysconfig
import threading
import traceback
from typing import Callable, Iterator

from .errors import (EXIT_INTERRUPTED, EXIT_RUNTIME, InputError, Interrupted, OutputClosed,
                     TreckitError, os_error, without_credentials)


class _NoPandas:
    """A meta-path finder that makes ``import pandas`` fail, installed for one check only."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("pandas deferred by treckit")
        return None


def defer_pandas() -> None:
    """pyarrow's first array built with pandas hidden (pyarrow imported now if it was not)."""
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    sys.meta_path.insert(0, _NoPandas)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(_NoPandas)


class _AfterPyarrow:
    """A meta-path finder that finds pyarrow where the path finder does and has it load as it would, then runs
    :func:`defer_pandas` before anything else uses it; it goes once pyarrow has loaded."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != "pyarrow":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        loader = getattr(spec, "loader", None)
        if loader is not None and hasattr(loader, "exec_module"):
            run = loader.exec_module

            def exec_module(module) -> None:
                run(module)
                if _AfterPyarrow in sys.meta_path:
                    sys.meta_path.remove(_AfterPyarrow)
                defer_pandas()
            loader.exec_module = exec_module
        return spec


def defer_pandas_when_pyarrow_loads() -> None:
    """:func:`defer_pandas` as pyarrow loads, whichever command loads it (none is loaded for ``--help``)."""
    if "pyarrow" in sys.modules:
        defer_pandas()
    elif _AfterPyarrow not in sys.meta_path:
        sys.meta_path.insert(0, _AfterPyarrow)


_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3


def keep_freed_memory() -> None:
    """Let glibc's malloc reuse freed memory instead of handing it back to the kernel.

    numpy allocates a fresh buffer for every temporary; with glibc's defaults each buffer of a
    few MiB is a new mapping whose every 4 KiB page faults on first touch, and evaluating a
    large run then spends a good part of its time in page faults.  Serving buffers up to 32 MiB
    (glibc's maximum) from the heap and never trimming it cuts the faults of a 7M-line evaluation
    by a fifth (by half in the hashing step); larger buffers are still mapped and returned, so
    peak memory barely moves.  Only in our own
    processes, and only where glibc is the C library (elsewhere this does nothing).
    """
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_MMAP_THRESHOLD, 32 << 20)
    mallopt(_M_TRIM_THRESHOLD, 1 << 30)
    mallopt(_M_TOP_PAD, 64 << 20)


def give_back_freed_memory() -> None:
    """Return freed memory to the system: glibc keeps freed blocks below its (self-raising) mmap threshold
    in its heaps (:func:`keep_freed_memory` raises it on purpose, for speed), so after a large transient
    buffer (a part of a run, a document's text) the resident size would stay up by its worth."""
    global _trim
    if _trim is None:
        try:
            import ctypes
            _trim = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _trim = False
    if _trim:
        _trim(0)


_trim = None
_WHEN_FREED: list = []


def memory_freed(*, arrow: bool = False) -> None:
    """Said by the library where it has just let go of large transient buffers (a document's text, a part of a run;
    ``arrow``: Arrow's buffers among them): what the process's entry point set up for that moment runs
    (:func:`give_memory_back_when_freed`); in a user's process, nothing."""
    for act in _WHEN_FREED:
        act(arrow)


def give_memory_back_when_freed() -> None:
    """From now on, what the library lets go of (:func:`memory_freed`) goes back to the system: Arrow's pool's
    unused memory when Arrow's buffers were among it, then glibc's (:func:`give_back_freed_memory`)."""
    if _give_back not in _WHEN_FREED:
        _WHEN_FREED.append(_give_back)


def _give_back(arrow: bool) -> None:
    if arrow and "pyarrow" in sys.modules:
        sys.modules["pyarrow"].default_memory_pool().release_unused()
    give_back_freed_memory()


def native_library_defaults() -> None:
    """Settings of the native libraries under numpy that cost treckit's commands time on every start,
    made before numpy is first imported (they are read once, when it loads); only in our own
    processes (never on ``import treckit``), and never over the user's own setting.

    ``OPENBLAS_THREAD_TIMEOUT=4``: numpy's wheels bundle OpenBLAS, which starts a thread per core at
    import; each waits for work in a busy loop of about 2^28 cycles (0.1 s) before it sleeps.
    treckit makes few BLAS calls or none, so on every start that spin took a core while the
    command's own threads wanted it (``import numpy``: 0.13-0.17 s of user CPU on this project's
    2-core machine, against 0.05-0.10 s).  A woken thread costs a product of millions of values
    nothing that matters.
    """
    import os

    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")


def allocate_within_budget() -> None:
    """Under a memory budget (``--memory-limit``), Arrow allocates through the C library's malloc (tuned by
    :func:`keep_freed_memory`) instead of its default allocator, mimalloc, which keeps what each thread freed for that
    thread's reuse: 20-30 MB more at its peak in a command that reads on several threads, all of it beyond what a
    small budget holds.  Only in our own processes (a library user's process keeps its allocator), and never over
    the user's own ``ARROW_DEFAULT_MEMORY_POOL``; pyarrow is not loaded for it (a command may not need it)."""
    import os

    if "pyarrow" not in sys.modules:
        os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")      # read when pyarrow loads
    elif "ARROW_DEFAULT_MEMORY_POOL" not in os.environ:
        import pyarrow as pa

        pa.set_memory_pool(pa.system_memory_pool())


def prepare_process() -> None:
    """What the CLI's main and the staged scripts do first (see the functions above)."""
    native_library_defaults()
    keep_freed_memory()
    defer_pandas_when_pyarrow_loads()
    give_memory_back_when_freed()


def buffered_stdout() -> None:
    """Standard output through a buffered writer, even under PYTHONUNBUFFERED=1 (common in containers).

    Unbuffered, ``sys.stdout.buffer`` is the raw file, whose ``write`` may write only part of what
    it is given (a pipe whose reader goes away, a signal) and say so only in its return value,
    which nothing checks: output would be cut silently and a closed pipe never noticed.  A
    buffered writer writes everything or raises; line buffering keeps the output as prompt."""
    import io

    out = sys.stdout
    raw = getattr(out, "buffer", None)
    if raw is None or isinstance(raw, io.BufferedIOBase):
        return
    try:
        out.flush()
    except (OSError, ValueError):
        return
    try:       # a file object of our own on the same descriptor: closing it never closes the original
        own = io.FileIO(raw.fileno(), "w", closefd=False)
    except (OSError, ValueError, AttributeError):
        return
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(own), encoding=out.encoding, errors=out.errors,
                                  line_buffering=True)


_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EPIPE, errno.EBADF}
_CLOSED_FILE = "I/O operation on closed file"


def report_failure(exc: BaseException) -> int:
    """The message (on stderr, or on stdout when the process has no stderr) and exit code for an exception that
    ends one of our commands.

    treckit's errors print as they are (exit 2 for bad input, 3 for runtime failures); Ctrl-C
    exits 130 with a message; an OS error names its path (exit 2 when it is the environment:
    permissions, missing paths, full or read-only disks, a closed standard output); a closed standard output
    (``| head``) ends quietly with 0; anything else is an internal error (exit 3), never a traceback, and its
    text is left out when it was raised in code that is not treckit's (it may carry a secret).
    """
    if isinstance(exc, KeyboardInterrupt):
        exc = Interrupted()
    elif isinstance(exc, BrokenPipeError) and exc.filename is None:
        exc = OutputClosed()
    elif isinstance(exc, OSError) and not isinstance(exc, TreckitError):
        # outputs name their own path (treckit.output.files); a write error naming no file is standard output's
        stdout_error = exc.filename is None and exc.errno in _WRITE_ERRNOS
        exc = os_error(exc, "<stdout>", "write") if stdout_error else os_error(exc)
    elif isinstance(exc, ValueError) and _CLOSED_FILE in str(exc) and _a_standard_stream_closed():
        exc = InputError("a standard stream (sys.stdout or sys.stderr) was closed while the command ran",
                         fix="leave sys.stdout and sys.stderr open in code treckit calls (a function of yours)")
    if isinstance(exc, OutputClosed):
        silence_stdout()
        return exc.exit_code
    if isinstance(exc, TreckitError):
        _say_failure(f"treckit: {'error: ' if exc.exit_code != 130 else ''}{exc}")
        return exc.exit_code
    if isinstance(exc, MemoryError):
        _say_failure("treckit: error: out of memory")
        return EXIT_RUNTIME
    if raised_in_foreign_code(exc):
        _say_failure(f"treckit: internal error: {type(exc).__name__} raised at {raised_at(exc)} (its message is not "
                     "shown: it was raised in code that is not treckit's)")
    else:
        _say_failure(without_credentials(f"treckit: internal error: {exc!r}"))
    return EXIT_RUNTIME


def _say_failure(text: str) -> None:
    """``text`` where it can still be written: stderr, else stdout (a process started with ``2>&-``)."""
    for stream in ((sys.stdout,) if _Streams.stderr_missing else (sys.stderr, sys.stdout)):
        try:
            if stream is None or stream.closed:
                continue
            print(text, file=stream, flush=True)
            return
        except (OSError, ValueError):
            continue


def exit_code_of(body) -> int:
    """Run ``body()`` and return 0, or the exit code of what ended it (see :func:`report_failure`); the standard
    streams checked first (:func:`standard_streams`), Ctrl-C recorded meanwhile (:func:`interrupts_recorded`)."""
    standard_streams()
    buffered_stdout()
    with interrupts_recorded():
        try:
            body()
        except SystemExit:                  # click's own end (--help, completion, usage errors): its code stands
            raise
        except BaseException as exc:        # noqa: BLE001 -- whatever else ends a command ends it with a message
            return report_failure(exc)
    return 0


# ------------------------------------------------------------------ where an exception was raised
_TRECKIT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LIBRARIES = tuple({os.path.realpath(p) for key in ("stdlib", "platstdlib", "purelib", "platlib")
                    if (p := sysconfig.get_paths().get(key))})


def under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def is_foreign_file(filename: str, own: str | None = None) -> bool:
    """Whether a frame's file holds code that is neither treckit's, nor the standard library's, nor an installed
    package's (a user's code, ``own`` folder included even when installed); ``<frozen ...>`` frames are not."""
    if filename.startswith("<"):
        return False
    path = os.path.realpath(filename)
    if own is not None and under(path, own):
        return True
    return not under(path, os.path.realpath(_TRECKIT)) and not any(under(path, lib) for lib in _LIBRARIES)


def raised_in_foreign_code(exc: BaseException) -> bool:
    """Whether ``exc`` was raised in a user's code (its innermost frame: :func:`is_foreign_file`)."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and is_foreign_file(frames[-1].filename)


def raised_at(exc: BaseException) -> str:
    """Where an exception was raised (file:line in function, innermost first), never its text (it may carry data
    or secrets)."""
    frames = traceback.extract_tb(exc.__traceback__)
    return " <- ".join(f"{os.path.basename(f.filename)}:{f.lineno} in {f.name}" for f in reversed(frames[-4:])) or "?"


# ------------------------------------------------------------------ Ctrl-C
class _Interrupts:
    received = 0                      # SIGINTs received since the command began
    cleanups: list[Callable[[], None]] = []


def on_hard_exit(cleanup: Callable[[], None]) -> None:
    """``cleanup()`` runs before the process ends at a second Ctrl-C (it removes what is half-written)."""
    _Interrupts.cleanups.append(cleanup)


def _sigint(signum, frame) -> None:
    _Interrupts.received += 1
    if _Interrupts.received == 1:
        raise KeyboardInterrupt
    hard_exit(EXIT_INTERRUPTED, b"treckit: interrupted again; no output was left half-written\n")


def hard_exit(code: int, message: bytes = b"") -> None:
    """End the process now, whatever its threads are doing (one of them may run a function that never
    returns): what :func:`on_hard_exit` registered runs, ``message`` goes to stderr, the standard streams
    are flushed."""
    for cleanup in list(_Interrupts.cleanups):
        with contextlib.suppress(BaseException):
            cleanup()
    if message:
        with contextlib.suppress(OSError):
            os.write(2, message)
    exit_now(code)


@contextlib.contextmanager
def interrupts_recorded() -> Iterator[None]:
    """Within the block (in the main thread), Ctrl-C raises KeyboardInterrupt as Python's own handler does and is
    recorded (:func:`interrupted`), so that a KeyboardInterrupt a user's function raises is told from a real
    Ctrl-C; a second Ctrl-C ends the process at once (:func:`hard_exit`, exit 130).  A SIGINT the process
    was started to ignore stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        before = signal.signal(signal.SIGINT, _sigint)
    except (ValueError, OSError):
        yield
        return
    if before == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    _Interrupts.received = 0
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
        _Interrupts.received = 0


def interrupted() -> bool:
    """Whether a real Ctrl-C was received (inside :func:`interrupts_recorded`)."""
    return _Interrupts.received > 0


def is_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` is a real Ctrl-C: a KeyboardInterrupt, when SIGINT was received -- or when it cannot be
    told (SIGINT is neither recorded by :func:`interrupts_recorded` nor ignored: a Python session of the
    user's, where any KeyboardInterrupt may be one).  A KeyboardInterrupt a user's function raises itself is,
    where it can be told, that function's error."""
    if not isinstance(exc, KeyboardInterrupt):
        return False
    handler = signal.getsignal(signal.SIGINT)
    told_apart = handler is _sigint or handler == signal.SIG_IGN
    return interrupted() or not told_apart


# ------------------------------------------------------------------ standard streams
class _Streams:
    stderr_missing = False            # the process has no stderr (started with 2>&-, or a function closed it)


class _ClosedRaw(io.RawIOBase):
    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        raise OSError(errno.EBADF, "the standard output is closed")


class ClosedOutput(io.TextIOBase):
    """``sys.stdout`` of a process started without one (``>&-``): writing to it fails (exit 2, naming it)
    rather than vanishing."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self) -> None:
        self.buffer = _ClosedRaw()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "the standard output is closed")


def _null_text() -> io.TextIOBase:
    return open(os.devnull, "w", encoding="utf-8")


def standard_streams() -> None:
    """A process started with a standard stream closed (``>&-``, ``2>&-``: Python's is then None): its
    descriptor is taken by /dev/null (so that no file opened later becomes it), stdout written to fails
    (:class:`ClosedOutput`), stderr's messages go nowhere and an error is said on stdout instead."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            with contextlib.suppress(OSError):
                null = os.open(os.devnull, os.O_RDWR)
                if null != fd:
                    os.dup2(null, fd)
                    os.close(null)
    if sys.stdout is None:
        sys.stdout = ClosedOutput()
    if sys.stderr is None:
        sys.stderr = _null_text()
        _Streams.stderr_missing = True


def _a_standard_stream_closed() -> bool:
    return any(getattr(s, "closed", False) for s in (sys.stdout, sys.stderr))


def _reopened(fd: int, stream) -> io.TextIOBase:
    """A text stream on descriptor ``fd`` (never closing it), as ``stream`` was."""
    try:
        raw = io.FileIO(fd, "w", closefd=False)
    except (OSError, ValueError):
        return ClosedOutput() if fd == 1 else _null_text()
    return io.TextIOWrapper(io.BufferedWriter(raw), encoding=getattr(stream, "encoding", None) or "utf-8",
                            errors="backslashreplace", line_buffering=True)


def standard_streams_now() -> tuple:
    """What :func:`streams_closed_since` compares with: the standard output and error streams, and whether their
    descriptors (1 and 2) are open."""
    return sys.stdout, sys.stderr, _open(1), _open(2)


def _open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def streams_closed_since(before: tuple) -> list[str]:
    """Which of the standard streams open ``before`` (:func:`standard_streams_now`) have been closed since (a
    user's function closed ``sys.stdout``, or descriptor 1), each put back so messages can still be written: a
    closed stream is reopened on its descriptor, and a closed descriptor is taken by /dev/null, so that no file
    opened later becomes the standard output.  A stream replaced and left open (``sys.stdout = StringIO()``) is put
    back quietly: treckit's results go where the command's own output goes."""
    closed = []
    for attr, fd, name, stream, was_open in (("stdout", 1, "sys.stdout", before[0], before[2]),
                                             ("stderr", 2, "sys.stderr", before[1], before[3])):
        if was_open and not _open(fd):
            closed.append(f"{name}'s descriptor ({fd})")
            _Streams.stderr_missing = _Streams.stderr_missing or fd == 2      # errors are said on stdout then
            with contextlib.suppress(OSError):
                null = os.open(os.devnull, os.O_RDWR)
                if null != fd:
                    os.dup2(null, fd)
                    os.close(null)
        elif getattr(stream, "closed", False):
            closed.append(name)
        current = getattr(sys, attr)
        if getattr(stream, "closed", False) and (current is stream or getattr(current, "closed", False)):
            setattr(sys, attr, _reopened(fd, stream))
        elif current is not stream and not getattr(stream, "closed", False):
            setattr(sys, attr, stream)
    return closed


def settings_now() -> tuple:
    """What a user's function may change of the process and :func:`settings_put_back` restores: the working
    directory, and (in the main thread, the only one that can change it) SIGINT's handler."""
    try:
        cwd = os.getcwd()
    except OSError:                          # the directory was removed: nothing to go back to
        cwd = None
    main = threading.current_thread() is threading.main_thread()
    return cwd, signal.getsignal(signal.SIGINT) if main else None


def settings_put_back(before: tuple) -> None:
    """The working directory and SIGINT's handler as they were ``before`` (:func:`settings_now`), quietly: a
    function is called in the command's directory every time (relative outputs and inputs stay where they were
    named), and Ctrl-C keeps interrupting the command."""
    cwd, handler = before
    if cwd is not None:
        with contextlib.suppress(OSError):
            if os.getcwd() != cwd:
                os.chdir(cwd)
    if handler is not None and signal.getsignal(signal.SIGINT) is not handler:
        with contextlib.suppress(ValueError, OSError):
            signal.signal(signal.SIGINT, handler)


def silence_stdout() -> None:
    """After the reader of stdout went away: what is still buffered goes nowhere, quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def exit_now(code: int) -> None:
    """End one of our processes without the interpreter's teardown.

    After a large evaluation, freeing millions of objects and buffers one by one takes longer
    than some whole evaluations (0.1-0.2 s for a 7M-line run); the operating system reclaims it
    all at once.  Everything treckit writes is closed by then (outputs are written through
    context managers); the standard streams are flushed here.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):    # a closed pipe (`| head`), a closed or missing stream
            pass
    os._exit(code)
