"""Comparison: statistics against scipy and brute force, stable bytes, the schema, reports, the old CLI."""
from __future__ import annotations

import itertools
import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, run_cli
from treckit.compare import stats
from treckit.compare.compare import CompareOptions, System, compare
from treckit.compare.config import content_digest, load_config
from treckit.compare import report
from treckit.model import Qrels, Run

rng = np.random.default_rng(3)
A = np.round(rng.random(25), 3)
B = np.clip(A + rng.normal(0.05, 0.1, 25), 0, 1)


def test_t_test_and_wilcoxon_equal_scipy():
    from scipy import stats as ss
    t = stats.paired_t(A, B)
    ref = ss.ttest_rel(B, A)
    assert t.statistic == ref.statistic and t.p_value == ref.pvalue
    w = stats.wilcoxon(A, B)
    ref = ss.wilcoxon(B, A)
    assert w.statistic == ref.statistic and w.p_value == ref.pvalue


def test_randomization_exact_equals_brute_force():
    a, b = A[:9], B[:9]
    d = b - a
    obs = abs(d.sum())
    hits = sum(abs(sum(s * x for s, x in zip(signs, d))) >= obs - 1e-12
               for signs in itertools.product((1, -1), repeat=d.size))
    r = stats.randomization(a, b)
    assert r.detail["method"] == "exact" and r.p_value == hits / 2 ** d.size


def test_randomization_monte_carlo_is_seeded_and_close_to_exact():
    a, b = A[:16], B[:16]
    r0 = stats.randomization(a, b)                                 # 2**16 assignments, enumerated
    exact = r0.p_value
    d = b - a
    signs = 1 - 2 * ((np.arange(2 ** d.size)[:, None] >> np.arange(d.size)) & 1)     # every sign flip once
    assert r0.detail["method"] == "exact"
    assert exact == np.count_nonzero(np.abs(signs @ d) >= abs(d.sum()) - 1e-12) / 2 ** d.size
    r1 = stats.randomization(np.r_[a, 0.0], np.r_[b, 0.0], permutations=20000, seed=7)   # 17 queries: Monte Carlo
    r2 = stats.randomization(np.r_[a, 0.0], np.r_[b, 0.0], permutations=20000, seed=7)
    assert r1.detail["method"] == "monte-carlo" and r1.p_value == r2.p_value
    assert abs(r1.p_value - exact) < 0.01                          # a zero delta does not change the null


def test_bootstrap_agrees_with_scipy_and_is_seeded():
    from scipy import stats as ss
    r = stats.bootstrap_ci(A, B, resamples=20000, seed=1)
    assert r.as_dict() == stats.bootstrap_ci(A, B, resamples=20000, seed=1).as_dict()
    ref = ss.bootstrap(((B - A),), np.mean, n_resamples=20000, method="percentile", confidence_level=0.95,
                       random_state=np.random.default_rng(2)).confidence_interval
    assert abs(r.detail["ci_low"] - ref.low) < 0.01 and abs(r.detail["ci_high"] - ref.high) < 0.01


def test_effect_size_and_corrections_by_hand():
    d = B - A
    assert stats.effect_size(A, B) == pytest.approx(d.mean() / d.std(ddof=1))
    assert stats.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert stats.holm([0.01, None, 0.5]) == pytest.approx([0.02, None, 0.5])
    assert stats.bonferroni([0.01, 0.04, 0.5]) == pytest.approx([0.03, 0.12, 1.0])


def small_systems():
    qrels = Qrels.from_dict({f"q{i}": {"a": 1, "b": 2, "c": 0} for i in range(12)})
    base = Run.from_dict({f"q{i}": {"a": 3.0, "c": 2.0, "b": 1.0} for i in range(12)})
    better = Run.from_dict({f"q{i}": ({"b": 3.0, "a": 2.0, "c": 1.0} if i % 3 else {"c": 3.0, "a": 2.0, "b": 1.0})
                            for i in range(12)})
    return qrels, [System("base", base), System("better", better)]


def test_compare_numbers_and_hits():
    qrels, systems = small_systems()
    comp = compare(qrels, systems, ["map", "P.1"], CompareOptions(k=1, permutations=2000, resamples=2000))
    assert comp.measures == ["map", "P_1"]
    # base: a(1) c b(2): AP = (1/1 + 2/3)/2; better on 8 queries: b a c: AP = 1
    assert comp.column("base", "map") == pytest.approx(np.full(12, (1 + 2 / 3) / 2))
    assert comp.win_tie_loss("better", "P_1") == (0, 8, 4)
    assert comp.hits["better"][1] == ["b"] and comp.hits["better"][0] == []
    t = [r for r in comp.tests if r["measure"] == "map" and r["test"] == "t-test"][0]
    from scipy import stats as ss
    assert t["p_value"] == ss.ttest_rel(comp.column("better", "map"), comp.column("base", "map")).pvalue
    # Holm over the two t-tests (map, P_1): the smaller p doubles, the larger keeps its own (or the smaller's)
    ps = {r["measure"]: r["p_value"] for r in comp.tests if r["test"] == "t-test"}
    lo, hi = sorted(ps.values())
    expected = {m: (min(1.0, 2 * p) if p == lo else max(min(1.0, 2 * lo), p)) for m, p in ps.items()}
    assert {r["measure"]: r["p_adjusted"] for r in comp.tests if r["test"] == "t-test"} == pytest.approx(expected)


def test_json_schema_and_key_order(tmp_path):
    import jsonschema
    qrels, systems = small_systems()
    comp = compare(qrels, systems, ["map", "ndcg_cut.5"], CompareOptions(permutations=500, resamples=500))
    p = tmp_path / "c.json"
    report.write_json(comp, p)
    data = json.loads(p.read_text())
    schema = json.loads((ROOT / "code" / "treckit" / "compare" / "schema.json").read_text())
    jsonschema.validate(data, schema)
    assert list(data)[:6] == ["schema_version", "k", "corpus_digest", "queries_digest", "qrels_digest", "systems"]
    bad = dict(data, schema_version="0.9")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_outputs_byte_identical_across_runs_and_hash_seeds(tmp_path):
    data = ROOT / "data" / "quest_sample"
    args = [sys.executable, "-m", "treckit", "compare", str(tmp_path / "q"), str(tmp_path / "a.trec"), str(tmp_path / "b.trec"),
            "-m", "map", "-m", "nDCG@10", "--permutations", "3000"]
    subprocess.run([sys.executable, "-m", "treckit", "qrels", str(data / "test.jsonl"), "-o", str(tmp_path / "q")], check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "treckit", "run", str(data / "bm25_predictions.jsonl"), "--gold", str(data / "test.jsonl"),
                    "-o", str(tmp_path / "a.trec")], check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "treckit", "run", str(data / "dense_predictions.jsonl"), "-o", str(tmp_path / "b.trec")],
                   check=True, capture_output=True)
    outs = []
    for seed in ("0", "1", "123"):
        d = tmp_path / seed
        d.mkdir()
        env = dict(os.environ, PYTHONHASHSEED=seed)
        r = subprocess.run(args + ["--out", str(d / "c.json"), "--csv", str(d / "c.csv")], env=env, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        outs.append(((d / "c.json").read_bytes(), (d / "c.csv").read_bytes()))
    assert outs[0] == outs[1] == outs[2]
    header = outs[0][1].decode().splitlines()[0]
    assert header == "qid,system,map,nDCG@10,hits"


def test_plot_is_a_png_of_the_expected_size(tmp_path):
    qrels, systems = small_systems()
    comp = compare(qrels, systems, ["map", "P.1", "recall.2"], CompareOptions(permutations=200, resamples=200))
    p = tmp_path / "d.png"
    report.plot(comp, p)
    raw = p.read_bytes()
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", raw[16:24])
    assert (width, height) == (800, 750)


def test_markdown_and_latex_reports():
    qrels, systems = small_systems()
    comp = compare(qrels, systems, ["map"], CompareOptions(permutations=200, resamples=200))
    md = report.markdown(comp, {f"q{i}": "even" if i % 2 == 0 else "odd" for i in range(12)})
    assert "| base |" in md and "## By query type" in md and "| even | 6 |" in md
    tex = report.latex(comp)
    assert tex.count("\\\\") >= 3 and "\\toprule" in tex


def test_trec_eval_data_against_a_perturbed_copy(shared, tmp_path, capsys):
    from treckit.evaluation import evaluate
    rows = [line.split("\t") for line in (shared / "trec_eval" / "results.test").read_text().splitlines()]
    # a real change: every doc of query 301 scored as its negation (its ranking reversed), new tag
    out = ["\t".join(f[:4] + [str(-float(f[4])) if f[0] == "301" else f[4], "PERTURBED"]) for f in rows]
    (tmp_path / "perturbed").write_text("\n".join(out) + "\n")
    qrels = shared / "trec_eval" / "qrels.test"
    code, text, err = run_cli(["compare", str(qrels), str(shared / "trec_eval" / "results.test"), str(tmp_path / "perturbed"),
                               "-m", "map", "-m", "P.10", "--out", str(tmp_path / "c.json")], capsys)
    assert code == 0, err
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["systems"]["STANDARD"]["metrics"]["macro"]["map"] == pytest.approx(0.1785, abs=5e-5)   # out.test
    assert data["systems"]["STANDARD"]["metrics"]["macro"]["P_10"] == pytest.approx(0.3000, abs=5e-5)
    base = evaluate(qrels, shared / "trec_eval" / "results.test", ["map"]).set_index("qid")["map"]
    pert = evaluate(qrels, tmp_path / "perturbed", ["map"]).set_index("qid")["map"]
    rows = {r["qid"]: r for r in data["per_query"]}
    assert rows["301"]["delta"]["PERTURBED"]["map"] == pytest.approx(pert["301"] - base["301"])
    assert rows["302"]["delta"]["PERTURBED"]["map"] == 0.0 and pert["301"] != base["301"]
    wtl = data["delta"]["win_tie_loss"]["PERTURBED"]["map"]
    assert wtl["tie"] == 2 and wtl["win"] + wtl["loss"] == 1


def test_configs_digest_ignores_formatting(tmp_path):
    (tmp_path / "run.trec").write_text("q 0 a 1 1.0 x\n")
    (tmp_path / "a.yaml").write_text("name: sysA\nrun: run.trec\n")
    (tmp_path / "b.yaml").write_text("# same, reformatted\nrun:   'run.trec'\nname:  sysA\n")
    a, b = load_config(tmp_path / "a.yaml"), load_config(tmp_path / "b.yaml")
    assert a.config_digest == b.config_digest == content_digest({"name": "sysA", "run": "run.trec"})
    assert a.run_path == tmp_path / "run.trec"


def test_rq_eval_wrapper(tmp_path):
    (tmp_path / "q.tsv").write_text("1\tfirst query\n2\tsecond\n")
    (tmp_path / "truth.tsv").write_text("1\td1\t2\n1\td2\t1\n2\td3\t1\n")
    (tmp_path / "a.trec").write_text("1 Q0 d2 1 1.0 a\n1 Q0 d1 2 1.0 a\n2 Q0 dx 1 2.0 a\n2 Q0 d3 2 1.0 a\n")
    (tmp_path / "b.trec").write_text("1 Q0 d1 1 3.0 b\n1 Q0 d2 2 2.0 b\n2 Q0 d3 1 2.0 b\n")
    (tmp_path / "A.yaml").write_text("run: a.trec\n")
    (tmp_path / "B.yaml").write_text("run: b.trec\n")
    r = subprocess.run([sys.executable, str(ROOT / "code" / "evaluation" / "rq_eval.py"), "--queries", str(tmp_path / "q.tsv"),
                        "--truth", str(tmp_path / "truth.tsv"), "--configA", str(tmp_path / "A.yaml"), "--configB",
                        str(tmp_path / "B.yaml"), "--k", "1", "--out", str(tmp_path / "o.json"), "--csv", str(tmp_path / "o.csv")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    data = json.loads((tmp_path / "o.json").read_text())
    a = data["systems"]["A"]["metrics"]["macro"]
    # A, query 1: d1 and d2 tie at 1.0; doc id ascending puts d1 (grade 2) first: ndcg@1 = 1, recall@1 = 1/2, mrr = 1
    # A, query 2: dx first: all 0
    assert a == {"recall": 0.25, "mrr": 0.5, "ndcg": 0.5}
    assert data["systems"]["B"]["metrics"]["macro"] == {"recall": 0.75, "mrr": 1.0, "ndcg": 1.0}
    assert data["queries_digest"] and data["corpus_digest"] is None


def test_exit_codes(tmp_path, capsys):
    code, _, err = run_cli(["compare", str(tmp_path / "nope"), str(tmp_path / "a")], capsys)
    assert code == 2
    qrels = tmp_path / "q"
    qrels.write_text("q 0 a 1\n")
    (tmp_path / "a").write_text("q Q0 a 1 1.0 x\n")
    code, _, err = run_cli(["compare", str(qrels), str(tmp_path / "a")], capsys)
    assert code == 2 and "at least two runs" in err
