"""How much of an input is read into memory whole, and reading it within that bound: a file object read a
block at a time, a pipe (stdin, a FIFO) read so that Ctrl-C still gets through."""
from __future__ import annotations

import io
import os
import select
from typing import IO

from ..console.errors import InputError
from .held import budget
from .long_lines import LineWatch
from .. import thresholds



def whole_read_limit() -> int:
    """At most this many bytes are read into memory whole: :data:`~treckit.thresholds.WHOLE_READ_LIMIT`, else the
    machine's physical memory; within a memory budget, no more than the budget (:mod:`.held`)."""
    if thresholds.WHOLE_READ_LIMIT is not None:
        limit = thresholds.WHOLE_READ_LIMIT
    else:
        try:
            limit = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            limit = thresholds.UNKNOWN_MEMORY_BYTES
    held = budget()
    return limit if held is None else min(limit, held)


STREAMED_FIX = "pass an uncompressed regular file (it is streamed), or check that this is the right file"


def too_large(name: str, limit: int, fix: str = STREAMED_FIX) -> InputError:
    return InputError(f"more than {limit:,} bytes to read into memory", path=name, fix=fix)


def read_bounded(fh: IO[bytes], name: str, limit: int, fix: str = STREAMED_FIX, lines: bool = False) -> bytes:
    """Everything ``fh`` gives, in blocks (a read of ``limit`` bytes at once would reserve them).  ``lines``: the
    content is lines, each refused as soon as it is past the line bound -- unless it is gzip data, whose lines are
    watched as it is decompressed."""
    blocks, total = [], 0
    watch = LineWatch(name) if lines else None
    while block := fh.read(min(thresholds.WHOLE_READ_BLOCK_BYTES, limit + 1 - total) or 1):
        if watch is not None and total == 0 and block[:2] == GZIP_MAGIC:
            watch = None
        if watch is not None:
            watch.feed(block)
        blocks.append(block)
        total += len(block)
        if total > limit:
            raise too_large(name, limit, fix)
    return blocks[0] if len(blocks) == 1 else b"".join(blocks)


GZIP_MAGIC = b"\x1f\x8b"


class _PipeReader:
    """Reads a pipe (stdin, a FIFO) waiting at most :data:`treckit.thresholds.PIPE_POLL_MS` at a time between
    returns to Python.  Ctrl-C is a process signal: it may land on one of Arrow's threads, and then a read
    that blocks in the main thread is never interrupted and Python never runs its handler;
    coming back now and then lets the KeyboardInterrupt through."""

    def __init__(self, fh: IO[bytes]) -> None:
        self.fd = fh.fileno()
        self.poll = select.poll()
        self.poll.register(self.fd, select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR)

    def read(self, n: int) -> bytes:
        while not self.poll.poll(thresholds.PIPE_POLL_MS):
            pass
        return os.read(self.fd, n)


def read_pipe(fh: IO[bytes], name: str, limit: int, fix: str = STREAMED_FIX, lines: bool = False) -> bytes:
    try:
        reader = _PipeReader(fh) if hasattr(select, "poll") else fh
    except (OSError, ValueError, io.UnsupportedOperation):
        reader = fh
    return read_bounded(reader, name, limit, fix, lines)
