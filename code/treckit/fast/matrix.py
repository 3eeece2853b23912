"""Per-query matrices: queries of uneven lengths laid out one per row, when that pays, and worked on a slice
of queries at a time, side by side."""
from __future__ import annotations

from typing import Any, Callable, Iterator

from ..dependencies import deferred
from .. import thresholds
from .parallel import ordered_map

np = deferred("numpy")


def query_matrix_pays(lengths: np.ndarray, n: int) -> bool:
    """Whether queries of these ``lengths`` (``n`` values in all) lay out one query per row, a
    (queries x longest) matrix, in a bounded size: at most about twice as many cells as values
    (thresholds.QUERY_MATRIX_*).  Working on such a matrix row by row (sorting each query's values,
    comparing a row with its own query's) is much faster than on the whole run by two keys."""
    width = int(lengths.max()) if lengths.size else 0
    most_cells = thresholds.QUERY_MATRIX_GROWTH * n + thresholds.QUERY_MATRIX_SLACK
    return lengths.size * width <= most_cells and lengths.size <= thresholds.QUERY_MATRIX_MAX_QUERIES


def query_slices(starts: np.ndarray, n: int) -> list[tuple[range, range]]:
    """Consecutive slices of the queries (their rows together, starting at ``starts``; ``n`` rows in
    all) of about ``thresholds.ROW_SORT_SLICE_CELLS`` matrix cells each, as (queries, rows): each slice
    is laid out on its own (:func:`laid_out`), as wide as its longest query, so that slices take little
    memory at a time and can be worked on side by side."""
    bounds = np.append(starts, n)
    step = max(1, thresholds.ROW_SORT_SLICE_CELLS // max(1, int(np.diff(bounds).max()) if starts.size else 1))
    cuts = list(range(0, starts.size, step)) + [starts.size]
    return [(range(a, b), range(int(bounds[a]), int(bounds[b]))) for a, b in zip(cuts[:-1], cuts[1:])]


def by_query_slices(fn: Callable[[range, range], Any], starts: np.ndarray, n: int) -> Iterator[Any]:
    """``fn(queries, rows)`` of each of :func:`query_slices`, computed side by side, yielded in order."""
    return ordered_map(lambda s: fn(*s), query_slices(starts, n))


def sort_within(starts: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The permutation that sorts ``keys`` (unsigned integers) ascending within each segment of consecutive
    positions (segments starting at ``starts``; they stay in place); equal keys in any order.  Segments of
    about even sizes are sorted one per row of a matrix, a slice of them at a time, side by side; others by
    one sort of (segment, key)."""
    n = keys.size
    sizes = np.diff(np.append(starts, n))
    if not query_matrix_pays(sizes, n):
        return np.lexsort((keys, np.repeat(np.arange(sizes.size), sizes)))
    top = np.iinfo(keys.dtype).max

    def sorted_slice(segments: range, rows: range) -> np.ndarray:
        part = sizes[segments.start:segments.stop]
        o = np.argsort(laid_out(keys[rows.start:rows.stop], part, top), axis=1)
        # padding sorts last, but may tie with a key at the top: keep the places that hold keys
        return (o + starts[segments.start:segments.stop, None])[o < part[:, None]]
    return np.concatenate([np.zeros(0, np.intp), *by_query_slices(sorted_slice, starts, n)])


def laid_out(values: np.ndarray, lengths: np.ndarray, pad) -> np.ndarray:
    """``values``, queries of ``lengths`` one after the other, one query per row, short rows ended with ``pad``."""
    width = int(lengths.max()) if lengths.size else 0
    if (lengths == width).all():
        return values.reshape(lengths.size, width)
    m = np.empty((lengths.size, width), values.dtype)
    m[:] = pad[:width] if isinstance(pad, np.ndarray) else pad
    # each row's first cells, in row-major order, are its query's values in the order given
    m[np.arange(width) < lengths[:, None]] = values
    return m
