"""The C/W/L measures (INST, INSQ, RBP, BPM, SDCG, NERR8-11): treckit's kernels against cwl-eval (through
ir_measures' provider, as ir_measures computes these names) and against hand computation."""
from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from treckit.measures import cwl

QRELS = [("q1", "a", 3), ("q1", "b", 1), ("q1", "c", 0), ("q1", "d", -1), ("q1", "e", 2), ("q2", "x", 1)]
RUN = {"q1": {"b": 3.0, "z": 2.0, "a": 2.0, "e": 1.0, "d": 0.5}, "q2": {"y": 1.0, "x": 0.5}, "q9": {"a": 1.0}}
SPECS = [("INST", {"T": 1.0, "min_rel": 0, "max_rel": 3}), ("INST", {"T": 2.0, "min_rel": 1, "max_rel": 3}),
         ("INSQ", {"T": 3.0, "min_rel": 0, "max_rel": 3}), ("RBP", {"p": 0.8, "rel": 1}), ("RBP", {"p": 0.5, "rel": 2}),
         ("BPM", {"T": 1.0, "cutoff": 3, "min_rel": 0, "max_rel": 3}), ("SDCG", {"cutoff": 5, "min_rel": 0, "max_rel": 3}),
         ("NERR8", {"cutoff": 3, "min_rel": 0, "max_rel": 3}), ("NERR9", {"cutoff": 3, "min_rel": 0, "max_rel": 3}),
         ("NERR10", {"p": 0.9, "min_rel": 0, "max_rel": 3}), ("NERR11", {"T": 2.0, "min_rel": 0, "max_rel": 3})]


@pytest.mark.parametrize("name,params", SPECS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SPECS)])
def test_equal_to_cwl_eval(name, params):
    """Bit for bit; ties in the run's order ("z" and "a" tie at 2.0: z, listed first, ranks first); a judged
    query the run lacks gets no value here (0 there)."""
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("cwl", reason="cwl-eval (the test extra) is not installed")
    logging.getLogger("cwl").disabled = True
    text = name + "(" + ",".join(f"{k}={v!r}" for k, v in params.items() if k != "cutoff") + ")" + \
        (f"@{params['cutoff']}" if "cutoff" in params else "")
    qrels = [ir_measures.Qrel(q, d, g) for q, d, g in QRELS + [("q3", "w", 1)]]
    run = [ir_measures.ScoredDoc(q, d, s) for q, docs in RUN.items() for d, s in docs.items()]
    theirs = {m.query_id: m.value for m in ir_measures.providers.registry["cwl_eval"].iter_calc(
        [ir_measures.parse_measure(text)], qrels, run)}
    ours = cwl.evaluate(QRELS + [("q3", "w", 1)], RUN, name, params)
    assert set(ours) == {"q1", "q2"} and theirs["q3"] == 0
    assert {q: theirs[q] for q in ours} == ours
    assert ours["q1"] > 0


def test_hand_computed_rbp_and_inst():
    """RBP's weights are (1 - p) p^i over 1000 ranks, normalised; gains binary at rel.  q1 ranks b z a e d:
    gains at rel 2 are 0 0 1 1 0."""
    p = 0.5
    weights = (1 - p) * p ** np.arange(1000) / (1 - p ** 1000)
    assert cwl.evaluate(QRELS, RUN, "RBP", {"p": p, "rel": 2})["q1"] == pytest.approx(weights[2] + weights[3],
                                                                                      abs=1e-15)
    # INST with T = 1 and one document of gain 1 at rank 1: C_1 = ((1 + 1 + 0 - 1) / (1 + 1 + 0))^2 = 1/4,
    # and C_i for i > 1 = ((i + 1 - 1) / (i + 1))^2 = (i / (i + 1))^2, so prod_{j<i} C_j = (1/4) (2/i)^2 = 1/i^2
    first = 1 / (1 + sum(1 / i ** 2 for i in range(2, 1001)))
    assert cwl.evaluate([("q", "a", 1)], {"q": {"a": 1.0}}, "INST", {"T": 1.0, "max_rel": 1})["q"] == \
        pytest.approx(first, abs=1e-15)


def test_cut_at_1000_ranks():
    """cwl-eval reads 1000 ranks: a relevant document at rank 1001 gains nothing."""
    run = {"q": {f"d{i}": float(-i) for i in range(1001)}}
    assert cwl.evaluate([("q", "d1000", 1)], run, "RBP", {"p": 0.8, "rel": 1})["q"] == 0.0
    assert cwl.evaluate([("q", "d999", 1)], run, "RBP", {"p": 0.999, "rel": 1})["q"] > 0


def test_gains_scaled_and_clipped():
    assert cwl.gains([-1, 0, 1, 2, 5], min_rel=1, max_rel=3).tolist() == [0.0, 0.0, 0.0, 0.5, 1.0]
    assert cwl.gains([-1, 0, 1, 2], rel=2).tolist() == [0.0, 0.0, 0.0, 1.0]
    assert math.isclose(cwl.gains([2], min_rel=0, max_rel=3)[0], 2 / 3)


# ------------------------------------------------------------------ by name: treckit eval and the API
SAMPLE_NAMES = ["INST(max_rel=4)", "INST(T=2.0, min_rel=1, max_rel=3)", "INSQ(max_rel=4)", "RBP(rel=1)",
                "RBP(rel=2, p=0.95)", "BPM(max_rel=4)@10", "SDCG(max_rel=4)@10", "NERR8(max_rel=4)@5",
                "NERR9(max_rel=4)@5", "NERR10(max_rel=3)", "NERR11(T=2.0, max_rel=4)"]


def test_by_name_equal_to_ir_measures_on_the_trec_eval_sample(shared):
    """Every C/W/L name through the API (the registry, the ranked view with ties in the run's line order) on
    trec_eval's graded sample (judgments -1..4, score ties): ir_measures' doubles (its cwl_eval provider), per query
    and the mean."""
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("cwl", reason="cwl-eval (the test extra) is not installed")
    import treckit
    from treckit.api import read_qrels, read_run
    q = read_qrels(shared / "trec_eval" / "qrels.rel_level").to_dict()
    r = read_run(shared / "trec_eval" / "results.test").to_dict()
    got = treckit.evaluate(str(shared / "trec_eval" / "qrels.rel_level"), str(shared / "trec_eval" / "results.test"),
                           SAMPLE_NAMES)
    rows = {row["qid"]: row for row in got.to_dict("records")}
    logging.disable(logging.WARNING)
    try:
        for text in SAMPLE_NAMES:
            m = ir_measures.parse_measure(text)
            theirs = {x.query_id: x.value for x in ir_measures.iter_calc([m], q, r)}
            assert {qid: rows[qid][text] for qid in theirs} == theirs, text
            assert rows["all"][text] == pytest.approx(ir_measures.calc_aggregate([m], q, r)[m], abs=1e-15), text
    finally:
        logging.disable(logging.NOTSET)


def test_by_name_ties_keep_the_run_order(tmp_path, capsys):
    """z and a tie at 2.0: listed first, z ranks first (ir_measures' stable sort), not a (trec_eval's docno
    order would put z first too: so a second file lists a first, and RBP moves while trec_eval's rbp does not)."""
    from helpers import run_cli
    (tmp_path / "q").write_text("1 0 a 1\n")
    (tmp_path / "r1").write_text("1 Q0 z 1 2.0 r\n1 Q0 a 2 2.0 r\n")
    (tmp_path / "r2").write_text("1 Q0 a 1 2.0 r\n1 Q0 z 2 2.0 r\n")
    values = []
    for run in ("r1", "r2"):
        code, out, err = run_cli(["eval", "-m", "RBP(rel=1, p=0.5)", "-m", "rbp.p=0.5", str(tmp_path / "q"),
                                  str(tmp_path / run)], capsys)
        assert code == 0, err
        values.append([ln.split("\t")[2] for ln in out.splitlines()])
    # C/W/L's RBP is expected utility per document over 1000 ranks: (1 - p) * p^(rank - 1) at the relevant rank
    assert values[0][1] == f"{0.5 * 0.5:.4f}" and values[1][1] == f"{0.5:.4f}"       # trec_eval's names print first
    assert values[0][0] == values[1][0] == f"{0.5 * 0.5:.4f}"        # trec_eval: z (greater docno) first


@pytest.mark.parametrize("name, message", [
    ("RBP", "RBP without rel"), ("RBP(rel=1)@10", "RBP@k"), ("INST", "INST needs max_rel"),
    ("INST(max_rel=2, min_rel=2)", "must be below max_rel"), ("INST@5", "INST has no parameter cutoff"),
    ("SDCG(max_rel=3)", "SDCG needs cutoff"), ("INST(T=2, max_rel=3)", "must be a float")])
def test_by_name_refusals(tmp_path, capsys, name, message):
    from helpers import run_cli
    (tmp_path / "q").write_text("1 0 a 1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 2.0 r\n")
    code, out, err = run_cli(["eval", "-m", name, str(tmp_path / "q"), str(tmp_path / "r")], capsys)
    assert code == 2 and out == "" and message in err and "Traceback" not in err, err


def test_by_name_with_judged_only_ranks_the_judged_documents_in_line_order():
    """-J (judged_only=True): the documents outside the qrels or judged below 0 leave the ranking and the rest move
    up, ties still in line order: the values of the run with those documents taken out."""
    import treckit
    qrels = {"1": {"a": 1, "b": 0, "c": 2, "d": -1, "e": 3}, "2": {"x": 1}}
    run = {"1": {"z": 5.0, "c": 2.0, "a": 2.0, "y": 2.0, "d": 1.0, "e": 1.0, "b": 0.5}, "2": {"w": 1.0, "x": 1.0}}
    names = ["INST(max_rel=3)", "RBP(rel=1, p=0.5)", "SDCG(max_rel=3)@3", "NERR8(max_rel=3)@2"]
    judged = {q: {d: s for d, s in docs.items() if qrels[q].get(d, -1) >= 0} for q, docs in run.items()}
    got = treckit.evaluate(qrels, run, names, judged_only=True)
    want = treckit.evaluate(qrels, judged, names)
    assert got.to_dict("records") == want.to_dict("records")
    assert got.to_dict("records") != treckit.evaluate(qrels, run, names).to_dict("records")
