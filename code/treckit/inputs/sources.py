"""Inputs named by path: regular files, pipes (``-`` for stdin, ``<(cmd)``), ``.gz`` and URLs (:mod:`.urls`).

Folders and devices are refused, and what is read whole into memory is bounded
(:data:`treckit.thresholds.WHOLE_READ_LIMIT`), and so is each line of what is read as lines
(:mod:`.long_lines`).  Every OS error names the path.  Stdin, pipes and URLs
are read once and their content kept, so that detecting the format and reading it see the same bytes.
:class:`Source` hands the vectorized readers a plain file by path (Arrow streams it) and anything else
as bytes; :func:`file_digest` and :func:`content_digest` identify inputs.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import stat
import sys
from pathlib import Path
from typing import IO, Callable, Iterable, Iterator

from .. import thresholds
from ..console.errors import InputError, os_error, without_credentials
from .limits import GZIP_MAGIC, STREAMED_FIX, read_pipe, too_large, whole_read_limit
from .held import admit, line_bound, piece
from .long_lines import check_file, check_held
from .inflate import gunzip, inflate, whole_lines
from .urls import is_url, read_url

PathLike = str | os.PathLike


def display_name(path: PathLike) -> str:
    """How a message names an input: ``<stdin>`` for ``-``, a URL without its credentials."""
    return "<stdin>" if str(path) == "-" else without_credentials(str(path))


def is_stdio(path: PathLike | None) -> bool:
    return path is not None and str(path) == "-"


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


# stdin and pipes can be read only once: their content is kept, so that detecting the format and
# reading it see the same bytes
_stream_cache: dict[str, bytes] = {}


@contextlib.contextmanager
def read_as(path: str, content: bytes) -> Iterator[None]:
    """While the block runs, reading ``path`` gives ``content`` (a URL's first lines, for the format detector),
    unless its content is kept already (then that is what it gives)."""
    if path in _stream_cache:
        yield
        return
    _stream_cache[path] = content
    try:
        yield
    finally:
        _stream_cache.pop(path, None)


def read_bytes(path: PathLike, *, limit: int | None = None, too_large_fix: str = STREAMED_FIX,
               lines: bool = False) -> bytes:
    """The whole (decompressed) content of a file, ``-`` being stdin, with clear errors.
    At most ``limit`` bytes (default :func:`whole_read_limit`), compressed or not; past it, an
    error whose fix is ``too_large_fix``.  ``lines``: the content is lines, none longer than
    the line bound (:mod:`treckit.inputs.long_lines`), refused while it is read.
    What is read as lines without being held whole goes through :meth:`Source.blocks` instead."""
    name = display_name(path)
    limit = whole_read_limit() if limit is None else limit
    data = _raw_bytes(path, limit, too_large_fix, lines)
    if data[:2] == GZIP_MAGIC:
        data = gunzip(data, name, limit, too_large_fix, lines)
    if lines:                   # what the checks while reading did not see: kept content, a URL's
        check_held(data, name)
    return data


def _raw_bytes(path: PathLike, limit: int, too_large_fix: str = STREAMED_FIX, lines: bool = False) -> bytes:
    """The bytes of an input as stored (a ``.gz`` file's compressed bytes), at most ``limit``; stdin, pipes and
    URLs are read once and kept (:data:`_stream_cache`)."""
    name = display_name(path)
    key = str(path)
    try:
        if key in _stream_cache:
            data = _stream_cache[key]
            if len(data) > limit:
                raise too_large(name, limit, too_large_fix)
        elif is_stdio(path):
            data = _stream_cache[key] = read_pipe(sys.stdin.buffer, name, limit, too_large_fix, lines)
        elif is_url(path):          # read once (detection and parsing see the same bytes); forget_stream drops it
            data = _stream_cache[key] = read_url(key, limit)
        else:
            st = check_input(path)
            if stat.S_ISREG(st.st_mode) and st.st_size > limit:
                raise too_large(name, limit, too_large_fix)
            with open(path, "rb") as fh:
                if lines and stat.S_ISREG(st.st_mode) and fh.peek(2)[:2] != GZIP_MAGIC:
                    _check_file_lines(fh.fileno(), name, st.st_size)      # before the whole file is read
                data = fh.read() if stat.S_ISREG(st.st_mode) else read_pipe(fh, name, limit, too_large_fix, lines)
            if stat.S_ISREG(st.st_mode) and len(data) < st.st_size:
                raise cut_short(name, len(data), st.st_size)
            if stat.S_ISFIFO(st.st_mode):
                _stream_cache[key] = data
    except OSError as exc:
        raise os_error(exc, name) from None
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


# digests of regular files, by (device, inode, size, modification time, change time): a file is read
# once per process for as long as it stays the same file, unchanged (a rewrite changes its change time);
# at most thresholds.DIGESTS_KEPT of them
_digests: dict[tuple, str] = {}


def _identity(st: os.stat_result) -> tuple[int, ...]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def file_digest(path: PathLike, *, decompress: bool = True) -> str:
    """SHA-256 of a file's content (``.gz`` decompressed, unless not ``decompress``), read in blocks (memory
    stays small whatever its size).  A regular file's digest is remembered while the file stays the same
    (:data:`_digests`)."""
    name = display_name(path)
    h = hashlib.sha256()
    if is_stdio(path) or is_url(path) or str(path) in _stream_cache:
        raw = _raw_bytes(path, whole_read_limit())
        for got in inflate(io.BytesIO(raw).read, name) if decompress and raw[:2] == GZIP_MAGIC else (raw,):
            h.update(got)
        return h.hexdigest()
    st = check_input(path)
    known = (*_identity(st), decompress) if stat.S_ISREG(st.st_mode) else None
    if known in _digests:
        return _digests[known]
    try:
        with open_input(path) as raw:
            gz = decompress and raw.peek(2)[:2] == GZIP_MAGIC
            blocks = inflate(raw.read, name) if gz else iter(lambda: raw.read(thresholds.DIGEST_READ_BYTES), b"")
            for block in blocks:
                h.update(block)
            after = (*_identity(os.fstat(raw.fileno())), decompress)
    except OSError as exc:
        raise os_error(exc, name) from None
    if known is not None and after == known:        # not changed while it was read
        if len(_digests) >= thresholds.DIGESTS_KEPT:
            _digests.pop(next(iter(_digests)))
        _digests[known] = h.hexdigest()
    return h.hexdigest()


def _ends(data: bytes) -> tuple[bytes, bytes]:
    n = thresholds.SOURCE_END_BYTES
    return data[:n], data[-n:]


class Source:
    """An input for the readers, in one of three forms, each read in bounded memory where it can be:

    * a plain regular file (``plain``): read at offsets, so that the vectorized readers parse its blocks side by
      side (and Arrow may take it by path) while the whole file never sits in memory;
    * content held in memory: stdin, pipes and URLs (read once: detection and reading see the same bytes), or a
      block of a file (:meth:`of_bytes`);
    * gzip data (a ``.gz`` file, or gzip bytes held): inflated as it is read (:func:`inflate`), a bounded piece
      at a time, never whole; a small one (its content within ``head``) is held inflated.

    ``head`` is the content's first :data:`~treckit.thresholds.SOURCE_END_BYTES` (inflated), ``size`` its length
    (None for gzip data, whose length is known only once read: :meth:`at_least`), :meth:`blocks` the content as
    blocks of whole lines, in order, whatever its form."""

    def __init__(self, path: PathLike):
        self.path = path
        self._data = None           # the content, held in memory
        self._gzip = None           # gzip data: its compressed bytes held, or True for the file at path
        self._last = None           # gzip data: the last line that is not blank, once blocks() has read to the end
        self._per_byte = None       # what holding it costs per byte of content, once admitted (admit())
        self.plain, self.size, self.tail = False, None, None
        if not is_stdio(path) and not is_url(path) and str(path) not in _stream_cache:
            st = check_input(path)
            if stat.S_ISREG(st.st_mode):
                try:
                    with open(path, "rb") as fh:
                        self.head = fh.read(thresholds.SOURCE_END_BYTES)
                        self.plain = self.head[:2] != GZIP_MAGIC
                        self._gzip = None if self.plain else True
                        if self.plain:
                            self.size = os.fstat(fh.fileno()).st_size
                            _check_file_lines(fh.fileno(), display_name(path), self.size)
                            fh.seek(max(0, self.size - thresholds.SOURCE_END_BYTES))
                            self.tail = fh.read()
                except OSError as exc:
                    raise os_error(exc, str(path)) from None
        if not self.plain and self._gzip is None:
            raw = _raw_bytes(path, whole_read_limit(), lines=True)
            if raw[:2] == GZIP_MAGIC:
                self._gzip = raw
            else:
                self._hold(raw)
        if self._gzip is not None:
            self._gzip_head()

    def _hold(self, data: bytes) -> None:
        check_held(data, display_name(self.path))
        self._data, self._gzip = data, None
        self.head, self.tail, self.size = _ends(data) + (len(data),)

    def _gzip_head(self) -> None:
        """``head``: the first bytes of the gzip data's content, inflated (no more than a piece of it); content that
        ends within them is held, inflated, from here on."""
        got = bytearray()
        with self._compressed() as read:
            for part in inflate(read, display_name(self.path)):
                got += part
                if len(got) > thresholds.SOURCE_END_BYTES:
                    self.head = bytes(got[:thresholds.SOURCE_END_BYTES])
                    return
        self._hold(bytes(got))

    @contextlib.contextmanager
    def _compressed(self) -> Iterator[Callable[[int], bytes]]:
        """``read(n)`` of the gzip data, from its start."""
        if self._gzip is not True:
            yield io.BytesIO(self._gzip).read
            return
        try:
            with open(self.path, "rb") as fh:
                yield fh.read
        except OSError as exc:
            raise os_error(exc, str(self.path)) from None

    @property
    def gzip(self) -> bool:
        """Whether the content is gzip data inflated as it is read (not held, not a plain file)."""
        return self._gzip is not None

    def at_least(self, n: int) -> bool:
        """Whether the content has ``n`` bytes or more; gzip data, whose length is known only once inflated, counts
        as large (its content is longer than ``head``)."""
        return self.size is None or self.size >= n

    def admit(self, per_byte: float, doing: str = "read whole") -> "Source":
        """Refuse this input when holding its content (``per_byte`` bytes of memory for each byte) passes the memory
        budget (:func:`~.held.admit`; ``doing``: what takes the memory): at once when its size is known, else (gzip
        data) as :meth:`blocks` inflates it, as soon as it passes."""
        self._per_byte, self._doing = per_byte, doing
        if self.size is not None:
            admit(display_name(self.path), self.size, per_byte, doing=doing)
        return self

    def blocks(self, block: int) -> Iterator[tuple[bytes | bytearray, int]]:
        """The content as blocks of whole lines of about ``block`` bytes (a share of the memory budget at most:
        :func:`~.held.piece`; a block's last line is read to its end, the content's last line may have no newline),
        each with the number of its first line, in order.  Every line is checked against the line bound
        (:mod:`.long_lines`).  A plain file that ends before the size it had when opened was cut short while it
        was read: an error, never a part taken for the whole."""
        name = display_name(self.path)
        block = piece(max(1, block))
        if self._gzip is not None:
            inflated = 0
            with self._compressed() as read:
                for out, line in whole_lines(inflate(read, name), block, name):
                    inflated += len(out)
                    if self._per_byte is not None:
                        admit(name, inflated, self._per_byte, inflating=True, doing=self._doing)
                    self._last = _last_line(out) or self._last
                    yield out, line
            return
        if self.plain:
            yield from file_blocks(self.path, block, self.size)
            return
        line = 1
        for start, end in self.line_spans(block):
            out = self._data[start:end]
            yield out, line
            line += out.count(b"\n")

    def last_line(self) -> bytes:
        """The last line that is not blank, whole however long (``tail`` may hold only its end): read back
        from the end of a plain file :data:`~treckit.thresholds.LINE_END_READ_BYTES` at a time; of gzip data, the
        one :meth:`blocks` saw last (the content is read through for it if it has not been)."""
        if self._gzip is not None:
            if self._last is None:
                for _ in self.blocks(thresholds.WHOLE_READ_BLOCK_BYTES):
                    pass
            return self._last or b""
        if self._data is not None or self.size <= len(self.tail):
            text = (self._data if self._data is not None else self.tail).rstrip()
            return text[text.rfind(b"\n") + 1:]
        end, text = self.size, b""
        try:
            with open(self.path, "rb") as fh:
                while end > 0:
                    start = max(0, end - thresholds.LINE_END_READ_BYTES)
                    fh.seek(start)
                    text = fh.read(end - start) + text
                    end = start
                    kept = text.rstrip()
                    if b"\n" in kept:
                        break
        except OSError as exc:
            raise os_error(exc, str(self.path)) from None
        kept = text.rstrip()
        return kept[kept.rfind(b"\n") + 1:]

    @classmethod
    def of_bytes(cls, data: bytes, path: PathLike) -> "Source":
        """The content ``data`` (e.g. a block of whole lines of ``path``) as an input named ``path``."""
        src = cls.__new__(cls)
        src.path, src._data, src._gzip, src._last, src._per_byte, src.plain = path, data, None, None, None, False
        src.head, src.tail, src.size = _ends(data) + (len(data),)
        return src

    def arrow(self):
        import pyarrow as pa
        return str(self.path) if self.plain else pa.py_buffer(self.data())

    def data(self) -> bytes:
        """The whole content (bounded as any whole read: :func:`~.limits.whole_read_limit`); the readers that can
        read by :meth:`blocks` do, so that gzip data is never held whole."""
        if self._data is None:
            if self._gzip is not None:
                limit, pieces, total = whole_read_limit(), [], 0
                for out, _ in self.blocks(thresholds.WHOLE_READ_BLOCK_BYTES):
                    total += len(out)
                    if total > limit:
                        raise too_large(display_name(self.path), limit)
                    pieces.append(out)
                return b"".join(pieces)
            data = read_bytes(self.path, lines=True)
            if self.plain and len(data) < self.size:           # shorter than when it was first looked at
                raise cut_short(display_name(self.path), len(data), self.size)
            self._data = data
        return self._data

    def parts(self, block: int) -> Iterable[tuple[int, int] | bytes | bytearray]:
        """The content cut into parts of whole lines of about ``block`` bytes, for a reader that parses parts side
        by side: byte ranges (:meth:`span` reads one) of a plain file or held content, the parts themselves of
        gzip data (inflated in turn, as the reader asks for them)."""
        if self._gzip is not None:
            return (out for out, _ in self.blocks(block))
        return self.line_spans(piece(block))

    def part_bytes(self, part) -> bytes | bytearray | memoryview:
        """The bytes of a part given by :meth:`parts`."""
        return self.span(*part) if isinstance(part, tuple) else part

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
        while at < self.size:
            window = self.span(at, min(self.size, at + thresholds.LINE_END_READ_BYTES))
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

    def holds_any(self, data: bytes | memoryview, part, needles: tuple[bytes, ...]) -> bool:
        """Whether ``data`` (the bytes of the part ``part`` of :meth:`parts`) holds any of the bytes ``needles``."""
        within, bounds = (self._data, part) if isinstance(data, memoryview) else (data, ())
        return any(within.find(n, *bounds) >= 0 for n in needles)


_WHITESPACE = b" \t\n\r\v\f"


def _last_line(block: bytes | bytearray) -> bytes | None:
    """The last line of ``block`` that is not blank (as ``bytes.rstrip`` strips), or None: looked for from the end a
    window at a time, blank windows passed over in C."""
    end = len(block)
    while end > 0:
        start = max(0, end - thresholds.LINE_END_READ_BYTES)
        window = bytes(block[start:end])
        if window.translate(None, _WHITESPACE):
            end = start + len(window.rstrip())
            return bytes(block[block.rfind(b"\n", 0, end) + 1:end])
        end = start
    return None


def file_blocks(path: PathLike, size: int, expected: int | None = None) -> Iterator[tuple[bytearray, int]]:
    """Blocks of about ``size`` bytes of whole lines of the plain file ``path`` (the block's last line read to its
    end), and the line number of each block's first line.  Each block is read into its own buffer, never copied.
    A file that ends before ``expected`` bytes (default: its size when opened) was cut short while it was
    read: an error, never a last line taken for a malformed one, nor a part taken for the whole."""
    name = display_name(path)
    line = 1
    read = 0
    try:
        with open(path, "rb") as fh:
            if expected is None:
                expected = os.fstat(fh.fileno()).st_size
            while True:
                block = bytearray(size)
                n = fh.readinto(block)
                if not n:
                    break
                del block[n:]
                if not block.endswith(b"\n"):         # the rest of the last line, up to the line bound
                    block += fh.readline(line_bound() + 1)
                check_held(block, name, line)
                read += len(block)
                if read < expected and (n < size or not block.endswith(b"\n")):     # the end came early
                    raise cut_short(name, read, expected)
                yield block, line
                line += block.count(b"\n")
                del block
    except OSError as exc:
        raise os_error(exc, name) from None
    if read < expected:
        raise cut_short(name, read, expected)


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
    """UTF-8 text (a BOM at the start of the file, line 1, is dropped); a wrong encoding names the line (``data``
    starting at line ``first_line`` of ``path``) and the byte offset."""
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
    return text[1:] if first_line == 1 and text.startswith("\ufeff") else text


def read_text(path: PathLike, *, limit: int | None = None, too_large_fix: str = STREAMED_FIX,
              lines: bool = False) -> str:
    return decode_text(read_bytes(path, limit=limit, too_large_fix=too_large_fix, lines=lines), path)


def check_readable(path: PathLike) -> None:
    """The errors reading ``path`` would give (missing, a directory, unreadable), without reading it."""
    p = Path(path)
    name = display_name(path)
    if not p.exists():
        raise InputError("no such file", path=name, fix="check the path (relative paths start from the current directory)")
    if p.is_dir():
        raise InputError("is a directory, not a file", path=name, fix="pass the path of a file")
    if not os.access(p, os.R_OK):
        raise InputError("permission denied", path=name, fix="make the file readable")


def content_digest(obj) -> str:
    """SHA-256 of a value's JSON (sorted keys, compact): the digest of what a config or a dataset holds, however
    it was written."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")).hexdigest()


# ---------------------------------------------------------------- what is kept for the process
def forget_streams() -> None:
    """Drop every kept content of stdin, pipes and URLs (:func:`read_bytes` reads each once per process, so that
    detection and parsing see the same bytes): the next read reads them anew."""
    _stream_cache.clear()


def remembered_digests() -> list[str]:
    """The digests :func:`file_digest` remembers (at most :data:`treckit.thresholds.DIGESTS_KEPT`), oldest first."""
    return list(_digests.values())


def forget_digests() -> None:
    """Forget every remembered digest: each file is read again when asked for."""
    _digests.clear()
