"""Rank-biased precision (Moffat & Zobel, TOIS 2008) and its residual; persistence ``p`` (default 0.9)."""
from __future__ import annotations

from ..dependencies import deferred
from .gains import entry_gains, gain_pairs, level_gains
from ..ranking.judged import RankedJudged
from .segments import powers

np = deferred("numpy")


def persistence(pairs) -> float:
    """rbp's persistence ``p`` (``rbp.p=X``; 0.9 unless given)."""
    return next((float(val) for name, val in pairs or () if name == "p"), 0.9)


def rbp(v: RankedJudged, pairs):
    p = persistence(pairs)
    gain = rbp_gains(v, pairs)
    pw = powers(p, int(v.num_ret.max()) if v.Q else 0)
    mask = gain != 0
    return (1.0 - p) * v.per_query_sum(gain[mask] * pw[v.pos[mask]], mask)


def rbp_gains(v: RankedJudged, pairs) -> np.ndarray:
    """(E,) the gain rbp gives each judged retrieved doc: its grade's gain, rescaled to [0, 1] per query as
    trec_eval does (below); 0 for a grade without a gain."""
    custom = gain_pairs(pairs)
    lv_gain = level_gains(v, custom)
    lo, hi = _gain_range(v, custom)
    # trec_eval rescales a query's gains to [0, 1] when any of its gains (grades 0..max of the query,
    # and the pairs given) falls outside
    rescale = (lo < 0) | (hi > 1)
    gain = entry_gains(v, custom, lv_gain)
    listed = (v.rel >= 0) | np.isin(v.rel, list(custom))          # get_gain is 0 for grades not listed
    lo_e, hi_e = lo[v.q], hi[v.q]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rescale[v.q] & listed, (gain - lo_e) / (hi_e - lo_e), np.where(listed, gain, 0.0))


def _gain_range(v: RankedJudged, custom: dict[int, float]) -> tuple[np.ndarray, np.ndarray]:
    """(Q,) lowest and highest gain over trec_eval's gain list of each query: every grade 0..n-1
    (n = the query's largest grade + 1; gain = grade unless a pair sets it) and every pair given.
    Worked out from the few pairs, without listing the grades up to n."""
    has = v.rel_levels > 0
    top = np.where(has.any(axis=1), v.grades[v.rel_levels.shape[1] - 1 - np.argmax(has[:, ::-1], axis=1)]
                   if v.grades.size else 0, -1)                   # the query's largest grade, -1 if none
    keys = np.array(sorted(custom), np.int64)
    lowest_free = 0                                               # smallest grade >= 0 without a pair
    while lowest_free in custom:
        lowest_free += 1
    highest_free = top.astype(np.int64)                           # largest grade <= top without a pair
    for _ in range(keys.size):
        highest_free = np.where(np.isin(highest_free, keys), highest_free - 1, highest_free)
    lo = np.where(lowest_free <= top, float(lowest_free), np.inf)
    hi = np.where(highest_free >= 0, highest_free.astype(np.float64), -np.inf)
    if custom:
        lo = np.minimum(lo, min(custom.values()))
        hi = np.maximum(hi, max(custom.values()))
    return lo, hi


def rbp_resid(v: RankedJudged, pairs):
    p = persistence(pairs)
    width = int(v.num_ret.max()) if v.Q else 0
    pw = powers(p, width)
    unjudged_pos = np.ones((v.Q, width), bool)
    unjudged_pos[np.arange(width)[None, :] >= v.num_ret[:, None]] = False
    judged = v.rel >= 0
    unjudged_pos[v.q[judged], v.pos[judged]] = False
    total = np.cumsum(np.where(unjudged_pos, pw[None, :width], 0.0), axis=1)[:, -1] if width else np.zeros(v.Q)
    any_unj = unjudged_pos.any(axis=1)
    return np.where(any_unj, pw[v.num_ret] + (1 - p) * total, 0.0)
