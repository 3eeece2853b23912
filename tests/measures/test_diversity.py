"""ndeval's diversity measures: treckit's doubles against pyndeval's (ndeval's C code), its table against ndeval's
own output, hand-computed values, ndeval's reading rules and refusals, and the parsers under hypothesis."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import run_cli
from treckit.console.errors import InputError
from treckit.inputs.formats import ndeval as reading
from treckit.measures import diversity as dv
from treckit.output.ndeval import ndeval_table

QRELS = [("q1", "s1", "a", 1), ("q1", "s2", "a", 1), ("q1", "s1", "b", 1), ("q1", "s2", "c", 2), ("q1", "s3", "d", 0),
         ("q2", "s1", "x", 1), ("q2", "s2", "y", -1), ("q3", "s1", "z", 0)]
RUN = {"q1": {"b": 3.0, "a": 2.0, "x": 1.0, "c": 1.0}, "q2": {"y": 2.0, "x": 1.0}, "q3": {"z": 1.0}, "q9": {"a": 1.0}}


def same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def pyndeval_values(qrels, run, measures, **kw):
    pyndeval = pytest.importorskip("pyndeval", reason="pyndeval (the test extra) is not installed")
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    return pyndeval.RelevanceEvaluator(qrels, measures, **kw).evaluate(rows)


@pytest.mark.parametrize("alpha,beta,rel", [(0.5, 0.5, 1), (0.3, 0.8, 1), (1.0, 0.5, 1), (0.0, 0.2, 2), (0.5, 1.0, 0)])
def test_equal_to_pyndeval(alpha, beta, rel):
    """Every measure at cutoffs 1 to 20, bit for bit, NaN where pyndeval gives NaN (nNRBP of a topic without a
    relevant document)."""
    names = [f"{m}@{k}" for m in dv.CUTOFF_MEASURES for k in range(1, 21)] + list(dv.WHOLE_MEASURES)
    ref = pyndeval_values(QRELS, RUN, names, relevance_level=rel, alpha=alpha, beta=beta)
    ours = dv.evaluate(dv.prepare(QRELS, alpha=alpha, beta=beta, rel=rel), RUN, names)
    assert set(ours) == set(ref) == {"q1", "q2", "q3"}
    wrong = [(q, m, ref[q][m], ours[q][m]) for q in ref for m in names if not same(ref[q][m], ours[q][m])]
    assert wrong == []
    assert math.isnan(ours["q3"]["nNRBP"]) == (rel >= 1) and ours["q1"]["alpha-nDCG@20"] > 0


def test_equal_to_ir_measures_names():
    """ir_measures' names (its pyndeval provider) give the same per-query values; a judged query the run lacks
    gets 0 there (ir_measures gives every judged query a value) and none here."""
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("pyndeval", reason="pyndeval (the test extra) is not installed")
    names = {"alpha_nDCG@5": "alpha-nDCG@5", "ERR_IA@10": "ERR-IA@10", "NRBP": "NRBP", "nNRBP": "nNRBP",
             "AP_IA": "MAP-IA", "P_IA@3": "P-IA@3", "StRecall@2": "strec@2", "nERR_IA@20": "nERR-IA@20",
             "alpha_DCG@1": "alpha-DCG@1"}
    qrels = [ir_measures.Qrel(q, d, g, s) for q, s, d, g in QRELS + [("q4", "s1", "w", 1)]]
    run = [ir_measures.ScoredDoc(q, d, s) for q, docs in RUN.items() for d, s in docs.items()]
    got = {(m.query_id, str(m.measure)): m.value
           for m in ir_measures.iter_calc([ir_measures.parse_measure(n) for n in names], qrels, run)}
    ours = dv.evaluate(dv.prepare(QRELS + [("q4", "s1", "w", 1)]), RUN, list(names.values()))
    for (q, m), v in got.items():
        if q == "q4":
            assert v == 0 and q not in ours
        else:
            assert same(v, ours[q][names[m]]), (q, m)


def test_hand_computed_alpha_ndcg():
    """Subtopics s1, s2; a covers both, b covers s1, c covers s2; run b, a, x; alpha 0.5.
    Scores: b 1 (s1 new), a 0.5 + 1 (s1 seen once, s2 new), x 0.  Ideal: a 2, then b and c 0.5 each (c, the
    greater docno, first).  Ideal-ideal (A = 2): 2, 1, 0.5 at ranks 1-3.  Discount log(2)/log(i + 2), 1 at rank 1."""
    qrels = [("q", "s1", "a", 1), ("q", "s2", "a", 1), ("q", "s1", "b", 1), ("q", "s2", "c", 1)]
    v = dv.evaluate(dv.prepare(qrels), {"q": {"b": 3, "a": 2, "x": 1}}, ["alpha-DCG@1", "alpha-DCG@2", "alpha-nDCG@2",
                                                                        "ERR-IA@2", "P-IA@3", "strec@1", "MAP-IA", "NRBP"])
    d1 = math.log(2) / math.log(3)
    run2, ideal_ideal2 = 1 + 1.5 * d1, 2 + 1 * d1
    ideal2 = 2 + 0.5 * d1
    assert v["q"]["alpha-DCG@1"] == 1.0                                  # ndeval leaves rank 1 unnormalised
    assert v["q"]["alpha-DCG@2"] == pytest.approx(run2 / ideal_ideal2, abs=1e-15)
    assert v["q"]["alpha-nDCG@2"] == pytest.approx((run2 / ideal_ideal2) / (ideal2 / ideal_ideal2), abs=1e-15)
    assert v["q"]["ERR-IA@2"] == pytest.approx((1 + 1.5 / 2) / (2 + 1 / 2), abs=1e-15)
    assert v["q"]["P-IA@3"] == pytest.approx(3 / (3 * 2))               # pairs (b,s1) (a,s1) (a,s2)
    assert v["q"]["strec@1"] == 0.5
    assert v["q"]["MAP-IA"] == pytest.approx(((1 / 1 + 2 / 2) / 2 + (1 / 2) / 2) / 2)
    assert v["q"]["NRBP"] == pytest.approx((1 - 0.5 * 0.5) / 2 * (1 + 1.5 * 0.5), abs=1e-15)


def test_ideal_ties_go_to_the_greatest_docno():
    """Two documents of equal gain covering different subtopics: the greater docno is ranked first, which decides
    the next rank's gains (here e covers s2 and s3, so after it d (s1, s2) scores 1.5, not 2)."""
    rel = np.array([[1, 1, 0], [0, 1, 1]])                     # d, e (ascending)
    assert dv.ideal_scores(rel, 0.5).tolist() == [2.0, 1.5]


# ------------------------------------------------------------------ ndeval's table
NDEVAL_OUT = (
    "runid,topic,ERR-IA@5,ERR-IA@10,ERR-IA@20,nERR-IA@5,nERR-IA@10,nERR-IA@20,alpha-DCG@5,alpha-DCG@10,alpha-DCG@20,"
    "alpha-nDCG@5,alpha-nDCG@10,alpha-nDCG@20,NRBP,nNRBP,MAP-IA,P-IA@5,P-IA@10,P-IA@20,strec@5,strec@10,strec@20\n"
    "r,1,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,"
    "0.000000,-nan,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000\n"
    "r,2,0.726172,0.721433,0.721348,1.000000,1.000000,1.000000,0.658554,0.649763,0.649540,1.000000,1.000000,1.000000,"
    "0.750000,1.000000,1.000000,0.200000,0.100000,0.050000,1.000000,1.000000,1.000000\n"
    "r,3,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,"
    "0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000\n"
    "r,amean,0.363086,0.360717,0.360674,0.500000,0.500000,0.500000,0.329277,0.324882,0.324770,0.500000,0.500000,"
    "0.500000,0.375000,-nan,0.500000,0.100000,0.050000,0.025000,0.500000,0.500000,0.500000\n")


def test_table_as_ndeval_prints_it(tmp_path, capsys):
    """ndeval 4.5's output for this input, as it printed it: topic 1 judged all 0 (nNRBP 0/0, printed -nan, and so
    is its mean), topic 3 only in the run (zeros, not counted in the means)."""
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("1 0 a 0\n1 1 b 0\n2 0 a 1\n")
    r.write_text("1 Q0 a 1 1 r\n2 Q0 a 1 1 r\n3 Q0 x 1 1 r\n")
    assert ndeval_table(str(q), str(r)) == NDEVAL_OUT.encode()
    code, out, _ = run_cli(["ndeval", q, r], capsys)
    assert code == 0 and out == NDEVAL_OUT


def test_table_against_the_ndeval_binary(ndeval_binary, tmp_path):
    """The fuzz's ndeval cases (tests/fuzz_reference.py), every option, byte for byte against the C program."""
    import fuzz_reference
    for seed in range(25):
        assert fuzz_reference.ndeval_compare(fuzz_reference.ndeval_case(seed), tmp_path / str(seed), ndeval_binary) \
            is None, seed


def test_rank_order_traditional_order_and_depth(tmp_path):
    """By default the rank column orders the run (not the score); traditional: score descending then docno
    descending; -M keeps the top N before the repeated-docno check."""
    r = tmp_path / "r"
    r.write_text("1 Q0 a 2 9 r\n1 Q0 b 1 1 r\n1 Q0 c 3 1 r\nwt09-2 Q0 a 1 1 r\n")
    assert reading.read_run(str(r)).topics == {1: [b"b", b"a", b"c"], 2: [b"a"]}
    assert reading.read_run(str(r), traditional=True).topics[1] == [b"a", b"c", b"b"]
    assert reading.read_run(str(r), depth=2).topics[1] == [b"b", b"a"]
    r.write_text("1 Q0 a 1 1 r\n1 Q0 b 2 1 r\n1 Q0 a 3 1 r\n")
    assert reading.read_run(str(r), depth=2).topics == {1: [b"a", b"b"]}
    with pytest.raises(InputError, match="duplicate docno"):
        reading.read_run(str(r))


@pytest.mark.parametrize("qrels,run,words", [
    ("", "1 Q0 a 1 1 r\n", "qrels file is empty"),
    ("1 0 a -1\n", "1 Q0 a 1 1 r\n", "judgment '-1' is not a natural number"),
    ("1 0 a\n", "1 Q0 a 1 1 r\n", "3 fields, not 4"),
    ("1 x a 1\n", "1 Q0 a 1 1 r\n", "subtopic 'x'"),
    ("1 0 a 1\n", "1 Q0 a 1 1 r\n1 Q0 b 1 1 r\n", "duplicate rank"),
    ("1 0 a 1\n", "1 Q0 a 1 1\n", "5 fields, not 6"),
    ("1 0 a 1\n", "1-1 Q0 a 1 1 r\n", "topic '1-1'"),
    ("1 0 a 1\n", "1 Q0 a 1 1 r\n\n", "0 fields"),
    ("1 0 a 1\n", "1 Q0 a\x00 1 1 r\n", "NUL byte"),
])
def test_refusals(tmp_path, qrels, run, words):
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text(qrels)
    r.write_text(run)
    with pytest.raises(InputError, match=words):
        ndeval_table(str(q), str(r))


def test_kept_difference_traditional_needs_numbers(tmp_path):
    """ndeval -traditional leaves a score it cannot read unset (whatever the memory held) and sorts a NaN by chance:
    treckit refuses both; ranked by the rank column, the score is not read and not refused."""
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("1 0 a 1\n")
    r.write_text("1 Q0 a 1 abc r\n")
    with pytest.raises(InputError, match="not a number"):
        ndeval_table(str(q), str(r), traditional=True)
    assert ndeval_table(str(q), str(r)).count(b"\n") == 3


# ------------------------------------------------------------------ the parsers
@given(st.binary(max_size=12))
def test_natural_number_as_ndeval(text):
    """Digits only, and no digit added to a value above 100000 (so at most 1000009)."""
    value = reading.natural_number(text)
    if text and text.isdigit() and (len(text.lstrip(b"0")) < 7 or int(text) <= 1000009 and
                                    int(text[:-1] or b"0") <= 100000):
        assert value == int(text)
    else:
        assert value == -1


@given(st.from_regex(rb"\A[+-]?(?:[0-9]{1,20}(?:\.[0-9]{0,10})?|\.[0-9]{1,10})(?:[eE][+-]?[0-9]{1,3})?\Z"))
def test_c_double_of_decimals(text):
    assert reading.c_double(text) == float(text)


def test_c_double_prefixes_and_words():
    assert reading.c_double(b"1.5abc") == 1.5 and reading.c_double(b"0x1p3") == 8.0 and reading.c_double(b"-inf") < 0
    assert reading.c_double(b"abc") is None and math.isnan(reading.c_double(b"nan"))


@given(st.binary(max_size=200), st.binary(max_size=200), st.booleans())
@settings(max_examples=200, deadline=None)
def test_any_bytes_are_read_or_refused(qrels, run, traditional):
    try:
        table = reading.read_qrels("q", data=qrels), reading.read_run("r", data=run, traditional=traditional)
    except InputError:
        return
    from treckit.output.ndeval import table_bytes
    assert table_bytes(*table).startswith(b"runid,topic,")
