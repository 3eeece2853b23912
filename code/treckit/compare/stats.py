"""Paired significance tests on per-query values, as pure functions over arrays.

Each test takes the baseline's and the system's values for the same queries, in the same order.
p-values of the t-test and Wilcoxon come from scipy itself; the randomization test and the
bootstrap are seeded, so the same inputs give the same numbers on every run and machine.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

EXACT_LIMIT = 16          # up to 2**16 sign assignments are enumerated exactly


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


def paired_t(a: np.ndarray, b: np.ndarray) -> TestResult:
    """Student's paired t-test (two-sided), scipy.stats.ttest_rel."""
    from scipy import stats
    d = b - a
    if d.size < 2 or np.all(d == d[0]):
        return TestResult("t-test", None, None if d.size < 2 or d[0] != 0 else 1.0,
                          {"mean_delta": float(d.mean()) if d.size else 0.0, "note": "no variation in the deltas"})
    r = stats.ttest_rel(b, a)
    return TestResult("t-test", _clean(r.statistic), _clean(r.pvalue), {"mean_delta": float(d.mean()), "df": int(d.size - 1)})


def wilcoxon(a: np.ndarray, b: np.ndarray) -> TestResult:
    """Wilcoxon signed-rank test (two-sided), scipy.stats.wilcoxon with its defaults (zero deltas dropped)."""
    from scipy import stats
    d = b - a
    if np.count_nonzero(d) == 0:
        return TestResult("wilcoxon", None, 1.0, {"note": "all deltas are zero"})
    r = stats.wilcoxon(b, a)
    return TestResult("wilcoxon", _clean(r.statistic), _clean(r.pvalue), {"nonzero": int(np.count_nonzero(d))})


def randomization(a: np.ndarray, b: np.ndarray, *, permutations: int = 10000, seed: int = 42) -> TestResult:
    """Two-sided paired randomization (sign-flip) test of the mean delta.

    With at most EXACT_LIMIT queries every one of the 2**n sign assignments is enumerated (exact
    p-value); otherwise ``permutations`` seeded random assignments are drawn and p = (hits + 1) / (N + 1).
    """
    d = np.asarray(b, np.float64) - np.asarray(a, np.float64)
    n = d.size
    observed = abs(d.sum())
    tol = 1e-12 * max(1.0, float(np.abs(d).sum()))
    if n == 0:
        return TestResult("randomization", 0.0, 1.0, {"method": "exact", "assignments": 1})
    if n <= EXACT_LIMIT:
        signs = ((np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1) * 2 - 1
        sums = np.abs(signs @ d)
        p = float(np.count_nonzero(sums >= observed - tol)) / 2 ** n
        return TestResult("randomization", float(d.mean()), p, {"method": "exact", "assignments": 2 ** n})
    rng = np.random.default_rng(seed)
    hits = 0
    done = 0
    while done < permutations:
        m = min(10000, permutations - done)
        signs = rng.integers(0, 2, size=(m, n), dtype=np.int8) * 2 - 1
        hits += int(np.count_nonzero(np.abs(signs @ d) >= observed - tol))
        done += m
    return TestResult("randomization", float(d.mean()), (hits + 1) / (permutations + 1),
                      {"method": "monte-carlo", "permutations": permutations, "seed": seed})


def bootstrap_ci(a: np.ndarray, b: np.ndarray, *, resamples: int = 10000, seed: int = 42,
                 confidence: float = 0.95) -> TestResult:
    """Percentile bootstrap confidence interval of the mean delta (queries resampled with replacement)."""
    d = np.asarray(b, np.float64) - np.asarray(a, np.float64)
    if d.size == 0:
        return TestResult("bootstrap", None, None, {"ci_low": None, "ci_high": None})
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    for s in range(0, resamples, 2000):
        m = min(2000, resamples - s)
        means[s:s + m] = d[rng.integers(0, d.size, size=(m, d.size))].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - confidence) / 2, 1 - (1 - confidence) / 2])
    return TestResult("bootstrap", float(d.mean()), None,
                      {"ci_low": float(lo), "ci_high": float(hi), "confidence": confidence, "resamples": resamples, "seed": seed})


def effect_size(a: np.ndarray, b: np.ndarray) -> float | None:
    """Cohen's d for paired samples: mean delta over the standard deviation of the deltas (ddof=1)."""
    d = np.asarray(b, np.float64) - np.asarray(a, np.float64)
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


CORRECTIONS = {"holm": holm, "bonferroni": bonferroni}
TESTS = ("t-test", "wilcoxon", "randomization", "bootstrap")
