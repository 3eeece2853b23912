"""Finding a (query, doc id) pair listed more than once in a run, without sorting strings.

One 32-bit key per row (a hash of the doc id, with the query mixed in when the rows of a query are
not known to be together) nominates suspects: rows that share a key with another row.  Only the
suspects' strings are compared, so a hash collision can never be taken for a repeat.
"""
from __future__ import annotations

import numpy as np

from . import thresholds
from .model import query_matrix
from .strings import hash64, take_strings


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
    """From a (queries x longest) matrix of keys sorted row by row, which is cheaper than one sort
    of the whole run and nominates almost nothing by chance; None when the queries' lengths vary
    too much for the matrix to pay."""
    lengths = np.diff(np.append(starts, keys.size))
    # padding: distinct within each row, so it never pairs with itself (pairing with a real key
    # only nominates that row, which the strings then clear)
    m = query_matrix(keys, starts, np.arange(int(lengths.max()), dtype=keys.dtype))
    if m is None:
        return None
    m = np.sort(m, axis=1)
    same = m[:, 1:] == m[:, :-1]
    found = [np.zeros(0, np.int64)]
    for q in np.flatnonzero(same.any(axis=1)).tolist():
        a = int(starts[q])
        rows = np.arange(a, a + int(lengths[q]))
        found.append(rows[np.isin(keys[rows], m[q, 1:][same[q]])])
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
