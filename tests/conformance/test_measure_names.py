"""One meaning per measure name in every command: ``nDCG@10``, spelled as ir_measures spells it, is ir_measures'
nDCG (linear gain, trec_eval's ndcg_cut.10); ``ndcg_at_10`` is the test-set document's (gain 2^grade - 1);
any other spelling of nDCG at a cutoff is refused, naming both."""
from __future__ import annotations

import json
import math
import warnings

import pytest
import yaml

import treckit
from helpers import run_cli

# q1 ranks grades 0, 3, (unjudged), 2, 1; q2 (unjudged), 2, 1; q3 1.  No tied scores and every judged query
# answered: trec_eval, ir_measures and every query set agree on the ranking
GRADES = {"q1": {"d1": 3, "d2": 0, "d3": 1, "d4": 2}, "q2": {"e1": 1, "e2": 2}, "q3": {"f1": 1}}
RANKED = {"q1": ["d2", "d1", "d5", "d4", "d3"], "q2": ["e3", "e2", "e1"], "q3": ["f1", "f2"]}
TEST_SET = {"name": "names", "version": "1", "queries": [
    {"query_id": q, "query_text": f"text of {q}", "query_type": "exact_term" if q == "q1" else "paraphrase",
     "relevant_docs": [{"doc_id": d, "grade": g} for d, g in grades.items()]} for q, grades in GRADES.items()]}
RUN = "".join(f"{q} Q0 {d} {i + 1} {10.0 - i} r\n" for q, docs in RANKED.items() for i, d in enumerate(docs))
L2 = math.log2
# by hand
NDCG_EXP = {"q1": (7 / L2(3) + 3 / L2(5) + 1 / L2(6)) / (7 + 3 / L2(3) + 1 / L2(4)),
            "q2": (3 / L2(3) + 1 / L2(4)) / (3 + 1 / L2(3)), "q3": 1.0}
NDCG_LIN = {"q1": (3 / L2(3) + 2 / L2(5) + 1 / L2(6)) / (3 + 2 / L2(3) + 1 / L2(4)),
            "q2": (2 / L2(3) + 1 / L2(4)) / (2 + 1 / L2(3)), "q3": 1.0}
EXP, LIN = sum(NDCG_EXP.values()) / 3, sum(NDCG_LIN.values()) / 3
BOTH = "write nDCG@10 (ir_measures: linear gain) or ndcg_at_10 (exp gain)"
OTHER_SPELLINGS = ["ndcg@10", "NDCG@10", "Ndcg_At_10", "nDCG_at_10", "NDCG_AT_10"]


@pytest.fixture
def files(tmp_path):
    """(test set, run, a system config whose one component is the run, where the qrels go, the folder)."""
    run = tmp_path / "run.trec"
    texts = {"names.yaml": yaml.safe_dump(TEST_SET, sort_keys=False), "run.trec": RUN,
             "system.yaml": f"components:\n  r: {{run: {run}}}\n"}
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
    return tmp_path / "names.yaml", run, tmp_path / "system.yaml", tmp_path / "q.qrels", tmp_path


def _qrels(files, capsys):
    ts, _, _, qrels, _ = files
    code, _, err = run_cli(["testset", "export", ts, "--qrels", qrels], capsys)
    assert code == 0, err
    return qrels


def _all(out: str, name: str) -> float:
    rows = [line.split("\t") for line in out.splitlines()]
    value, = [float(f[2]) for f in rows if len(f) == 3 and f[0].strip() == name and f[1] == "all"]
    return value


def test_the_hand_computation_is_ir_measures_and_scikit_learn():
    """The hand values above are ir_measures' nDCG@10 (linear) and scikit-learn's ndcg_score on 2^grade - 1 gains."""
    import ir_measures
    from sklearn.metrics import ndcg_score
    qrels = [ir_measures.Qrel(q, d, g) for q, grades in GRADES.items() for d, g in grades.items()]
    run = [ir_measures.ScoredDoc(f[0], f[2], float(f[4])) for f in (line.split() for line in RUN.splitlines())]
    got = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.nDCG @ 10], qrels, run)}
    assert got == pytest.approx(NDCG_LIN, abs=1e-12)
    for qid, want in NDCG_EXP.items():
        docs = sorted(set(GRADES[qid]) | set(RANKED[qid]))
        gains = [[2 ** GRADES[qid].get(d, 0) - 1 for d in docs]]
        scores = [[-RANKED[qid].index(d) if d in RANKED[qid] else -99 for d in docs]]
        assert ndcg_score(gains, scores, k=10) == pytest.approx(want, abs=1e-12)


def test_nDCG_at_10_is_ir_measures_nDCG_in_every_command(files, capsys, monkeypatch):
    ts, run, config, _, tmp = files
    qrels = _qrels(files, capsys)
    code, out, err = run_cli(["eval", "-m", "nDCG@10", qrels, run], capsys)
    assert code == 0, err
    assert _all(out, "nDCG@10") == pytest.approx(LIN, abs=1e-4)

    api = treckit.evaluate(str(qrels), str(run), ["nDCG@10"])
    assert api[api["qid"] == "all"]["nDCG@10"].iloc[0] == pytest.approx(LIN, abs=1e-12)

    code, out, err = run_cli(["testset", "eval", ts, "--run", run, "-m", "nDCG@10", "-m", "ndcg_at_10",
                              "--out", tmp / "r.json"], capsys)
    assert code == 0, err
    assert "ndcg_at_K: gain = 2^grade - 1; nDCG@K: gain = grade" in out
    res = json.loads((tmp / "r.json").read_text())
    assert res["aggregates"]["nDCG@10"]["mean"] == pytest.approx(LIN, abs=1e-12)
    assert res["aggregates"]["ndcg_at_10"]["mean"] == pytest.approx(EXP, abs=1e-12)
    assert {r["qid"]: r["nDCG@10"] for r in res["per_query"]} == pytest.approx(NDCG_LIN, abs=1e-12)
    assert {r["qid"]: r["ndcg_at_10"] for r in res["per_query"]} == pytest.approx(NDCG_EXP, abs=1e-12)
    assert (res["definitions"]["nDCG@10"]["gain"], res["definitions"]["ndcg_at_10"]["gain"]) == ("linear", "exp")

    # --gain names ndcg_at_K's gain only: nDCG@10 is ir_measures' whatever it says
    code, out, _ = run_cli(["testset", "eval", ts, "--run", run, "-m", "nDCG@10", "--gain", "linear"], capsys)
    assert code == 0 and f"nDCG@10            {LIN:.4f}" in out

    code, out, err = run_cli(["gate", "--baseline", tmp / "r.json", "--current", tmp / "r.json", "--metric", "nDCG@10"], capsys)
    assert code == 0 and f"nDCG@10          baseline {LIN:.4f}" in out, out + err

    code, _, err = run_cli(["system", "eval", config, "--test-set", ts, "-m", "nDCG@10", "-m", "ndcg_at_10",
                            "--no-cache", "--out", tmp / "s.json"], capsys)
    assert code == 0, err
    stage = json.loads((tmp / "s.json").read_text())["r"]["aggregates"]
    assert (stage["nDCG@10"]["mean"], stage["ndcg_at_10"]["mean"]) == pytest.approx((LIN, EXP), abs=1e-12)

    code, _, err = run_cli(["compare", "--test-set", ts, run, run, "--name", "a", "--name", "b", "--test", "t-test",
                            "-m", "nDCG@10", "-m", "ndcg_at_10", "--out", tmp / "c.json"], capsys)
    assert code == 0, err
    macro = json.loads((tmp / "c.json").read_text())["systems"]["a"]["metrics"]["macro"]
    assert macro == pytest.approx({"nDCG@10": LIN, "ndcg_at_10": EXP}, abs=1e-12)

    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from treckit.service.app import ServerSettings, create_app
    monkeypatch.delenv("TRECKIT_API_TOKEN", raising=False)
    client = TestClient(create_app(ServerSettings(cache=False)))
    r = client.post("/v1/evaluate", json={"test_set": TEST_SET, "run": RUN, "measures": ["nDCG@10", "ndcg_at_10"]})
    assert r.status_code == 200, r.text
    assert r.json()["metrics"] == pytest.approx({"nDCG@10": LIN, "ndcg_at_10": EXP}, abs=1e-12)
    assert r.json()["definitions"]["nDCG@10"]["gain"] == "linear"


@pytest.mark.parametrize("spelling", OTHER_SPELLINGS)
def test_other_spellings_are_refused_naming_both(files, capsys, spelling):
    ts, run, config, _, tmp = files
    qrels = _qrels(files, capsys)
    code, _, err = run_cli(["eval", "-m", spelling, qrels, run], capsys)
    assert code == 2 and "write nDCG@10 (ir_measures: linear gain) or nDCG(dcg='exp-log2')@10 (exp gain" in err, err
    for args in (["testset", "eval", ts, "--run", run, "-m", spelling],
                 ["system", "eval", config, "--test-set", ts, "-m", spelling, "--no-cache"],
                 ["gate", "--baseline", tmp / "none.json", "--current", tmp / "none.json", "--metric", spelling]):
        code, _, err = run_cli(args, capsys)
        assert code == 2 and BOTH in err and "Traceback" not in err, (args, err)
    code, _, err = run_cli(["compare", "--test-set", ts, run, run, "--name", "a", "--name", "b", "-m", spelling], capsys)
    assert code == 2 and BOTH in err, err
    with pytest.raises(treckit.InputError, match="could mean nDCG@10 with either gain"):
        treckit.evaluate(str(qrels), str(run), [spelling])
    with pytest.raises(treckit.InputError, match="could mean nDCG@10 with either gain"):
        treckit.testsets.evaluate(lambda text: [], ts, measures=[spelling])


@pytest.mark.parametrize("spelling", OTHER_SPELLINGS)
def test_the_service_refuses_other_spellings_as_an_invalid_request(monkeypatch, spelling):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from treckit.service.app import ServerSettings, create_app
    monkeypatch.delenv("TRECKIT_API_TOKEN", raising=False)
    client = TestClient(create_app(ServerSettings(cache=False)))
    r = client.post("/v1/evaluate", json={"test_set": TEST_SET, "run": RUN, "measures": ["mrr", spelling]})
    assert r.status_code == 422, r.text
    problem, = r.json()["detail"]
    assert problem["loc"] == ["body", "measures", 1] and BOTH in problem["msg"]
    from treckit.service.evaluator import check_settings
    with pytest.raises(treckit.InputError, match="measures: .* could mean nDCG@10 with either gain"):
        check_settings(ServerSettings(measures=[spelling]))


def test_results_naming_exp_gain_nDCG_at_10_are_refused_naming_ndcg_at_10(files, capsys):
    """Results whose definitions record exp gain under the name nDCG@10 (nDCG@10 as test sets once read it)."""
    ts, run, _, _, tmp = files
    code, _, err = run_cli(["testset", "eval", ts, "--run", run, "-m", "ndcg_at_10", "--out", tmp / "exp.json"], capsys)
    assert code == 0, err
    text = (tmp / "exp.json").read_text().replace('"ndcg_at_10"', '"nDCG@10"')
    old = json.loads(text)
    assert old["definitions"]["nDCG@10"]["gain"] == "exp"
    (tmp / "old.json").write_text(text)
    code, _, err = run_cli(["testset", "eval", ts, "--run", run, "-m", "nDCG@10", "--out", tmp / "new.json"], capsys)
    assert code == 0, err
    code, out, err = run_cli(["gate", "--baseline", tmp / "old.json", "--current", tmp / "new.json",
                              "--metric", "nDCG@10"], capsys)
    assert code == 2 and out == ""
    assert "definitions.nDCG@10: exp gain (2^grade - 1) under the name nDCG@10" in err
    assert "fix: evaluate again with its name for exp gain: treckit testset eval TEST_SET --run RUN -m ndcg_at_10" in err


def test_eval_options_order_is_renamed_rank_by_with_a_deprecation_warning():
    from treckit import EvalOptions
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert EvalOptions(rank_by="rank").rank_by == "rank"
    with pytest.warns(DeprecationWarning, match="EvalOptions.order is now EvalOptions.rank_by"):
        old = EvalOptions(order="rank")
    assert old == EvalOptions(rank_by="rank")
    with pytest.warns(DeprecationWarning, match="rank_by"):
        assert old.order == "rank"
    with pytest.warns(DeprecationWarning, match="rank_by"):
        old.order = "score"
    assert old.rank_by == "score"
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="not both"):
        EvalOptions(order="rank", rank_by="score")
    # the renamed option ranks as the old one did: by the rank column, the score ignored
    from treckit.engines.memory import evaluate_requests
    from treckit.measures.registry import resolve
    qrels = treckit.Qrels.from_dict({"1": {"a": 1}})
    run = treckit.Run.from_columns(["1", "1"], ["a", "b"], [0.5, 0.9], [1, 2])
    req = resolve(["recip_rank"])
    assert evaluate_requests(qrels, run, req, EvalOptions(rank_by="rank")).summary["recip_rank"] == 1.0
    assert evaluate_requests(qrels, run, req, EvalOptions()).summary["recip_rank"] == 0.5


def test_a_cache_entry_naming_exp_gain_nDCG_at_10_is_never_served(files, capsys, tmp_path):
    """A stored result that records exp gain under nDCG@10 is not a valid result of nDCG@10 (linear gain): a miss,
    said with the part at fault, and evaluated again (the cache's rule for every entry that is not a valid result)."""
    from treckit.testsets.cache import CacheWarning, ResultCache
    from treckit.testsets.results import read_cached
    ts, run, _, _, tmp = files
    code, _, err = run_cli(["testset", "eval", ts, "--run", run, "-m", "ndcg_at_10", "--out", tmp / "exp.json"], capsys)
    assert code == 0, err
    store = ResultCache(tmp_path / "cache")
    store.put("k", json.loads((tmp / "exp.json").read_text().replace('"ndcg_at_10"', '"nDCG@10"')))
    with pytest.warns(CacheWarning, match=r"under the key k is not a valid result \(its definitions\)"):
        assert store.get("k", lambda stored: read_cached(stored, "exp", ["nDCG@10"])) is None
    store.put("k", json.loads((tmp / "exp.json").read_text()))
    assert store.get("k", lambda stored: read_cached(stored, "exp", ["ndcg_at_10"])).aggregates["ndcg_at_10"]["mean"] \
        == pytest.approx(EXP, abs=1e-12)
