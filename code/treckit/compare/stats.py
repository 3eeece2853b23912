"""Paired significance tests on per-query values, as pure functions over arrays.

Each test takes the baseline's and the system's values for the same queries, in the same order
(``a``, ``b``; the delta is ``b - a``).  p-values of the t-test and Wilcoxon are scipy.stats' own;
the randomization test and the bootstrap are seeded, so the same inputs give the same numbers on every
run and machine.  The two resampling tests also run on many comparisons at once (``*_many``, one
column of deltas per comparison): the seeded draws are made once and every comparison sees the same
ones (a comparison tested alone sees the same draws when its queries are the same).

One rule for every test: a test gives a two-sided p-value; the p-values of one test are corrected
over all (measure, system) comparisons (Holm or Bonferroni), and a comparison is significant when
its corrected p-value is below alpha.  The bootstrap's p-value is the one its percentile interval
inverts (the smallest level at which the interval excludes 0), so "p < alpha" and "the 1 - alpha
interval excludes 0" always agree for it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..dependencies import deferred
from . import CORRECTIONS as CORRECTION_NAMES, TESTS  # noqa: F401  (TESTS: the tests this module runs)
from .. import thresholds

np = deferred("numpy")

EXACT_LIMIT = 16          # up to 2**16 sign assignments (of the queries whose deltas differ) are enumerated exactly


@dataclass(frozen=True)
class TestResult:
    test: str
    statistic: float | None
    p_value: float | None
    detail: dict

    def as_dict(self) -> dict:
        return {"test": self.test, "statistic": self.statistic, "p_value": self.p_value, **self.detail}


def _clean(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _deltas(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(b, np.float64) - np.asarray(a, np.float64)


def _sum_tolerance(d: np.ndarray) -> np.ndarray:
    """Per column, how far two sums of the same deltas added in different orders can be apart
    (the rounding bound of a sum of n doubles): closer sums count as equal."""
    n = max(d.shape[0], 1)
    return 4.0 * n * np.finfo(np.float64).eps * np.maximum(np.abs(d).sum(axis=0), np.finfo(np.float64).tiny)


def paired_t(a: np.ndarray, b: np.ndarray) -> TestResult:
    """Student's paired t-test (two-sided): scipy.stats.ttest_rel's numbers (see :func:`_ttest_rel`)."""
    d = b - a
    if d.size < 2 or np.all(d == d[0]):
        return TestResult("t-test", None, None if d.size < 2 or d[0] != 0 else 1.0,
                          {"mean_delta": float(d.mean()) if d.size else 0.0, "note": "no variation in the deltas"})
    statistic, p_value = _ttest_rel(np.asarray(b, np.float64), np.asarray(a, np.float64))
    return TestResult("t-test", _clean(statistic), _clean(p_value), {"mean_delta": float(d.mean()), "df": int(d.size - 1)})


def wilcoxon(a: np.ndarray, b: np.ndarray) -> TestResult:
    """Wilcoxon signed-rank test (two-sided): scipy.stats.wilcoxon's numbers with its defaults (zero deltas
    dropped; see :func:`_wilcoxon`)."""
    d = b - a
    if np.count_nonzero(d) == 0:
        return TestResult("wilcoxon", None, 1.0, {"note": "all deltas are zero"})
    statistic, p_value = _wilcoxon(np.asarray(b, np.float64), np.asarray(a, np.float64))
    return TestResult("wilcoxon", _clean(statistic), _clean(p_value), {"nonzero": int(np.count_nonzero(d))})


# scipy.stats costs about a second of imports (0.7-1 s of CPU), scipy.special about a fifth of that; the two tests
# are computed here from scipy.special's distributions, step for step as scipy.stats computes them (the same
# operations on the same arrays: the same bits; tests/compare/test_compare.py holds them equal to scipy.stats),
# and scipy.stats is asked only where it takes another path: non-finite values, and Wilcoxon's exact and
# permutation p-values on up to WILCOXON_EXACT_MAX queries.
WILCOXON_EXACT_MAX = 50          # scipy.stats.wilcoxon's method="auto" takes the normal approximation above this


def _ttest_rel(b: np.ndarray, a: np.ndarray) -> tuple[float, float]:
    """scipy.stats.ttest_rel(b, a): t = mean(d) / sqrt(var(d, ddof=1) / n) of the deltas d = b - a,
    p = 2 * stdtr(n - 1, -|t|)."""
    d = b - a
    if not np.all(np.isfinite(d)):
        from scipy import stats
        r = stats.ttest_rel(b, a)
        return r.statistic, r.pvalue
    from scipy import special
    n = d.size
    mean = np.mean(d)
    var = np.mean((d - np.mean(d, keepdims=True)) ** 2)       # the second central moment ...
    var = var * (np.float64(n) / (np.float64(n) - 1))          # ... with ddof=1
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (mean - 0.0) / np.sqrt(var / n)
    return t, 2 * special.stdtr(np.float64(n - 1), -np.abs(t))


def _wilcoxon(b: np.ndarray, a: np.ndarray) -> tuple[float, float]:
    """scipy.stats.wilcoxon(b, a) with its defaults, over WILCOXON_EXACT_MAX queries: the signed-rank sums
    of the non-zero deltas (average ranks of |d| for ties), the normal approximation with the tie correction
    and no continuity correction; statistic = the smaller sum, p = 2 * ndtr(-|z|)."""
    d = b - a
    if d.size <= WILCOXON_EXACT_MAX or not np.all(np.isfinite(d)):
        from scipy import stats
        r = stats.wilcoxon(b, a)
        return r.statistic, r.pvalue
    from scipy import special
    n = d.size
    d = np.where(d == 0, np.nan, d)                   # zero deltas dropped: NaN, ranked last, counted out
    order = np.argsort(np.abs(d), kind="stable")
    magnitude = np.abs(d)[order]
    first = np.r_[True, magnitude[:-1] != magnitude[1:]]          # where each run of equal |d| starts (NaNs: alone)
    ties = np.diff(np.arange(n)[first], append=n)
    ranks = np.empty(n)
    ranks[order] = np.repeat(np.arange(1, n + 1, dtype=np.float64)[first] + (ties.astype(np.float64) - 1) / 2, ties)
    t = np.zeros(n)
    t[first] = ties
    r_plus = np.sum((d > 0).astype(np.float64) * ranks)
    r_minus = np.sum((d < 0).astype(np.float64) * ranks)
    count = np.float64(n - np.count_nonzero(np.isnan(d)))
    mn = count * (count + 1.) * 0.25
    se = count * (count + 1.) * (2. * count + 1.)
    se = np.sqrt((se - np.sum(t ** 3 - t) / 2) / 24)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (r_plus - mn) / se
    return np.minimum(r_plus, r_minus), 2 * special.ndtr(-np.abs(z))


def randomization(a: np.ndarray, b: np.ndarray, *, permutations: int = 10000, seed: int = 42) -> TestResult:
    """Two-sided paired randomization (sign-flip) test of the mean delta; see :func:`randomization_many`."""
    return randomization_many(_deltas(a, b)[:, None], permutations=permutations, seed=seed)[0]


def randomization_many(d: np.ndarray, *, permutations: int = 10000, seed: int = 42) -> list[TestResult]:
    """The sign-flip test of each column of deltas ``d`` (queries x comparisons).

    Under the null each delta's sign is equally likely + or -; the p-value is the share of sign
    assignments whose |sum| reaches the observed |sum|.  Queries whose delta is 0 in every column
    change no sum and are left out.  With at most EXACT_LIMIT queries left, all 2**n assignments are
    enumerated (exact p); otherwise ``permutations`` seeded random assignments are drawn and
    p = (hits + 1) / (permutations + 1), which never claims a p below what the draws can show
    (Phipson & Smyth 2010).
    """
    d = np.asarray(d, np.float64)
    d = d[np.any(d != 0, axis=1)]
    n, c = d.shape
    observed = np.abs(d.sum(axis=0))
    floor = observed - _sum_tolerance(d)
    mean = d.mean(axis=0) if n else np.zeros(c)
    if n <= EXACT_LIMIT:
        signs = (((np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1) * 2 - 1).astype(np.float64)
        hits = np.count_nonzero(np.abs(signs @ d) >= floor, axis=0)
        return [TestResult("randomization", float(mean[j]), float(hits[j]) / 2 ** n,
                           {"method": "exact", "assignments": 2 ** n}) for j in range(c)]
    # sum = sum(s_i d_i) with s_i = 2 bit_i - 1 = 2 * (sum of the deltas whose bit is set) - total.
    # The bits come as random bytes; for each group of 8 queries a table holds the partial sum of
    # every one of the 256 byte values, so an assignment costs n/8 look-ups per column, made group
    # by group (each group's table is small enough to stay in cache).
    groups = -(-n // 8)
    padded = np.zeros((groups * 8, c))
    padded[:n] = d
    bits = ((np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1).astype(np.float64)      # (256, 8)
    table = np.einsum("vb,gbc->gvc", bits, padded.reshape(groups, 8, c))                  # (groups, 256, c)
    total = d.sum(axis=0)
    rng = np.random.default_rng(seed)
    hits = np.zeros(c, np.int64)
    block = max(1, thresholds.RESAMPLE_DRAW_CELLS // (groups + 8 * c))     # random bytes and sums per block
    for start in range(0, permutations, block):
        m = min(block, permutations - start)
        draws = np.frombuffer(rng.bytes(m * groups), np.uint8).reshape(m, groups).T.copy()
        acc = np.zeros((m, c))
        for g in range(groups):
            acc += table[g].take(draws[g], axis=0)
        hits += np.count_nonzero(np.abs(2.0 * acc - total) >= floor, axis=0)
    return [TestResult("randomization", float(mean[j]), float(hits[j] + 1) / (permutations + 1),
                       {"method": "monte-carlo", "permutations": permutations, "seed": seed}) for j in range(c)]


def bootstrap_ci(a: np.ndarray, b: np.ndarray, *, resamples: int = 10000, seed: int = 42,
                 alpha: float = 0.05) -> TestResult:
    """Percentile bootstrap of the mean delta, with its p-value; see :func:`bootstrap_many`."""
    return bootstrap_many(_deltas(a, b)[:, None], resamples=resamples, seed=seed, alpha=alpha)[0]


def resample_sums(d: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """(resamples, columns): the sum of each column of ``d`` (queries x columns) over each of ``resamples``
    seeded draws of its n queries with replacement.

    The draws are made a block of rows at a time (``RESAMPLE_DRAW_BLOCK`` draws, fewer when n is large: at
    most ``RESAMPLE_DRAW_CELLS`` random numbers), and a block's sums are one matrix product of how often each
    query is drawn in each draw with ``d``: the same blocks give the same numbers, bit for bit.  The counts
    of a block are made a few rows at a time (``RESAMPLE_COUNT_CELLS`` cells: one count of the rows
    together, cache-sized) rather than one count per row, which costs a call for every draw."""
    n = d.shape[0]
    if not resamples:
        return np.zeros((0, d.shape[1]))
    rng = np.random.default_rng(seed)
    dtype = np.int32 if n <= np.iinfo(np.int32).max else np.int64
    rows = max(1, min(thresholds.RESAMPLE_DRAW_BLOCK, thresholds.RESAMPLE_DRAW_CELLS // n))     # within the cells
    chunk = max(1, min(rows, thresholds.RESAMPLE_COUNT_CELLS // n))
    offsets = np.arange(chunk, dtype=np.int64) * n          # row r of a chunk counts into cells r*n .. r*n + n - 1
    sums = []
    block = np.empty((min(rows, resamples), n))          # one buffer for every block: no fresh pages to fault in
    for start in range(0, resamples, rows):
        m = min(rows, resamples - start)
        picks = rng.integers(0, n, size=(m, n), dtype=dtype)
        counts = block[:m]
        for r in range(0, m, chunk):
            k = min(chunk, m - r)
            cells = (picks[r:r + k] + offsets[:k, None]).ravel()
            counts[r:r + k] = np.bincount(cells, minlength=k * n).reshape(k, n)
        sums.append(counts @ d)
    return np.concatenate(sums)


def bootstrap_many(d: np.ndarray, *, resamples: int = 10000, seed: int = 42, alpha: float = 0.05) -> list[TestResult]:
    """Percentile bootstrap of the mean delta of each column of ``d`` (queries x comparisons).

    The queries are resampled with replacement ``resamples`` times (seeded; the same resamples for
    every column: :func:`resample_sums`).  With B resamples and j = ceil(alpha (B + 1) / 2) - 1,
    the 1 - alpha interval runs from the j-th smallest to the j-th largest resampled mean (Davison &
    Hinkley 1997, sec. 5.2; none when j < 1: too few resamples for that level).  The p-value is
    min(1, 2 (1 + #{mean* <= 0}) / (B + 1), 2 (1 + #{mean* >= 0}) / (B + 1)): the smallest level at
    which such an interval excludes 0, so p < alpha exactly when the interval excludes 0.
    """
    d = np.asarray(d, np.float64)
    n, c = d.shape
    if n < 2:                                     # one query resamples to itself: no test
        return [TestResult("bootstrap", float(d[0, j]) if n else None, None,
                           {"ci_low": None, "ci_high": None, "confidence": 1 - alpha, "resamples": resamples,
                            "seed": seed, "note": "the bootstrap needs at least 2 queries"}) for j in range(c)]
    sums = resample_sums(d, resamples, seed)
    tol = _sum_tolerance(d)
    sums[np.abs(sums) <= tol] = 0.0              # a resample summing to 0 up to rounding is 0
    below = np.count_nonzero(sums <= 0, axis=0)
    above = np.count_nonzero(sums >= 0, axis=0)
    p = np.minimum(1.0, 2.0 * (1 + np.minimum(below, above)) / (resamples + 1))
    means = np.sort(sums / n, axis=0)
    j = interval_rank(resamples, alpha)
    out = []
    for col in range(c):
        lo, hi = (float(means[j - 1, col]), float(means[resamples - j, col])) if j >= 1 else (None, None)
        detail = {"ci_low": lo, "ci_high": hi, "confidence": 1 - alpha, "resamples": resamples, "seed": seed}
        if j < 1:
            detail["note"] = f"too few resamples for a {1 - alpha:g} interval (need at least {math.floor(2 / alpha)})"
        out.append(TestResult("bootstrap", float(d[:, col].mean()), float(p[col]), detail))
    return out


def interval_rank(resamples: int, alpha: float) -> int:
    """j of the percentile interval of B sorted resampled means: the 1 - alpha interval runs from the j-th smallest
    to the j-th largest (Davison & Hinkley 1997, sec. 5.2); j < 1: too few resamples for that level."""
    return math.ceil(alpha * (resamples + 1) / 2) - 1


def mean_intervals(values: np.ndarray, *, resamples: int = 10000, seed: int = 42,
                   alpha: float = 0.05) -> list[tuple[float, float] | None]:
    """The seeded percentile bootstrap interval (1 - alpha) of the mean of each column of ``values`` (queries x
    columns): the interval :func:`bootstrap_many` gives a mean delta, here of a mean; None where there are fewer
    than 2 queries or too few resamples for the level."""
    v = np.asarray(values, np.float64)
    n, c = v.shape
    j = interval_rank(resamples, alpha)
    if n < 2 or j < 1:
        return [None] * c
    means = np.sort(resample_sums(v, resamples, seed) / n, axis=0)
    return [(float(means[j - 1, col]), float(means[resamples - j, col])) for col in range(c)]


def effect_size(a: np.ndarray, b: np.ndarray) -> float | None:
    """Cohen's d for paired samples: mean delta over the standard deviation of the deltas (ddof=1)."""
    d = _deltas(a, b)
    if d.size < 2:
        return None
    sd = d.std(ddof=1)
    return _clean(d.mean() / sd) if sd > 0 else None


def holm(p: list[float | None]) -> list[float | None]:
    """Holm-Bonferroni step-down adjusted p-values (None stays None)."""
    idx = [i for i, x in enumerate(p) if x is not None]
    m = len(idx)
    order = sorted(idx, key=lambda i: p[i])
    out: list[float | None] = [None] * len(p)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def bonferroni(p: list[float | None]) -> list[float | None]:
    m = sum(x is not None for x in p)
    return [None if x is None else min(1.0, x * m) for x in p]


CORRECTIONS = dict(zip(CORRECTION_NAMES, (holm, bonferroni)))
