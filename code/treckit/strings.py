"""Vectorized work on Arrow string arrays without a Python object per value.

``hash64`` reads each string's bytes eight at a time straight from the Arrow buffers, so
hashing millions of doc ids costs a few numpy passes (Arrow's own string hashing is several
times slower here).  Hashes only ever nominate candidates: equal strings always hash equal,
and every match that matters is confirmed on the strings themselves.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

_PRIME = np.uint64(0x100000001B3)
_MIX = np.uint64(0x9E3779B97F4A7C15)


def _buffers(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets as int64, data bytes) of one string array chunk."""
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if arr.type == pa.string():
        off = np.frombuffer(arr.buffers()[1], np.int32)[arr.offset: arr.offset + len(arr) + 1].astype(np.int64)
    else:
        arr = arr.cast(pa.large_string())
        off = np.frombuffer(arr.buffers()[1], np.int64)[arr.offset: arr.offset + len(arr) + 1]
    data = arr.buffers()[2]
    raw = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
    return off, raw


_SLICE = 1 << 19


def hash64(arr, group: np.ndarray | None = None) -> np.ndarray:
    """A 64-bit hash of every string of ``arr`` (uint64 array of the same length); with ``group``
    (one integer per string, e.g. the query) the hash keys the pair (group, string).

    Works on slices of half a million strings (cache-sized), two at a time: numpy releases
    the GIL in these loops, so both cores work.
    """
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    pieces = [c.slice(i, _SLICE) for c in chunks for i in range(0, len(c), _SLICE)]
    bounds = np.cumsum([0] + [len(p) for p in pieces])
    out = np.empty(int(bounds[-1]), np.uint64)

    def work(i: int) -> None:                  # each piece fills its own slice of the output
        a, b = bounds[i], bounds[i + 1]
        out[a:b] = _hash_chunk(pieces[i], None if group is None else group[a:b])

    if len(pieces) <= 1:
        for i in range(len(pieces)):
            work(i)
    else:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(work, range(len(pieces))))
    return out


def _hash_chunk(arr: pa.Array, group: np.ndarray | None = None) -> np.ndarray:
    off, raw = _buffers(arr)
    start, end = off[:-1], off[1:]
    lens = end - start
    n = start.size
    if raw.size < 8:                                  # tiny chunk: pad a copy
        raw = np.concatenate([raw, np.zeros(8, np.uint8)])
    # every 8-byte window of the data as a little-endian uint64 (unaligned view, stride one byte)
    words = np.ndarray(shape=(raw.size - 7,), dtype="<u8", buffer=raw, offset=0, strides=(1,))
    short = np.flatnonzero(lens < 8)
    short_words = None
    if short.size:
        # a short string sits in the high bytes of the window ending at its end; shift the rest out
        # (a window cannot start before 0: the rare string that ends before byte 8 is read bytewise)
        e = end[short]
        w = words[np.maximum(e - 8, 0)]
        w = np.where(lens[short] == 0, np.uint64(0), w >> ((np.uint64(8) - lens[short].astype(np.uint64)) * np.uint64(8)))
        for i in np.flatnonzero(e < 8).tolist():
            r = int(short[i])
            w[i] = int.from_bytes(raw[start[r]:end[r]].tobytes(), "little")
        short_words = w
    last = np.maximum(end - 8, 0)
    with np.errstate(over="ignore"):
        if group is None:
            h = np.full(n, 0xCBF29CE484222325, np.uint64)
        else:
            h = (group.astype(np.uint64) + np.uint64(1)) * _MIX
        for k in range(int((lens.max() + 7) // 8)):
            # whole words inside the string; the last one ends at the string's end (overlapping).
            # A string takes part in as many rounds as it has words, whatever its neighbours' lengths.
            w = words[np.minimum(start + 8 * k, last)]
            if short_words is not None:
                w[short] = short_words
            mixed = (h ^ w) * _PRIME
            h = mixed if k == 0 and short_words is None else np.where(lens > 8 * k, mixed, h)
        h ^= lens.astype(np.uint64)
        h *= _MIX
        h ^= h >> np.uint64(29)
    return h


def take_strings(arr, idx: np.ndarray) -> list[str]:
    return arr.take(pa.array(idx, pa.int64())).to_pylist()
