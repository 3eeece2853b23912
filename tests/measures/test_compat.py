"""Compat (Clarke, Vtyurina & Smucker, TOIS 2021) by name, against ir_measures' compat provider (its only one): the
same doubles on trec_eval's test files and on seeded random cases (score ties, relevant documents not retrieved,
negative scores, grade ties settled by the qrels' line order), and a value worked by hand."""
from __future__ import annotations

import random

import pytest

import treckit
from treckit.model import Qrels

ir_measures = pytest.importorskip("ir_measures")

NAMES = ["Compat", "Compat(p=0.8)", "Compat(normalize=False)", "Compat(p=0.5, normalize=False)"]


def reference(qrels_rows, run: dict, name: str) -> dict:
    qrels = [ir_measures.Qrel(q, d, g) for q, d, g in qrels_rows]
    scored = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    return {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.parse_measure(name)], qrels, scored)}


def test_trec_eval_test_files(shared):
    qrels, run = shared / "trec_eval" / "qrels.test", shared / "trec_eval" / "results.test"
    df = treckit.evaluate(str(qrels), str(run), NAMES, warn=lambda m: None)
    for name in NAMES:
        got = {m.query_id: m.value for m in ir_measures.iter_calc(
            [ir_measures.parse_measure(name)], ir_measures.read_trec_qrels(str(qrels)),
            ir_measures.read_trec_run(str(run)))}
        ours = dict(zip(df.qid, df[name]))
        assert got and all(got[q] == ours[q] for q in got), name


@pytest.mark.parametrize("seed", range(40))
def test_random_cases(seed):
    r = random.Random(seed)
    rows, run = [], {}
    for q in range(r.randint(1, 4)):
        qid = f"q{q}"
        docs = sorted({f"d{r.randint(0, 40)}" for _ in range(r.randint(1, 25))})
        rows += [(qid, d, r.choice([-1, 0, 0, 1, 1, 2, 3])) for d in docs]
        run[qid] = {f"d{r.randint(0, 40)}": r.choice([float(r.randint(-2, 3)), 0.0, round(r.uniform(-1, 2), 1)])
                    for _ in range(r.randint(1, 60))}
    r.shuffle(rows)
    qrels = Qrels.from_columns([x[0] for x in rows], [x[1] for x in rows], [x[2] for x in rows])
    df = treckit.evaluate(qrels, run, NAMES, warn=lambda m: None)
    for name in NAMES:
        ref = reference(rows, run, name)
        ours = dict(zip(df.qid, df[name]))
        assert [q for q in ref if ref[q] != ours[q]] == [], name


def test_by_hand():
    """Run: a (relevant, grade 1), x, y (not judged); ideal: b (grade 2, not retrieved), a.  depth 3, p 0.5; the
    tops of the run and of the ideal share 0, 1, 1 documents at ranks 1-3 -> sum 0 + 0.5 * 1/2 + 0.25 * 1/3 = 1/3
    over the weights' 1.75: RBO = 4/21; the ideal with itself shares 1, 2, 2: (1 + 0.5 + 0.25 * 2/3) / 1.75 = 20/21;
    Compat = (4/21) / (20/21) = 1/5."""
    qrels = Qrels.from_columns(["1", "1"], ["a", "b"], [1, 2])
    df = treckit.evaluate(qrels, {"1": {"a": 2.0, "x": 1.0, "y": 0.5}},
                          ["Compat(p=0.5)", "Compat(p=0.5, normalize=False)"], warn=lambda m: None)
    row = df[df.qid == "1"].iloc[0]
    assert row["Compat(p=0.5)"] == pytest.approx(1 / 5, abs=1e-15)
    assert row["Compat(p=0.5, normalize=False)"] == pytest.approx(4 / 21, abs=1e-15)


def test_streamed_as_in_memory(shared, capsys):
    """Compat reads each query's own judgments in their line order: a run streamed in parts (--memory-limit 1)
    gives the in-memory bytes."""
    from helpers import run_cli
    qrels, run = shared / "trec_eval" / "qrels.test", shared / "trec_eval" / "results.test"
    whole = run_cli(["eval", "-q", "-m", "Compat", "-m", "Compat(p=0.5)", qrels, run], capsys)
    parts = run_cli(["eval", "-q", "--memory-limit", "1", "-m", "Compat", "-m", "Compat(p=0.5)", qrels, run], capsys)
    assert whole[0] == parts[0] == 0 and whole[1] == parts[1] and "Compat" in whole[1]
