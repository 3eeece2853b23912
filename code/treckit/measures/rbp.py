"""Rank-biased precision (Moffat & Zobel, TOIS 2008) and its residual; persistence ``p`` (default 0.9)."""
from __future__ import annotations

import numpy as np

from .gains import gain_pairs, query_gains
from .ranking import RankedJudged, seq_segment_sum
from .segments import powers


def _p(pairs) -> float:
    return next((float(val) for name, val in pairs or () if name == "p"), 0.9)


def rbp(v: RankedJudged, pairs):
    p = _p(pairs)
    custom = gain_pairs(pairs)
    pw = powers(p, int(v.num_ret.max()) if v.Q else 0)
    gain = np.zeros(v.rel.size)
    for qi in np.unique(v.q):
        gains = query_gains(v.rel_levels[qi], custom)
        vals = [g for _, g, _ in gains]
        lo, hi = (min(vals), max(vals)) if vals else (0.0, 0.0)
        lookup = {lv: ((g - lo) / (hi - lo) if (lo < 0 or hi > 1) else g) for lv, g, _ in gains}
        sel = v.q == qi
        gain[sel] = [lookup.get(int(r), 0.0) for r in v.rel[sel]]
    mask = gain != 0
    total = seq_segment_sum(gain[mask] * pw[v.pos[mask]], v.q[mask], v.Q)
    return (1.0 - p) * total


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
