"""The old A/B command (code/evaluation/rq_eval.py): its documented JSON and CSV shape, its own measures
computed by hand, and --emit-traces behind each config's gate."""
from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys

import pytest

from helpers import ROOT

SCRIPT = ROOT / "code" / "evaluation" / "rq_eval.py"
GATE_OPEN = "perf:\n  enabled: true\n  metrics:\n    report_memory: true\nt2:\n  quality:\n    shadow: true\n"


def setup(tmp_path, config_a="", config_b=""):
    (tmp_path / "q.tsv").write_text("1\tfirst query\n2\tsecond\n")
    (tmp_path / "truth.tsv").write_text("1\td1\t2\n1\td2\t1\n2\td3\t1\n")
    # A, query 1: d1 and d2 tie at 1.0 (doc id ascending: d1 first); query 2: dx above d3
    (tmp_path / "a.trec").write_text("1 Q0 d2 1 1.0 a\n1 Q0 d1 2 1.0 a\n2 Q0 dx 1 2.0 a\n2 Q0 d3 2 1.0 a\n")
    # B, query 1: d2 (grade 1) above d1 (grade 2); query 2: d3 first
    (tmp_path / "b.trec").write_text("1 Q0 d2 1 3.0 b\n1 Q0 d1 2 2.0 b\n2 Q0 d3 1 2.0 b\n")
    (tmp_path / "A.yaml").write_text("run: a.trec\n" + config_a)
    (tmp_path / "B.yaml").write_text("run: b.trec\n" + config_b)


def rq_eval(tmp_path, *extra, k=2, env=None):
    return subprocess.run([sys.executable, str(SCRIPT), "--queries", str(tmp_path / "q.tsv"), "--truth", str(tmp_path / "truth.tsv"),
                           "--configA", str(tmp_path / "A.yaml"), "--configB", str(tmp_path / "B.yaml"), "--k", str(k),
                           "--out", str(tmp_path / "o.json"), "--csv", str(tmp_path / "o.csv"), *extra],
                          capture_output=True, text=True, env=env)


def test_documented_shape_and_numbers_by_hand(tmp_path):
    setup(tmp_path)
    r = rq_eval(tmp_path)
    assert r.returncode == 0, r.stderr
    data = json.loads((tmp_path / "o.json").read_text())
    assert list(data["systems"]) == ["A", "B"]
    assert type(data["schema_version"]) is int and data["schema_version"] == 1     # the document's integer 1
    import hashlib
    assert data["queries_digest"] == hashlib.sha256((tmp_path / "q.tsv").read_bytes()).hexdigest()
    assert data["systems"]["B"]["run_digest"] == hashlib.sha256((tmp_path / "b.trec").read_bytes()).hexdigest()
    assert data["corpus_digest"] is None
    for name in ("A", "B"):
        s = data["systems"][name]
        assert s["config_path"] == str(tmp_path / f"{name}.yaml") and len(s["config_digest"]) == 64
        assert list(s["metrics"]["macro"]) == ["recall", "mrr", "ndcg"]
    # k = 2, exp gain 2^rel - 1, log2 discount
    # A q1: d1(2) d2(1): ideal order: recall 1, rr 1, ndcg 1;  A q2: dx d3(1): recall 1, rr 1/2, ndcg (1/log2 3)/1
    # B q1: d2(1) d1(2): recall 1, rr 1, ndcg (1 + 3/log2 3) / (3 + 1/log2 3);  B q2: d3: all 1
    a2 = 1 / math.log2(3)
    b1 = (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))
    assert data["systems"]["A"]["metrics"]["macro"] == pytest.approx({"recall": 1.0, "mrr": 0.75, "ndcg": (1 + a2) / 2})
    assert data["systems"]["B"]["metrics"]["macro"] == pytest.approx({"recall": 1.0, "mrr": 1.0, "ndcg": (b1 + 1) / 2})
    # delta: B - A, flat
    assert data["delta"]["macro"] == pytest.approx({"recall": 0.0, "mrr": 0.25, "ndcg": (b1 + 1) / 2 - (1 + a2) / 2})
    rows = {row["qid"]: row for row in data["per_query"]}
    assert list(rows["1"]) == ["qid", "A", "B", "delta"]
    assert rows["1"]["A"] == {"recall": 1.0, "mrr": 1.0, "ndcg": 1.0, "hits": ["d1", "d2"]}
    assert rows["1"]["B"]["hits"] == ["d2", "d1"] and rows["2"]["A"]["hits"] == ["d3"]
    assert rows["1"]["delta"] == pytest.approx({"recall": 0.0, "mrr": 0.0, "ndcg": b1 - 1.0})
    assert rows["2"]["delta"] == pytest.approx({"recall": 0.0, "mrr": 0.5, "ndcg": 1 - a2})
    assert data["traces"]["A"] == {"requested": False, "written": False, "path": None, "reason": "--emit-traces was not given"}
    # seed 004's A/B: the paired t-test on ndcg decides by its raw p; Holm's p over the three measures beside it
    from scipy import stats
    a_ndcg, b_ndcg = [1.0, a2], [b1, 1.0]
    t = stats.ttest_rel(b_ndcg, a_ndcg)
    p_mrr = stats.ttest_rel([1.0, 1.0], [1.0, 0.5]).pvalue
    ps = sorted([float(t.pvalue), float(p_mrr), 1.0])              # recall: every delta 0, p 1
    holm = max(min(1.0, 3 * ps[0]), 0)
    holm_of = {ps[0]: holm, ps[1]: max(holm, min(1.0, 2 * ps[1])), ps[2]: max(holm, min(1.0, 2 * ps[1]), ps[2])}
    ab = data["ab_test"]
    assert (ab["measure"], ab["test"], ab["decided_by"], ab["alpha"], ab["adjusted_by"]) == ("ndcg", "t-test", "p_value", 0.05, "holm")
    assert ab["mean_difference"] == pytest.approx((b1 + 1) / 2 - (1 + a2) / 2)
    assert ab["statistic"] == pytest.approx(t.statistic) and ab["p_value"] == pytest.approx(t.pvalue)
    assert ab["p_adjusted"] == pytest.approx(holm_of[float(t.pvalue)]) and ab["significant"] == (t.pvalue < 0.05)
    assert f"A/B on ndcg: B - A {ab['mean_difference']:+.4f}, t-test statistic {t.statistic:.4f}, p {t.pvalue:.4f}" in r.stdout
    assert data["significance"]["rule"] == "p_value < alpha"
    assert "latency" not in json.dumps(data)
    with open(tmp_path / "o.csv", newline="") as fh:
        table = list(csv.reader(fh))
    assert table[0] == ["qid", "system", "recall", "mrr", "ndcg", "hits"]
    assert table[1][:2] == ["1", "A"] and json.loads(table[1][5]) == ["d1", "d2"]
    assert not list(tmp_path.glob("*.traces.*"))


def test_the_queries_file_is_the_query_set(tmp_path):
    """A query without truth scores 0 on every measure and counts in the macro means; truth for a query
    that is not in the queries file is left out, and both are said on stderr."""
    setup(tmp_path)
    (tmp_path / "q.tsv").write_text("1\tfirst query\n2\tsecond\n3\tthird, without truth\n")
    (tmp_path / "truth.tsv").write_text("1\td1\t2\n1\td2\t1\n2\td3\t1\n9\td9\t1\n")
    (tmp_path / "b.trec").write_text("1 Q0 d2 1 3.0 b\n1 Q0 d1 2 2.0 b\n2 Q0 d3 1 2.0 b\n3 Q0 d1 1 1.0 b\n")
    r = rq_eval(tmp_path)
    assert r.returncode == 0, r.stderr
    data = json.loads((tmp_path / "o.json").read_text())
    # queries 1 and 2 as in test_documented_shape_and_numbers_by_hand (k = 2); query 3: |R| = 0, so 0 everywhere
    # A: recall (1 + 1 + 0) / 3, mrr (1 + 1/2 + 0) / 3, ndcg (1 + 1/log2 3 + 0) / 3
    # B: recall (1 + 1 + 0) / 3, mrr (1 + 1 + 0) / 3, ndcg ((1 + 3/log2 3) / (3 + 1/log2 3) + 1 + 0) / 3
    a2 = 1 / math.log2(3)
    b1 = (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))
    assert data["systems"]["A"]["metrics"]["macro"] == pytest.approx({"recall": 2 / 3, "mrr": 0.5, "ndcg": (1 + a2) / 3})
    assert data["systems"]["B"]["metrics"]["macro"] == pytest.approx({"recall": 2 / 3, "mrr": 2 / 3, "ndcg": (b1 + 1) / 3})
    assert [row["qid"] for row in data["per_query"]] == ["1", "2", "3"]                 # query 9 is left out
    zero = {"recall": 0.0, "mrr": 0.0, "ndcg": 0.0}
    assert data["per_query"][2] == {"qid": "3", "A": {**zero, "hits": []}, "B": {**zero, "hits": []}, "delta": zero}
    with open(tmp_path / "o.csv", newline="") as fh:
        assert [row[:2] for row in csv.reader(fh)][-2:] == [["3", "A"], ["3", "B"]]
    assert "1 of the 3 queries of" in r.stderr and "has no judgments: it scores 0 (3)" in r.stderr
    assert "1 judged query is not in" in r.stderr and "is left out (9)" in r.stderr


def test_a_config_that_retrieves_nothing_scores_zero(tmp_path):
    """An empty run, or a retrieval system that finds no document, is 0.0 on every measure, not an error."""
    setup(tmp_path, config_b=GATE_OPEN)
    (tmp_path / "b.trec").write_text("")
    r = rq_eval(tmp_path, "--emit-traces")
    assert r.returncode == 0, r.stderr
    data = json.loads((tmp_path / "o.json").read_text())
    assert data["systems"]["B"]["metrics"]["macro"] == {"recall": 0.0, "mrr": 0.0, "ndcg": 0.0}
    # A as by hand above: mrr (1 + 1/2) / 2 = 0.75, so B - A = -0.75
    assert data["delta"]["macro"]["mrr"] == pytest.approx(-0.75)
    assert "b.trec: no run lines: the system retrieved nothing" in r.stderr
    traces = [json.loads(x) for x in (tmp_path / "o.traces.B.jsonl").read_text().splitlines()]
    assert [(t["qid"], t["ranked_ids"], t["recall"], t["mrr"], t["ndcg"]) for t in traces] == \
        [("1", [], 0.0, 0.0, 0.0), ("2", [], 0.0, 0.0, 0.0)]
    (tmp_path / "docs.jsonl").write_text('{"_id": "zz", "text": "unrelated words"}\n')
    (tmp_path / "B.yaml").write_text("corpus: docs.jsonl\ncomponents:\n  bow: {method: bow}\n")
    r = rq_eval(tmp_path)
    assert r.returncode == 0, r.stderr
    data = json.loads((tmp_path / "o.json").read_text())
    assert data["systems"]["B"]["metrics"]["macro"] == {"recall": 0.0, "mrr": 0.0, "ndcg": 0.0}
    assert [row["B"]["hits"] for row in data["per_query"]] == [[], []]


def test_traces_only_where_the_gate_holds(tmp_path):
    setup(tmp_path, config_a=GATE_OPEN,
          config_b="perf:\n  enabled: true\n  metrics:\n    report_memory: false\nt2:\n  quality:\n    enabled: true\n")
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (tmp_path / "A.yaml", tmp_path / "B.yaml")}
    r = rq_eval(tmp_path, "--emit-traces", k=1)
    assert r.returncode == 0, r.stderr
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in before} == before     # configs never written
    data = json.loads((tmp_path / "o.json").read_text())
    ta, tb = data["traces"]["A"], data["traces"]["B"]
    assert ta["written"] and ta["path"] == str(tmp_path / "o.traces.A.jsonl") and "t2.quality.shadow" in ta["reason"]
    assert not tb["written"] and tb["path"] is None and "perf.metrics.report_memory is False, not true" in tb["reason"]
    assert not (tmp_path / "o.traces.B.jsonl").exists()
    lines = [json.loads(x) for x in (tmp_path / "o.traces.A.jsonl").read_text().splitlines()]
    # k = 1; query 1: d1 and d2 tie at 1.0, doc id ascending puts d1 first; scores as given
    assert lines[0] == {"qid": "1", "system": "A", "ranked_ids": ["d1"], "scores": [1.0], "recall": 0.5, "mrr": 1.0,
                        "ndcg": 1.0, "hits": ["d1"]}
    assert lines[1] == {"qid": "2", "system": "A", "ranked_ids": ["dx"], "scores": [2.0], "recall": 0.0, "mrr": 0.0,
                        "ndcg": 0.0, "hits": []}


@pytest.mark.parametrize("config, why", [
    ("", "perf.enabled is missing"),
    ("perf:\n  enabled: 'true'\n  metrics:\n    report_memory: true\nt2:\n  quality:\n    shadow: true\n", "perf.enabled is 'true', not true"),
    ("perf:\n  enabled: true\n  metrics:\n    report_memory: true\nt2:\n  quality:\n    shadow: false\n", "neither t2.quality.shadow"),
    ("perf:\n  enabled: true\n  metrics:\n    report_memory: true\nt2:\n  quality:\n    enabled: yes\n", "gate holds")])
def test_gate_reasons(config, why):
    import importlib.util
    import yaml
    spec = importlib.util.spec_from_file_location("rq_eval", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    holds, reason = mod.trace_gate(yaml.safe_load(config) or {})
    assert why in reason and holds == (why == "gate holds")


def test_console_title_does_not_wrap_mid_phrase(tmp_path):
    setup(tmp_path)
    r = rq_eval(tmp_path, env=dict(os.environ, COLUMNS="36"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:5] == ["mean over 2 queries", "every listed query (one unjudged or missed scores 0)",
                         "ndcg: gain = 2^grade - 1", "\u2020 significant vs A: t-test, raw p < 0.05",
                         "p holm: adjusted over 3 comparisons, beside"]
    wide = rq_eval(tmp_path, env=dict(os.environ, COLUMNS="200")).stdout.splitlines()
    assert wide[0] == ("mean over 2 queries; every listed query (one unjudged or missed scores 0); ndcg: gain = 2^grade - 1; "
                       "\u2020 significant vs A: t-test, raw p < 0.05; p holm: adjusted over 3 comparisons, beside")


def test_bad_k_is_a_usage_error(tmp_path):
    setup(tmp_path)
    r = rq_eval(tmp_path, k=0)
    assert r.returncode == 2 and "--k" in r.stderr and "Traceback" not in r.stderr


def test_an_output_that_is_an_input_is_refused(tmp_path):
    """--csv naming the truth file: refused before anything is written; the input stays as it was."""
    setup(tmp_path)
    before = (tmp_path / "truth.tsv").read_bytes()
    r = subprocess.run([sys.executable, str(SCRIPT), "--queries", str(tmp_path / "q.tsv"), "--truth", str(tmp_path / "truth.tsv"),
                        "--configA", str(tmp_path / "A.yaml"), "--configB", str(tmp_path / "B.yaml"),
                        "--out", str(tmp_path / "o.json"), "--csv", str(tmp_path / "truth.tsv")], capture_output=True, text=True)
    assert r.returncode == 2 and "truth.tsv" in r.stderr and "Traceback" not in r.stderr
    assert (tmp_path / "truth.tsv").read_bytes() == before and not (tmp_path / "o.json").exists()


def _seed_inputs(tmp_path):
    """Seed 000's own example inputs (queries, truth, corpus), and two configs that describe retrieval systems over
    the corpus: A bag-of-words with the trace gate open, B BM25 and bag-of-words fused by RRF, gate closed."""
    (tmp_path / "queries.tsv").write_text("q1\tapple tart\nq2\tbanana bread\n")
    (tmp_path / "qrels.tsv").write_text("q1\td1\t2\nq2\td2\t1\n")
    (tmp_path / "corpus.jsonl").write_text('{"id":"d1","text":"apple tart recipe with cinnamon"}\n'
                                           '{"id":"d2","text":"banana bread with walnuts"}\n')
    (tmp_path / "A.yaml").write_text("corpus: corpus.jsonl\ncomponents:\n  bow: {method: bow}\n" + GATE_OPEN)
    (tmp_path / "B.yaml").write_text("corpus: corpus.jsonl\ncomponents:\n  bm25: {method: bm25}\n  bow: {method: bow}\n"
                                     "fusion_method: rrf\nperf: {enabled: false}\n")


def _seed_rq_eval(tmp_path, out: str, *extra):
    return subprocess.run([sys.executable, str(SCRIPT), "--corpus", str(tmp_path / "corpus.jsonl"),
                           "--queries", str(tmp_path / "queries.tsv"), "--truth", str(tmp_path / "qrels.tsv"),
                           "--configA", str(tmp_path / "A.yaml"), "--configB", str(tmp_path / "B.yaml"), "--k", "10",
                           "--out", str(tmp_path / f"{out}.json"), "--csv", str(tmp_path / f"{out}.csv"),
                           "--emit-traces", *extra], capture_output=True, text=True)


def test_system_configs_give_the_same_bytes_twice_and_their_latency_goes_to_its_own_file(tmp_path):
    """No wall-clock in the outputs: two runs with configs describing systems write the same JSON, CSV and traces,
    byte for byte, and print the same table; the latency goes to --latency-out only."""
    _seed_inputs(tmp_path)
    suffixes = (".json", ".csv", ".traces.A.jsonl")
    first = _seed_rq_eval(tmp_path, "o", "--latency-out", str(tmp_path / "latency.json"))
    assert first.returncode == 0, first.stderr
    written = {suffix: (tmp_path / f"o{suffix}").read_bytes() for suffix in suffixes}
    second = _seed_rq_eval(tmp_path, "o")
    assert second.returncode == 0, second.stderr
    for suffix in suffixes:
        assert (tmp_path / f"o{suffix}").read_bytes() == written[suffix], suffix
    assert first.stdout == second.stdout and "latency" not in first.stdout
    data = json.loads((tmp_path / "o.json").read_text())
    assert "latency" not in json.dumps(data)
    # the seed's toy: each query's one relevant doc is ranked first by both systems
    assert data["systems"]["A"]["metrics"]["macro"] == {"recall": 1.0, "mrr": 1.0, "ndcg": 1.0}
    assert data["systems"]["B"]["metrics"]["macro"] == {"recall": 1.0, "mrr": 1.0, "ndcg": 1.0}
    assert data["systems"]["A"]["run_path"] is None and len(data["systems"]["A"]["config_digest"]) == 64
    latency = json.loads((tmp_path / "latency.json").read_text())
    assert latency["unit"] == "ms" and set(latency["systems"]) == {"A", "B"}
    for s in ("A", "B"):
        lat = latency["systems"][s]
        assert lat["min"] <= lat["p50"] <= lat["p95"] <= lat["max"] and lat["mean"] > 0
    assert latency["delta"]["mean"] == pytest.approx(latency["systems"]["B"]["mean"] - latency["systems"]["A"]["mean"])
    assert latency["delta"]["median"] is not None


def test_a_system_config_with_the_trace_gate_open_writes_its_traces(tmp_path):
    """The keys that open --emit-traces are accepted in a config describing a system, and its trace holds the
    system's own ranking; B's gate is closed (perf.enabled false)."""
    _seed_inputs(tmp_path)
    r = _seed_rq_eval(tmp_path, "o")
    assert r.returncode == 0, r.stderr
    data = json.loads((tmp_path / "o.json").read_text())
    assert data["traces"]["A"]["written"] and "t2.quality.shadow" in data["traces"]["A"]["reason"]
    assert not data["traces"]["B"]["written"] and "perf.enabled is False, not true" in data["traces"]["B"]["reason"]
    lines = [json.loads(x) for x in (tmp_path / "o.traces.A.jsonl").read_text().splitlines()]
    assert [(t["qid"], t["ranked_ids"][0], t["hits"], t["ndcg"]) for t in lines] == [("q1", "d1", ["d1"], 1.0),
                                                                                        ("q2", "d2", ["d2"], 1.0)]
    assert not (tmp_path / "o.traces.B.jsonl").exists()
