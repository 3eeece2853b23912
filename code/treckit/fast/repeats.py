"""Finding a (query, doc id) pair listed more than once in a run, without sorting strings.

One 32-bit key per row (a hash of the doc id, with the query mixed in when the rows of a query are
not known to be together) nominates suspects: rows that share a key with another row.  Only the
suspects' strings are compared, so a hash collision can never be taken for a repeat.
"""
from __future__ import annotations

from ..dependencies import deferred
from .. import thresholds
from .matrix import by_query_slices, laid_out, query_matrix_pays
from .strings import hash64, take_strings

np = deferred("numpy")


def pair_keys(docid, group: np.ndarray) -> np.ndarray:
    """The 32-bit key of each row's (group, doc id) pair."""
    return hash64(docid, group).astype(np.uint32)


def suspects(keys: np.ndarray, starts: np.ndarray | None = None) -> np.ndarray:
    """Rows that share their key with another row (of the same query when ``starts``, the first row
    of each query, says each query's rows are together), in ascending order."""
    found = _suspects_by_query(keys, starts) if starts is not None else None
    return found if found is not None else _suspects_in_whole_run(keys)


def first_repeat(rows: np.ndarray, group: np.ndarray, docid) -> tuple[int, int, str] | None:
    """Among ``rows``, the first (row, group, doc id) whose pair an earlier row already listed."""
    seen: set[tuple[int, str]] = set()
    for r, d in zip(rows.tolist(), take_strings(docid, rows)):
        key = (int(group[r]), d)
        if key in seen:
            return r, key[0], d
        seen.add(key)
    return None


def _suspects_by_query(keys: np.ndarray, starts: np.ndarray) -> np.ndarray | None:
    """From (queries x longest) matrices of keys sorted row by row, a slice of queries at a time, side
    by side (:func:`treckit.model.query_slices`), which is cheaper than one sort of the whole run and
    nominates almost nothing by chance; None when the queries' lengths vary too much for the matrix
    to pay."""
    lengths = np.diff(np.append(starts, keys.size))
    if not query_matrix_pays(lengths, keys.size):
        return None

    def repeated_keys(queries: range, rows: range) -> list[tuple[int, np.ndarray]]:
        """(query, its keys found twice) for those of ``queries`` with any (slices run side by side)."""
        # padding: distinct within each row, so it never pairs with itself (pairing with a real key
        # only nominates that row, which the strings then clear)
        part = lengths[queries.start:queries.stop]
        m = np.sort(laid_out(keys[rows.start:rows.stop], part, np.arange(int(part.max()), dtype=keys.dtype)), axis=1)
        same = m[:, 1:] == m[:, :-1]
        return [(queries.start + q, m[q, 1:][same[q]]) for q in np.flatnonzero(same.any(axis=1)).tolist()]

    found = [np.zeros(0, np.int64)]
    for part in by_query_slices(repeated_keys, starts, keys.size):
        for q, shared in part:
            a = int(starts[q])
            rows = np.arange(a, a + int(lengths[q]))
            found.append(rows[np.isin(keys[rows], shared)])
    return np.concatenate(found)


def _suspects_in_whole_run(keys: np.ndarray) -> np.ndarray:
    """From one sort of all keys (the query must be mixed into them: equal keys across queries
    are then chance, a few thousand in a run of millions)."""
    k = np.sort(keys)
    same = k[1:] == k[:-1]
    if not same.any():
        return np.zeros(0, np.int64)
    shared = np.unique(k[1:][same])
    bits = np.zeros(thresholds.REPEAT_BITMAP_MASK + 1, bool)
    bits[shared & thresholds.REPEAT_BITMAP_MASK] = True
    near = np.flatnonzero(bits[keys & keys.dtype.type(thresholds.REPEAT_BITMAP_MASK)])
    return near[np.isin(keys[near], shared)]
