"""The DCG family: ndcg, ndcg_cut@k, exponential-gain nDCG, ndcg_rel, Rndcg, G.

nDCG (Jarvelin & Kekalainen, 2002) as trec_eval computes it: gain of grade g is g
(linear; ``-m ndcg.1=3,2=9`` sets others), discount log2(rank + 1), the ideal ranking
takes every judged doc by gain.  ``ndcg_cut`` uses the grade itself as the gain.
Exponential gain (2^g - 1, as scikit-learn and the older evaluators) is an option of its own.
"""
from __future__ import annotations

import math

import numpy as np

from .gains import gain_pairs, grade_gain_table, query_gains
from .ranking import RankedJudged
from .segments import at_cutoff, discounted_prefix, ideal_matrix, safe_div


def _dcg_terms(v: RankedJudged, gain: np.ndarray, cutoff=None):
    mask = gain != 0
    if cutoff is not None:
        mask &= v.pos < cutoff
    return v.per_query_sum(gain[mask] / np.log2(v.pos[mask] + 2.0), mask)


def ndcg(v, pairs):
    custom = gain_pairs(pairs)
    table = grade_gain_table(v, custom)
    gain = table[v.rel + 2]
    dcg = _dcg_terms(v, gain)
    L = v.rel_levels.shape[1]
    lv_gain = table[2:].copy()
    ideal = ideal_matrix(v.rel_levels, lv_gain) if L else np.zeros((v.Q, 0))
    idcg = discounted_prefix(ideal)[:, -1] if ideal.shape[1] else np.zeros(v.Q)
    return np.where(idcg > 0, safe_div(dcg, idcg), 0.0)


def ndcg_cut(v, cutoffs, exponential: bool = False):
    """nDCG@k with the grade as gain (``exponential``: 2^grade - 1)."""
    g = np.where(v.rel > 0, v.rel.astype(np.float64), 0.0)
    lv = np.arange(v.rel_levels.shape[1], dtype=np.float64)
    if exponential:
        g = np.where(v.rel > 0, np.exp2(g) - 1.0, 0.0)
        lv = np.exp2(lv) - 1.0
    ideal = discounted_prefix(ideal_matrix(v.rel_levels, lv))
    out = []
    for k in cutoffs:
        dcg = _dcg_terms(v, g, k)
        idcg = at_cutoff(ideal, k)
        out.append(np.where(idcg > 0, safe_div(dcg, idcg), dcg))
    return np.stack(out, axis=1)


def ndcg_exp(v, _p):
    return ndcg_cut(v, [np.iinfo(np.int64).max], exponential=True)[:, 0]


# ------------------------------------------------------------------ rank-walking measures
# ndcg_rel, Rndcg and G follow the ideal ranking and the run side by side with state that
# changes at level boundaries; they walk each query's ranks (judged docs are sparse, so the
# walk is over a dense list only as long as needed).
def _dense(v: RankedJudged, qi: int, lo: int, hi: int) -> np.ndarray:
    rels = np.full(int(v.num_ret[qi]), -1, np.int64)
    rels[v.pos[lo:hi]] = v.rel[lo:hi]
    return rels


def _walk(v: RankedJudged, pairs, per_query) -> np.ndarray:
    custom = gain_pairs(pairs)
    starts = np.searchsorted(v.q, np.arange(v.Q + 1))
    out = np.zeros(v.Q)
    for qi in range(v.Q):
        gains = query_gains(v.rel_levels[qi], custom)
        lookup = {lv: g for lv, g, _ in gains}
        out[qi] = per_query(_dense(v, qi, starts[qi], starts[qi + 1]), gains, lookup, int(v.num_rel[qi]))
    return out


def _ideal_iter(gains):
    """Yield the ideal gain at positions 0, 1, ... (0.0 once the levels run out), as trec_eval walks it."""
    cur = len(gains) - 1
    n_at = 0
    while True:
        n_at += 1
        while cur >= 0 and n_at > gains[cur][2]:
            n_at = 1
            cur -= 1
        yield gains[cur][1] if cur >= 0 else 0.0


def _ndcg_rel_q(rels, gains, lookup, _num_rel):
    top = gains[-1][1] if gains else 0.0
    ideal = _ideal_iter(gains)
    results_dcg = ideal_dcg = total = 0.0
    num_rel = num_rel_ret = 0
    i = 0
    ideal_gain = top
    n = rels.size
    while i < n and ideal_gain > 0.0:
        g = lookup.get(int(rels[i]), 0.0)
        if g != 0:
            results_dcg += g / math.log2(i + 2)
        ideal_gain = next(ideal)
        if ideal_gain > 0.0:
            num_rel += 1
            ideal_dcg += ideal_gain / math.log2(i + 2)
        if g > 0:
            total += results_dcg / ideal_dcg
            num_rel_ret += 1
        i += 1
    while i < n:
        g = lookup.get(int(rels[i]), 0.0)
        if g != 0:
            results_dcg += g / math.log2(i + 2)
        if g > 0:
            total += results_dcg / ideal_dcg
            num_rel_ret += 1
        i += 1
    while ideal_gain > 0.0:
        ideal_gain = next(ideal)
        if ideal_gain > 0.0:
            num_rel += 1
            ideal_dcg += ideal_gain / math.log2(i + 2)
        i += 1
    if ideal_dcg == 0.0:
        return 0.0
    total += (num_rel - num_rel_ret) * results_dcg / ideal_dcg
    return total / num_rel if total > 0.0 else 0.0


def _rndcg_q(rels, gains, lookup, num_rel):
    if num_rel == 0:
        return 0.0
    top = gains[-1][1] if gains else 0.0
    ideal = _ideal_iter(gains)
    results_dcg = ideal_dcg = total = 0.0
    changes = 0
    ideal_gain = old = top
    i, n = 0, rels.size
    while i < n and ideal_gain > 0.0:
        g = lookup.get(int(rels[i]), 0.0)
        ideal_gain = next(ideal)
        if old != ideal_gain:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                changes += 1
            old = ideal_gain
        if g != 0:
            results_dcg += g / math.log2(i + 2)
        if ideal_gain > 0.0:
            ideal_dcg += ideal_gain / math.log2(i + 2)
        i += 1
    if i < n:
        while i < n:
            g = lookup.get(int(rels[i]), 0.0)
            if g != 0:
                results_dcg += g / math.log2(i + 2)
            i += 1
        if ideal_dcg > 0.0:
            total += results_dcg / ideal_dcg
            changes += 1
    while ideal_gain > 0.0:
        ideal_gain = next(ideal)
        if old != ideal_gain:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                changes += 1
            old = ideal_gain
        if ideal_gain > 0.0:
            ideal_dcg += ideal_gain / math.log2(i + 2)
        i += 1
    return total / changes if changes else 0.0


def _g_q(rels, gains, lookup, _num_rel):
    top = gains[-1][1] if gains else 0.0
    ideal = _ideal_iter(gains)
    results_g = sum_results = sum_ideal = sum_cost = 0.0
    min_cost = 1.0
    ideal_gain = top
    i, n = 0, rels.size
    while i < n and ideal_gain > 0.0:
        g = lookup.get(int(rels[i]), 0.0)
        sum_results += g
        ideal_gain = next(ideal)
        if ideal_gain > 0.0:
            sum_ideal += ideal_gain
        sum_cost += ideal_gain if ideal_gain >= min_cost else min_cost
        if g != 0:
            results_g += g / math.log2(2 + sum_cost - sum_results)
        i += 1
    while i < n:
        g = lookup.get(int(rels[i]), 0.0)
        sum_results += g
        sum_cost += min_cost
        if g != 0:
            results_g += g / math.log2(2 + sum_cost - sum_results)
        i += 1
    while ideal_gain > 0.0:
        ideal_gain = next(ideal)
        if ideal_gain > 0.0:
            sum_ideal += ideal_gain
    return results_g / sum_ideal if sum_ideal > 0.0 else 0.0


def ndcg_rel(v, pairs):
    return _walk(v, pairs, _ndcg_rel_q)


def Rndcg(v, pairs):
    return _walk(v, pairs, _rndcg_q)


def G(v, pairs):
    return _walk(v, pairs, _g_q)
