"""treckit.evaluate's DataFrame: a row per evaluated query in trec_eval's order, then ``all``; numeric measures
only, as doubles; the numbers pytrec_eval gives on the same dicts (and their mean in the ``all`` row)."""
from __future__ import annotations

import pytest
import pytrec_eval

import treckit

QRELS = {"10": {"a": 1, "c": 2}, "9": {"b": 1, "x": 1}, "11": {"z": 1}}
RUN = {"10": {"a": 2.5, "b": 1.5, "c": 0.5}, "9": {"b": 3.0, "e": 2.0}, "11": {"q": 1.0}}


def test_a_row_per_query_then_all_as_doubles():
    got = treckit.evaluate(QRELS, RUN, ["map", "num_ret", "relstring.3", "runid", "P.2"])
    assert list(got.columns) == ["qid", "num_ret", "map", "P_2"]     # trec_eval's order; relstring, runid left out
    assert got["qid"].tolist() == ["10", "11", "9", "all"]                    # byte order of qid, as trec_eval
    assert all(str(got[c].dtype) == "float64" for c in ("map", "num_ret", "P_2"))
    want = pytrec_eval.RelevanceEvaluator(QRELS, {"map", "num_ret", "P.2"}).evaluate(RUN)
    for qid in QRELS:
        row = got.set_index("qid").loc[qid]
        assert (row["map"], row["num_ret"], row["P_2"]) == (want[qid]["map"], want[qid]["num_ret"], want[qid]["P_2"])
    summary = got.set_index("qid").loc["all"]
    assert summary["num_ret"] == 3 + 2 + 1                                    # trec_eval sums num_ret
    assert summary["map"] == pytest.approx((want["10"]["map"] + want["11"]["map"] + want["9"]["map"]) / 3, abs=1e-15)


def test_the_summary_alone():
    got = treckit.evaluate(QRELS, RUN, ["P.2"], per_query=False)
    assert got["qid"].tolist() == ["all"] and got["P_2"].tolist() == [pytest.approx((1 / 2 + 0 + 1 / 2) / 3)]
