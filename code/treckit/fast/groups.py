"""Rows grouped by id without a Python object per row: runs of equal neighbouring ids (a run file lists each
query's lines together), codes by first appearance, stable grouping by code, positions within a group."""
from __future__ import annotations

from ..dependencies import deferred
from .. import thresholds
from .strings import run_starts, take

np = deferred("numpy")
pa = deferred("pyarrow")


def id_codes(column) -> tuple[np.ndarray, list[str]]:
    """(code of each row, the distinct ids in order of first appearance) of a string or dictionary column."""
    starts, run_code, ids = id_runs(column)
    return spread(run_code, starts, len(column)), ids


def spread(values: np.ndarray, starts: np.ndarray, n: int) -> np.ndarray:
    """One value per run (runs starting at ``starts`` in ``n`` rows) as one value per row."""
    return np.repeat(values, np.diff(np.append(starts, n)))


def expand_ranges(owner: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (owner[i], j) for every j in lo[i]..hi[i]-1."""
    n = hi - lo
    total = int(n.sum())
    first = np.cumsum(n) - n
    return np.repeat(owner, n), np.repeat(lo, n) + (np.arange(total) - np.repeat(first, n))


def id_runs(column) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The column as runs of equal ids: (first row of each run, code of each run, the distinct ids
    in order of first appearance).  A run file lists each query's lines together, so its qid
    column is a few thousand runs however many lines it has: one comparison of neighbours finds
    them, and only each run's first value becomes a Python string."""
    arr = column if isinstance(column, (pa.Array, pa.ChunkedArray)) else pa.array(column, pa.string())
    n = len(arr)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int32), []
    if not pa.types.is_dictionary(arr.type):
        starts = run_starts(arr, most=max(n // thresholds.FEW_RUNS_FRACTION, thresholds.FEW_RUNS_MIN))
        if starts is not None:                     # few runs (or few rows): a Python pass over run heads
            return (starts,) + _first_appearance(take(arr, starts).to_pylist())
        # scattered values: Arrow's dictionary encoding gives the codes (chunk by chunk, then unified)
        import pyarrow.compute as pc
        arr = pc.dictionary_encode(arr)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.unify_dictionaries()
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    codes = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in chunks]).astype(np.int32)
    dictionary = chunks[0].dictionary.to_pylist()
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    if starts.size <= max(n // thresholds.FEW_RUNS_FRACTION, thresholds.FEW_RUNS_MIN):
        run_code, ids = _first_appearance([dictionary[c] for c in codes[starts].tolist()])
        return starts, run_code, ids
    # scattered: renumber the dictionary codes by first appearance (the first row of each code)
    first = np.full(len(dictionary), codes.size, np.int64)
    step = thresholds.ID_RENUMBER_SLICE_ROWS
    for a in range(0, codes.size, step):           # in slices: no index array as long as the column
        np.minimum.at(first, codes[a:a + step], np.arange(a, min(a + step, codes.size)))
    used = np.flatnonzero(first < codes.size)
    by_first = used[np.argsort(first[used], kind="stable")]
    rank = np.empty(len(dictionary), np.int32)
    rank[by_first] = np.arange(by_first.size, dtype=np.int32)
    codes = rank[codes]
    return starts, codes[starts], [dictionary[i] for i in by_first.tolist()]


def _first_appearance(values: list[str]) -> tuple[np.ndarray, list[str]]:
    """(code of each value, the distinct values), codes numbered by first appearance."""
    seen: dict[str, int] = {}
    codes = np.fromiter((seen.setdefault(v, len(seen)) for v in values), np.int32, len(values))
    return codes, list(seen)


def group_order(codes: np.ndarray) -> np.ndarray:
    """The stable permutation that puts equal codes (small non-negative integers) together; codes
    that fit 16 bits are radix-sorted (numpy does so for 16-bit keys), three times as fast."""
    if codes.size and int(codes.max()) < thresholds.RADIX_MAX_CODES:
        return np.argsort(codes.astype(np.uint16), kind="stable")
    return np.argsort(codes, kind="stable")


def positions(qid) -> np.ndarray:
    """1-based position of each row among the rows of its query, in input order."""
    codes, _ = id_codes(qid)
    if codes.size == 0:                 # (np.repeat of the empty counts would fail)
        return np.zeros(0, np.int64)
    order = group_order(codes)
    counts = np.bincount(codes)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    pos = np.empty(codes.size, np.int64)
    pos[order] = np.arange(codes.size) - np.repeat(starts, counts) + 1
    return pos
