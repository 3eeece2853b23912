"""Reciprocal rank of the first relevant doc (optionally only within the top k: MRR@k)."""
from __future__ import annotations

import numpy as np


def first_rel_pos(v) -> np.ndarray:
    first = np.full(v.Q, np.iinfo(np.int64).max)
    np.minimum.at(first, v.q[v.isrel], v.pos[v.isrel])
    return first


def recip_rank(v, _p):
    f = first_rel_pos(v)
    return np.where(f < np.iinfo(np.int64).max, 1.0 / (f + 1.0), 0.0)


def recip_rank_at(v, cutoffs):
    f = first_rel_pos(v)
    return np.stack([np.where(f < k, 1.0 / (f + 1.0), 0.0) for k in cutoffs], axis=1)
