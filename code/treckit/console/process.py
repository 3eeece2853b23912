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

import errno
import importlib.machinery
import sys
from .errors import EXIT_RUNTIME, Interrupted, OutputClosed, TreckitError, os_error


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


_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EPIPE}


def report_failure(exc: BaseException) -> int:
    """The message (on stderr) and exit code for an exception that ends one of our commands.

    treckit's errors print as they are (exit 2 for bad input, 3 for runtime failures); Ctrl-C
    exits 130 with a message; an OS error names its path (exit 2 when it is the environment:
    permissions, missing paths, full or read-only disks); a closed standard output (``| head``)
    ends quietly with 0; anything else is an internal error (exit 3), never a traceback.
    """
    if isinstance(exc, KeyboardInterrupt):
        exc = Interrupted()
    elif isinstance(exc, BrokenPipeError) and exc.filename is None:
        exc = OutputClosed()
    elif isinstance(exc, OSError) and not isinstance(exc, TreckitError):
        # outputs name their own path (treckit.output.files); a write error naming no file is standard output's
        stdout_error = exc.filename is None and exc.errno in _WRITE_ERRNOS
        exc = os_error(exc, "<stdout>", "write") if stdout_error else os_error(exc)
    if isinstance(exc, OutputClosed):
        silence_stdout()
        return exc.exit_code
    if isinstance(exc, TreckitError):
        print(f"treckit: {'error: ' if exc.exit_code != 130 else ''}{exc}", file=sys.stderr)
        return exc.exit_code
    if isinstance(exc, MemoryError):
        print("treckit: error: out of memory", file=sys.stderr)
        return EXIT_RUNTIME
    print(f"treckit: internal error: {exc!r}", file=sys.stderr)
    return EXIT_RUNTIME


def exit_code_of(body) -> int:
    """Run ``body()`` and return 0, or the exit code of what ended it (see :func:`report_failure`)."""
    buffered_stdout()
    try:
        body()
    except (Exception, KeyboardInterrupt) as exc:
        return report_failure(exc)
    return 0


def silence_stdout() -> None:
    """After the reader of stdout went away: what is still buffered goes nowhere, quietly."""
    import os

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
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):       # a closed pipe (e.g. `| head`): nothing more to say
            pass
    os._exit(code)
