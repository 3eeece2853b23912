"""Precision family: P@k, relative_P@k, success@k, Rprec, Rprec_mult, unj@k, iprec_at_recall, 11pt_avg."""
from __future__ import annotations

from ..dependencies import deferred
from .counts import num_rel_ret
from ..ranking.judged import RankedJudged
from .segments import rel_at, safe_div, segment_max

np = deferred("numpy")


def P(v: RankedJudged, cutoffs):
    """Relevant in the top k divided by k (missing ranks count as non-relevant)."""
    return np.stack([rel_at(v, k) / float(k) for k in cutoffs], axis=1)


def relative_P(v, cutoffs):
    return np.stack([np.where(v.num_rel > 0, safe_div(rel_at(v, k), np.minimum(k, v.num_rel)), 0.0) for k in cutoffs], axis=1)


def success(v, cutoffs):
    return np.stack([(rel_at(v, k) > 0).astype(np.float64) for k in cutoffs], axis=1)


def Rprec(v, _p):
    look = np.minimum(v.num_ret, v.num_rel)
    return np.where(look > 0, safe_div(rel_at(v, look), v.num_rel), 0.0)


def Rprec_mult(v, multiples):
    out = []
    for m in multiples:
        cut = np.floor(m * v.num_rel + 0.9).astype(np.int64)
        out.append(np.where(cut > 0, safe_div(rel_at(v, cut), cut), 0.0))
    return np.stack(out, axis=1)


def unj(v, cutoffs):
    """Share of the top k not judged (not in the qrels, or judged with a negative grade)."""
    out = []
    for k in cutoffs:
        judged = rel_at(v, k, v.rel >= 0)
        out.append((np.minimum(v.num_ret, k) - judged) / float(k))
    return np.stack(out, axis=1)


def iprec_at_recall(v, levels):
    """Interpolated precision: the best precision at or after the rank where recall reaches each level."""
    isrel = v.isrel
    qr = v.q[isrel]
    k = v.rel_so_far()[isrel]
    prec = k / (v.pos[isrel] + 1.0)
    nrr = np.bincount(qr, minlength=v.Q)
    start = np.concatenate(([0], np.cumsum(nrr)[:-1]))
    end = start + nrr
    with np.errstate(invalid="ignore"):
        # trec_eval starts from relret / retrieved even when nothing is retrieved (-J, -M 0): 0/0, NaN,
        # which it prints as -nan for every level reached before the first relevant doc
        at_end = num_rel_ret(v) / v.num_ret.astype(np.float64)
    out = []
    for lv in levels:
        cut = np.floor(lv * v.num_rel + 0.5).astype(np.int64)     # C's lround for x >= 0
        val = np.zeros(v.Q)
        ok = (cut >= 1) & (cut <= nrr)
        val[ok] = segment_max(prec, start[ok] + cut[ok] - 1, end[ok])
        zero = cut == 0
        any_rel = zero & (nrr > 0)
        val[any_rel] = segment_max(prec, start[any_rel], end[any_rel])
        only_end = zero & (nrr == 0)
        val[only_end] = at_end[only_end]
        out.append(val)
    return np.stack(out, axis=1)


def eleven_pt_avg(v, levels):
    vals = iprec_at_recall(v, levels)
    acc = np.zeros(v.Q)
    for j in range(vals.shape[1] - 1, -1, -1):     # trec_eval adds from the highest level down
        acc += vals[:, j]
    return acc / len(levels)
