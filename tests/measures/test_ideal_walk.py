"""ndcg_rel, Rndcg and G: the vectorized kernels against a rank-by-rank walk of the definitions
(trec_eval's loop structure, written out plainly), on random qrels/runs with custom gains."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treckit.engines.memory import EvalOptions
from treckit.measures import ndcg
from treckit.measures.gains import gain_pairs
from treckit.ranking.judged import build_view
from treckit.model import Qrels, Run


def query_gains(rel_levels_row: np.ndarray, custom: dict[int, float]) -> list[tuple[int, float, int]]:
    """(grade, gain, docs at grade) for one query, sorted by gain ascending, as trec_eval's setup_gains."""
    nz = np.flatnonzero(rel_levels_row)
    n_levels = int(nz[-1]) + 1 if nz.size else 0
    gains = {lv: (g, int(rel_levels_row[lv]) if 0 <= lv < n_levels else 0) for lv, g in custom.items()}
    for lv in range(n_levels):
        if lv not in gains:
            gains[lv] = (float(lv), int(rel_levels_row[lv]))
    return sorted(((lv, g, n) for lv, (g, n) in gains.items()), key=lambda t: t[1])


def _ideal_iter(gains):
    cur, n_at = len(gains) - 1, 0
    while True:
        n_at += 1
        while cur >= 0 and n_at > gains[cur][2]:
            n_at, cur = 1, cur - 1
        yield gains[cur][1] if cur >= 0 else 0.0


def walk_ndcg_rel(rels, gains, lookup):
    ideal, top = _ideal_iter(gains), (gains[-1][1] if gains else 0.0)
    rd = idl = total = 0.0
    nrel = nrr = i = 0
    ig = top
    while i < rels.size and ig > 0:
        g = lookup.get(int(rels[i]), 0.0)
        if g != 0:
            rd += g / math.log2(i + 2)
        ig = next(ideal)
        if ig > 0:
            nrel += 1
            idl += ig / math.log2(i + 2)
        if g > 0:
            total += rd / idl
            nrr += 1
        i += 1
    while i < rels.size:
        g = lookup.get(int(rels[i]), 0.0)
        if g != 0:
            rd += g / math.log2(i + 2)
        if g > 0:
            total += rd / idl
            nrr += 1
        i += 1
    while ig > 0:
        ig = next(ideal)
        if ig > 0:
            nrel += 1
            idl += ig / math.log2(i + 2)
        i += 1
    if idl == 0:
        return 0.0
    total += (nrel - nrr) * rd / idl
    return total / nrel if total > 0 else 0.0


def walk_rndcg(rels, gains, lookup, num_rel):
    if num_rel == 0:
        return 0.0
    ideal, top = _ideal_iter(gains), (gains[-1][1] if gains else 0.0)
    rd = idl = total = 0.0
    changes = i = 0
    ig = old = top
    while i < rels.size and ig > 0:
        g = lookup.get(int(rels[i]), 0.0)
        ig = next(ideal)
        if old != ig:
            if idl > 0:
                total += rd / idl
                changes += 1
            old = ig
        if g != 0:
            rd += g / math.log2(i + 2)
        if ig > 0:
            idl += ig / math.log2(i + 2)
        i += 1
    if i < rels.size:
        while i < rels.size:
            g = lookup.get(int(rels[i]), 0.0)
            if g != 0:
                rd += g / math.log2(i + 2)
            i += 1
        if idl > 0:
            total += rd / idl
            changes += 1
    while ig > 0:
        ig = next(ideal)
        if old != ig:
            if idl > 0:
                total += rd / idl
                changes += 1
            old = ig
        if ig > 0:
            idl += ig / math.log2(i + 2)
        i += 1
    return total / changes if changes else 0.0


def walk_g(rels, gains, lookup):
    ideal, top = _ideal_iter(gains), (gains[-1][1] if gains else 0.0)
    res_g = s_res = s_ideal = s_cost = 0.0
    ig, i = top, 0
    while i < rels.size and ig > 0:
        g = lookup.get(int(rels[i]), 0.0)
        s_res += g
        ig = next(ideal)
        if ig > 0:
            s_ideal += ig
        s_cost += ig if ig >= 1 else 1.0
        if g != 0:
            res_g += g / math.log2(2 + s_cost - s_res)
        i += 1
    while i < rels.size:
        g = lookup.get(int(rels[i]), 0.0)
        s_res += g
        s_cost += 1.0
        if g != 0:
            res_g += g / math.log2(2 + s_cost - s_res)
        i += 1
    while ig > 0:
        ig = next(ideal)
        if ig > 0:
            s_ideal += ig
    return res_g / s_ideal if s_ideal > 0 else 0.0


@st.composite
def data(draw):
    qrels, run = {}, {}
    for q in range(draw(st.integers(1, 3))):
        docs = [f"d{i}" for i in range(14)]
        j = draw(st.dictionaries(st.sampled_from(docs), st.integers(-1, 3), min_size=1, max_size=9))
        qrels[f"q{q}"] = j
        run[f"q{q}"] = draw(st.dictionaries(st.sampled_from(docs), st.integers(0, 40).map(float), min_size=1, max_size=14))
    pairs = draw(st.sampled_from([(), (("1", 3.0), ("2", 9.0)), (("0", 0.5), ("3", 1.5)), (("2", 0.0),)]))
    return qrels, run, pairs


@settings(max_examples=150, deadline=None)
@given(data())
def test_vectorized_equals_rank_walk(d):
    qrels, run, pairs = d
    v = build_view(Qrels.from_dict(qrels), Run.from_dict(run), EvalOptions(missing="skip"))
    custom = gain_pairs(pairs)
    got = {"ndcg_rel": ndcg.ndcg_rel(v, pairs), "Rndcg": ndcg.Rndcg(v, pairs), "G": ndcg.G(v, pairs)}
    starts = np.searchsorted(v.q, np.arange(v.Q + 1))
    for qi in range(v.Q):
        rels = np.full(int(v.num_ret[qi]), -1)
        rels[v.pos[starts[qi]:starts[qi + 1]]] = v.rel[starts[qi]:starts[qi + 1]]
        gains = query_gains(v.dense_levels(qi), custom)
        lookup = {lv: g for lv, g, _ in gains}
        assert got["ndcg_rel"][qi] == pytest.approx(walk_ndcg_rel(rels, gains, lookup), abs=1e-12)
        assert got["Rndcg"][qi] == pytest.approx(walk_rndcg(rels, gains, lookup, int(v.num_rel[qi])), abs=1e-12)
        assert got["G"][qi] == pytest.approx(walk_g(rels, gains, lookup), abs=1e-12)
