"""Counts and set-based measures (the whole retrieved set, no ranks): num_*, set_*, utility."""
from __future__ import annotations

from ..dependencies import deferred
from ..ranking.judged import RankedJudged
from .segments import safe_div

np = deferred("numpy")


def num_rel_ret(v: RankedJudged) -> np.ndarray:
    return np.bincount(v.q[v.isrel], minlength=v.Q)


def num_q(v, _p):
    return np.ones(v.Q)


def num_ret(v, _p):
    return v.num_ret.astype(np.float64)


def num_rel(v, _p):
    return v.num_rel.astype(np.float64)


def num_rel_ret_(v, _p):
    return num_rel_ret(v).astype(np.float64)


def num_nonrel_judged_ret(v, _p):
    return np.bincount(v.q[(v.rel >= 0) & ~v.isrel], minlength=v.Q).astype(np.float64)


def set_P(v, _p):
    return safe_div(num_rel_ret(v), v.num_ret)


def set_relative_P(v, _p):
    return np.where(v.num_rel > 0, safe_div(num_rel_ret(v), np.minimum(v.num_ret, v.num_rel)), 0.0)


def set_recall(v, _p):
    return safe_div(num_rel_ret(v), v.num_rel)


def set_map(v, _p):
    rr = num_rel_ret(v).astype(np.float64)
    return np.where(v.num_rel > 0, safe_div(rr * rr, v.num_ret.astype(np.float64) * v.num_rel), 0.0)


def set_F(v, params):
    beta = params[0]
    rr = num_rel_ret(v)
    P = safe_div(rr, v.num_ret)
    R = safe_div(rr, v.num_rel)
    return np.where(rr > 0, safe_div((beta + 1.0) * P * R, beta * P + R), 0.0)


def utility(v, params):
    a, b, c, d = params
    rr = num_rel_ret(v).astype(np.float64)
    ret, rel = v.num_ret, v.num_rel
    return a * rr + b * (ret - rr) + c * (rel - rr) + d * (v.num_docs_in_coll + rr - ret - rel)


def judged_at(v, _p, cutoff: int | None = None):
    """ir_measures' Judged@k: share of the top k (or of all retrieved, if fewer or no k) that is in the
    qrels, whatever its grade."""
    shown = v.num_ret if cutoff is None else np.minimum(v.num_ret, cutoff)
    judged = np.bincount(v.q[v.pos < shown[v.q]], minlength=v.Q)
    return safe_div(judged, shown)
