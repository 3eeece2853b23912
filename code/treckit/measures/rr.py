"""Reciprocal rank of the first relevant doc (optionally only within the top k: MRR@k)."""
from __future__ import annotations

from ..dependencies import deferred

np = deferred("numpy")


def first_rel_pos(v) -> np.ndarray:
    first = np.full(v.Q, np.iinfo(np.int64).max)
    np.minimum.at(first, v.q[v.isrel], v.pos[v.isrel])
    return first


def recip_rank(v, _p, cutoff: int | None = None):
    """1 / rank of the first relevant doc; with ``cutoff`` (ir_measures' RR@k) only the top k count."""
    f = first_rel_pos(v)
    limit = np.iinfo(np.int64).max if cutoff is None else cutoff
    return np.where(f < limit, 1.0 / (f + 1.0), 0.0)
