"""The DCG family: ndcg, ndcg_cut@k, exponential-gain nDCG, ndcg_rel, Rndcg, G.

nDCG (Jarvelin & Kekalainen, 2002) as trec_eval computes it: gain of grade g is g
(linear; ``-m ndcg.1=3,2=9`` sets others), discount log2(rank + 1), the ideal ranking
takes every judged doc by gain.  ``ndcg_cut`` uses the grade itself as the gain.
Exponential gain (2^g - 1, as scikit-learn and the older evaluators) is an option of its own.
"""
from __future__ import annotations

import functools

from ..dependencies import deferred
from .gains import entry_gains, gain_pairs, level_gains
from ..ranking.judged import RankedJudged, seq_segment_sum
from .segments import at_cutoff, discounted_prefix, ideal_matrix, safe_div

np = deferred("numpy")


def _quietly_dividing(measure):
    """``measure`` run with numpy's warnings on division by zero off (its zero divisions are the cases it
    handles)."""
    @functools.wraps(measure)
    def wrapper(*args, **kwargs):
        with np.errstate(divide="ignore", invalid="ignore"):
            return measure(*args, **kwargs)
    return wrapper


def _dcg_terms(v: RankedJudged, gain: np.ndarray, cutoff=None):
    mask = gain != 0
    if cutoff is not None:
        mask &= v.pos < cutoff
    return v.per_query_sum(gain[mask] / np.log2(v.pos[mask] + 2.0), mask)


def ndcg(v, pairs):
    custom = gain_pairs(pairs)
    lv_gain = level_gains(v, custom)
    dcg = _dcg_terms(v, entry_gains(v, custom, lv_gain))
    ideal = ideal_matrix(v.rel_levels, lv_gain) if lv_gain.size else np.zeros((v.Q, 0))
    idcg = discounted_prefix(ideal)[:, -1] if ideal.shape[1] else np.zeros(v.Q)
    return np.where(idcg > 0, safe_div(dcg, idcg), 0.0)


def ndcg_cut(v, cutoffs, exponential: bool = False, gains: tuple = ()):
    """nDCG@k with the grade as gain; ``gains``: (grade, gain) pairs replacing grades first, as ir_measures
    maps the qrels; ``exponential``: 2^gain - 1.  No cutoffs: the whole ranking (one column)."""
    lv, g = cut_gains(v, gains, exponential)
    ideal = discounted_prefix(ideal_matrix(v.rel_levels, lv)) if lv.size else np.zeros((v.Q, 0))
    out = []
    for k in cutoffs or (None,):
        dcg = _dcg_terms(v, g, k)
        idcg = at_cutoff(ideal, np.iinfo(np.int64).max if k is None else k)
        out.append(np.where(idcg > 0, safe_div(dcg, idcg), dcg))
    return np.stack(out, axis=1)


def cut_gains(v: RankedJudged, gains: tuple = (), exponential: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """ndcg_cut's gains: (D,) of each distinct grade of the view and (E,) of each judged retrieved doc
    (the grade, or the gain ``gains`` maps it to; none below 0; 2^gain - 1 when ``exponential``)."""
    custom = dict(gains)
    lv = level_gains(v, custom) if custom else v.grades.astype(np.float64)
    lv = np.maximum(lv, 0.0)                        # a grade mapped below 0 is no longer judged relevant
    if exponential:
        lv = np.exp2(lv) - 1.0
    g = np.zeros(v.rel.size)
    judged = v.rel >= 0
    if lv.size:
        g[judged] = lv[v.grade_index(v.rel[judged])]
    return lv, g


# ------------------------------------------------------------------ measures along the ideal ranking
# ndcg_rel, Rndcg and G compare the run with the ideal ranking rank by rank.  trec_eval walks both
# lists; here each becomes a few gathers from the ideal ranking's running sums at the ranks of
# the judged docs, and sums added in rank order (so the doubles match trec_eval's loops).
def _ideal(v: RankedJudged, pairs):
    """(gain of each entry, (Q, W) ideal gains, (Q, W) running ideal DCG, ideal length N* per query)."""
    custom = gain_pairs(pairs)
    lv_gain = level_gains(v, custom)
    gain = entry_gains(v, custom, lv_gain)
    ideal = ideal_matrix(v.rel_levels, lv_gain) if lv_gain.size else np.zeros((v.Q, 0))
    n_ideal = (ideal > 0).sum(axis=1)
    return gain, ideal, discounted_prefix(ideal), n_ideal


def _at(matrix: np.ndarray, q: np.ndarray, col: np.ndarray) -> np.ndarray:
    """matrix[q, col] with col clipped into the row (the last column stands for 'all of it')."""
    if matrix.shape[1] == 0:
        return np.zeros(q.size)
    return matrix[q, np.clip(col, 0, matrix.shape[1] - 1)]


def _dcg_before(v: RankedJudged, gain: np.ndarray, q: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """Running DCG of the run over ranks < limit, for each (query, limit) asked."""
    nz = gain != 0
    eq, ep = v.q[nz], v.pos[nz]
    run = seq_segment_sum(gain[nz] / np.log2(ep + 2.0), eq, v.Q, cumulative=True)
    key = eq * (np.int64(v.num_ret.max()) + 2) + ep
    at = np.searchsorted(key, q * (np.int64(v.num_ret.max()) + 2) + limit, side="left") - 1
    ok = (at >= 0) & (eq[np.maximum(at, 0)] == q) if eq.size else np.zeros(q.size, bool)
    return np.where(ok, run[np.maximum(at, 0)] if eq.size else 0.0, 0.0)


def ndcg_rel(v, pairs):
    """Mean over the relevant docs (by gain) of nDCG at their ranks; missing ones count at the end."""
    gain, ideal, iprefix, n_ideal = _ideal(v, pairs)
    pos_gain = gain > 0
    eq, ep = v.q[pos_gain], v.pos[pos_gain]
    rdcg = _dcg_before(v, gain, eq, ep + 1)
    idcg = _at(iprefix, eq, np.minimum(ep, n_ideal[eq] - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        total = v.per_query_sum(rdcg / idcg, pos_gain)
        nrr = np.bincount(eq, minlength=v.Q)
        final = _dcg_before(v, gain, np.arange(v.Q), v.num_ret)
        full = _at(iprefix, np.arange(v.Q), n_ideal - 1)
        total = total + (n_ideal - nrr) * final / full
        return np.where(total > 0, total / n_ideal, 0.0)


@_quietly_dividing
def Rndcg(v, pairs):
    """Mean of nDCG taken where the ideal ranking steps down a grade level (and at the run's end)."""
    gain, ideal, iprefix, n_ideal = _ideal(v, pairs)
    Q, W = ideal.shape
    padded = np.concatenate([ideal, np.zeros((Q, 1))], axis=1)
    steps = padded[:, 1:] != padded[:, :-1]                 # ideal gain changes before rank c = col + 1
    eq, ecol = np.nonzero(steps)
    c = ecol + 1
    rd = _dcg_before(v, gain, eq, np.minimum(c, v.num_ret[eq]))
    idc = _at(iprefix, eq, c - 1)
    terms = [(eq, c, rd / idc)]
    end = (v.num_ret > n_ideal + 1) & (n_ideal > 0)      # the run goes on past a non-empty ideal ranking
    qe = np.flatnonzero(end)
    terms.append((qe, np.full(qe.size, np.iinfo(np.int64).max), _dcg_before(v, gain, qe, v.num_ret[qe])
                  / _at(iprefix, qe, n_ideal[qe] - 1)))
    q_all = np.concatenate([t[0] for t in terms])
    c_all = np.concatenate([t[1] for t in terms])
    x_all = np.concatenate([t[2] for t in terms])
    order = np.lexsort((c_all, q_all))
    total = seq_segment_sum(x_all[order], q_all[order], Q)
    changes = np.bincount(q_all, minlength=Q)
    return np.where((v.num_rel > 0) & (changes > 0), safe_div(total, changes), 0.0)


@_quietly_dividing
def G(v, pairs):
    """trec_eval's G: gain over log2(2 + ideal cost so far - gain so far), normalised by the ideal's gain."""
    gain, ideal, iprefix, n_ideal = _ideal(v, pairs)
    Q, W = ideal.shape
    cost = np.cumsum(np.maximum(ideal, 1.0), axis=1) if W else np.zeros((Q, 0))
    nz = gain != 0
    eq, ep = v.q[nz], v.pos[nz]
    results = seq_segment_sum(gain[nz], eq, Q, cumulative=True)
    inside = ep < W
    cost_at = np.where(inside, _at(cost, eq, ep), (_at(cost, eq, np.full(eq.size, W - 1)) if W else 0.0) + (ep - W + 1))
    terms = gain[nz] / np.log2(2 + cost_at - results)
    total = v.per_query_sum(terms, nz)
    sum_ideal = np.cumsum(ideal, axis=1)[:, -1] if W else np.zeros(Q)
    return np.where(sum_ideal > 0, safe_div(total, sum_ideal), 0.0)
