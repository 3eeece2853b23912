"""Gain values per relevance grade, as trec_eval's ``-m ndcg.1=3,2=9`` style parameters set them.

By default the gain of grade g is g.  Pairs ``level=gain`` override single grades; other
pairs (``p=0.8`` for rbp) are parameters, not gains.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError


def gain_pairs(pairs) -> dict[int, float]:
    out: dict[int, float] = {}
    for name, value in pairs or ():
        s = name[1:] if name[:1] in "+-" else name
        if s.isdigit():
            out[int(name)] = float(value)
    if -1 in out and out[-1] != 0:
        raise InputError("a gain for grade -1 (documents outside the qrels) is not supported",
                         fix="give gains only to grades that appear in the qrels")
    return out


def grade_gain_table(v, custom: dict[int, float]) -> np.ndarray:
    """Gain of each grade 0..L-1 plus the unjudged code, for vectorized lookups (index grade + 2)."""
    L = v.rel_levels.shape[1]
    table = np.zeros(L + 2)
    table[2:] = np.arange(L, dtype=np.float64)
    for lv, g in custom.items():
        if -2 <= lv < L:
            table[lv + 2] = g
    return table
