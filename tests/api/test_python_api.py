"""The Python API takes the inputs people have (treckit.inputs): every kind gives the numbers of the
same data read from TREC files, which are pytrec_eval's; bad inputs are InputErrors; warnings are
catchable InputWarnings, never prints."""
from __future__ import annotations

import json
import math
import warnings

import ir_measures
import pandas as pd
import pytest
import pytrec_eval

import treckit
from treckit import InputError, InputWarning

QRELS = {"1": {"a": 2, "b": 0, "c": 1, "x": 1}, "2": {"d": 1, "e": 0}, "10": {"f": 1}}
RUN = {"1": {"a": 0.5, "b": 2.0, "c": -1.0, "z": 0.25}, "2": {"e": 3.0, "d": 1.5, "y": 1.5}, "10": {"g": 1.0, "f": -2.0}}
MEASURES = ["map", "ndcg_cut.10", "P.5", "recip_rank"]


def _trec_files(tmp_path):
    q, r = tmp_path / "qrels", tmp_path / "run"
    q.write_text("".join(f"{qid} 0 {d} {g}\n" for qid, docs in QRELS.items() for d, g in docs.items()))
    r.write_text("".join(f"{qid} Q0 {d} {i + 1} {s!r} t\n" for qid, docs in RUN.items()
                         for i, (d, s) in enumerate(docs.items())))
    return q, r


@pytest.fixture
def reference(tmp_path):
    q, r = _trec_files(tmp_path)
    return treckit.evaluate(q, r, MEASURES)


def test_reference_is_pytrec_eval(reference):
    ev = pytrec_eval.RelevanceEvaluator(QRELS, {"map", "ndcg_cut_10", "P_5", "recip_rank"}).evaluate(RUN)
    for qid, row in reference.set_index("qid").drop("all").iterrows():
        assert row["map"] == pytest.approx(ev[qid]["map"], abs=1e-12)
        assert row["ndcg_cut_10"] == pytest.approx(ev[qid]["ndcg_cut_10"], abs=1e-12)
        assert row["P_5"] == ev[qid]["P_5"] and row["recip_rank"] == ev[qid]["recip_rank"]


class FakeRanxQrels:
    """ranx.Qrels' public shape (a ``qrels`` store and ``to_dict()``): ranx need not be installed."""

    def __init__(self, d):
        self.qrels = d

    def to_dict(self):
        return {q: dict(docs) for q, docs in self.qrels.items()}


class FakeRanxRun:
    def __init__(self, d, name="ranx_run"):
        self.run, self.name = d, name

    def to_dict(self):
        return {q: dict(docs) for q, docs in self.run.items()}


def _frames():
    qrows = [(q, d, g) for q, docs in QRELS.items() for d, g in docs.items()]
    rrows = [(q, d, s) for q, docs in RUN.items() for d, s in docs.items()]
    return qrows, rrows


def _kinds(tmp_path):
    qrows, rrows = _frames()
    pt_run = pd.DataFrame(rrows, columns=["qid", "docno", "score"])
    pt_run["rank"] = pt_run.groupby("qid")["score"].rank(ascending=False, method="first").astype(int) - 1
    qcsv, rcsv = tmp_path / "q.csv", tmp_path / "r.csv"
    pd.DataFrame(qrows, columns=["query_id", "doc_id", "relevance"]).to_csv(qcsv, index=False)
    pd.DataFrame(rrows, columns=["query_id", "doc_id", "score"]).to_csv(rcsv, index=False)
    qpq, rpq = tmp_path / "q.parquet", tmp_path / "r.parquet"
    pd.DataFrame(qrows, columns=["qid", "docno", "label"]).to_parquet(qpq)
    pt_run.to_parquet(rpq)
    qjson, rjson = tmp_path / "qrels.json", tmp_path / "run.json"
    qjson.write_text(json.dumps(QRELS))
    rjson.write_text(json.dumps(RUN))
    int_q = {int(q): docs for q, docs in QRELS.items()}
    int_r = {int(q): docs for q, docs in RUN.items()}
    return {
        "dicts": (QRELS, RUN),
        "int keys": (int_q, int_r),
        "pyterrier frames": (pd.DataFrame(qrows, columns=["qid", "docno", "label"]), pt_run),
        "ir_measures frames": (pd.DataFrame(qrows, columns=["query_id", "doc_id", "relevance"]),
                               pd.DataFrame(rrows, columns=["query_id", "doc_id", "score"])),
        "ir_measures namedtuples": ([ir_measures.Qrel(q, d, g, "0") for q, d, g in qrows],
                                    [ir_measures.ScoredDoc(q, d, s) for q, d, s in rrows]),
        "generators": ((ir_measures.Qrel(q, d, g, "0") for q, d, g in qrows),
                       (ir_measures.ScoredDoc(q, d, s) for q, d, s in rrows)),
        "tuples": (qrows, rrows),
        "ranx objects": (FakeRanxQrels(QRELS), FakeRanxRun(RUN)),
        "ranx json files": (qjson, rjson),
        "csv files": (qcsv, rcsv),
        "parquet files": (qpq, rpq),
        "model objects": (treckit.Qrels.from_dict(QRELS), treckit.Run.from_dict(RUN)),
    }


@pytest.mark.parametrize("kind", ["dicts", "int keys", "pyterrier frames", "ir_measures frames",
                                  "ir_measures namedtuples", "generators", "tuples", "ranx objects",
                                  "ranx json files", "csv files", "parquet files", "model objects"])
def test_every_input_kind_gives_the_trec_files_numbers(tmp_path, reference, kind):
    q, r = _kinds(tmp_path)[kind]
    got = treckit.evaluate(q, r, MEASURES)
    pd.testing.assert_frame_equal(got, reference, check_exact=True)


def test_real_ranx_objects(tmp_path, reference):
    ranx = pytest.importorskip("ranx")
    got = treckit.evaluate(ranx.Qrels(QRELS), ranx.Run(RUN), MEASURES)
    pd.testing.assert_frame_equal(got, reference, check_exact=True)


def test_ir_measures_measure_objects(tmp_path):
    measures = [ir_measures.nDCG @ 10, ir_measures.AP, ir_measures.RR, ir_measures.P(rel=2) @ 5]
    got = treckit.evaluate(QRELS, RUN, measures, per_query=False)
    assert list(got.columns) == ["qid", "nDCG@10", "AP", "RR", "P(rel=2)@5"]
    expected = ir_measures.calc_aggregate(measures, QRELS, RUN)
    for m in measures:
        assert got[str(m)][0] == pytest.approx(expected[m], abs=1e-12)
    single = treckit.evaluate(QRELS, RUN, ir_measures.nDCG @ 10, per_query=False)
    assert single["nDCG@10"][0] == got["nDCG@10"][0]


def test_runs_in_memory_rank_by_score_descending_even_when_negative():
    """pytrec_eval / ranx / ir_measures rank by score descending whatever the sign: so does a run in memory
    (query 10 has scores 1.0 and -2.0, the judged doc f the lower); order='asc' says otherwise."""
    got = treckit.evaluate(QRELS, RUN, "recip_rank").set_index("qid")
    assert got.loc["10", "recip_rank"] == 0.5
    neg = {"10": {"g": -1.0, "f": -2.0}}
    ev = pytrec_eval.RelevanceEvaluator(QRELS, {"recip_rank"}).evaluate(neg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)
        assert treckit.evaluate(QRELS, neg, "recip_rank").iloc[0]["recip_rank"] == ev["10"]["recip_rank"] == 0.5
        assert treckit.evaluate(QRELS, neg, "recip_rank", order="asc").iloc[0]["recip_rank"] == 1.0


def test_pyterrier_frame_with_ranks_only():
    df = pd.DataFrame({"qid": ["1", "1", "1"], "docno": ["z", "c", "a"], "rank": [2, 0, 1]})
    got = treckit.evaluate(QRELS, df, "recip_rank", missing="zero")
    assert got.set_index("qid").loc["1", "recip_rank"] == 1.0       # rank 0 (c, grade 1) first


@pytest.mark.parametrize("qrels,run,match", [
    ({}, RUN, "qrels dict is empty"),
    (QRELS, {}, "run dict is empty"),
    ({"1": {}}, RUN, "no documents"),
    (QRELS, {"1": {"a": float("nan")}}, "NaN"),
    ({"1": {"a": 0.5}}, RUN, "grade 0.5 is not an integer"),
    ({"1": {"a": True}}, RUN, "not a number"),
    (QRELS, {"1": {"a": "2.5"}}, "not a number"),
    ({"1": ["a"]}, RUN, "not a {docid: value} dict"),
    (3, RUN, "cannot read qrels from int"),
    (QRELS, None, "cannot read run from NoneType"),
    (QRELS, 2.5, "cannot read run from float"),
    (pd.DataFrame({"qid": ["1"], "label": [1]}), RUN, "no doc id column"),
    (pd.DataFrame({"qid": ["1"], "docno": ["a"], "label": [0.5]}), RUN, "grade 0.5"),
    (QRELS, pd.DataFrame({"qid": ["1"], "docno": ["a"], "score": [math.nan]}), "NaN"),
    (QRELS, pd.DataFrame({"qid": ["1"], "docno": ["a"]}), "score or a rank column"),
    (pd.DataFrame(columns=["qid", "docno", "label"]), RUN, "DataFrame is empty"),
    ([], RUN, "list is empty"),
    ([("1", "a")], RUN, "expected \\(qid, docid, value\\)"),
    ("no/such/file", RUN, "no such file"),
])
def test_bad_inputs_are_input_errors(qrels, run, match):
    with pytest.raises(InputError, match=match):
        treckit.evaluate(qrels, run, "map")


@pytest.mark.parametrize("measures", [[], [3], "", [None]])
def test_bad_measures(measures):
    with pytest.raises(InputError):
        treckit.evaluate(QRELS, RUN, measures)


def test_bad_files_are_input_errors(tmp_path):
    lines = tmp_path / "pred.json"          # JSON lines named .json: read as the run it is
    lines.write_text('{"id": "1", "docs": ["a", "b"], "scores": [2.0, 1.0]}\n{"id": "2", "docs": ["d"], "scores": [1.0]}\n')
    assert treckit.evaluate(QRELS, lines, "recip_rank", per_query=False)["recip_rank"][0] == pytest.approx((1 + 1) / 2)
    bad = tmp_path / "x.json"
    bad.write_text("[1, 2]")
    with pytest.raises(InputError, match="x.json"):
        treckit.evaluate(bad, RUN, "map")
    broken = tmp_path / "x.parquet"
    broken.write_text("not parquet")
    with pytest.raises(InputError, match="cannot read it as PARQUET"):
        treckit.evaluate(QRELS, broken, "map")


def test_warnings_are_catchable_not_printed(capsys):
    qrels = {**QRELS, "99": {"a": 1}}                  # a judged query the run does not answer
    with pytest.warns(InputWarning, match="1 judged queries have no results") as caught:
        treckit.evaluate(qrels, RUN, "map")
    assert "missing='zero'" in str(caught[0].message) and "--" not in str(caught[0].message)   # the API's spelling
    assert capsys.readouterr().err == ""
    with warnings.catch_warnings():
        warnings.simplefilter("error", InputWarning)
        with pytest.raises(InputWarning):
            treckit.evaluate(qrels, RUN, "map")


def test_warnings_name_the_callers_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        treckit.evaluate({**QRELS, "99": {"a": 1}}, RUN, "map")
    assert caught and all(w.filename == __file__ for w in caught if issubclass(w.category, InputWarning))


def test_dir_lists_the_api():
    names = dir(treckit)
    for name in ("evaluate", "read_run", "read_qrels", "write_run", "write_qrels", "convert_run", "Qrels", "Run",
                 "RunReading", "InputError", "InputWarning", "EvalOptions", "__version__"):
        assert name in names
    for name in treckit.__all__:
        assert getattr(treckit, name) is not None
    assert "annotations" not in names


def test_read_run_takes_the_reading_options(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text('{"id": "1", "docs": ["a", "b"], "scores": [-2.0, -1.0]}\n')
    with pytest.warns(InputWarning, match="ranked as negated"):
        auto = treckit.read_run(p)
    assert auto.table.column("docid").to_pylist() == ["a", "b"]      # most negative first
    assert treckit.read_run(p, order="desc").table.column("docid").to_pylist() == ["b", "a"]
    reading = treckit.RunReading(order="desc")
    assert treckit.read_run(p, reading=reading).to_dict() == {"1": {"a": -2.0, "b": -1.0}}
    with pytest.raises(InputError, match="unknown reading option"):
        treckit.read_run(p, bogus=1)
