"""Baseline retrievers, fusion, dense components and systems as configs."""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import ROOT, run_cli
from treckit import thresholds
from treckit.console.errors import InputError
from treckit.model import Run
from treckit.retrieval.corpus import Corpus, read_corpus
from treckit.retrieval.fusion import fuse, parse_weights, tune

SAMPLE = ROOT / "data/test_sets/clinical_v1.yaml"
DOCS = ["the cat sat on the mat", "the dog chased the cat", "a bird sang", "dogs and cats and birds",
        "quantum physics of cats", "the mat was red", "birds fly south", "a cat a dog a bird"]


def corpus() -> Corpus:
    ids = [f"d{i}" for i in range(len(DOCS))]
    return Corpus(ids, DOCS)


def scores_of(run: Run) -> dict[tuple[str, str], float]:
    t = run.table
    return {(q, d): s for q, d, s in zip(t.column("qid").to_pylist(), t.column("docid").to_pylist(), t.column("score").to_pylist())}


# ------------------------------------------------------------------ BM25
def test_bm25_by_hand_lucene():
    from treckit.retrieval.bm25 import BM25Params, BM25Retriever
    k1, b = 1.2, 0.75
    r = BM25Retriever(corpus(), BM25Params(k1, b, "lucene", None, None))
    got = dict(r.retrieve(["cat mat"], 10)[0])
    toks = [__import__("re").findall(r"(?u)\b\w\w+\b", d.lower()) for d in DOCS]
    avgdl = sum(map(len, toks)) / len(toks)
    N = len(DOCS)

    def idf(term):
        df = sum(term in t for t in toks)
        return math.log(1 + (N - df + 0.5) / (df + 0.5))        # Lucene's BM25 idf
    want = {}
    for i, t in enumerate(toks):
        # Lucene's BM25 (since Lucene 8) drops the constant (k1 + 1) factor (Kamphuis et al., ECIR 2020)
        s = sum(idf(w) * t.count(w) / (t.count(w) + k1 * (1 - b + b * len(t) / avgdl)) for w in ("cat", "mat"))
        if s > 0:
            want[f"d{i}"] = s
    assert got.keys() == want.keys()
    for d in want:
        assert got[d] == pytest.approx(want[d], rel=1e-6)          # bm25s scores in float32


def test_bm25_equals_rank_bm25_okapi():
    rank_bm25 = pytest.importorskip("rank_bm25", reason="rank_bm25 is the independent reference (dev extra)")
    from treckit.retrieval.bm25 import BM25Params, BM25Retriever
    import re
    # every term in fewer than half of the documents: Okapi's idf is then never floored by rank_bm25
    docs = ["alpha beta", "gamma delta epsilon", "alpha zeta", "eta theta", "iota kappa alpha lambda", "mu nu", "xi omicron"]
    c = Corpus([f"x{i}" for i in range(len(docs))], docs)
    ours = dict(BM25Retriever(c, BM25Params(1.5, 0.75, "robertson", None, None)).retrieve(["alpha lambda"], 10)[0])
    ref = rank_bm25.BM25Okapi([re.findall(r"(?u)\b\w\w+\b", d) for d in docs], k1=1.5, b=0.75)
    theirs = ref.get_scores(["alpha", "lambda"])
    for i, s in enumerate(theirs):
        if s > 0:          # bm25s leaves out the constant factor (k1 + 1), which changes no ranking
            assert ours[f"x{i}"] * (1.5 + 1) == pytest.approx(s, rel=1e-6)
        else:
            assert f"x{i}" not in ours


def test_bm25_index_is_saved_and_reused_only_for_the_same_corpus(tmp_path):
    from treckit.retrieval.bm25 import BM25Params, BM25Retriever
    first = BM25Retriever(corpus(), BM25Params(), tmp_path / "idx")
    again = BM25Retriever(corpus(), BM25Params(), tmp_path / "idx")
    other = BM25Retriever(Corpus(corpus().ids, DOCS[:-1] + ["new text"]), BM25Params(), tmp_path / "idx")
    assert (first.loaded, again.loaded, other.loaded) == (False, True, False)
    assert again.retrieve(["cat"], 5) == first.retrieve(["cat"], 5)
    with pytest.raises(InputError, match="variant"):
        BM25Params(variant="okapi++")


def test_bm25_index_does_not_depend_on_the_corpus_file_order(tmp_path):
    """BM25 indexes the documents sorted by id: the same documents in another file order reuse the saved
    index (same digest) and rank the same way, ties included."""
    from treckit.retrieval.bm25 import BM25Params, BM25Retriever
    first = BM25Retriever(corpus(), BM25Params(), tmp_path / "idx")
    c = corpus()
    backwards = BM25Retriever(Corpus(c.ids[::-1], c.texts[::-1]), BM25Params(), tmp_path / "idx")
    assert (first.loaded, backwards.loaded) == (False, True)
    fresh = BM25Retriever(Corpus(c.ids[::-1], c.texts[::-1]), BM25Params())
    assert fresh.retrieve(["cat", "bird"], 8) == first.retrieve(["cat", "bird"], 8)


def test_retrieve_command_writes_runs_trec_eval_reads(tmp_path, capsys):
    docs = ROOT / "data/test_sets/documents.jsonl"
    ts = SAMPLE
    for method in ("bm25", "bow"):
        code, _, err = run_cli(["retrieve", "--corpus", docs, "--queries", ts, "--method", method, "-k", "5",
                                "-o", tmp_path / f"{method}.trec", "--index", tmp_path / "idx"], capsys)
        assert code == 0, err
        lines = (tmp_path / f"{method}.trec").read_text().splitlines()
        assert all(len(line.split()) == 6 for line in lines)
        assert lines[0].startswith("q01 Q0 PMC")
    code, _, err = run_cli(["retrieve", "--corpus", docs, "--queries", ts, "--method", "tfidf", "-o", tmp_path / "x"], capsys)
    assert code == 2


# ------------------------------------------------------------------ fusion
A = Run.from_dict({"q": {"d1": 3.0, "d2": 2.0, "d3": 1.0}})
B = Run.from_dict({"q": {"d3": 9.0, "d1": 1.0, "d4": 0.5}})


def test_each_fusion_method_by_hand():
    rrf = scores_of(fuse([A, B], "rrf"))
    assert rrf[("q", "d1")] == 1 / 61 + 1 / 62 and rrf[("q", "d3")] == 1 / 63 + 1 / 61 and rrf[("q", "d4")] == 1 / 63
    # minmax: A d1 1, d2 .5, d3 0; B d3 1, d1 (1-.5)/8.5, d4 0
    b_d1 = 0.5 / 8.5
    assert scores_of(fuse([A, B], "combsum"))[("q", "d1")] == pytest.approx(1 + b_d1)
    assert scores_of(fuse([A, B], "combmnz"))[("q", "d1")] == pytest.approx(2 * (1 + b_d1))
    assert scores_of(fuse([A, B], "combmnz"))[("q", "d2")] == pytest.approx(0.5)
    assert scores_of(fuse([A, B], "max"))[("q", "d1")] == 1.0
    w = scores_of(fuse([A, B], "weighted", weights=[0.25, 0.75]))
    assert w[("q", "d1")] == pytest.approx(0.25 + 0.75 * b_d1) and w[("q", "d3")] == pytest.approx(0.75)
    z = scores_of(fuse([A, B], "combsum", norm="zscore"))
    assert z[("q", "d2")] == pytest.approx(0.0)       # A's mean 2: d2 is at the mean; absent from B
    s = scores_of(fuse([A, B], "combsum", norm="sum"))
    assert s[("q", "d1")] == pytest.approx(3 / 6 + 1 / 10.5)


def test_fused_order_is_trec_evals_and_deterministic():
    f = fuse([A, B], "max")
    t = f.table
    # d1 and d3 tie at 1.0: trec_eval puts the greater docno first
    assert t.column("docid").to_pylist()[:2] == ["d3", "d1"] and t.column("rank").to_pylist()[:2] == [1, 2]
    assert scores_of(fuse([A, B], "rrf")) == scores_of(fuse([A, B], "rrf"))
    assert len(fuse([A, B], "rrf", depth=2)) == 2


def test_weights_parsing_and_errors():
    assert parse_weights("bm25=0.3,splade=0.4,dense=0.3", ["bm25", "splade", "dense"]) == [0.3, 0.4, 0.3]
    assert parse_weights("0.5,0.5", ["a", "b"]) == [0.5, 0.5]
    with pytest.raises(InputError, match="name every run"):
        parse_weights("a=1", ["a", "b"])
    with pytest.raises(InputError, match="finite weights"):
        fuse([A, B], "weighted", weights=[1.0])
    with pytest.raises(InputError, match="unknown fusion method"):
        fuse([A, B], "borda")


def test_rrf_equals_ranx_on_real_runs(shared):
    ranx = pytest.importorskip("ranx", reason="ranx is the reference fusion implementation (dev extra)")
    from treckit import read_run
    base = read_run(shared / "trec_eval" / "results.test")
    t = base.table
    rng = np.random.default_rng(1)
    q, d = t.column("qid").to_pylist(), t.column("docid").to_pylist()
    # two runs over the same docs with distinct scores (no ties: ranx and trec_eval break ties differently)
    s1 = rng.permutation(len(q)).astype(float)
    s2 = rng.permutation(len(q)).astype(float)
    r1, r2 = Run.from_columns(q, d, s1), Run.from_columns(q, d, s2)
    ours = scores_of(fuse([r1, r2], "rrf", k=60, depth=10_000))
    x1 = ranx.Run.from_dict({qq: {dd: ss for qq2, dd, ss in zip(q, d, s1) if qq2 == qq} for qq in set(q)})
    x2 = ranx.Run.from_dict({qq: {dd: ss for qq2, dd, ss in zip(q, d, s2) if qq2 == qq} for qq in set(q)})
    theirs = ranx.fuse([x1, x2], method="rrf", params={"k": 60}).to_dict()
    assert len(ours) == sum(len(v) for v in theirs.values())
    for qq, docs in theirs.items():
        for dd, s in docs.items():
            assert ours[(qq, dd)] == pytest.approx(s, rel=1e-12)


def test_tune_finds_the_best_rrf_k_and_weights():
    from treckit.model import Qrels
    qrels = Qrels.from_dict({"q": {"d3": 1}})
    rep = tune([A, B], qrels, "rrf", measure="recip_rank")
    # for every k, d1 (ranks 1 and 2) beats d3 (ranks 3 and 1): RR 0.5 throughout; the first k is kept
    assert [t["recip_rank"] for t in rep["tried"]] == [0.5] * 8 and rep["best"]["k"] == 1
    wrep = tune([A, B], qrels, "weighted", measure="recip_rank", grid_step=0.5)
    assert [t["weights"] for t in wrep["tried"]] == [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]]
    # A alone: d1 1, d2 .5, d3 and d4 0 (tie: d4 first) -> RR 1/4; half/half: d1 .529, d3 .5 -> 1/2; B alone: d3 first
    assert [t["recip_rank"] for t in wrep["tried"]] == [0.25, 0.5, 1.0] and wrep["best"]["weights"] == [0.0, 1.0]


def test_fuse_command(tmp_path, capsys):
    from treckit import write_run
    write_run(A, tmp_path / "a.trec", tag="bm25")
    write_run(B, tmp_path / "b.trec", tag="dense")
    code, _, err = run_cli(["fuse", tmp_path / "a.trec", tmp_path / "b.trec", "--method", "weighted",
                            "--weights", "bm25=0.25,dense=0.75", "-o", tmp_path / "f.trec"], capsys)
    assert code == 0, err
    first = (tmp_path / "f.trec").read_text().splitlines()[0].split()
    assert first[2] == "d3" and float(first[4]) == pytest.approx(0.75)
    code, _, _ = run_cli(["fuse", tmp_path / "a.trec", "--method", "bogus", "-o", tmp_path / "g"], capsys)
    assert code == 2


# ------------------------------------------------------------------ dense
def test_dense_exact_top_k_is_chunk_independent(monkeypatch):
    from treckit.retrieval import dense
    rng = np.random.default_rng(0)
    docs = rng.normal(size=(50, 8))
    docs[7] = docs[3]                                   # a tie: canonical (row) order decides
    q = np.vstack([docs[3] * 2, rng.normal(size=8)])
    ids = [f"e{i}" for i in range(50)]
    full = dense.DenseRetriever(docs, ids, "cosine").search(q, 5)
    monkeypatch.setattr(thresholds, "DENSE_DOC_CHUNK_ROWS", 3)
    chunked = dense.DenseRetriever(docs, ids, "cosine").search(q, 5)
    assert full == chunked
    assert [d for d, _ in full[0][:2]] == ["e3", "e7"] and full[0][0][1] == pytest.approx(1.0)
    dot = dense.DenseRetriever(docs, ids, "dot").search(q[1:], 50)[0]
    assert [s for _, s in dot] == pytest.approx(sorted((float(docs[i] @ q[1]) for i in range(50)), reverse=True))


# ------------------------------------------------------------------ systems
def _system(tmp_path, body: str) -> Path:
    p = tmp_path / "sys.yaml"
    p.write_text(body)
    return p


def test_seed_configs_run_as_written(tmp_path):
    from treckit import write_run
    from treckit.testsets.systems import evaluate_system
    from treckit.retrieval.system import load_system
    from treckit.testsets import load_test_set
    ts = load_test_set(SAMPLE)
    docs = ROOT / "data/test_sets/documents.jsonl"
    from treckit.retrieval.bow import BowRetriever
    from treckit.retrieval.ranking import run_from_rankings
    bow = BowRetriever(read_corpus(docs))
    write_run(run_from_rankings({q.query_id: bow.retrieve(q.query_text, 20) for q in ts.queries}), tmp_path / "splade.trec")
    write_run(run_from_rankings({q.query_id: bow.retrieve(q.query_text, 5) for q in ts.queries}), tmp_path / "dense.trec")
    common = f"corpus: {docs}\ncomponents:\n  bm25: {{method: bm25, k1: 0.9, b: 0.4}}\n  splade: {{run: splade.trec}}\n  dense: {{run: dense.trec}}\n"
    rrf = load_system(_system(tmp_path, common + "fusion_method: rrf\nrrf_k: 60\n"))
    res = evaluate_system(rrf, ts, cache=False)
    assert list(res) == ["bm25", "splade", "dense", "fusion"]
    (tmp_path / "w.yaml").write_text(common + "fusion_method: weighted\nweights: {bm25: 0.3, splade: 0.4, dense: 0.3}\n")
    weighted = load_system(tmp_path / "w.yaml")
    wres = evaluate_system(weighted, ts, cache=False)
    # recall@10 by hand from the weighted fusion's own rankings: relevant (grade > 0) in the top 10 / all relevant
    top = weighted.run({q.query_id: q.query_text for q in ts.queries}, 100)["fusion"].rankings
    by_hand = [len({d for d, _ in top[q.query_id][:10]} & rel) / len(rel)
               for q in ts.queries for rel in [{d.doc_id for d in q.relevant_docs if d.grade > 0}]]
    assert wres["fusion"].aggregates["recall_at_10"]["mean"] == pytest.approx(sum(by_hand) / len(by_hand))
    # the fusion stage is exactly fuse() over the component runs
    from treckit.retrieval.ranking import run_of
    stages = rrf.run({q.query_id: q.query_text for q in ts.queries}, 100)
    fused = fuse([run_of(stages[n].rankings) for n in ("bm25", "splade", "dense")], "rrf", k=60, depth=100)
    assert {(q, d) for q, hits in stages["fusion"].rankings.items() for d, _ in hits} == set(scores_of(fused))


def test_config_digest_ignores_formatting(tmp_path):
    from treckit.retrieval.system import load_system
    a = _system(tmp_path, "components:\n  x: {run: r.trec}\n")
    (tmp_path / "b.yaml").write_text("# same system\ncomponents:\n    x:\n        run: 'r.trec'\n")
    assert load_system(a).digest == load_system(tmp_path / "b.yaml").digest
    (tmp_path / "c.yaml").write_text("components:\n  x: {run: other.trec}\n")
    assert load_system(tmp_path / "c.yaml").digest != load_system(a).digest


def _q01_relevant() -> list[str]:
    """Two of the sample's q01 documents of grade > 0."""
    from treckit.testsets import load_test_set
    q01 = load_test_set(SAMPLE).queries[0]
    return [d.doc_id for d in q01.relevant_docs if d.grade > 0][:2]


def _slow_module(tmp_path, delay_ms: float) -> str:
    """A search function answering every query with two of q01's relevant documents, after a delay."""
    mod = tmp_path / f"slow_{int(delay_ms)}.py"
    mod.write_text(f"import time\ndef search(q):\n    time.sleep({delay_ms / 1000})\n    return {_q01_relevant()!r}\n"
                   "def rerank(q, cands):\n    return [d for d, _ in reversed(cands)]\n")
    return str(mod)


def test_latency_is_monotone_in_injected_delays(tmp_path):
    from treckit.testsets.systems import evaluate_system
    from treckit.testsets import load_test_set
    ts = load_test_set(SAMPLE)
    p50 = []
    for delay in (0, 10, 30):
        cfg = {"components": {"f": {"callable": f"{_slow_module(tmp_path, delay)}:search"}}}
        p50.append(evaluate_system(cfg, ts, cache=False)["f"].latency_ms["p50"])
    assert p50[0] < p50[1] < p50[2] and p50[1] >= 10 and p50[2] >= 30        # a sleep is never shorter


def test_rerank_stage_and_its_latency(tmp_path):
    from treckit.testsets.systems import evaluate_system
    from treckit.testsets import load_test_set
    ts = load_test_set(SAMPLE)
    mod = _slow_module(tmp_path, 5)
    cfg = {"components": {"f": {"callable": f"{mod}:search"}}, "rerank": {"callable": f"{mod}:rerank", "depth": 10}}
    res = evaluate_system(cfg, ts, cache=False)
    assert list(res) == ["f", "f+rerank"]
    q01 = lambda stage: next(r for r in res[stage].per_query if r["qid"] == "q01")      # noqa: E731
    # two of q01's relevant docs: reversed they are still both in the top 2
    relevant = sum(d.grade > 0 for d in ts.queries[0].relevant_docs)
    assert q01("f")["recall_at_10"] == q01("f+rerank")["recall_at_10"] == pytest.approx(2 / relevant)
    assert res["f+rerank"].latency_ms["p50"] >= res["f"].latency_ms["p50"]


def test_bad_configs_are_named(tmp_path):
    from treckit.retrieval.system import System
    with pytest.raises(InputError, match="exactly one of"):
        System({"components": {"x": {"run": "a", "method": "bm25"}}})
    with pytest.raises(InputError, match="need a fusion_method"):
        System({"components": {"x": {"run": "a"}, "y": {"run": "b"}}})
    with pytest.raises(InputError, match="unknown keys"):
        System({"components": {"x": {"run": "a"}}, "fusion": "rrf"})
    p = _system(tmp_path, "a: &x [1]\nb: *x\n")
    from treckit.retrieval.system import load_system
    with pytest.raises(InputError, match="anchors and aliases"):
        load_system(p)


def test_system_eval_command_and_runner_accept_a_config(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TRECKIT_CACHE_DIR", str(tmp_path / "cache"))
    docs = ROOT / "data/test_sets/documents.jsonl"
    cfg = _system(tmp_path, f"corpus: {docs}\ncomponents:\n  bm25: {{method: bm25}}\n  bow: {{method: bow}}\nfusion_method: rrf\n")
    code, out, err = run_cli(["system", "eval", cfg, "--test-set", SAMPLE,
                              "--out", tmp_path / "s.json"], capsys)
    assert code == 0, err
    assert out.splitlines()[0] == "50 queries, each asked of every stage (none is left out); ndcg_at_K: gain = 2^grade - 1"
    assert out.splitlines()[1].split()[:4] == ["stage", "recall_at_10", "ndcg_at_10", "mrr"]
    assert [line.split()[0] for line in out.splitlines()[2:]] == ["bm25", "bow", "fusion"]
    stored = json.loads((tmp_path / "s.json").read_text())
    from treckit.testsets import evaluate
    res = evaluate(str(cfg), SAMPLE, measures=["recall@10", "ndcg_at_10", "mrr"])
    assert res.aggregates == stored["fusion"]["aggregates"]


def test_system_eval_columns_stay_apart_for_long_names(tmp_path, capsys):
    """Every header and value of the stage table ends where its column ends, two spaces from the next
    column, however long the measure or stage names."""
    shutil.copy(ROOT / "data/test_sets/baseline_bow.trec", tmp_path / "run.trec")
    cfg = _system(tmp_path, "components:\n  a_component_with_a_long_name: {run: run.trec}\n  b: {run: run.trec}\n"
                            "fusion_method: rrf\n")
    measures = ["precision_at_100", "recall_at_1000", "ndcg_at_1000", "mrr"]
    code, out, err = run_cli(["system", "eval", cfg, "--test-set", SAMPLE, "--no-cache",
                              *[a for m in measures for a in ("-m", m)]], capsys)
    assert code == 0, err
    _, head, *rows = out.splitlines()             # a line on the query set and gain first
    assert head.split() == ["stage", *measures, "p50", "ms", "p95", "ms"]
    assert [r.split()[0] for r in rows] == ["a_component_with_a_long_name", "b", "fusion"]
    ends = [head.index(m) + len(m) for m in measures] + [head.index("p50 ms") + 6, head.index("p95 ms") + 6]
    for row in rows:
        cells = row.split()
        assert len(cells) == len(measures) + 3
        for cell, end in zip(cells[1:], ends):
            assert row[end - len(cell):end] == cell and row[end - len(cell) - 2:end - len(cell)] == "  ", (row, cell)


def test_compare_runs_two_system_configs_on_a_test_set(tmp_path, capsys):
    """The seed's A/B question as written: RRF (k 60) against weighted fusion, paired t-test on ndcg_at_10 and
    the latency difference B - A."""
    import jsonschema
    from scipy import stats
    docs = ROOT / "data/test_sets/documents.jsonl"
    common = f"corpus: {docs}\ncomponents:\n  bm25: {{method: bm25}}\n  bow: {{method: bow}}\n"
    (tmp_path / "A.yaml").write_text("name: rrf\n" + common + "fusion_method: rrf\nrrf_k: 60\n")
    (tmp_path / "B.yaml").write_text("name: weighted\n" + common + "fusion_method: weighted\nweights: {bm25: 0.3, bow: 0.7}\n")
    code, out, err = run_cli(["compare", "--test-set", SAMPLE, "--config", tmp_path / "A.yaml",
                              "--config", tmp_path / "B.yaml", "-m", "ndcg_cut.10", "--test", "t-test",
                              "--out", tmp_path / "c.json"], capsys)
    assert code == 0, err
    d = json.loads((tmp_path / "c.json").read_text())
    jsonschema.validate(d, json.loads((ROOT / "code/treckit/compare/schema.json").read_text()))
    a = [row["rrf"]["ndcg_cut_10"] for row in d["per_query"]]
    b = [row["weighted"]["ndcg_cut_10"] for row in d["per_query"]]
    (t,) = [x for x in d["tests"] if x["test"] == "t-test"]
    if a != b:
        ref = stats.ttest_rel(b, a)
        assert t["statistic"] == pytest.approx(ref.statistic) and t["p_value"] == pytest.approx(ref.pvalue)
    lat = {s: d["systems"][s]["latency_ms"] for s in ("rrf", "weighted")}
    assert d["delta"]["latency_ms"]["weighted"] == pytest.approx(lat["weighted"]["mean"] - lat["rrf"]["mean"])
    assert "latency weighted:" in out
    code, _, err = run_cli(["compare", "--config", tmp_path / "A.yaml", "--config", tmp_path / "B.yaml"], capsys)
    assert code == 2 and "--test-set" in err


# ------------------------------------------------------------------ one ranking for one definition
# system eval's name: (`treckit eval -m` name, its key in eval's JSON)
SYSTEM_MEASURES = {"recall_at_10": ("recall.10", "recall_10"), "ndcg_at_10": ("nDCG(dcg='exp-log2')@10",) * 2,
                   "mrr": ("recip_rank",) * 2}


def _eval_c(qrels, run, capsys) -> dict[str, dict[str, float]]:
    """`treckit eval -c -q` of a written run: {engine measure: {qid: value}}, and "all" the summary."""
    code, out, err = run_cli(["eval", "-c", "-q", "--format", "json", *[a for m, _ in SYSTEM_MEASURES.values() for a in ("-m", m)],
                              qrels, run], capsys)
    assert code == 0, err
    (res,) = json.loads(out)
    values = {m: {row["qid"]: row[m] for row in res["per_query"]} for _, m in SYSTEM_MEASURES.values()}
    for m in values:
        values[m]["all"] = res["summary"][m]
    return values


def _assert_stage_equals_file(stage: dict, file_values: dict) -> None:
    """A system-eval stage's per-query values and means are the written run's, as `eval -c` gives them."""
    for name, (_, engine) in SYSTEM_MEASURES.items():
        assert {r["qid"]: r[name] for r in stage["per_query"]} == {q: v for q, v in file_values[engine].items() if q != "all"}
        assert stage["aggregates"][name]["mean"] == pytest.approx(file_values[engine]["all"], rel=1e-15, abs=0)


def test_system_eval_stages_equal_the_written_runs_on_quest(tmp_path, capsys):
    """Each stage of `system eval` on the QUEST sample is measured as `treckit eval -c` measures the
    run `treckit retrieve` / `treckit fuse` write for it (same depth): one ranking for one definition."""
    d = ROOT / "data/quest_corpus"
    qrels = tmp_path / "qrels"
    assert run_cli(["qrels", d / "test.jsonl", "-o", qrels, "--id-added", tmp_path / "ids.jsonl"], capsys)[0] == 0
    for method in ("bm25", "bow"):
        code, _, err = run_cli(["retrieve", "--corpus", d / "documents.jsonl", "--queries", d / "test.jsonl",
                                "--method", method, "-k", "100", "-o", tmp_path / f"{method}.trec"], capsys)
        assert code == 0, err
    code, _, err = run_cli(["fuse", tmp_path / "bm25.trec", tmp_path / "bow.trec", "--method", "rrf", "--k", "60",
                            "--depth", "100", "-o", tmp_path / "fusion.trec"], capsys)
    assert code == 0, err
    code, _, err = run_cli(["system", "eval", d / "system.yaml", "--qrels", qrels, "--queries", d / "test.jsonl",
                            "-k", "100", "--no-cache", "--out", tmp_path / "system.json"], capsys)
    assert code == 0, err
    stages = json.loads((tmp_path / "system.json").read_text())
    assert list(stages) == ["bm25", "bow", "fusion"]
    for stage in stages:
        _assert_stage_equals_file(stages[stage], _eval_c(qrels, tmp_path / f"{stage}.trec", capsys))
    # the figures the Makefile's quest target prints for BM25 (trec_eval's order: recall@10 0.4508, not 0.4536)
    assert stages["bm25"]["aggregates"]["recall_at_10"]["mean"] == pytest.approx(0.4508, abs=5e-5)


TIED = {"x y": "red apple pie", "x!y": "red apple pie", "x#y": "red apple pie", "x%y": "red apple pie",
        "xay": "red apple pie", "zz": "green tea"}


def test_a_tie_is_ranked_by_trec_evals_rule_in_every_component(tmp_path, capsys):
    """Five documents tie for the query "apple".  trec_eval ranks them by doc id descending on the
    bytes written -- xay, x%25y, x%20y, x#y, x!y -- while bm25s lists x!y before x y and the
    bag-of-words baseline keeps corpus order (x y first).  The relevant "x y" is third by trec_eval's
    rule: RR 1/3, nDCG 1/log2(4) = 0.5; in the top 3 at all only by that rule."""
    from treckit.retrieval.bow import BowRetriever
    from treckit.retrieval.system import load_system
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("".join(json.dumps({"_id": d, "text": t}) + "\n" for d, t in TIED.items()))
    (tmp_path / "q.tsv").write_text("q1\tapple\n")
    (tmp_path / "qrels").write_text("q1 0 x%20y 1\nq1 0 zz 0\n")
    dense_ids = list(TIED)
    np.save(tmp_path / "d.npy", np.array([[1.0, 0.0] if t.startswith("red") else [0.0, 1.0] for t in TIED.values()]))
    (tmp_path / "d.ids").write_text("\n".join(dense_ids) + "\n")
    np.save(tmp_path / "q.npy", np.array([[2.0, 0.0]]))
    (tmp_path / "q.ids").write_text("q1\n")
    (tmp_path / "sys.yaml").write_text(
        f"corpus: {corpus}\ncomponents:\n  bm25: {{method: bm25, stopwords: none, stemmer: none}}\n  bow: {{method: bow}}\n"
        "  dense: {dense: {embeddings: d.npy, ids: d.ids, query_embeddings: q.npy, query_ids: q.ids}}\n"
        "fusion_method: rrf\n")
    system = load_system(tmp_path / "sys.yaml")
    trec_order = ["xay", "x%y", "x y", "x#y", "x!y"]
    # the components' own orders differ from trec_eval's (else this test could not fail)
    search = system._retriever("bm25", system.components["bm25"])
    assert [d for d, _ in search(["apple"], 5)[0]] == ["xay", "x%y", "x!y", "x#y", "x y"]
    assert [d for d, _ in search(["apple"], 3)[0]] == ["xay", "x%y", "x!y"]          # its top 3 lacks "x y"
    assert [d for d, _ in BowRetriever(read_corpus(corpus)).retrieve("apple", 5)] == ["x y", "x!y", "x#y", "x%y", "xay"]
    stages = system.run({"q1": "apple"}, k=3)
    for name in ("bm25", "bow", "dense", "fusion"):
        assert [d for d, _ in stages[name].rankings["q1"]] == trec_order[:3], name
    code, _, err = run_cli(["system", "eval", tmp_path / "sys.yaml", "--qrels", tmp_path / "qrels", "--queries",
                            tmp_path / "q.tsv", "-k", "3", "--no-cache", "--out", tmp_path / "s.json"], capsys)
    assert code == 0, err
    got = json.loads((tmp_path / "s.json").read_text())
    for name in ("bm25", "bow", "dense", "fusion"):
        assert got[name]["aggregates"]["mrr"]["mean"] == 1 / 3
        assert got[name]["aggregates"]["ndcg_at_10"]["mean"] == 0.5
        assert got[name]["aggregates"]["recall_at_10"]["mean"] == 1.0
    for method in ("bm25", "bow"):
        code, _, err = run_cli(["retrieve", "--corpus", corpus, "--queries", tmp_path / "q.tsv", "--method", method,
                                "-k", "3", "--stopwords", "none", "--stemmer", "none", "-o", tmp_path / f"{method}.trec"], capsys)
        assert code == 0, err
        assert [line.split()[2] for line in (tmp_path / f"{method}.trec").read_text().splitlines()] == ["xay", "x%25y", "x%20y"]
        _assert_stage_equals_file(got[method], _eval_c(tmp_path / "qrels", tmp_path / f"{method}.trec", capsys))


def test_a_functions_list_order_is_its_ranking_in_fusion_too(tmp_path):
    """A callable's answer is ranked in its list order, whatever scores come with it: the fusion of
    that one component keeps the order (its scores, ascending here, would reverse it)."""
    from treckit.retrieval.system import System
    mod = tmp_path / "listed.py"
    mod.write_text("def search(q):\n    return [('a', 1.0), ('b', 2.0), ('c', 3.0)]\n")
    stages = System({"components": {"f": {"callable": f"{mod}:search"}}, "fusion_method": "rrf"}).run({"q": "x"}, 10)
    assert stages["f"].rankings["q"] == [("a", 3.0), ("b", 2.0), ("c", 1.0)]
    assert [d for d, _ in stages["fusion"].rankings["q"]] == ["a", "b", "c"]
    assert stages["fusion"].rankings["q"][0][1] == pytest.approx(1 / 61)


# ------------------------------------------------------------------ latency, on a fake clock
def test_stage_latency_is_warmed_up_and_timed_in_turns(fake_clock, tmp_path):
    """Component a costs 250 ms a call, b 500 ms, the reranker 125 ms, each a second more on its first
    call, and the first full-size fusion a second more: none of those seconds is timed.  Components
    take turns (a then b, then b then a, ...); fusion = a + b, fusion+rerank = fusion + 125 ms."""
    from treckit.testsets.systems import evaluate_system
    from treckit.retrieval.system import WARMUP_QUERIES
    from treckit.testsets import load_test_set
    ts = load_test_set(ROOT / "data/test_sets/clinical_v1.yaml")
    cfg = {"components": {"a": {"callable": "fakeclock:search_a"}, "b": {"callable": "fakeclock:search_b"}},
           "fusion_method": "rrf", "rerank": {"callable": "fakeclock:rerank", "depth": 10}}
    res = evaluate_system(cfg, ts, cache=False)
    lat = {stage: r.latency_ms for stage, r in res.items()}
    assert lat["a"]["p50"] == lat["a"]["p95"] == lat["a"]["mean"] == 250.0
    assert lat["b"]["p95"] == 500.0 and lat["fusion"]["p95"] == 750.0 and lat["fusion+rerank"]["p95"] == 875.0
    assert all(row["latency_ms"] == 875.0 for row in res["fusion+rerank"].per_query)
    texts = [q.query_text for q in ts.queries]
    calls = fake_clock.calls
    searches = [c for c in calls if c != "tick" and c[0] != "rerank"]
    turns = [pair for r, t in enumerate(texts) for pair in ([("A", t), ("B", t)] if r % 2 == 0 else [("B", t), ("A", t)])]
    warm = 2 * WARMUP_QUERIES
    assert searches == turns[:warm] + turns
    assert calls.index("tick") == warm + WARMUP_QUERIES          # the warm-up (and its reranking) read no clock
    timed = [i for i, c in enumerate(calls) if c != "tick"][warm + WARMUP_QUERIES:]
    assert all(calls[i - 1] == calls[i + 1] == "tick" for i in timed)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=1, max_size=30), st.integers(1, 12), st.randoms())
def test_the_top_k_is_trec_evals_whatever_order_a_component_gives_ties(scores, k, rnd):
    """For any scores and any order a component lists equal scores in, asking through the ties and
    ranking by trec_eval's rule gives the first k of trec_eval's order of every scored document."""
    from treckit.ids import escape_id
    from treckit.retrieval.ranking import through_ties, trec_ranked
    docs = [f"d {i}" if i % 3 == 0 else f"d{i}" for i in range(len(scores))]     # some ids escaped when written

    def search(items, n):
        pairs = list(zip(docs, scores))
        rnd.shuffle(pairs)                                  # the component's own order among ties
        pairs.sort(key=lambda p: -p[1])                     # best first, ties in that order
        return [pairs[:n] for _ in items]
    got = trec_ranked({"q": through_ties(search, ["text"], k)[0]}, k)["q"]
    want = sorted(zip(docs, scores), key=lambda p: (p[1], escape_id(p[0]).encode()), reverse=True)[:k]
    assert got == want


# ------------------------------------------------------------------ the cache: everything a config names
SMALL_SET = """\
name: small
version: "1"
queries:
  - {query_id: a, query_text: alpha beta, query_type: t, relevant_docs: [{doc_id: d1, grade: 3}, {doc_id: d2, grade: 1}]}
  - {query_id: b, query_text: gamma, query_type: t, relevant_docs: [{doc_id: d4, grade: 2}]}
"""


def _replace(path: Path, data) -> None:
    """``path`` replaced by a new file (another inode), as an editor or a build would."""
    tmp = path.with_name(path.name + ".new")
    tmp.write_bytes(data) if isinstance(data, bytes) else tmp.write_text(data)
    tmp.replace(path)


def _npy(array) -> bytes:
    import io
    buf = io.BytesIO()
    np.save(buf, np.asarray(array, np.float64))
    return buf.getvalue()


# each kind: (the files, the config, the change); MRR by hand before and after.  On the small set a's relevant
# docs are d1, d2 and b's is d4: every "before" finds one of a's first and d4 second or not at all.
CONFIG_INPUTS = {
    # b: d3 only -> 0; after: d4 second -> 1/2
    "run": ({"r.trec": "a Q0 d1 1 2 r\nb Q0 d3 1 2 r\n"}, "components:\n  r: {run: r.trec}\n",
            {"r.trec": "a Q0 d2 1 2 r\nb Q0 d3 1 2 r\nb Q0 d4 2 1 r\n"}, 0.5, 0.75),
    # bm25: b ("gamma") finds d3 only; after, d4 is the gamma document and d3 shares no term
    "corpus": ({"c.jsonl": '{"_id": "d1", "text": "alpha"}\n{"_id": "d2", "text": "beta"}\n'
                           '{"_id": "d3", "text": "gamma"}\n{"_id": "d4", "text": "delta"}\n'},
               "corpus: c.jsonl\ncomponents:\n  b: {method: bm25}\n",
               {"c.jsonl": '{"_id": "d1", "text": "alpha"}\n{"_id": "d2", "text": "beta"}\n'
                           '{"_id": "d3", "text": "zeta"}\n{"_id": "d4", "text": "gamma"}\n'}, 0.5, 1.0),
    # a function: ['d1'] for every query, then ['d2', 'd4']
    "callable": ({"f.py": "def search(text):\n    return ['d1']\n"}, "components:\n  f: {callable: {dir}/f.py:search}\n",
                 {"f.py": "def search(text):\n    return ['d2', 'd4']\n"}, 0.5, 0.75),
    # a reranker over a run ranking b's d3 before d4: kept (1/2), then reversed (d4 first, 1)
    "rerank": ({"r.trec": "a Q0 d1 1 2 r\na Q0 d2 2 1 r\nb Q0 d3 1 2 r\nb Q0 d4 2 1 r\n",
                "rr.py": "def rerank(text, cands):\n    return [d for d, _ in cands]\n"},
               "components:\n  r: {run: r.trec}\nrerank: {callable: {dir}/rr.py:rerank}\n",
               {"rr.py": "def rerank(text, cands):\n    return [d for d, _ in reversed(cands)]\n"}, 0.75, 1.0),
    # dot products: a = [1, .5, 0] ranks d1 first; b = [0, 0, 1] ranks d3 (1) before d4 (.5), then d4 (2) first
    "embeddings": ({"d.npy": _npy([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0.5]]), "d.ids": "d1\nd2\nd3\nd4\n",
                    "q.npy": _npy([[1, 0.5, 0], [0, 0, 1]]), "q.ids": "a\nb\n"},
                   "components:\n  e: {dense: {embeddings: d.npy, ids: d.ids, query_embeddings: q.npy, query_ids: q.ids,"
                   " similarity: dot}}\n",
                   {"d.npy": _npy([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 2]])}, 0.75, 1.0),
    # the same vectors, d3's and d4's ids swapped: d4 gets [0, 0, 1]
    "ids": ({"d.npy": _npy([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0.5]]), "d.ids": "d1\nd2\nd3\nd4\n",
             "q.npy": _npy([[1, 0.5, 0], [0, 0, 1]]), "q.ids": "a\nb\n"},
            "components:\n  e: {dense: {embeddings: d.npy, ids: d.ids, query_embeddings: q.npy, query_ids: q.ids,"
            " similarity: dot}}\n",
            {"d.ids": "d1\nd2\nd4\nd3\n"}, 0.75, 1.0),
}


@pytest.mark.parametrize("kind", list(CONFIG_INPUTS))
def test_a_replaced_file_a_config_names_is_not_answered_from_the_cache(tmp_path, kind):
    """Every file a system config names (run, corpus, embeddings, ids, a function's code) is in its cache key:
    after a change the new numbers (MRR by hand, and as evaluated without the cache), not the stored ones."""
    from treckit.testsets.systems import evaluate_system
    from treckit.testsets import parse_test_set
    files, config, change, before, after = CONFIG_INPUTS[kind]
    for name, data in files.items():
        _replace(tmp_path / name, data)
    cfg = _system(tmp_path, config.replace("{dir}", str(tmp_path)))
    ts = parse_test_set(SMALL_SET, "small.yaml")

    def mrr(**kw):
        from treckit.retrieval.system import load_system
        system = load_system(cfg)
        result = evaluate_system(system, ts, measures=["mrr"], cache_dir=tmp_path / "cache", **kw)[system.final_stage()]
        return result.metrics["mrr"], result.cached
    assert mrr() == (pytest.approx(before), False)
    assert mrr() == (pytest.approx(before), True)
    for name, data in change.items():
        _replace(tmp_path / name, data)
    assert mrr() == (pytest.approx(after), False)
    assert mrr(cache=False) == (pytest.approx(after), False)
    assert mrr() == (pytest.approx(after), True)


def test_system_eval_after_its_run_is_replaced_equals_eval_of_the_new_run(tmp_path, capsys, monkeypatch):
    """`system eval` of a config naming a run; the run replaced (each query's ranking reversed): the second
    `system eval` answers the new run's numbers, those of `treckit eval -c` on it."""
    monkeypatch.setenv("TRECKIT_CACHE_DIR", str(tmp_path / "cache"))
    baseline = (ROOT / "data/test_sets/baseline_bow.trec").read_text().splitlines()
    _replace(tmp_path / "run.trec", "\n".join(baseline) + "\n")
    cfg = _system(tmp_path, "components:\n  r: {run: run.trec}\n")
    assert run_cli(["testset", "export", SAMPLE, "--qrels", tmp_path / "qrels"], capsys)[0] == 0

    def system_eval() -> dict:
        code, _, err = run_cli(["system", "eval", cfg, "--test-set", SAMPLE, "-m", "mrr", "-m", "recall@10",
                                "--out", tmp_path / "s.json"], capsys)
        assert code == 0, err
        agg = json.loads((tmp_path / "s.json").read_text())["r"]["aggregates"]
        return {m: agg[m]["mean"] for m in ("mrr", "recall_at_10")}

    def eval_c() -> dict:
        code, out, err = run_cli(["eval", "-c", "-m", "recip_rank", "-m", "recall.10", tmp_path / "qrels",
                                  tmp_path / "run.trec"], capsys)
        assert code == 0, err
        got = {line.split()[0]: float(line.split()[2]) for line in out.splitlines()}
        return {"mrr": got["recip_rank"], "recall_at_10": got["recall_10"]}
    first = system_eval()
    assert first == pytest.approx(eval_c(), abs=5e-5)
    by_query: dict[str, list[str]] = {}
    for line in baseline:
        by_query.setdefault(line.split()[0], []).append(line.split()[2])
    _replace(tmp_path / "run.trec", "".join(f"{q} Q0 {d} {i + 1} {len(docs) - i} r\n"
                                            for q, docs in by_query.items() for i, d in enumerate(reversed(docs))))
    second = system_eval()
    assert second == pytest.approx(eval_c(), abs=5e-5) and second["mrr"] < first["mrr"] - 0.1


def test_a_system_function_not_in_a_file_is_not_cached_and_said_once(tmp_path, monkeypatch):
    import sys
    import types
    import warnings
    from treckit.testsets.systems import evaluate_system
    from treckit.testsets import parse_test_set
    from treckit.testsets.cache import CacheWarning
    module = types.ModuleType("typed_at_a_prompt")
    exec(compile("def search(text):\n    return ['d1']\n", "<typed>", "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, "typed_at_a_prompt", module)
    ts = parse_test_set(SMALL_SET, "small.yaml")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = [evaluate_system({"components": {"f": {"callable": "typed_at_a_prompt:search"}}}, ts, measures=["mrr"],
                               cache_dir=tmp_path)["f"] for _ in range(2)]
    assert [(r.metrics["mrr"], r.cached) for r in got] == [(0.5, False), (0.5, False)]
    said = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert len(said) == 1 and "typed_at_a_prompt:search" in said[0] and "not cached" in said[0], said


# ------------------------------------------------------------------ a BM25 index checked against its files
def _swap_alpha_and_gamma(idx: Path) -> None:
    vocab = json.loads((idx / "vocab.index.json").read_text())
    vocab["alpha"], vocab["gamma"] = vocab["gamma"], vocab["alpha"]
    (idx / "vocab.index.json").write_text(json.dumps(vocab, separators=(",", ":")))      # same size, in place


@pytest.mark.parametrize("tamper, changed", [
    (_swap_alpha_and_gamma, "vocab.index.json"),
    (lambda idx: (idx / "data.csc.index.npy").write_bytes((idx / "data.csc.index.npy").read_bytes()[:-4]),
     "data.csc.index.npy"),
    (lambda idx: (idx / "indptr.csc.index.npy").unlink(), "indptr.csc.index.npy"),
])
def test_a_tampered_bm25_index_is_rebuilt_with_a_notice(tmp_path, tamper, changed):
    """Its manifest still matches (same corpus, parameters): the changed file is found, said, and the index
    rebuilt from the corpus, answering as the honest one; then it loads quietly again."""
    import warnings
    from treckit import InputWarning
    from treckit.retrieval.bm25 import BM25Params, BM25Retriever
    corpus = Corpus(["d1", "d2", "d3", "d4"], ["alpha", "beta", "gamma", "delta"])
    idx = tmp_path / "idx"
    honest = BM25Retriever(corpus, BM25Params(), idx)
    expected = honest.retrieve(["alpha", "gamma"], 4)
    assert [[d for d, _ in r] for r in expected] == [["d1"], ["d3"]]
    tamper(idx)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = BM25Retriever(corpus, BM25Params(), idx)
    said = [str(w.message) for w in caught if issubclass(w.category, InputWarning)]
    assert not again.loaded and again.retrieve(["alpha", "gamma"], 4) == expected
    assert said == [f"the BM25 index in {idx} is not as it was saved ({changed} changed): rebuilding it from the corpus"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        third = BM25Retriever(corpus, BM25Params(), idx)
    assert third.loaded and third.retrieve(["alpha", "gamma"], 4) == expected


def test_a_tampered_bm25_index_that_cannot_be_rebuilt_is_an_error(tmp_path, monkeypatch):
    import bm25s
    import warnings
    from treckit.retrieval.bm25 import BM25Params, BM25Retriever
    corpus = Corpus(["d1", "d2", "d3", "d4"], ["alpha", "beta", "gamma", "delta"])
    idx = tmp_path / "idx"
    BM25Retriever(corpus, BM25Params(), idx)
    _swap_alpha_and_gamma(idx)

    def read_only(self, *a, **kw):
        raise PermissionError(13, "Permission denied", str(idx / "data.csc.index.npy"))
    monkeypatch.setattr(bm25s.BM25, "save", read_only)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InputError) as err:
            BM25Retriever(corpus, BM25Params(), idx)
    text = str(err.value)
    assert str(idx) in text and "vocab.index.json changed since it was saved" in text and "cannot be written" in text
