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


def query_gains(rel_levels_row: np.ndarray, custom: dict[int, float]) -> list[tuple[int, float, int]]:
    """(grade, gain, docs at grade) for one query, sorted by gain ascending (trec_eval's setup_gains)."""
    nz = np.flatnonzero(rel_levels_row)
    n_levels = int(nz[-1]) + 1 if nz.size else 0
    gains = {lv: (g, int(rel_levels_row[lv]) if 0 <= lv < n_levels else 0) for lv, g in custom.items()}
    for lv in range(n_levels):
        if lv not in gains:
            gains[lv] = (float(lv), int(rel_levels_row[lv]))
    return sorted(((lv, g, n) for lv, (g, n) in gains.items()), key=lambda t: t[1])


def grade_gain_table(v, custom: dict[int, float]) -> np.ndarray:
    """Gain of each grade 0..L-1 plus the unjudged code, for vectorized lookups (index grade + 2)."""
    L = v.rel_levels.shape[1]
    table = np.zeros(L + 2)
    table[2:] = np.arange(L, dtype=np.float64)
    for lv, g in custom.items():
        if -2 <= lv < L:
            table[lv + 2] = g
    return table
