"""Values given in Python read at once (a whole list or column checked as one array) mean what they mean read one
by one (treckit.inputs.values.score_value, inputs.objects' ids): the same doubles, the same grades, the same errors
naming the value; DataFrames with pandas' Arrow text and with Python objects give the same numbers, pytrec_eval's."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from hypothesis import given, settings, strategies as st

import treckit
from treckit.console.errors import InputError
from treckit.inputs.values import grades, score_value, scores


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=False), st.integers(-2**70, 2**70)), min_size=1, max_size=50))
def test_a_list_of_plain_numbers_reads_as_one_by_one(values):
    got = scores(values)
    assert [float(v) for v in got] == [score_value(v) for v in values]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-2**60, 2**60), min_size=1, max_size=50))
def test_grades_read_through_a_double_as_one_by_one(values):
    assert grades(values, "qrels") == [int(float(v)) for v in values]


def test_a_grade_past_a_doubles_exact_integers_rounds_as_before():
    assert grades([1, 2**53 + 1], "qrels") == [1, 2**53]


@pytest.mark.parametrize("values, message", [
    ([1.0, float("nan")], "a score is NaN"),
    ([1.0, True], "score True is not a number"),
    ([1.0, "2.5"], "score '2.5' is not a number"),
    ([1.0, 10**400], "too large for a double"),
    (np.array([1.0, np.nan]), "a score is NaN"),
    (np.array([True, False]), "score True is not a number"),
])
def test_a_bad_score_is_named_as_one_by_one(values, message):
    with pytest.raises(InputError, match=message):
        scores(values)


def test_a_numeric_column_reads_as_doubles():
    assert scores(np.array([3, 1], np.int32)).tolist() == [3.0, 1.0]
    assert scores(np.array([0.1], np.float32)).tolist() == [float(np.float32(0.1))]


QRELS = {"1": {"a": 1, "c": 2, "x": 1}, "2": {"b": 1, "e": 0}}
RUN = {"1": {"a": 2.5, "b": 1.5, "c": 0.5, "d": 0.5}, "2": {"b": 3.0, "e": 2.0, "f": 1.0}}


def _frames(dtype):
    q = pd.DataFrame([(k, d, g) for k, docs in QRELS.items() for d, g in docs.items()], columns=["qid", "docno", "label"])
    r = pd.DataFrame([(k, d, s) for k, docs in RUN.items() for d, s in docs.items()], columns=["qid", "docno", "score"])
    for df in (q, r):
        for c in ("qid", "docno"):
            df[c] = df[c].astype(dtype)
    return q, r


@pytest.mark.parametrize("dtype", ["str", object])
def test_frames_of_arrow_text_and_of_objects_give_pytrec_evals_numbers(dtype):
    q, r = _frames(dtype)
    got = treckit.evaluate(q, r, ["map", "ndcg_cut.10"]).set_index("qid")
    want = pytrec_eval.RelevanceEvaluator(QRELS, {"map", "ndcg_cut.10"}).evaluate(RUN)
    for qid, values in want.items():
        assert got.loc[qid, "map"] == values["map"] and got.loc[qid, "ndcg_cut_10"] == values["ndcg_cut_10"]
    assert got.loc["all", "map"] == pytest.approx(math.fsum(v["map"] for v in want.values()) / 2, abs=0)


@pytest.mark.parametrize("dtype", ["str", object])
@pytest.mark.parametrize("bad, message", [("", "an empty doc id"), (None, "doc id (nan|None) is not an id")])
def test_a_bad_id_in_a_frame_is_named_whatever_its_dtype(dtype, bad, message):
    q, r = _frames(dtype)
    r.loc[1, "docno"] = bad
    with pytest.raises(InputError, match=message):
        treckit.evaluate(q, r, ["map"])


def test_a_dicts_ids_are_checked():
    with pytest.raises(InputError, match="an empty doc id"):
        treckit.evaluate(QRELS, {"1": {"a": 1.0, "": 2.0}}, ["map"])
    got = treckit.evaluate(QRELS, {"1": {"a": 1.0, 7: 2.0}}, ["map"], per_query=False, warn=[].append)
    assert got["map"][0] == pytest.approx((1 / 2) / 3)          # doc 7 ranks first, unjudged; a at rank 2
