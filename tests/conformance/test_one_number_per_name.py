"""One run and one set of judgments through every command and the API: equal numbers for equal
definitions, a printed difference (or a different name) for different ones."""
from __future__ import annotations

import json
import math

import pytest
import yaml

from helpers import ROOT, run_cli

# q1: d1 and d2 tie at 5.0, trec_eval ranks d2 (docno descending) above d1; q4 is judged but not in the run
TEST_SET = {
    "name": "agree", "version": "1",
    "queries": [
        {"query_id": "q1", "query_text": "alpha", "query_type": "exact_term",
         "relevant_docs": [{"doc_id": "d1", "grade": 3}, {"doc_id": "d3", "grade": 1}]},
        {"query_id": "q2", "query_text": "beta", "query_type": "paraphrase",
         "relevant_docs": [{"doc_id": "e2", "grade": 2}, {"doc_id": "e1", "grade": 0}]},
        {"query_id": "q3", "query_text": "gamma", "query_type": "paraphrase",
         "relevant_docs": [{"doc_id": "f9", "grade": 1}]},
        {"query_id": "q4", "query_text": "delta", "query_type": "exact_term",
         "relevant_docs": [{"doc_id": "g1", "grade": 2}]},
    ],
}
RUN = """q1 Q0 d1 1 5.0 r
q1 Q0 d2 2 5.0 r
q1 Q0 d3 3 4.0 r
q2 Q0 e1 1 3.0 r
q2 Q0 e2 2 2.0 r
q3 Q0 x1 1 9.0 r
q3 Q0 x2 2 8.0 r
"""
# by hand, in trec_eval's order (q1: d2, d1, d3; q2: e1, e2; q3: x1, x2; q4: nothing)
L2 = math.log2
RECALL = {"q1": 1.0, "q2": 1.0, "q3": 0.0, "q4": 0.0}
RR = {"q1": 1 / 2, "q2": 1 / 2, "q3": 0.0, "q4": 0.0}
NDCG_EXP = {"q1": (7 / L2(3) + 1 / L2(4)) / (7 + 1 / L2(3)), "q2": (3 / L2(3)) / 3, "q3": 0.0, "q4": 0.0}
NDCG_LIN = {"q1": (3 / L2(3) + 1 / L2(4)) / (3 + 1 / L2(3)), "q2": (2 / L2(3)) / 2, "q3": 0.0, "q4": 0.0}


def mean(d: dict) -> float:
    return sum(d.values()) / len(d)


@pytest.fixture
def files(tmp_path):
    ts = tmp_path / "agree.yaml"
    ts.write_text(yaml.safe_dump(TEST_SET, sort_keys=False))
    run = tmp_path / "run.trec"
    run.write_text(RUN)
    config = tmp_path / "system.yaml"
    config.write_text(f"components:\n  r: {{run: {run}}}\n")
    return ts, run, config, tmp_path


def trec_eval_values(out: str) -> dict[str, float]:
    return {f[0].strip(): float(f[2]) for f in (line.split("\t") for line in out.splitlines()) if f[1] == "all"}


def test_every_command_gives_one_number_per_definition(files, capsys):
    ts, run, config, tmp = files
    code, _, _ = run_cli(["testset", "export", ts, "--qrels", tmp / "q.qrels"], capsys)
    assert code == 0
    qrels = tmp / "q.qrels"

    # the engine, as trec_eval -c: every judged query
    code, out, _ = run_cli(["eval", "-c", "-m", "recall.10", "-m", "ndcg_cut.10", "-m", "recip_rank", "-m", "RR@10",
                            "-m", "nDCG(dcg='exp-log2')@10", qrels, run], capsys)
    assert code == 0
    ev = trec_eval_values(out)
    assert ev["recall_10"] == pytest.approx(mean(RECALL), abs=1e-4)
    assert ev["ndcg_cut_10"] == pytest.approx(mean(NDCG_LIN), abs=1e-4)
    assert ev["nDCG(dcg='exp-log2')@10"] == pytest.approx(mean(NDCG_EXP), abs=1e-4)
    assert ev["recip_rank"] == pytest.approx(mean(RR), abs=1e-4)

    # trec_eval's default query set (the queries the run answers) is another definition: another number
    code, out, _ = run_cli(["eval", "-m", "recall.10", qrels, run], capsys)
    assert trec_eval_values(out)["recall_10"] == pytest.approx(2 / 3, abs=1e-4)

    # the API, -c's query set
    import treckit
    df = treckit.evaluate(str(qrels), str(run), ["recall.10", "ndcg_cut.10", "recip_rank", "nDCG(dcg='exp-log2')@10"],
                          complete=True)
    api = df[df["qid"] == "all"].iloc[0]
    assert api["recall_10"] == pytest.approx(mean(RECALL)) and api["recip_rank"] == pytest.approx(mean(RR))
    assert api["nDCG(dcg='exp-log2')@10"] == pytest.approx(mean(NDCG_EXP))

    # testset eval: the same definitions, and it says which queries it averages over
    code, out, _ = run_cli(["testset", "eval", ts, "--run", run, "-m", "recall@10", "-m", "ndcg_at_10", "-m", "mrr",
                            "--out", tmp / "r.json"], capsys)
    assert code == 0
    assert "the 1 the run does not answer score 0: trec_eval without -c averages the other 3" in out
    assert "ndcg_at_K: gain = 2^grade - 1" in out
    res = json.loads((tmp / "r.json").read_text())
    means = {m: a["mean"] for m, a in res["aggregates"].items()}
    assert means == pytest.approx({"recall_at_10": mean(RECALL), "ndcg_at_10": mean(NDCG_EXP), "mrr": mean(RR)})
    assert res["definitions"]["ndcg_at_10"]["gain"] == "exp" and res["definitions"]["recall_at_10"]["query_set"] == "judged"
    assert res["missing_queries"] == ["q4"]

    # linear gain is trec_eval's nDCG: printed under trec_eval's name, never as ndcg_at_10
    code, out, _ = run_cli(["testset", "eval", ts, "--run", run, "-m", "ndcg_at_10", "--gain", "linear"], capsys)
    assert "ndcg_at_10" not in out and f"ndcg_cut_10        {mean(NDCG_LIN):.4f}" in out

    # compare on the test set (its own measures by default) and on the exported qrels
    code, _, _ = run_cli(["compare", "--test-set", ts, run, run, "--name", "a", "--name", "b", "--test", "t-test",
                          "--out", tmp / "c.json"], capsys)
    assert code == 0
    comp = json.loads((tmp / "c.json").read_text())
    assert comp["systems"]["a"]["metrics"]["macro"] == pytest.approx(
        {"ndcg_at_10": mean(NDCG_EXP), "recall_at_10": mean(RECALL), "mrr": mean(RR)})
    assert comp["definitions"]["ndcg_at_10"] == res["definitions"]["ndcg_at_10"]
    code, _, _ = run_cli(["compare", qrels, run, run, "--name", "a", "--name", "b", "--test", "t-test",
                          "-m", "recall.10", "-m", "ndcg_cut.10", "--out", tmp / "c2.json"], capsys)
    macro = json.loads((tmp / "c2.json").read_text())["systems"]["a"]["metrics"]["macro"]
    assert macro == pytest.approx({"recall_10": mean(RECALL), "ndcg_cut_10": mean(NDCG_LIN)})

    # system eval of a config whose one component is the run
    code, out, _ = run_cli(["system", "eval", config, "--test-set", ts, "--no-cache", "--out", tmp / "s.json"], capsys)
    assert code == 0
    stage = json.loads((tmp / "s.json").read_text())["r"]
    assert {m: a["mean"] for m, a in stage["aggregates"].items()} == pytest.approx(
        {"recall_at_10": mean(RECALL), "ndcg_at_10": mean(NDCG_EXP), "mrr": mean(RR)})

    # the gate prints the numbers it compares
    code, out, _ = run_cli(["gate", "--baseline", tmp / "r.json", "--current", tmp / "r.json"], capsys)
    assert code == 0 and f"recall_at_10     baseline {mean(RECALL):.4f}  current {mean(RECALL):.4f}" in out

    # rq at k = 10: MRR@10 and recall@10 over the labelled queries (all four here)
    code, out, _ = run_cli(["rq", "--test-set", ts, "--run", run, "--k", "10", "--threshold", "0.1",
                            "--out", tmp / "rq.json"], capsys)
    rq = json.loads((tmp / "rq.json").read_text())
    assert rq["value"] == pytest.approx(mean(RR)) and rq["recall_at_k"] == pytest.approx(mean(RECALL))


def test_the_service_gives_the_same_numbers(files, monkeypatch):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from treckit.service.app import ServerSettings, create_app
    ts, run, _, _ = files
    monkeypatch.delenv("TRECKIT_API_TOKEN", raising=False)
    client = TestClient(create_app(ServerSettings(cache=False)))
    r = client.post("/v1/evaluate", json={"test_set": TEST_SET, "run": RUN})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["metrics"] == pytest.approx({"recall_at_10": mean(RECALL), "ndcg_at_10": mean(NDCG_EXP), "mrr": mean(RR)})
    assert body["missing_queries"] == ["q4"] and body["definitions"]["ndcg_at_10"]["gain"] == "exp"


def test_the_service_computes_rq_as_the_command_does(files, monkeypatch, capsys):
    """POST /v1/rq: the same report as `treckit rq --run`; a query set without a labelled query gives null."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from treckit.service.app import ServerSettings, create_app
    ts, run, _, tmp = files
    monkeypatch.delenv("TRECKIT_API_TOKEN", raising=False)
    client = TestClient(create_app(ServerSettings(cache=False)))
    code, _, _ = run_cli(["rq", "--test-set", ts, "--run", run, "--k", "10", "--out", tmp / "rq.json"], capsys)
    body = client.post("/v1/rq", json={"test_set": TEST_SET, "run": RUN, "k": 10}).json()
    cli = json.loads((tmp / "rq.json").read_text())
    assert body["value"] == cli["value"] == pytest.approx(mean(RR)) and body["pass"] is cli["pass"] is False
    assert body["definitions"] == cli["definitions"] and body["warnings"] == []
    unlabelled = {"name": "u", "version": "1", "queries": [{"query_id": "q1", "query_text": "alpha", "query_type": "t"}]}
    r = client.post("/v1/rq", json={"test_set": unlabelled, "run": RUN})
    assert r.status_code == 200 and (r.json()["value"], r.json()["pass"], r.json()["unlabeled"]) == (None, None, ["q1"])
    assert client.post("/v1/rq", json={"test_set": TEST_SET, "run": RUN, "threshold": "nan"}).status_code == 422


# ---------------------------------------------------------------- the sample test set through every command
# The shipped clinical test set and its bag-of-words run: 50 queries, all judged and all answered, graded 0-3, no
# tied scores; so every command's query set is the same and each definition has one number, which trec_eval 10.0,
# pytrec_eval and ir_measures give on the exported qrels.
SAMPLE_SET = ROOT / "data" / "test_sets" / "clinical_v1.yaml"
SAMPLE_RUN = ROOT / "data" / "test_sets" / "baseline_bow.trec"
# {definition: its names in trec_eval/ir_measures (eval, the API), in test sets (testset eval, gate, system eval,
# compare, the service)}
SAMPLE_NAMES = {
    "recall": (("recall.10", "recall_10"), ("R@10", "R@10"), "recall_at_10"),
    "ndcg_linear": (("ndcg_cut.10", "ndcg_cut_10"), ("nDCG@10", "nDCG@10"), "nDCG@10"),
    "ndcg_exp": (("nDCG(gains={0:0,1:1,2:3,3:7})@10", None), ("nDCG(dcg='exp-log2')@10", "nDCG(dcg='exp-log2')@10"),
                 "ndcg_at_10"),
    "rr": (("recip_rank", "recip_rank"), ("RR", "RR"), "mrr"),
    "rr_at_10": ((None, None), ("RR@10", "RR@10"), "mrr_at_10"),
}


def reference_means(qrels_path) -> dict[str, float]:
    """The five definitions' means by pytrec_eval (trec_eval's C code) and ir_measures, on the exported qrels."""
    import statistics

    import ir_measures
    import pytrec_eval
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(SAMPLE_RUN)))
    judged, ranked = {}, {}
    for q in qrels:
        judged.setdefault(q.query_id, {})[q.doc_id] = q.relevance
    for r in run:
        ranked.setdefault(r.query_id, {})[r.doc_id] = r.score
    per_query = pytrec_eval.RelevanceEvaluator(judged, {"recall.10", "ndcg_cut.10", "recip_rank"}).evaluate(ranked)
    assert len(per_query) == 50
    pte = {m: statistics.mean(v[m] for v in per_query.values()) for m in ("recall_10", "ndcg_cut_10", "recip_rank")}
    # one measure a call: ir_measures 0.4.3 asked nDCG@10 and nDCG(gains=...)@10 at once gives the first the
    # second's value and the second 0
    irm = {m: ir_measures.calc_aggregate([ir_measures.parse_measure(m)], qrels, run)[ir_measures.parse_measure(m)]
           for m in ("R@10", "nDCG@10", "nDCG(gains={0:0,1:1,2:3,3:7})@10", "RR", "RR@10")}
    for trec, irm_name in (("recall_10", "R@10"), ("ndcg_cut_10", "nDCG@10"), ("recip_rank", "RR")):
        assert pte[trec] == pytest.approx(irm[irm_name], abs=1e-12)
    return {"recall": pte["recall_10"], "ndcg_linear": pte["ndcg_cut_10"], "rr": pte["recip_rank"],
            "ndcg_exp": irm["nDCG(gains={0:0,1:1,2:3,3:7})@10"], "rr_at_10": irm["RR@10"]}


def test_the_sample_gives_one_number_per_definition_in_every_command_and_reference(trec_eval, tmp_path, capsys,
                                                                                  monkeypatch):
    import subprocess

    code, _, _ = run_cli(["testset", "export", SAMPLE_SET, "--qrels", tmp_path / "q.qrels"], capsys)
    assert code == 0
    qrels = tmp_path / "q.qrels"
    want = reference_means(qrels)
    printed = {d: f"{v:.4f}" for d, v in want.items()}
    # the five are five numbers: exp and linear nDCG, RR and RR@10 differ here
    assert len(set(printed.values())) == 5

    # trec_eval 10.0 itself, with and without -c (every query is in the run: one query set)
    for complete in (["-c"], []):
        out = subprocess.run([str(trec_eval), *complete, "-m", "recall.10", "-m", "ndcg_cut.10", "-m", "recip_rank",
                              str(qrels), str(SAMPLE_RUN)], capture_output=True, text=True, timeout=60, check=True).stdout
        assert {k: f"{v:.4f}" for k, v in trec_eval_values(out).items()} == {
            "recall_10": printed["recall"], "ndcg_cut_10": printed["ndcg_linear"], "recip_rank": printed["rr"]}

    # treckit eval: trec_eval's names and ir_measures' give the reference's digits
    names = [(d, n) for d, (trec, irm, _) in SAMPLE_NAMES.items() for n in (trec, irm) if n[0] is not None]
    code, out, _ = run_cli(["eval", "-c", *[a for _, (m, _) in names for a in ("-m", m)], qrels, SAMPLE_RUN], capsys)
    assert code == 0
    ev = {k: f"{v:.4f}" for k, v in trec_eval_values(out).items()}
    assert {col: ev[col] for d, (_, col) in names if col} == {col: printed[d] for d, (_, col) in names if col}

    # the Python API
    import treckit
    df = treckit.evaluate(str(qrels), str(SAMPLE_RUN), [m for _, (m, _) in names], complete=True)
    api = df[df["qid"] == "all"].iloc[0]
    for d, (_, col) in names:
        if col:
            assert api[col] == pytest.approx(want[d], abs=1e-12), col

    readable = [ts for _, _, ts in SAMPLE_NAMES.values()]
    by_name = {ts: d for d, (_, _, ts) in SAMPLE_NAMES.items()}
    measure_args = [a for n in readable for a in ("-m", n)]

    # testset eval: its table and its results file
    code, out, _ = run_cli(["testset", "eval", SAMPLE_SET, "--run", SAMPLE_RUN, *measure_args,
                            "--out", tmp_path / "r.json"], capsys)
    assert code == 0
    rows = {f[0]: f[1] for f in (line.split() for line in out.splitlines()) if f and f[0] in by_name}
    assert rows == {n: printed[d] for n, d in by_name.items()}
    res = json.loads((tmp_path / "r.json").read_text())
    assert {n: a["mean"] for n, a in res["aggregates"].items()} == pytest.approx(
        {n: want[d] for n, d in by_name.items()}, abs=1e-12)

    # compare: on the test set, and on the exported qrels with trec_eval's names; the run and a copy of another tag
    copy = tmp_path / "copy.trec"
    copy.write_text(SAMPLE_RUN.read_text().replace(" bow\n", " bow2\n"))
    code, _, _ = run_cli(["compare", "--test-set", SAMPLE_SET, SAMPLE_RUN, copy, *measure_args,
                          "--out", tmp_path / "c.json"], capsys)
    assert code == 0
    systems = json.loads((tmp_path / "c.json").read_text())["systems"]
    for system in ("bow", "bow2"):
        assert systems[system]["metrics"]["macro"] == pytest.approx({n: want[d] for n, d in by_name.items()},
                                                                    abs=1e-12)
    code, _, _ = run_cli(["compare", qrels, SAMPLE_RUN, copy, "-m", "recall.10", "-m", "ndcg_cut.10",
                          "-m", "recip_rank", "--out", tmp_path / "c2.json"], capsys)
    assert code == 0
    assert json.loads((tmp_path / "c2.json").read_text())["systems"]["bow"]["metrics"]["macro"] == pytest.approx(
        {"recall_10": want["recall"], "ndcg_cut_10": want["ndcg_linear"], "recip_rank": want["rr"]}, abs=1e-12)

    # system eval of a config whose one component is the run
    config = tmp_path / "system.yaml"
    config.write_text(f"components:\n  bow: {{run: {SAMPLE_RUN}}}\n")
    code, out, _ = run_cli(["system", "eval", config, "--test-set", SAMPLE_SET, "--no-cache", *measure_args], capsys)
    assert code == 0
    header, row = next((line.split(), nxt.split()) for line, nxt in zip(out.splitlines(), out.splitlines()[1:])
                       if line.startswith("stage"))
    assert dict(zip(header[1:6], row[1:6])) == {n: printed[d] for n, d in by_name.items()}

    # the gate, baseline = current: the numbers it prints
    code, out, _ = run_cli(["gate", "--baseline", tmp_path / "r.json", "--current", tmp_path / "r.json",
                            *[a for n in readable for a in ("--metric", n)]], capsys)
    assert code == 0
    for n, d in by_name.items():
        assert f"{n:<16} baseline {printed[d]}  current {printed[d]}" in out

    # rq at k = 10: RR@10 and recall@10 over the labelled queries (all 50)
    code, out, _ = run_cli(["rq", "--test-set", SAMPLE_SET, "--run", SAMPLE_RUN, "--k", "10"], capsys)
    assert code == 0
    assert f"RQ (MRR@10) = {printed['rr_at_10']} over 50 labelled queries" in out
    assert f"Recall@10 = {printed['recall']}" in out

    # the service: the test set and the run in the body
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from treckit.service.app import ServerSettings, create_app
    monkeypatch.delenv("TRECKIT_API_TOKEN", raising=False)
    client = TestClient(create_app(ServerSettings(cache=False)))
    body = {"test_set": yaml.safe_load(SAMPLE_SET.read_text()), "run": SAMPLE_RUN.read_text(), "measures": readable}
    r = client.post("/v1/evaluate", json=body)
    assert r.status_code == 200, r.text
    assert r.json()["metrics"] == pytest.approx({n: want[d] for n, d in by_name.items()}, abs=1e-12)
    r = client.post("/v1/rq", json={"test_set": body["test_set"], "run": body["run"], "k": 10})
    assert r.status_code == 200, r.text
    assert (r.json()["value"], r.json()["recall_at_k"]) == pytest.approx((want["rr_at_10"], want["recall"]), abs=1e-12)
