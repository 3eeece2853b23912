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


def read_bytes(path: PathLike) -> bytes:
    """The whole (decompressed) content of a file, ``-`` being stdin, with clear errors.

    A large plain file comes back memory-mapped (bytes-like, read-only), so that the fast readers
    parse it in place instead of copying it first.
    """
    name = display_name(path)
    try:
        if str(path) == "-":
            data = sys.stdin.buffer.read()
        else:
            p = Path(path)
            if p.is_dir():
                raise InputError("is a directory, not a file", path=name, fix="pass the path of a file")
            with open(p, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size >= 1 << 24 and fh.read(2) != b"\x1f\x8b":
                    import mmap
                    return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
                fh.seek(0)
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
