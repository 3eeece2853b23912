"""The one bound on the length of an input line (:data:`treckit.thresholds.MAX_LINE_BYTES`, within a memory budget its
share of it: :func:`treckit.inputs.held.line_bound`), checked while a file is
read, so that a line past it -- a gzip bomb of one endless line, a binary file -- is refused with an error naming
the file, the line and its first characters, and is never held in memory whole.

Lines end at ``\\n`` (as every reader splits them); a line's length is its bytes without that newline.  Three
ways to check, one rule: content held in memory (:func:`check_held`), a file read at offsets without reading
it all (:func:`check_file`), and content arriving block by block (:class:`LineWatch`).
"""
from __future__ import annotations

from typing import Callable

from .. import thresholds
from ..console.errors import SHOWN_CHARS, InputError
from .held import line_bound

_HEAD_BYTES = 4 * SHOWN_CHARS + 4     # enough of a line's start for the characters a message quotes


def too_long(name: str, line: int, head: bytes) -> InputError:
    """The error for line ``line`` of ``name``, which starts with the bytes ``head`` (up to its end, if they go on)."""
    head = bytes(head[:_HEAD_BYTES]).split(b"\n", 1)[0]
    bound = line_bound()
    within = "" if bound == thresholds.MAX_LINE_BYTES else " within this --memory-limit"
    return InputError(f"line longer than {bound:,} bytes, the longest line treckit reads{within}",
                      path=name, line=line, text=head.decode("utf-8", "backslashreplace"),
                      fix="check that this is the right file (run, qrels, TSV and JSON lines are far shorter: one "
                          "this long is binary data, or text that lost its line breaks); a JSON line this long must "
                          "be made shorter, e.g. by writing the run as TREC lines")


def first_long_line(start: int, end: int, rfind: Callable[[int, int], int]) -> int | None:
    """The offset of the first line longer than the bound among the lines starting at ``start`` (a line's start)
    and ending by ``end`` (the content's end, or just past a newline), or None.  ``rfind(a, b)``: the offset of
    the last newline in ``a .. b``, or -1.  Each step looks back from the furthest place the current line may
    end, so only the ends of about (``end`` - ``start``) / bound lines are looked at."""
    bound = line_bound()
    pos = start
    while end - pos > bound:
        newline = rfind(pos, pos + bound + 1)
        if newline < 0:
            return pos
        pos = newline + 1
    return None


def check_held(data: bytes | bytearray, name: str, first_line: int = 1) -> None:
    """Refuse content held in memory (whose first line is line ``first_line`` of ``name``) with a line past the bound."""
    at = first_long_line(0, len(data), lambda a, b: data.rfind(b"\n", a, b))
    if at is not None:
        raise too_long(name, data.count(b"\n", 0, at) + first_line, data[at:at + _HEAD_BYTES])


def check_file(read: Callable[[int, int], bytes], size: int, name: str) -> None:
    """Refuse a file of ``size`` bytes with a line past the bound, reading only around the places lines must
    end by (``read(a, b)``: its bytes ``a .. b``), a growing piece at a time (from
    :data:`treckit.thresholds.LONG_LINE_LOOK_BACK_BYTES` up to
    :data:`treckit.thresholds.LONG_LINE_LOOK_BACK_MAX_BYTES`)."""
    def rfind(a: int, b: int) -> int:
        step = thresholds.LONG_LINE_LOOK_BACK_BYTES
        while b > a:
            lo = max(a, b - step)
            got = read(lo, b).rfind(b"\n")
            if got >= 0:
                return lo + got
            b, step = lo, min(step * 2, thresholds.LONG_LINE_LOOK_BACK_MAX_BYTES)
        return -1

    at = first_long_line(0, size, rfind)
    if at is None:
        return
    line, pos = 1, 0
    while pos < at:                         # the line's number: only when refusing
        chunk = read(pos, min(at, pos + thresholds.LONG_LINE_LOOK_BACK_MAX_BYTES))
        line += chunk.count(b"\n")
        pos += len(chunk)
    raise too_long(name, line, read(at, min(size, at + _HEAD_BYTES)))


class LineWatch:
    """Content arriving block by block (a pipe, a gzip stream): :meth:`feed` each block in turn; the first line
    past the bound is refused as soon as it is, holding no more of it than its first bytes."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.line = 1               # the current (unfinished) line's number
        self.length = 0             # its bytes so far
        self.head = b""             # its first bytes

    def feed(self, block: bytes) -> None:
        first = block.find(b"\n")
        self._goes_on(block, len(block) if first < 0 else first)
        if first < 0:
            return
        last = block.rfind(b"\n")
        at = first_long_line(first + 1, last + 1, lambda a, b: block.rfind(b"\n", a, b))
        if at is not None:
            raise too_long(self.name, self.line + block.count(b"\n", 0, at), block[at:at + _HEAD_BYTES])
        self.line += block.count(b"\n")
        self.length, self.head = 0, b""
        self._goes_on(block[last + 1:last + 1 + _HEAD_BYTES], len(block) - last - 1)

    def _goes_on(self, block: bytes, n: int) -> None:
        """The current line goes on for ``n`` bytes, the first of which start ``block``."""
        if len(self.head) < _HEAD_BYTES:
            self.head += block[:min(n, _HEAD_BYTES - len(self.head))]
        self.length += n
        if self.length > line_bound():
            raise too_long(self.name, self.line, self.head)
