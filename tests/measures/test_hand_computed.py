"""Every trec_eval measure on one small query, against arithmetic written out by hand.

qrels: A=2, B=0, C=1, D=1, E=-1 (pooled, not judged), F=3 (not retrieved)  -> R = 4 relevant (grade >= 1)
run, best first: B A X C E D   (X is not in the qrels)
grades by rank:  0 2 - 1 . 1
"""
from __future__ import annotations

from math import log2

import pytest

from treckit.engines.memory import evaluate_requests
from treckit.measures.registry import resolve
from treckit.model import Qrels, Run

EPS = 0.00001
QRELS = Qrels.from_dict({"q": {"A": 2, "B": 0, "C": 1, "D": 1, "E": -1, "F": 3}})
RUN = Run.from_dict({"q": {"B": 6.0, "A": 5.0, "X": 4.0, "C": 3.0, "E": 2.0, "D": 1.0}})


@pytest.fixture(scope="module")
def v():
    res = evaluate_requests(QRELS, RUN, resolve(["all_trec", "P.5,10", "recall.5,10", "ndcg_cut.3", "map_cut.4",
                                                 "relative_P.2,10", "success.1,2", "unj.5,10",
                                                 "Rprec_mult.0.2,0.4,1.0,2.0", "relstring.10"]))
    out = {c: res.values[0, j] for j, c in enumerate(res.columns)}
    out["relstring_10"] = res.strings["relstring_10"][0]
    out["gm_map_all"] = res.summary["gm_map"]
    out["gm_bpref_all"] = res.summary["gm_bpref"]
    return out


def test_counts(v):
    assert (v["num_ret"], v["num_rel"], v["num_rel_ret"], v["num_nonrel_judged_ret"]) == (6, 4, 3, 1)


def test_precision_family(v):
    assert v["P_5"] == 2 / 5 and v["P_10"] == 3 / 10
    assert v["recall_5"] == 2 / 4 and v["recall_10"] == 3 / 4
    assert v["Rprec"] == 2 / 4                                   # A and C in the top R = 4
    assert v["relative_P_2"] == 1 / 2 and v["relative_P_10"] == 3 / 4
    assert v["success_1"] == 0 and v["success_2"] == 1
    assert v["unj_5"] == 2 / 5 and v["unj_10"] == 2 / 10        # X and E
    # Rprec_mult: cutoff = floor(m * R + 0.9): 0.2 -> 1, 0.4 -> 2, 1.0 -> 4, 2.0 -> 8
    assert (v["Rprec_mult_0.20"], v["Rprec_mult_0.40"], v["Rprec_mult_1.00"], v["Rprec_mult_2.00"]) == (0, 1 / 2, 2 / 4, 3 / 8)


def test_average_precision_family(v):
    assert v["map"] == (1 / 2 + 2 / 4 + 3 / 6) / 4
    assert v["gm_map_all"] == pytest.approx(0.375)               # one query: exp(log(0.375))
    assert v["map_cut_4"] == (1 / 2 + 2 / 4) / 4
    assert v["recip_rank"] == 1 / 2
    # bpref: one judged non-relevant doc (B) above every relevant one: each term 1 - min(1,4)/min(1,4) = 0
    assert v["bpref"] == 0 and v["gm_bpref_all"] == pytest.approx(EPS)
    # infAP at judged relevant ranks j (0-based) 1, 3, 5 with (rel so far, non-rel, unjudged) before
    t1 = 1 / 2 + (1 / 2) * ((0 + 1 + 0) / 1) * ((0 + EPS) / (0 + 1 + 2 * EPS))
    t3 = 1 / 4 + (3 / 4) * ((1 + 1 + 0) / 3) * ((1 + EPS) / (1 + 1 + 2 * EPS))
    t5 = 1 / 6 + (5 / 6) * ((2 + 1 + 1) / 5) * ((2 + EPS) / (2 + 1 + 2 * EPS))
    assert v["infAP"] == pytest.approx((t1 + t3 + t5) / 4, abs=1e-15)
    # binG: 1/log2(2 + non-relevant docs above) for A (1 above), C (2 above), D (3 above, X and E count)
    assert v["binG"] == pytest.approx((1 / log2(3) + 1 / log2(4) + 1 / log2(5)) / 4)


def test_interpolated_precision(v):
    # precision at A, C, D: 1/2, 2/4, 3/6; levels round(p * 4): 0.9 and 1.0 need 4 relevant -> 0
    for p in ("0.00", "0.10", "0.20", "0.30", "0.40", "0.50", "0.60", "0.70", "0.80"):
        assert v[f"iprec_at_recall_{p}"] == 0.5
    assert v["iprec_at_recall_0.90"] == 0 and v["iprec_at_recall_1.00"] == 0
    assert v["11pt_avg"] == pytest.approx(9 * 0.5 / 11)


def test_set_measures_and_utility(v):
    assert v["set_P"] == 3 / 6 and v["set_recall"] == 3 / 4 and v["set_relative_P"] == 3 / 4
    assert v["set_map"] == 9 / (6 * 4)
    assert v["set_F"] == pytest.approx(2 * 0.5 * 0.75 / (0.5 + 0.75))
    assert v["utility"] == 3 - 3                                   # 1*relret - 1*nonrelret


def test_dcg_family(v):
    dcg = 2 / log2(3) + 1 / log2(5) + 1 / log2(7)
    idcg = 3 / log2(2) + 2 / log2(3) + 1 / log2(4) + 1 / log2(5)
    assert v["ndcg"] == pytest.approx(dcg / idcg)
    assert v["ndcg_cut_3"] == pytest.approx((2 / log2(3)) / (3 + 2 / log2(3) + 1 / log2(4)))
    # ndcg_rel: nDCG at each relevant retrieved doc, the missing relevant one scored at the end
    i1, i3 = 3 + 2 / log2(3), 3 + 2 / log2(3) + 1 / log2(4) + 1 / log2(5)
    r1, r3, r5 = 2 / log2(3), 2 / log2(3) + 1 / log2(5), dcg
    assert v["ndcg_rel"] == pytest.approx((r1 / i1 + r3 / i3 + r5 / i3 + r5 / i3) / 4)
    # Rndcg: nDCG where the ideal grade level changes (after ranks 1, 2, 4) and at the end of the run
    ideal2, ideal4 = 3 + 2 / log2(3), 3 + 2 / log2(3) + 1 / log2(4) + 1 / log2(5)
    assert v["Rndcg"] == pytest.approx((0 / 3 + (2 / log2(3)) / ideal2 + r3 / ideal4 + dcg / ideal4) / 4)
    # G: gain over log2(2 + cost so far - gain so far); costs follow the ideal gains (3,2,1,1) then 1
    assert v["G"] == pytest.approx((2 / log2(2 + 5 - 2) + 1 / log2(2 + 7 - 3) + 1 / log2(2 + 9 - 4)) / 7)


def test_rbp_and_relstring(v):
    # grades rescaled to [0, 1] because the highest gain (3) exceeds 1: 2 -> 2/3, 1 -> 1/3
    assert v["rbp"] == pytest.approx(0.1 * (2 / 3 * 0.9 + 1 / 3 * 0.9 ** 3 + 1 / 3 * 0.9 ** 5))
    assert v["rbp_resid"] == pytest.approx(0.9 ** 6 + 0.1 * (0.9 ** 2 + 0.9 ** 4))
    assert v["relstring_10"] == "02-1.1"


def test_repeated_judgments_and_repeated_run_docs_are_errors():
    """trec_eval refuses both; so do we, naming the doc and the query (only queries with judgments
    count on the run side, as trec_eval ignores the others)."""
    from treckit.console.errors import InputError
    qrels = Qrels.from_columns(["q", "q", "r"], ["A", "A", "A"], [1, 0, 1])
    with pytest.raises(InputError, match="qrels judge doc 'A' twice for query 'q'"):
        evaluate_requests(qrels, RUN, resolve(["map"]))
    run = Run.from_columns(["q", "q", "q", "z", "z"], ["B", "A", "B", "Y", "Y"], [3.0, 2.0, 1.0, 2.0, 1.0])
    with pytest.raises(InputError, match="lists doc 'B' more than once for query 'q'"):
        evaluate_requests(QRELS, run, resolve(["map"]))
    ok = Run.from_columns(["q", "q", "z", "z"], ["B", "A", "Y", "Y"], [3.0, 2.0, 2.0, 1.0])
    assert evaluate_requests(QRELS, ok, resolve(["map"])).values[0, 0] == pytest.approx((1 / 2) / 4)
