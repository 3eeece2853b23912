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
