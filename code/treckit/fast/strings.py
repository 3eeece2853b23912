"""Vectorized work on Arrow string arrays without a Python object per value.

``hash64`` reads each string's bytes eight at a time straight from the Arrow buffers, so
hashing millions of doc ids costs a few numpy passes (Arrow's own string hashing is several
times slower here).  Hashes only ever nominate candidates: equal strings always hash equal,
and every match that matters is confirmed on the strings themselves.
"""
from __future__ import annotations

from ..dependencies import deferred
from .. import thresholds
from .arrow import call, take as arrow_take
from .parallel import for_each, ordered_map, pieces as _row_pieces

np = deferred("numpy")
pa = deferred("pyarrow")

_PRIME = 0x100000001B3
_MIX = 0x9E3779B97F4A7C15


def string_buffers(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
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


def is_utf8(data: pa.Buffer) -> bool:
    """Whether the bytes of ``data`` are UTF-8 (Arrow's check, the one its readers apply to each
    text field, run over the whole buffer at once)."""
    offsets = pa.py_buffer(np.array([0, data.size], np.int64))
    try:        # validate() checks a text array's UTF-8 without a copy
        pa.Array.from_buffers(pa.large_string(), 1, [None, offsets, data]).validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def short_whole_numbers(col: pa.ChunkedArray, most_digits: int = 18) -> bool:
    """Whether every value of a binary column is 1 to ``most_digits`` ASCII digits: a whole number that
    a 64-bit integer holds (18 digits always fit).  False says nothing more: the value may still be one
    (a sign, leading zeros beyond 18 digits), for a slower check to decide."""
    for c in col.chunks:
        if len(c) == 0:
            continue
        off = np.frombuffer(c.buffers()[1], np.int32, len(c) + 1, c.offset * 4)
        lengths = np.diff(off)
        if int(lengths.min()) < 1 or int(lengths.max()) > most_digits:
            return False
        data = np.frombuffer(c.buffers()[2], np.uint8)[off[0]:off[-1]]
        if (np.subtract(data, np.uint8(48)) > 9).any():    # bytes below '0' wrap around to large values
            return False
    return True


def view_as_text(col: pa.ChunkedArray) -> pa.ChunkedArray:
    """A binary column as text, without copying or checking: for fields cut out of a buffer that
    :func:`is_utf8` accepted."""
    return pa.chunked_array([c.view(pa.string()) for c in col.chunks], pa.string())


def hash64(arr, group: np.ndarray | None = None, each=None) -> np.ndarray | None:
    """A 64-bit hash of every string of ``arr`` (uint64 array of the same length); with ``group``
    (one integer per string, e.g. the query) the hash keys the pair (group, string).

    Pieces of up to a million strings (Arrow's own chunks where they are that small) are hashed
    side by side, one per core: numpy releases the GIL in these loops.  With ``each``,
    nothing is returned: ``each(first_row, hashes)`` is called on every piece instead (from several
    threads at once; it must only write to rows of its own piece), so the hashes of a long column never
    have to sit in memory all at once.
    """
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    step = thresholds.STRING_SLICE_ROWS
    pieces = [c if len(c) <= step else c.slice(i, step) for c in chunks for i in range(0, max(len(c), 1), step)]
    bounds = np.cumsum([0] + [len(p) for p in pieces])
    out = np.empty(int(bounds[-1]), np.uint64) if each is None else None

    def work(i: int) -> None:
        a, b = bounds[i], bounds[i + 1]
        if b > a:
            h = _hash_chunk(pieces[i], None if group is None else group[a:b])
            if each is None:
                out[a:b] = h
            else:
                each(int(a), h)

    for_each(work, list(range(len(pieces))))
    return out


def _hash_chunk(arr: pa.Array, group: np.ndarray | None = None) -> np.ndarray:
    """The hash of each string is a function of its bytes (and group) only, whatever its
    neighbours: it mixes the string's first 8 bytes, its middle 8-byte words when it is longer
    than 16 bytes, then its last 8 bytes (which overlap the first for lengths 8-15) and its length.
    A string shorter than 8 bytes is one zero-padded word."""
    off, raw = string_buffers(arr)
    start, end = off[:-1], off[1:]
    lens = end - start
    if raw.size < 8:                                  # tiny chunk: pad a copy
        raw = np.concatenate([raw, np.zeros(8, np.uint8)])
    # every 8-byte window of the data as a little-endian uint64 (unaligned view, stride one byte)
    words = np.ndarray(shape=(raw.size - 7,), dtype="<u8", buffer=raw, offset=0, strides=(1,))
    if lens.size and int(lens.max()) <= 8:
        first = last = _one_word(words, raw, start, end, lens)
    else:
        first, last = _first_and_last_words(words, raw, start, end, lens)
    prime, mix = np.uint64(_PRIME), np.uint64(_MIX)
    with np.errstate(over="ignore"):
        if group is None:
            h = np.full(start.size, 0xCBF29CE484222325, np.uint64)
        else:
            h = group.astype(np.uint64)
            h += np.uint64(1)
            h *= mix
        h ^= first
        h *= prime
        long = np.flatnonzero(lens > 16)
        if long.size:                                 # the middle words, for the few long strings
            hl, sl, ll = h[long], start[long], lens[long]
            for k in range(1, int((ll.max() - 1) // 8)):
                inside = 8 * k + 8 < ll
                hl = np.where(inside, (hl ^ words[np.where(inside, sl + 8 * k, 0)]) * prime, hl)
            h[long] = hl
        h ^= last
        h *= prime
        h ^= lens.view(np.uint64)                     # lengths are >= 0: the same bits
        h *= mix
        h ^= h >> np.uint64(29)
    return h


def _one_word(words: np.ndarray, raw: np.ndarray, start: np.ndarray, end: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Strings of at most 8 bytes as one zero-padded word each (the value _first_and_last_words
    gives them as both words): the window ending at the string's end, shifted right."""
    e = end - 8
    early = np.flatnonzero(e < 0)
    e[early] = 0
    with np.errstate(over="ignore"):
        w = words[e] >> ((np.uint64(8) - lens.astype(np.uint64)) * np.uint64(8) & np.uint64(63))
    w[lens == 0] = 0
    for r in early.tolist():                          # a string that ends before byte 8: read bytewise
        w[r] = int.from_bytes(raw[start[r]:end[r]].tobytes(), "little")
    return w


def _first_and_last_words(words: np.ndarray, raw: np.ndarray, start: np.ndarray, end: np.ndarray,
                          lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each string's first and last 8 bytes as words (overlapping for lengths 8-15); a string
    shorter than 8 bytes is one zero-padded word, given as both."""
    last_at = end - 8
    short = np.flatnonzero(lens < 8)
    first_at = start
    if short.size:
        last_at[short] = 0                            # read in a moment, then replaced
        past = np.searchsorted(start, words.size)     # only short strings at the very end start there
        if past < start.size:
            first_at = start.copy()
            first_at[past:] = 0
    first = words[first_at]
    last = words[last_at]
    if short.size:
        # a short string sits in the high bytes of the window ending at its end; shift the rest out
        # (a window cannot start before 0: the rare string that ends before byte 8 is read bytewise)
        e, n = end[short], lens[short].astype(np.uint64)
        w = words[np.maximum(e - 8, 0)]
        w = np.where(n == 0, np.uint64(0), w >> ((np.uint64(8) - n) * np.uint64(8)))
        for i in np.flatnonzero(e < 8).tolist():
            r = int(short[i])
            w[i] = int.from_bytes(raw[start[r]:end[r]].tobytes(), "little")
        first[short] = w
        last[short] = w
    return first, last


class ByteWords:
    """The strings of an Arrow string array (or chunked array, joined) read eight bytes at a time: ``at(byte)``
    gives bytes ``byte`` .. ``byte + 7`` of each string as one big-endian uint64, the bytes past a string's end
    zero.  Strings compare as their bytes do (memcmp, a string before its extensions) when compared word by
    word, ``byte`` = 0, 8, 16 ..., then by ``lengths``: a sort of millions of strings becomes a few integer
    sorts, each over the strings still tied."""

    def __init__(self, arr) -> None:
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
        off, raw = string_buffers(arr)
        self.start, self.lengths = off[:-1], np.diff(off)
        if raw.size < 8:                              # tiny array: pad a copy
            raw = np.concatenate([raw, np.zeros(8, np.uint8)])
        self._raw = raw
        # every 8-byte window of the data as a little-endian uint64 (unaligned view, stride one byte)
        self._windows = np.ndarray(shape=(raw.size - 7,), dtype="<u8", buffer=raw, offset=0, strides=(1,))

    def at(self, byte: int, rows: np.ndarray | None = None) -> np.ndarray:
        """The word at ``byte`` of each string (of each of ``rows``)."""
        start, size = (self.start, self.lengths) if rows is None else (self.start[rows], self.lengths[rows])
        at = start + byte
        held = np.clip(size - byte, 0, 8)             # the string's bytes in the word
        last = self._windows.size - 1
        w = self._windows[np.minimum(at, last)].byteswap()
        shift = ((8 - held) * 8).astype(np.uint64) & np.uint64(63)
        w = np.where(held > 0, (w >> shift) << shift, np.uint64(0))
        for r in np.flatnonzero((at > last) & (held > 0)).tolist():      # past the last window's start
            w[r] = int.from_bytes(self._raw[at[r]:at[r] + held[r]].tobytes().ljust(8, b"\0"), "big")
        return w


def contains_byte(col, byte: int) -> bool:
    """Whether any value of a string column contains ``byte``: a memchr-speed scan of each chunk's
    data buffer (copied a chunk at a time, which costs less than any search that avoids the copy)."""
    needle = bytes([byte])
    for c in (col.chunks if isinstance(col, pa.ChunkedArray) else [col]):
        if len(c):
            off, raw = string_buffers(c)
            if raw[off[0]:off[-1]].tobytes().find(needle) >= 0:
                return True
    return False


def has_empty(col) -> bool:
    """Whether any value of a string column is the empty string: one pass over its offsets, in
    place for plain strings; a dictionary-encoded column checks its distinct values only."""
    for c in (col.chunks if isinstance(col, pa.ChunkedArray) else [col]):
        if pa.types.is_dictionary(c.type):
            c = c.dictionary
        if not len(c):
            continue
        if c.type == pa.string():
            off = np.frombuffer(c.buffers()[1], np.int32, len(c) + 1, c.offset * 4)
        else:
            off, _ = string_buffers(c)
        if (off[1:] == off[:-1]).any():
            return True
    return False


def run_starts(col, most: int | None = None) -> np.ndarray | None:
    """First row of each run of equal neighbouring values (row 0 always starts one); None when
    there are more than ``most`` runs (saying so costs no array as long as the column)."""
    n = len(col)
    if n < 2:
        return np.zeros(min(n, 1), np.int64)

    def changes(r: range) -> np.ndarray:
        return r.start + 1 + true_rows(call("not_equal", col.slice(r.start + 1, len(r)), col.slice(r.start, len(r))))
    # each row against the one before, in slices side by side (Arrow's kernels release the GIL)
    starts = np.concatenate([np.zeros(1, np.int64)]
                            + list(ordered_map(changes, _row_pieces(n - 1, thresholds.STRING_SLICE_ROWS))))
    return None if most is not None and starts.size > most else starts


def true_rows(mask) -> np.ndarray:
    """The rows where a boolean Arrow column is true (int64, ascending).  Read off its bits: only the bytes
    holding a set bit are unpacked, so a column true at few rows costs a scan of n / 8 bytes."""
    out, base = [], 0
    for c in (mask.chunks if isinstance(mask, pa.ChunkedArray) else [mask]):
        n = len(c)
        if c.null_count:                      # a null is not true
            out.append(base + np.flatnonzero(call("coalesce", c, pa.scalar(False)).to_numpy(zero_copy_only=False)))
        elif n:
            first = c.offset // 8
            bits = np.frombuffer(c.buffers()[1], np.uint8)[first:(c.offset + n + 7) // 8]
            held = np.flatnonzero(bits)
            hit = np.unpackbits(bits[held], bitorder="little").reshape(-1, 8).view(bool)
            rows = ((held + first)[:, None] * 8 + np.arange(8))[hit] - c.offset
            out.append(base + rows[(rows >= 0) & (rows < n)])
        base += n
    return np.concatenate(out).astype(np.int64, copy=False) if out else np.zeros(0, np.int64)


def take(col, idx: np.ndarray) -> pa.Array:
    """``col[idx]`` as one Arrow array.  Arrow's own take over a chunked column first joins the
    chunks, which costs as much as taking every row: for a few indices, take chunk by chunk."""
    if not isinstance(col, pa.ChunkedArray):
        return arrow_take(col, np.asarray(idx, np.int64))
    if col.num_chunks == 1:
        return arrow_take(col.chunk(0), np.asarray(idx, np.int64))
    if len(idx) > len(col) // 16:
        return arrow_take(col, np.asarray(idx, np.int64)).combine_chunks()
    idx = np.asarray(idx, np.int64)
    bounds = np.cumsum([0] + [len(c) for c in col.chunks])
    which = np.searchsorted(bounds, idx, "right") - 1
    order = np.argsort(which, kind="stable")
    cuts = np.searchsorted(which[order], np.arange(col.num_chunks + 1))
    parts = [arrow_take(col.chunk(c), idx[order[cuts[c]:cuts[c + 1]]] - bounds[c])
             for c in range(col.num_chunks) if cuts[c + 1] > cuts[c]]
    if not parts:
        return pa.array([], col.type)
    joined = pa.concat_arrays(parts)
    inverse = np.empty(order.size, np.int64)
    inverse[order] = np.arange(order.size)
    return arrow_take(joined, inverse)


def take_strings(arr, idx: np.ndarray) -> list[str]:
    return take(arr, idx).to_pylist()
