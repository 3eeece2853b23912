"""Opening inputs (paths, ``.gz``, ``-`` for stdin) and writing outputs safely.

Inputs: regular files, pipes (``-``, ``<(cmd)``) and ``.gz``; folders and devices are refused, and
what is read whole into memory is bounded (:data:`WHOLE_READ_LIMIT`), and so is each line of what is read
as lines (:mod:`treckit.long_lines`).  Every OS error names the path.

Outputs (:func:`outputs`, :func:`atomic_output`, :func:`atomic_path`): written to a temporary file
beside the target and renamed into place only when everything succeeded, so an error or Ctrl-C
leaves the old file untouched and no half-written one.  Several outputs of one command form a group
that is committed together (all of them or none).  New files get the usual permissions (the umask),
an existing file keeps its mode, a symbolic link keeps pointing where it pointed (its target is
rewritten), and devices and pipes (``/dev/null``, ``/dev/stdout``) are written directly.  An output
that is one of the command's inputs (same file, through any symbolic or hard link) is refused.
"""
from __future__ import annotations

import contextlib
import errno
import gzip
import io
import json
import os
import re
import select
import signal
import stat
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

from .errors import InputError, os_error
from .long_lines import LineWatch, check_file, check_held
from .urls import is_url        # inputs named by URL (s3://, gs://, http(s)://) are read through fsspec

PathLike = str | os.PathLike


def display_name(path: PathLike) -> str:
    return "<stdin>" if str(path) == "-" else str(path)


def is_stdio(path: PathLike | None) -> bool:
    return path is not None and str(path) == "-"


# ---------------------------------------------------------------- inputs
WHOLE_READ_LIMIT: int | None = None
"""At most this many bytes are read into memory whole (stdin, pipes, ``.gz`` content, the line
parsers' input); ``None``: the machine's physical memory.  Plain files above it are still read by
the streaming (Arrow) paths; tests lower it."""

CONFIG_READ_LIMIT = 1 << 20
"""Small side files (configs): at most 1 MiB."""


def whole_read_limit() -> int:
    if WHOLE_READ_LIMIT is not None:
        return WHOLE_READ_LIMIT
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 64 << 30


_STREAMED_FIX = "pass an uncompressed regular file (it is streamed), or check that this is the right file"


def _too_large(name: str, limit: int, fix: str = _STREAMED_FIX) -> InputError:
    return InputError(f"more than {limit:,} bytes to read into memory", path=name, fix=fix)


def check_input(path: PathLike) -> os.stat_result | None:
    """Stat an input path, refusing what cannot be read as a file: folders and devices (``/dev/zero``
    would never end).  Regular files and pipes pass.  ``-`` (stdin) is not checked (None)."""
    if is_stdio(path):
        return None
    name = str(path)
    try:
        st = os.stat(path)
    except OSError as exc:
        raise os_error(exc, name) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError("is a folder, not a file", path=name, fix="pass the path of a file")
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        raise InputError("is a device or socket, not a file", path=name,
                         fix="pass a regular file (or '-' and pipe the data in)")
    return st


def open_input(path: PathLike) -> IO[bytes]:
    """A binary file object for an input path (checked as by :func:`check_input`)."""
    check_input(path)
    try:
        return open(path, "rb")
    except OSError as exc:
        raise os_error(exc, str(path)) from None


def _read_bounded(fh: IO[bytes], name: str, limit: int, fix: str = _STREAMED_FIX, lines: bool = False) -> bytes:
    """Everything ``fh`` gives, in blocks (a read of ``limit`` bytes at once would reserve them).  ``lines``: the
    content is lines, each refused as soon as it is past the line bound -- unless it is gzip data, whose lines are
    watched as it is decompressed."""
    blocks, total = [], 0
    watch = LineWatch(name) if lines else None
    while block := fh.read(min(_BLOCK, limit + 1 - total) or 1):
        if watch is not None and total == 0 and block[:2] == _GZIP_MAGIC:
            watch = None
        if watch is not None:
            watch.feed(block)
        blocks.append(block)
        total += len(block)
        if total > limit:
            raise _too_large(name, limit, fix)
    return blocks[0] if len(blocks) == 1 else b"".join(blocks)


_BLOCK = 1 << 24
_POLL_MS = 200
_GZIP_MAGIC = b"\x1f\x8b"


class _PipeReader:
    """Reads a pipe (stdin, a FIFO) waiting at most :data:`_POLL_MS` at a time between returns to
    Python.  Ctrl-C is a process signal: it may land on one of Arrow's threads, and then a read
    that blocks in the main thread is never interrupted and Python never runs its handler;
    coming back now and then lets the KeyboardInterrupt through."""

    def __init__(self, fh: IO[bytes]) -> None:
        self.fd = fh.fileno()
        self.poll = select.poll()
        self.poll.register(self.fd, select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR)

    def read(self, n: int) -> bytes:
        while not self.poll.poll(_POLL_MS):
            pass
        return os.read(self.fd, n)


def _read_pipe(fh: IO[bytes], name: str, limit: int, fix: str = _STREAMED_FIX, lines: bool = False) -> bytes:
    try:
        reader = _PipeReader(fh) if hasattr(select, "poll") else fh
    except (OSError, ValueError, io.UnsupportedOperation):
        reader = fh
    return _read_bounded(reader, name, limit, fix, lines)


# stdin and pipes can be read only once: their content is kept, so that detecting the format and
# reading it see the same bytes
_stream_cache: dict[str, bytes] = {}


def read_bytes(path: PathLike, *, limit: int | None = None, too_large_fix: str = _STREAMED_FIX,
               lines: bool = False) -> bytes:
    """The whole (decompressed) content of a file, ``-`` being stdin, with clear errors.
    At most ``limit`` bytes (default :func:`whole_read_limit`), compressed or not; past it, an
    error whose fix is ``too_large_fix``.  ``lines``: the content is lines, none longer than
    ``thresholds.MAX_LINE_BYTES`` (:mod:`treckit.long_lines`), refused while it is read."""
    name = display_name(path)
    limit = whole_read_limit() if limit is None else limit
    key = str(path)
    try:
        if key in _stream_cache:
            data = _stream_cache[key]
            if len(data) > limit:
                raise _too_large(name, limit, too_large_fix)
        elif is_stdio(path):
            data = _stream_cache[key] = _read_pipe(sys.stdin.buffer, name, limit, too_large_fix, lines)
        elif is_url(path):          # read once (detection and parsing see the same bytes); forget_stream drops it
            from .urls import read_url
            data = _stream_cache[key] = read_url(key, limit)
        else:
            st = check_input(path)
            if stat.S_ISREG(st.st_mode) and st.st_size > limit:
                raise _too_large(name, limit, too_large_fix)
            with open(path, "rb") as fh:
                if lines and stat.S_ISREG(st.st_mode) and fh.peek(2)[:2] != _GZIP_MAGIC:
                    _check_file_lines(fh.fileno(), name, st.st_size)      # before the whole file is read
                data = fh.read() if stat.S_ISREG(st.st_mode) else _read_pipe(fh, name, limit, too_large_fix, lines)
            if stat.S_ISREG(st.st_mode) and len(data) < st.st_size:
                raise cut_short(name, len(data), st.st_size)
            if stat.S_ISFIFO(st.st_mode):
                _stream_cache[key] = data
    except OSError as exc:
        raise os_error(exc, name) from None
    if data[:2] == _GZIP_MAGIC:
        data = _gunzip(data, name, limit, too_large_fix, lines)
    if lines:                   # what the checks while reading did not see: kept content, a URL's
        check_held(data, name)
    return data


def cut_short(name: str, got: int | None = None, expected: int | None = None) -> InputError:
    """The error for a file that got shorter while it was read (another program truncating or rewriting it):
    what was read is not the file, so nothing of it is used."""
    sizes = f": {got:,} of {expected:,} bytes" if got is not None and expected is not None else ""
    return InputError(f"the file was cut short (truncated) while it was read{sizes}", path=name,
                      fix="read it once the program writing it has finished")


def forget_stream(path: PathLike) -> None:
    """Drop the kept content of a URL read by :func:`read_bytes` (a worker reading many runs in turn)."""
    if is_url(path):
        _stream_cache.pop(str(path), None)


def _gunzip(data: bytes, name: str, limit: int, fix: str = _STREAMED_FIX, lines: bool = False) -> bytes:
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb") as gz:
            return _read_bounded(gz, name, limit, fix, lines)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise _gzip_error(exc, name) from None


def _gzip_error(exc: BaseException, name: str) -> InputError:
    if isinstance(exc, EOFError):
        return InputError("the gzip data is cut short (truncated): it ends before its end-of-stream marker", path=name,
                          fix="re-create or re-download the .gz file (a copy or download may not have finished)")
    return InputError(f"corrupt gzip data ({exc})", path=name, fix="re-create or re-download the .gz file")


# digests of regular files, by (device, inode, size, modification time, change time): a file is read
# once per process for as long as it stays the same file, unchanged (a rewrite changes its change time)
_digests: dict[tuple, str] = {}
_DIGESTS_KEPT = 4096


def _identity(st: os.stat_result) -> tuple[int, ...]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def file_digest(path: PathLike, *, decompress: bool = True) -> str:
    """SHA-256 of a file's content (``.gz`` decompressed, unless not ``decompress``), read in blocks (memory
    stays small whatever its size).  A regular file's digest is remembered while the file stays the same
    (:data:`_digests`)."""
    name = display_name(path)
    import hashlib

    h = hashlib.sha256()
    if is_stdio(path) or is_url(path) or str(path) in _stream_cache:
        h.update(read_bytes(path))
        return h.hexdigest()
    st = check_input(path)
    known = (*_identity(st), decompress) if stat.S_ISREG(st.st_mode) else None
    if known in _digests:
        return _digests[known]
    try:
        with open_input(path) as raw:
            gz = decompress and raw.peek(2)[:2] == b"\x1f\x8b"
            fh = gzip.GzipFile(fileobj=raw, mode="rb") if gz else raw
            while block := fh.read(1 << 20):
                h.update(block)
            after = (*_identity(os.fstat(raw.fileno())), decompress)
    except (EOFError, gzip.BadGzipFile) as exc:
        raise _gzip_error(exc, name) from None
    except OSError as exc:
        raise os_error(exc, name) from None
    if known is not None and after == known:        # not changed while it was read
        if len(_digests) >= _DIGESTS_KEPT:
            _digests.pop(next(iter(_digests)))
        _digests[known] = h.hexdigest()
    return h.hexdigest()


class Source:
    """An input for the vectorized readers: a plain file is handed to Arrow by path (it streams it in
    blocks, so the whole file never sits in memory); stdin, pipes and .gz are read into memory first.
    ``head``/``tail`` are the first/last 64 KiB, ``data()`` the whole content for the line parsers."""

    def __init__(self, path: PathLike):
        self.path = path
        self._data = None
        plain = False
        if not is_stdio(path) and not is_url(path) and str(path) not in _stream_cache:
            st = check_input(path)
            if stat.S_ISREG(st.st_mode):
                try:
                    with open(path, "rb") as fh:
                        self.head = fh.read(1 << 16)
                        plain = self.head[:2] != _GZIP_MAGIC
                        if plain:
                            self.size = os.fstat(fh.fileno()).st_size
                            _check_file_lines(fh.fileno(), display_name(path), self.size)
                            fh.seek(max(0, self.size - (1 << 16)))
                            self.tail = fh.read()
                except OSError as exc:
                    raise os_error(exc, str(path)) from None
        if not plain:
            self._data = read_bytes(path, lines=True)
            self.head, self.tail, self.size = self._data[: 1 << 16], self._data[-(1 << 16):], len(self._data)
        self.plain = plain

    @classmethod
    def of_bytes(cls, data: bytes, path: PathLike) -> "Source":
        """The content ``data`` (e.g. a block of whole lines of ``path``) as an input named ``path``."""
        src = cls.__new__(cls)
        src.path, src._data, src.plain = path, data, False
        src.head, src.tail, src.size = data[: 1 << 16], data[-(1 << 16):], len(data)
        return src

    def arrow(self):
        import pyarrow as pa
        return str(self.path) if self.plain else pa.py_buffer(self._data)

    def data(self) -> bytes:
        if self._data is None:
            data = read_bytes(self.path, lines=True)
            if self.plain and len(data) < self.size:           # shorter than when it was first looked at
                raise cut_short(display_name(self.path), len(data), self.size)
            self._data = data
        return self._data

    def line_spans(self, block: int) -> list[tuple[int, int]]:
        """The content cut into byte ranges of whole lines, each about ``block`` bytes: a range ends
        just after the first newline at or past its nominal end, the last one at the end.  Of a
        plain file only a little around each cut is read."""
        spans, start = [], 0
        while start < self.size:
            end = self._line_end(min(self.size, start + max(1, block)) - 1)
            spans.append((start, end))
            start = end
        return spans

    def _line_end(self, at: int) -> int:
        """Just past the first newline at or after offset ``at`` (the size if there is none)."""
        if not self.plain:
            cut = self._data.find(b"\n", at)
            return self.size if cut < 0 else cut + 1
        step = 1 << 16
        while at < self.size:
            window = self.span(at, min(self.size, at + step))
            cut = window.find(b"\n")
            if cut >= 0:
                return at + cut + 1
            at += len(window)
        return self.size

    def span(self, start: int, end: int) -> bytes | memoryview:
        """The bytes ``start:end`` of the content: read from a plain file (a copy; ``os.pread`` lets
        other threads run meanwhile), a view of content held in memory.  A file is read, never
        mapped: a mapped file cut short by another program while it is read kills the process
        (SIGBUS) where a read only comes back short, which is reported."""
        if not self.plain:
            return memoryview(self._data)[start:end]
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
            try:
                return _pread(fd, start, end, display_name(self.path), self.size)
            finally:
                os.close(fd)
        except OSError as exc:
            raise os_error(exc, str(self.path)) from None

    def holds_any(self, data: bytes | memoryview, span: tuple[int, int], needles: tuple[bytes, ...]) -> bool:
        """Whether ``data`` (this content's :meth:`span` ``span``) holds any of the bytes ``needles``."""
        within, bounds = (data, ()) if isinstance(data, bytes) else (self._data, span)
        return any(within.find(n, *bounds) >= 0 for n in needles)


def _pread(fd: int, start: int, end: int, name: str, size: int) -> bytes:
    """The bytes ``start:end`` of the open file ``fd`` (of ``size`` bytes when it was first looked at)."""
    parts, at = [], start
    while at < end:                      # pread may return fewer bytes than asked
        got = os.pread(fd, end - at, at)
        if not got:
            raise cut_short(name, at, size)
        parts.append(got)
        at += len(got)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _check_file_lines(fd: int, name: str, size: int) -> None:
    """Refuse the plain file open as ``fd`` if a line is past the line bound, reading only near line ends."""
    check_file(lambda start, end: _pread(fd, start, end, name, size), size, name)


def decode_text(data: bytes, path: PathLike, first_line: int = 1) -> str:
    """UTF-8 text (a BOM is dropped); a wrong encoding names the line (``data`` starting at line
    ``first_line`` of ``path``) and the byte offset."""
    if not isinstance(data, bytes):
        data = bytes(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + first_line
        start = data.rfind(b"\n", 0, exc.start) + 1
        end = data.find(b"\n", exc.start)
        snippet = data[start:end if end >= 0 else len(data)].decode("utf-8", "backslashreplace")
        raise InputError(f"not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})", path=display_name(path),
                         line=line, text=snippet, fix="convert the file to UTF-8, e.g. iconv -f latin1 -t utf-8") from None
    return text[1:] if text.startswith("\ufeff") else text


def read_text(path: PathLike, *, limit: int | None = None, too_large_fix: str = _STREAMED_FIX,
              lines: bool = False) -> str:
    return decode_text(read_bytes(path, limit=limit, too_large_fix=too_large_fix, lines=lines), path)


# ---------------------------------------------------------------- JSON
JSON_MAX_NUMBER_DIGITS = 400
"""Longer numbers in JSON input are refused (a double has 17 significant digits; Python's own
limit for integers is 4300 digits, past which it fails deep inside the parser)."""

_LONE_SURROGATE_HINT = re.compile(r"\\u[dD][89a-fA-F]")


def json_number(text: str, kind):
    """A JSON number's value; hostile lengths (CPython's int parsing is quadratic) are refused."""
    if len(text) > JSON_MAX_NUMBER_DIGITS:
        raise ValueError(f"a number of {len(text)} characters")
    return kind(text)


def _no_duplicate_keys(pairs):
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise ValueError(f"the key {dup!r} appears twice in one object")
    return obj


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    return False


def has_surrogate(value: Any) -> bool:
    """Whether ``value`` (text, or a dict or list holding text) holds a lone UTF-16 surrogate, which no UTF-8
    text can hold (a retrieval function's doc ids are checked with it)."""
    return _has_surrogate(value)


def loads_json(text: str, *, duplicate_keys: bool = False) -> Any:
    """``json.loads`` for input that may be hostile: every failure is a ``json.JSONDecodeError``
    (numbers of more than :data:`JSON_MAX_NUMBER_DIGITS` characters, nesting too deep for the
    parser, lone UTF-16 surrogates such as ``"\\ud800"`` which no UTF-8 text can hold, and, unless
    ``duplicate_keys``, a key twice in one object), so callers report one kind of error."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise json.JSONDecodeError(f"not UTF-8 (byte offset {exc.start})", "", 0) from None
    try:
        value = json.loads(text, parse_int=lambda s: json_number(s, int), parse_float=lambda s: json_number(s, float),
                           object_pairs_hook=None if duplicate_keys else _no_duplicate_keys)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None
    except ValueError as exc:
        raise json.JSONDecodeError(str(exc), text, 0) from None
    if _LONE_SURROGATE_HINT.search(text) and _has_surrogate(value):
        raise json.JSONDecodeError("a lone UTF-16 surrogate escape (\\ud800-\\udfff without its pair)", text, 0)
    return value


# ---------------------------------------------------------------- outputs
def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _stat_or_none(path: PathLike) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _check_output_path(out: PathLike, st: os.stat_result | None) -> None:
    """What can be told before any work: the output is a folder, or a part of its path is a file."""
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise InputError("cannot write: is a folder, not a file", path=str(out), fix="give the path of a file")
    if st is None:
        folder = Path(os.path.realpath(out)).parent
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        if not folder.is_dir():
            raise InputError("cannot write: a part of the path is a file, not a folder", path=str(out),
                             fix="check the folders in the path")


def refuse_overwriting_inputs(inputs: Iterable[PathLike | None], outputs: Iterable[PathLike | None]) -> None:
    """An output that is one of the inputs (the same file through any path, symbolic or hard link),
    or two outputs that are the same file, are refused before anything is read or written; so are
    outputs that are folders or lie below a file."""
    ins = [(p, st) for p in inputs if p is not None and not is_stdio(p) and (st := _stat_or_none(p)) is not None]
    seen: list[tuple[PathLike, os.stat_result | None, str]] = []
    for out in outputs:
        if out is None or is_stdio(out):
            continue
        st = _stat_or_none(out)
        _check_output_path(out, st)
        if st is not None and stat.S_ISREG(st.st_mode):
            for p, ist in ins:
                if _same_file(st, ist):
                    same = "" if os.path.abspath(p) == os.path.abspath(out) else f" (the same file as the input {p})"
                    raise InputError(f"the output would overwrite an input{same}", path=str(out),
                                     fix="write the output to another path")
        real = os.path.realpath(out)
        for other, ost, oreal in seen:
            if real == oreal or (st is not None and ost is not None and stat.S_ISREG(st.st_mode) and _same_file(st, ost)):
                raise InputError(f"two outputs are the same file ({other} and {out})", path=str(out),
                                 fix="give each output its own path")
        seen.append((out, st, real))


def derived_output(input: PathLike, suffix: str) -> str:
    """The default output for an input: ``-`` (stdout) for stdin, else the input's path without its
    compression and format extensions plus ``suffix`` (``preds.jsonl`` -> ``preds_trec``,
    ``x.trec.gz`` -> ``x_trec``), in the input's folder."""
    if is_stdio(input):
        return "-"
    p = Path(input)
    name = p.name
    for ext in (".gz",):
        if name.endswith(ext) and len(name) > len(ext):
            name = name[: -len(ext)]
    stem = Path(name).stem or name
    return str(p.with_name(stem + suffix))


class _Staged:
    """One output being written: ``tmp`` until the group commits, then ``target``."""

    def __init__(self, path: PathLike):
        self.path = str(path)
        st = _stat_or_none(path)                   # follows symbolic links
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise InputError("cannot write: is a folder, not a file", path=self.path, fix="give the path of a file")
        # devices and pipes (/dev/null, /dev/stdout, a FIFO) cannot be renamed over: written directly at commit
        self.direct = st is not None and not stat.S_ISREG(st.st_mode)
        self.existing = st if st is not None and not self.direct else None
        self.target = Path(self.path) if self.direct else Path(os.path.realpath(self.path))
        folder = self.target.parent
        try:
            if self.direct:
                fd, self.tmp = tempfile.mkstemp(prefix="treckit-", suffix=".tmp")
            else:
                folder.mkdir(parents=True, exist_ok=True)
                fd, self.tmp = self._create_beside(folder)
            with os.fdopen(fd, "wb"):
                pass
        except OSError as exc:
            raise os_error(exc, self.path, "write") from None

    def _create_beside(self, folder: Path) -> tuple[int, str]:
        """A new temporary file next to the target, created with mode 0666 so the umask applies
        (mkstemp's 0600 would make every output private); an existing target's mode is kept."""
        import secrets

        for _ in range(100):
            tmp = str(folder / f".{self.target.name}.{secrets.token_hex(4)}.tmp")
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
            except FileExistsError:
                continue
            if self.existing is not None:
                with contextlib.suppress(OSError):     # keep the owner where allowed (root), then the mode
                    os.fchown(fd, self.existing.st_uid, self.existing.st_gid)
                os.fchmod(fd, stat.S_IMODE(self.existing.st_mode))
            return fd, tmp
        raise FileExistsError(errno.EEXIST, "no free temporary name", str(folder))

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.tmp)


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait until the block is done (a group's renames are all made or none)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class OutputGroup:
    """Outputs written together: each is staged in a temporary file; :meth:`commit` renames them all
    into place, or, if one rename fails, puts the ones already renamed back as they were."""

    def __init__(self) -> None:
        self.staged: list[_Staged] = []

    def stage(self, path: PathLike) -> str:
        real = os.path.realpath(path)
        if any(os.path.realpath(s.path) == real for s in self.staged):
            raise InputError("two outputs are the same file", path=str(path), fix="give each output its own path")
        s = _Staged(path)
        self.staged.append(s)
        return s.tmp

    def discard(self) -> None:
        for s in self.staged:
            s.discard()
        self.staged = []

    def commit(self) -> None:
        with _signals_deferred():
            done: list[tuple[_Staged, str | None]] = []
            current = None
            try:
                for current in (s for s in self.staged if not s.direct):
                    backup = None
                    if current.existing is not None:        # a hard link to the old content, to roll back to
                        backup = f"{current.tmp}.old"
                        try:
                            os.link(current.target, backup)
                        except OSError:
                            backup = None
                    os.replace(current.tmp, current.target)
                    done.append((current, backup))
                for current in (s for s in self.staged if s.direct):
                    with open(current.tmp, "rb") as src, open(current.target, "wb") as dst:
                        while block := src.read(1 << 20):
                            dst.write(block)
            except OSError as exc:
                for s, backup in reversed(done):
                    with contextlib.suppress(OSError):
                        if backup is not None:
                            os.replace(backup, s.target)
                        else:
                            os.unlink(s.target)
                self.discard()
                raise os_error(exc, current.path if current else None, "write") from None
            finally:
                for s, backup in done:
                    if backup is not None:
                        with contextlib.suppress(OSError):
                            os.unlink(backup)
                for s in self.staged:
                    if s.direct:
                        s.discard()
            self.staged = []


_active_groups: list[OutputGroup] = []


@contextlib.contextmanager
def outputs(*paths: PathLike | None, inputs: Iterable[PathLike | None] = ()) -> Iterator[OutputGroup]:
    """A command's outputs as one transaction::

        with outputs(out_json, out_csv, inputs=[qrels, *runs]):
            write_json(...)      # atomic_output / atomic_path inside the block join the group
            write_csv(...)

    Refuses outputs that are inputs (:func:`refuse_overwriting_inputs`); on success every output is
    renamed into place together, on any error or Ctrl-C none is (the old files stay as they were).
    """
    refuse_overwriting_inputs(inputs, paths)
    group = OutputGroup()
    _active_groups.append(group)
    try:
        yield group
    except BaseException:
        group.discard()
        raise
    finally:
        _active_groups.remove(group)
    group.commit()


@contextlib.contextmanager
def _staged_path(path: PathLike) -> Iterator[str]:
    if _active_groups:
        yield _active_groups[-1].stage(path)
        return
    with outputs(path) as group:
        yield group.stage(path)


def _write_error(exc: OSError, path: PathLike, tmp: str) -> Exception:
    """An OSError while writing a staged file: named after the output, not the temporary file."""
    if exc.filename is not None and os.path.abspath(str(exc.filename)) != os.path.abspath(tmp):
        return exc                          # an error about another file (an input read meanwhile)
    if exc.errno is None:                   # Arrow's native writers: the message is all there is
        return InputError(f"cannot write: {exc}", path=str(path), fix="check the free space and permissions")
    return os_error(exc, str(path), "write")


@contextlib.contextmanager
def atomic_path(path: PathLike) -> Iterator[str]:
    """A temp path beside ``path`` for a native writer; renamed into place only on success
    (with the other outputs of the enclosing :func:`outputs` group, if any)."""
    with _staged_path(path) as tmp:
        try:
            yield tmp
        except OSError as exc:
            err = _write_error(exc, path, tmp)
            if err is exc:
                raise
            raise err from None


@contextlib.contextmanager
def atomic_output(path: PathLike, mode: str = "w") -> Iterator[IO]:
    """Write to a temp file beside ``path`` and rename it into place only on success.

    ``-`` writes to stdout.  A path ending in ``.gz`` is gzip-compressed.  A failure
    (an exception inside the block) leaves no file behind and the old one untouched.
    """
    if is_stdio(path):
        yield sys.stdout.buffer if "b" in mode else sys.stdout
        sys.stdout.flush()
        return
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as raw:
            sink: IO = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if str(path).endswith(".gz") else raw
            if "b" in mode:
                yield sink
            else:
                text = io.TextIOWrapper(sink, encoding="utf-8", newline="\n")
                yield text
                text.flush()
                text.detach()
            if sink is not raw:
                sink.close()
