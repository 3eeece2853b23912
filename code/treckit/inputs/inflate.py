"""gzip data inflated a bounded piece at a time, and content regrouped into blocks of whole lines: however far a
``.gz`` inflates (a gzip bomb), no more than a piece of it is held (:mod:`.sources` reads through these)."""
from __future__ import annotations

import io
import zlib
from typing import Callable, Iterable, Iterator

from .. import thresholds
from ..console.errors import InputError
from .limits import GZIP_MAGIC, STREAMED_FIX, too_large
from .held import line_bound, piece
from .long_lines import LineWatch, check_held, too_long


def gunzip(data: bytes, name: str, limit: int, fix: str = STREAMED_FIX, lines: bool = False) -> bytes:
    """The whole content of the gzip data ``data``, at most ``limit`` bytes (inflated a bounded piece at a time)."""
    watch = LineWatch(name) if lines else None
    pieces, total = [], 0
    for got in inflate(io.BytesIO(data).read, name):
        total += len(got)
        if total > limit:
            raise too_large(name, limit, fix)
        if watch is not None:
            watch.feed(got)
        pieces.append(got)
    return b"".join(pieces)


def gzip_error(exc: BaseException, name: str) -> InputError:
    if isinstance(exc, EOFError):
        return InputError("the gzip data is cut short (truncated): it ends before its end-of-stream marker", path=name,
                          fix="re-create or re-download the .gz file (a copy or download may not have finished)")
    return InputError(f"corrupt gzip data ({exc})", path=name, fix="re-create or re-download the .gz file")


def inflate(read: Callable[[int], bytes], name: str) -> Iterator[bytes]:
    """The content of the gzip data ``read(n)`` gives (every member of it, as ``gzip -d`` reads them), inflated
    by zlib a piece of at most :data:`~treckit.thresholds.INFLATE_PIECE_BYTES` (a share of the memory budget:
    :func:`~.held.piece`) at a time from blocks of
    :data:`~treckit.thresholds.GZIP_READ_BYTES`: however far the data inflates (a gzip bomb), no more than a piece
    is ever held here.  zlib checks each member's CRC and length; data cut short, or not gzip where a member
    should start, is an error naming ``name``."""
    d = zlib.decompressobj(_GZIP_WBITS)
    most = piece(thresholds.INFLATE_PIECE_BYTES)
    tail = b""                  # input not yet given to zlib
    try:
        while True:
            data = d.unconsumed_tail or tail or read(thresholds.GZIP_READ_BYTES)
            tail = b""
            if not data:
                while not d.eof and (out := d.decompress(b"", most)):
                    yield out
                if not d.eof:
                    raise EOFError
                return
            out = d.decompress(data, most)
            if out:
                yield out
            if d.eof:
                rest = d.unused_data or read(thresholds.GZIP_READ_BYTES)
                while rest and not rest.strip(b"\0"):              # zeros after a member are padding (gzip -d)
                    rest = read(thresholds.GZIP_READ_BYTES)
                rest = rest.lstrip(b"\0")
                if not rest:
                    return
                if rest[:1] != GZIP_MAGIC[:1] or rest[1:2] not in (GZIP_MAGIC[1:], b""):
                    raise zlib.error("data after the end of the gzip stream is not gzip")
                d, tail = zlib.decompressobj(_GZIP_WBITS), rest
    except zlib.error as exc:
        raise gzip_error(exc, name) from None
    except EOFError as exc:
        raise gzip_error(exc, name) from None


_GZIP_WBITS = 16 + zlib.MAX_WBITS       # a gzip header and trailer around deflate data


def whole_lines(pieces: Iterable[bytes], block: int, name: str, first_line: int = 1) -> Iterator[tuple[bytearray, int]]:
    """``pieces`` of content regrouped into blocks of whole lines of about ``block`` bytes (the last one may end
    without a newline), each with the number of its first line; a line longer than
    the line bound (:func:`~.held.line_bound`) is refused as soon as it is, holding no more of it than that."""
    buf, line = bytearray(), first_line
    cut = 0                     # where the unfinished last line of buf starts
    for got in pieces:
        newline = got.rfind(b"\n")
        if newline >= 0:
            cut = len(buf) + newline + 1
        buf += got
        if len(buf) - cut > line_bound():
            raise too_long(name, line + buf.count(b"\n", 0, cut), buf[cut:])
        if len(buf) < block or not cut:
            continue
        out, buf = buf, buf[cut:]
        del out[cut:]
        cut = 0
        check_held(out, name, line)
        yield out, line
        line += out.count(b"\n")
    if buf:
        check_held(buf, name, line)
        yield buf, line
