"""Small vectorized helpers over per-query segments of the ranked-and-judged view."""
from __future__ import annotations

from ..dependencies import deferred
from ..ranking.judged import RankedJudged

np = deferred("numpy")


def rel_at(v: RankedJudged, cutoff, mask: np.ndarray | None = None) -> np.ndarray:
    """(Q,) relevant (or ``mask``) docs ranked above ``cutoff`` (a number or one per query)."""
    m = v.isrel if mask is None else mask
    return v.count_before(m, cutoff)


def safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num = np.asarray(num, np.float64)
    den = np.asarray(den, np.float64)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


def segment_max(values: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """max(values[s:e]) for each non-empty [s, e), with one reduceat call."""
    if starts.size == 0:
        return np.zeros(0)
    vals = np.append(values, 0.0)
    idx = np.empty(2 * starts.size, np.int64)
    idx[0::2], idx[1::2] = starts, ends
    return np.maximum.reduceat(vals, idx)[0::2]


def powers(p: float, n: int) -> np.ndarray:
    """p**0, p**1, ... p**n by repeated multiplication (trec_eval's cur_p *= p), bit for bit."""
    return np.concatenate(([1.0], np.cumprod(np.full(n, p))))


def ideal_matrix(level_counts: np.ndarray, level_gain: np.ndarray) -> np.ndarray:
    """(Q, W) gains of each query's ideal ranking: judged docs by gain descending, positive gains only.

    ``level_counts`` is (Q, L) docs per grade; ``level_gain`` (L,) the gain of each grade.
    """
    Q, L = level_counts.shape
    order = np.argsort(-level_gain, kind="stable")
    order = order[level_gain[order] > 0]
    counts = level_counts[:, order]
    width = int(counts.sum(axis=1).max()) if Q and order.size else 0
    m = np.zeros((Q, max(width, 1)))
    if width == 0:
        return m[:, :0]
    rows = np.repeat(np.repeat(np.arange(Q), order.size), counts.ravel())
    gains = np.repeat(np.tile(level_gain[order], Q), counts.ravel())
    start = np.concatenate(([0], np.cumsum(counts.sum(axis=1))[:-1]))
    cols = np.arange(rows.size) - start[rows]
    m[rows, cols] = gains
    return m


def discounted_prefix(ideal: np.ndarray) -> np.ndarray:
    """Running ideal DCG along each row, added left to right."""
    if ideal.shape[1] == 0:
        return ideal
    disc = np.log2(np.arange(ideal.shape[1]) + 2.0)
    return np.cumsum(np.where(ideal > 0, ideal / disc, 0.0), axis=1)


def at_cutoff(prefix: np.ndarray, cutoff) -> np.ndarray:
    """(Q,) running value after ``cutoff`` positions (the full row when it is shorter)."""
    Q, W = prefix.shape
    if W == 0:
        return np.zeros(Q)
    c = np.minimum(np.broadcast_to(np.asarray(cutoff), (Q,)), W)
    out = np.zeros(Q)
    ok = c > 0
    out[ok] = prefix[np.flatnonzero(ok), c[ok] - 1]
    return out

