"""The bundled clinical test set (data/test_sets/): written by data/make_sample.py, shaped as the test-set
document asks, with bag-of-words ties the tie rule decides, and a sample retriever that passes the gate."""
from __future__ import annotations

import importlib.util
import json
from collections import Counter

import pytest

from helpers import ROOT
from treckit.testsets import load_test_set

DATA = ROOT / "data" / "test_sets"
SAMPLE = DATA / "clinical_v1.yaml"


def make_sample():
    spec = importlib.util.spec_from_file_location("make_sample", ROOT / "data" / "make_sample.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_data_script_writes_the_committed_files(tmp_path):
    """Deterministic and current: the script run again writes every committed file byte for byte (the stored
    baseline results included, evaluated by treckit itself)."""
    make_sample().write_test_set(tmp_path / "data")
    written = sorted(p.name for p in (tmp_path / "data" / "test_sets").iterdir())
    assert written == sorted(p.name for p in DATA.iterdir() if p.is_file())
    for name in written:
        assert (tmp_path / "data" / "test_sets" / name).read_bytes() == (DATA / name).read_bytes(), name


def test_the_test_set_has_the_documents_shape():
    ts = load_test_set(SAMPLE)
    docs = [json.loads(line) for line in (DATA / "documents.jsonl").read_text().splitlines()]
    ids = {d["_id"] for d in docs}
    assert 200 <= len(docs) <= 500 and len(ids) == len(docs)
    assert all(d.startswith("PMC") and d[3:].isdigit() for d in ids)
    assert Counter(q.query_type for q in ts.queries) == {"exact_term": 20, "paraphrase": 15, "complex_clinical": 15}
    assert len({q.query_id for q in ts.queries}) == 50
    grades_of = [Counter(d.grade for d in q.relevant_docs) for q in ts.queries]
    assert all(set(g) <= {0, 1, 2, 3} and any(k > 0 for k in g) for g in grades_of)
    assert all(d.doc_id in ids for q in ts.queries for d in q.relevant_docs)
    # several relevant docs of different grades for most queries; every grade used
    assert sum(len({k for k in g if k > 0}) >= 2 for g in grades_of) >= 25
    assert set().union(*grades_of) == {0, 1, 2, 3}


def test_bag_of_words_ties_make_the_tie_rule_matter():
    """Some queries' top 10 in the bag of words hold equal cosines for docs of different grades: ranked in
    the baseline's order (canonical, ids ascending) or trec_eval's (docno descending on the written scores),
    their nDCG@10 differs."""
    from treckit.model import Run
    from treckit.retrieval.bow import BowRetriever
    from treckit.retrieval.corpus import read_corpus
    from treckit.testsets.measures import per_query_values
    from treckit.retrieval.ranking import run_from_rankings

    ts = load_test_set(SAMPLE)
    bow = BowRetriever(read_corpus(DATA / "documents.jsonl"))
    rankings = {q.query_id: bow.retrieve(q.query_text, 10) for q in ts.queries}
    grades = {q.query_id: {d.doc_id: d.grade for d in q.relevant_docs} for q in ts.queries}
    tied = {q for q, hits in rankings.items()
            if any(s1 == s2 and grades[q].get(d1, 0) != grades[q].get(d2, 0)
                   for (d1, s1), (d2, s2) in zip(hits, hits[1:]))}
    assert len(tied) >= 3
    rows = [(q, d, s) for q, hits in rankings.items() for d, s in hits]
    as_scored = Run.from_columns(*map(list, zip(*rows)), tag="bow")            # trec_eval breaks the ties
    canonical = per_query_values(ts.to_qrels(), run_from_rankings(rankings), ["ndcg_at_10"])["ndcg_at_10"]
    by_docno = per_query_values(ts.to_qrels(), as_scored, ["ndcg_at_10"])["ndcg_at_10"]
    differs = {q for q in canonical if canonical[q] != pytest.approx(by_docno[q])}
    assert differs and differs <= tied


def test_the_sample_retriever_passes_the_gate_against_the_stored_baseline():
    """What `make demo` gates: the sample system (the retriever's system.yaml) against the stored bag-of-words
    baseline, Recall@10 and nDCG@10 within 5 %."""
    from treckit.testsets import evaluate
    from treckit.testsets.gate import gate
    stored = json.loads((DATA / "baseline_results.json").read_text())
    current = evaluate(str(DATA / "system.yaml"), SAMPLE, cache=False).to_dict()
    result = gate(stored, current)
    assert result.passed, result.failures()
    assert [c.metric for c in result.checks] == ["recall_at_10", "ndcg_at_10"]
    # the test-set page quotes these figures, and the service page the service's answer for the stored baseline's run
    docs = " ".join(" ".join(p.read_text() for p in (ROOT / "docs").glob("*.md")).split())
    recall, ndcg = result.checks
    assert (f"recall_at_10 {recall.current:.4f} against {recall.baseline:.4f}, ndcg_at_10 (gain 2^grade − 1) "
            f"{ndcg.current:.4f} against {ndcg.baseline:.4f}") in docs
    means = {m: stored["aggregates"][m]["mean"] for m in ("recall_at_10", "ndcg_at_10", "mrr")}
    assert '{"metrics": {' + ", ".join(f'"{m}": {v!r}' for m, v in means.items()) + "}" in docs


def test_the_service_request_body_is_the_sample_test_set_and_gives_these_numbers():
    """docs/service.md's curl sends data/test_sets/evaluate_request.json: the sample test set (as its YAML reads) and
    the baseline's run file; the sample server answers with the numbers the page shows."""
    import yaml
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from treckit.service.app import create_app, load_settings

    body = json.loads((DATA / "evaluate_request.json").read_text())
    assert body == {"test_set": yaml.safe_load(SAMPLE.read_text()), "run_file": "baseline_bow.trec", "system": "bow"}
    page = (ROOT / "docs" / "service.md").read_text()
    assert "-d @data/test_sets/evaluate_request.json" in page and "as JSON>" not in page
    with TestClient(create_app(load_settings(DATA / "server.yaml"))) as client:
        got = client.post("/v1/evaluate", content=(DATA / "evaluate_request.json").read_bytes(),
                          headers={"Content-Type": "application/json"})
    assert got.status_code == 200, got.text
    answer = got.json()
    shown = '{"metrics": {"recall_at_10": 0.7116187746893629, "ndcg_at_10": 0.7934457385191729, "mrr": 0.8857002801120448}'
    assert shown in page and answer["metrics"] == json.loads(shown + "}")["metrics"]
    assert answer["system"] == "bow" and answer["num_queries"] == 50 and answer["missing_queries"] == []
