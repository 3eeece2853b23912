"""The range a measure's declaration gives (``Measure.bounds``, ``registry.value_bounds``) holds for every value it
computes: on random judgments (negative grades, unjudged and repeated-score docs included) every per-query value of
every bounded measure, in either syntax, lies in its range.  The results record's check (testsets/results.py) refuses
a value outside it, so a range declared too narrow would refuse real results: this keeps the declarations honest."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

import treckit
from treckit.measures.registry import MEASURES, resolve, value_bounds

# every bounded measure, asked for with its defaults and with parameters of each kind
BOUNDED = [m.name for m in MEASURES if m.bounds is not None and m.trec]
NAMED = ["P@3", "R@2", "RR@4", "AP", "AP@3", "nDCG@5", "nDCG(dcg='exp-log2')@3", "nDCG", "Rprec", "Bpref", "SetP",
         "SetR", "SetAP", "Success@2", "Judged@3", "Judged", "IPrec@0.3", "P(rel=2)@5", "R(rel=2)@10",
         "ndcg_cut.1,7", "recall.1,3,50", "P.1,2", "map_cut.2", "success.1,3", "iprec_at_recall.0.5", "unj.2"]


def test_the_declared_ranges():
    assert set(BOUNDED) >= {"map", "P", "recall", "recip_rank", "ndcg_cut", "ndcg", "bpref", "Rprec"}
    assert all(value_bounds(r) == (0.0, 1.0) for r in resolve(NAMED, first_params_win=False))
    # gains a request sets itself lift the bound: a gain of its choosing can take nDCG anywhere
    assert [value_bounds(r) for r in resolve(["ndcg.1=3,2=-9", "nDCG(gains={1: 5, 2: -1})@5"],
                                             first_params_win=False)] == [None, None]
    assert value_bounds(resolve(["num_ret"])[0]) is None


@st.composite
def _case(draw):
    docs = [f"d{i}" for i in range(draw(st.integers(1, 12)))]
    qrels, run = {}, {}
    for q in ("q1", "q2", "q3")[:draw(st.integers(1, 3))]:
        judged = draw(st.lists(st.sampled_from(docs), unique=True, max_size=len(docs)))
        qrels[q] = {d: draw(st.integers(-1, 4)) for d in judged}
        retrieved = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1, max_size=len(docs)))
        run[q] = {d: float(draw(st.integers(0, 3))) for d in retrieved}          # ties, often
    if not any(g > 0 for judged in qrels.values() for g in judged.values()):
        qrels[next(iter(qrels))]["d0"] = 1
    return qrels, run


@settings(max_examples=120, deadline=None)
@given(_case())
def test_every_value_lies_in_its_declared_range(case):
    qrels, run = case
    df = treckit.evaluate(qrels, run, BOUNDED + NAMED, complete=True, warn=lambda message: None)
    values = df[df["qid"] != "all"].drop(columns=["qid"])
    numeric = values.select_dtypes("number")
    assert not numeric.empty
    assert ((numeric >= 0) & (numeric <= 1)).all().all(), numeric[~((numeric >= 0) & (numeric <= 1))].dropna(how="all")
