"""Rank-biased precision (Moffat & Zobel, TOIS 2008) and its residual; persistence ``p`` (default 0.9)."""
from __future__ import annotations

import numpy as np

from .gains import gain_pairs, grade_gain_table
from .ranking import RankedJudged
from .segments import powers


def _p(pairs) -> float:
    return next((float(val) for name, val in pairs or () if name == "p"), 0.9)


def rbp(v: RankedJudged, pairs):
    p = _p(pairs)
    custom = gain_pairs(pairs)
    table = grade_gain_table(v, custom)          # gain per grade, index grade + 2
    L = v.rel_levels.shape[1]
    nz = v.rel_levels > 0
    n_levels = np.where(nz.any(axis=1), L - np.argmax(nz[:, ::-1], axis=1), 0)
    # trec_eval rescales a query's gains to [0, 1] when any of its gains (grades 0..n-1 and the
    # pairs given) falls outside
    present = np.arange(L)[None, :] < n_levels[:, None]
    level_gain = np.broadcast_to(table[2:], (v.Q, L))
    extra = np.array(list(custom.values()) or [np.nan])
    lo = np.fmin(np.where(present, level_gain, np.inf).min(axis=1, initial=np.inf), np.nanmin(extra) if custom else np.inf)
    hi = np.fmax(np.where(present, level_gain, -np.inf).max(axis=1, initial=-np.inf), np.nanmax(extra) if custom else -np.inf)
    rescale = (lo < 0) | (hi > 1)
    gain = table[v.rel + 2]
    listed = (v.rel >= 0) | np.isin(v.rel, list(custom))          # get_gain is 0 for grades not listed
    lo_e, hi_e = lo[v.q], hi[v.q]
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = np.where(rescale[v.q] & listed, (gain - lo_e) / (hi_e - lo_e), np.where(listed, gain, 0.0))
    pw = powers(p, int(v.num_ret.max()) if v.Q else 0)
    mask = gain != 0
    return (1.0 - p) * v.per_query_sum(gain[mask] * pw[v.pos[mask]], mask)


def rbp_resid(v: RankedJudged, pairs):
    p = _p(pairs)
    width = int(v.num_ret.max()) if v.Q else 0
    pw = powers(p, width)
    unjudged_pos = np.ones((v.Q, width), bool)
    unjudged_pos[np.arange(width)[None, :] >= v.num_ret[:, None]] = False
    judged = v.rel >= 0
    unjudged_pos[v.q[judged], v.pos[judged]] = False
    total = np.cumsum(np.where(unjudged_pos, pw[None, :width], 0.0), axis=1)[:, -1] if width else np.zeros(v.Q)
    any_unj = unjudged_pos.any(axis=1)
    return np.where(any_unj, pw[v.num_ret] + (1 - p) * total, 0.0)
