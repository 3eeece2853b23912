"""Gain values per relevance grade, as trec_eval's ``-m ndcg.1=3,2=9`` style parameters set them.

By default the gain of grade g is g.  Pairs ``level=gain`` override single grades; other
pairs (``p=0.8`` for rbp) are parameters, not gains.  Gains are looked up per distinct grade
of the qrels (``view.grades``), never through a table as long as the largest grade.
"""
from __future__ import annotations

from ..dependencies import deferred
from ..console.errors import InputError
from ..ranking.judged import UNJUDGED

np = deferred("numpy")


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


def level_gains(v, custom: dict[int, float]) -> np.ndarray:
    """(D,) gain of each distinct grade of the view (``v.grades``)."""
    g = v.grades.astype(np.float64)
    for lv, gain in custom.items():
        g[v.grades == lv] = gain
    return g


def entry_gains(v, custom: dict[int, float], levels: np.ndarray | None = None) -> np.ndarray:
    """(E,) gain of each judged retrieved doc: its grade's gain; a pooled-but-unjudged doc (negative
    grade) gets the gain given for level -2 (trec_eval's code for it), else 0."""
    levels = level_gains(v, custom) if levels is None else levels
    out = np.full(v.rel.size, custom.get(UNJUDGED, 0.0))
    judged = v.rel >= 0
    if levels.size:
        out[judged] = levels[v.grade_index(v.rel[judged])]
    return out
