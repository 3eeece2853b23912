"""Average precision and its relatives: map, gm_map, map_cut@k, bpref, gm_bpref, infAP, binG."""
from __future__ import annotations

from ..dependencies import deferred
from .counts import num_rel_ret
from ..ranking.judged import RankedJudged
from .segments import safe_div

np = deferred("numpy")

MIN_GEO_MEAN = 0.00001
INFAP_EPSILON = 0.00001


def _ap_terms(v: RankedJudged):
    isrel = v.isrel
    return isrel, v.rel_so_far()[isrel] / (v.pos[isrel] + 1.0)


def map_(v, _p):
    isrel, terms = _ap_terms(v)
    total = v.per_query_sum(terms, isrel)
    return np.where(num_rel_ret(v) > 0, safe_div(total, v.num_rel), 0.0)


def gm_map(v, p):
    return np.log(np.maximum(map_(v, p), MIN_GEO_MEAN))


def map_cut(v, cutoffs):
    isrel, terms = _ap_terms(v)
    pos = v.pos[isrel]
    out = []
    for k in cutoffs:
        total = v.per_query_sum(np.where(pos < k, terms, 0.0), isrel)
        out.append(safe_div(total, v.num_rel))
    return np.stack(out, axis=1)


def bpref(v, _p):
    isrel = v.isrel
    nonrel = (v.rel >= 0) & ~isrel
    nb = v.rel_so_far(nonrel)[isrel]
    R = v.num_rel[v.q[isrel]]
    num_nonrel = v.rel_levels[:, v.grades < v.level].sum(axis=1)[v.q[isrel]]
    terms = np.where(nb > 0, 1.0 - safe_div(np.minimum(nb, R), np.minimum(num_nonrel, R)), 1.0)
    return safe_div(v.per_query_sum(terms, isrel), v.num_rel)


def gm_bpref(v, p):
    return np.log(np.maximum(bpref(v, p), MIN_GEO_MEAN))


def infAP(v, _p):
    isrel = v.isrel
    judged_nonrel = (v.rel >= 0) & ~isrel
    unjudged = v.rel < 0
    k = v.rel_so_far()[isrel]
    nonrel = v.rel_so_far(judged_nonrel)[isrel]
    unj = v.rel_so_far(unjudged)[isrel]
    j = v.pos[isrel].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        later = (1.0 / (j + 1.0) + (j / (j + 1.0)) * ((k - 1 + nonrel + unj) / j)
                 * ((k - 1 + INFAP_EPSILON) / ((k - 1 + nonrel) + 2 * INFAP_EPSILON)))
    terms = np.where(j == 0, 1.0, later)
    return safe_div(v.per_query_sum(terms, isrel), v.num_rel)


def binG(v, _p):
    isrel = v.isrel
    k = v.rel_so_far()[isrel]
    terms = 1.0 / np.log2((3 + v.pos[isrel] - k).astype(np.float64))
    return np.where(num_rel_ret(v) > 0, safe_div(v.per_query_sum(terms, isrel), v.num_rel), 0.0)
