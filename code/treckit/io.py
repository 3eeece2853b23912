"""Opening inputs (paths, ``.gz``, ``-`` for stdin) and writing outputs atomically."""
from __future__ import annotations

import contextlib
import gzip
import io
import os
import sys
import tempfile
from pathlib import Path
from typing import IO, Iterator

from .errors import InputError

PathLike = str | os.PathLike


def display_name(path: PathLike) -> str:
    return "<stdin>" if str(path) == "-" else str(path)


_stdin_cache: bytes | None = None


def read_bytes(path: PathLike) -> bytes:
    """The whole (decompressed) content of a file, ``-`` being stdin (read once, then remembered,
    so that detecting the format and reading it see the same bytes), with clear errors."""
    global _stdin_cache
    name = display_name(path)
    try:
        if str(path) == "-":
            if _stdin_cache is None:
                _stdin_cache = sys.stdin.buffer.read()
            data = _stdin_cache
        else:
            p = Path(path)
            if p.is_dir():
                raise InputError("is a directory, not a file", path=name, fix="pass the path of a file")
            with open(p, "rb") as fh:
                data = fh.read()
    except FileNotFoundError:
        raise InputError("no such file", path=name, fix="check the path (relative paths start from the current directory)") from None
    except PermissionError:
        raise InputError("permission denied", path=name, fix="make the file readable") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise InputError(f"corrupt gzip data ({exc})", path=name, fix="re-create or re-download the .gz file") from None
    return data


class Source:
    """An input for the vectorized readers: a plain file is handed to Arrow by path (it streams it in
    blocks, so the whole file never sits in memory); stdin and .gz are read into memory first.
    ``head``/``tail`` are the first/last 64 KiB, ``data()`` the whole content for the line parsers."""

    def __init__(self, path: PathLike):
        self.path = path
        self._data = None
        p = None if str(path) == "-" else Path(path)
        plain = False
        if p is not None and p.is_file():
            with open(p, "rb") as fh:
                self.head = fh.read(1 << 16)
                plain = self.head[:2] != b"\x1f\x8b"
                if plain:
                    self.size = os.fstat(fh.fileno()).st_size
                    fh.seek(max(0, self.size - (1 << 16)))
                    self.tail = fh.read()
        if not plain:
            self._data = read_bytes(path)
            self.head, self.tail, self.size = self._data[: 1 << 16], self._data[-(1 << 16):], len(self._data)
        self.plain = plain

    def arrow(self):
        import pyarrow as pa
        return str(self.path) if self.plain else pa.py_buffer(self._data)

    def data(self) -> bytes:
        if self._data is None:
            self._data = read_bytes(self.path)
        return self._data


def decode_text(data: bytes, path: PathLike) -> str:
    """UTF-8 text (a BOM is dropped); a wrong encoding names the line and the byte offset."""
    if not isinstance(data, bytes):
        data = bytes(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        start = data.rfind(b"\n", 0, exc.start) + 1
        end = data.find(b"\n", exc.start)
        snippet = data[start:end if end >= 0 else len(data)].decode("utf-8", "backslashreplace")
        raise InputError(f"not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})", path=display_name(path),
                         line=line, text=snippet, fix="convert the file to UTF-8, e.g. iconv -f latin1 -t utf-8") from None
    return text[1:] if text.startswith("\ufeff") else text


def read_text(path: PathLike) -> str:
    return decode_text(read_bytes(path), path)


@contextlib.contextmanager
def atomic_path(path: PathLike) -> Iterator[str]:
    """A temp path beside ``path`` for a native writer; renamed into place only on success."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_output(path: PathLike, mode: str = "w") -> Iterator[IO]:
    """Write to a temp file beside ``path`` and rename it into place only on success.

    ``-`` writes to stdout.  A path ending in ``.gz`` is gzip-compressed.  A failure
    (an exception inside the block) leaves no file behind and the old one untouched.
    """
    if str(path) == "-":
        if "b" in mode:
            yield sys.stdout.buffer
        else:
            yield sys.stdout
        sys.stdout.flush()
        return
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as raw:
            sink: IO = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if target.suffix == ".gz" else raw
            if "b" in mode:
                yield sink
            else:
                text = io.TextIOWrapper(sink, encoding="utf-8", newline="\n")
                yield text
                text.flush()
                text.detach()
            if sink is not raw:
                sink.close()
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
