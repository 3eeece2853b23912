"""Recall@k: relevant in the top k divided by all relevant docs of the query."""
from __future__ import annotations

from ..dependencies import deferred
from .segments import rel_at, safe_div

np = deferred("numpy")


def recall(v, cutoffs):
    return np.stack([safe_div(rel_at(v, k), v.num_rel) for k in cutoffs], axis=1)
