"""Comparison: statistics against scipy and brute force, stable bytes, the schema, reports (the old A/B
command: test_rq_eval.py)."""
from __future__ import annotations

import itertools
import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from helpers import ROOT, run_cli, significance_row
from treckit import thresholds
from treckit.compare import stats
from treckit.console.errors import InputError
from treckit.compare.compare import CompareOptions, ComparedRun, compare
from treckit.inputs.sources import content_digest
from treckit.compare.config import load_config
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


def _equal_to_scipy(a: np.ndarray, b: np.ndarray) -> None:
    from scipy import stats as ss
    t, ref = stats.paired_t(a, b), ss.ttest_rel(b, a)
    assert (t.statistic, t.p_value) == (float(ref.statistic), float(ref.pvalue))
    w, ref = stats.wilcoxon(a, b), ss.wilcoxon(b, a)
    assert (w.statistic, w.p_value) == (float(ref.statistic), float(ref.pvalue))


@pytest.mark.parametrize("n", [51, 52, 64, 257, 1000, 7000, 20011])
@pytest.mark.parametrize("shape", ["continuous", "two decimals", "mostly equal"])
def test_t_test_and_wilcoxon_from_scipy_special_equal_scipy_stats_bit_for_bit(n, shape):
    """Above 50 queries both tests are computed from scipy.special's distributions (scipy.stats is not
    imported): the same statistics and p-values, to the last bit, with ties among the deltas and zero deltas."""
    rng = np.random.default_rng(n)
    for _ in range(4):
        a = rng.random(n)
        b = a + rng.normal(rng.normal(0, 0.02), 0.1, n)
        if shape != "continuous":
            a, b = np.round(a, 2), np.round(b, 2)           # many equal |deltas|, and some deltas 0
        if shape == "mostly equal":
            keep = rng.random(n) < 0.1
            b = np.where(keep, b, a)
        _equal_to_scipy(a, b)
        _equal_to_scipy(b, a)
        _equal_to_scipy(a[::-1].copy(), b[::-1].copy())


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=51, max_size=120))
def test_t_test_and_wilcoxon_equal_scipy_on_any_grades(pairs):
    a, b = (np.array(x, np.float64) / 20 for x in zip(*pairs))
    if np.all(a - b == (a - b)[0]) or not np.any(a != b):
        return                                         # no variation, or no nonzero delta: not scipy's to answer
    _equal_to_scipy(a, b)


def test_t_test_and_wilcoxon_do_not_import_scipy_stats():
    """scipy.stats costs about a second of imports: a comparison of more than 50 queries does without it."""
    code = ("import sys, numpy as np; from treckit.compare import stats; r = np.random.default_rng(1); "
            "a = r.random(300); b = a + r.normal(0, 0.1, 300); stats.paired_t(a, b); stats.wilcoxon(a, b); "
            "print('scipy.stats' in sys.modules, 'scipy.special' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "code")}).stdout
    assert out.split() == ["False", "True"]


def test_randomization_exact_equals_brute_force():
    a, b = A[:9], B[:9]
    d = b - a
    obs = abs(d.sum())
    hits = sum(abs(sum(s * x for s, x in zip(signs, d))) >= obs - 1e-12
               for signs in itertools.product((1, -1), repeat=d.size))
    r = stats.randomization(a, b)
    assert r.detail["method"] == "exact" and r.p_value == hits / 2 ** d.size


def _exact_sign_flip_p(d: np.ndarray) -> float:
    """Brute force: every one of the 2**n sign assignments, as a matrix."""
    n = d.size
    signs = ((np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1) * 2 - 1
    return float(np.count_nonzero(np.abs(signs @ d) >= abs(d.sum()) - 1e-12)) / 2 ** n


def test_randomization_monte_carlo_is_seeded_and_close_to_exact():
    a, b = A[:18], B[:18]                         # 18 differing queries: Monte Carlo (exact up to 16)
    assert np.count_nonzero(b - a) == 18
    exact = _exact_sign_flip_p(b - a)
    r1 = stats.randomization(a, b, permutations=40000, seed=7)
    r2 = stats.randomization(a, b, permutations=40000, seed=7)
    assert r1.detail["method"] == "monte-carlo" and r1.p_value == r2.p_value
    # the binomial standard error of the estimate is sqrt(p(1-p)/N) < 0.0025: 4 of them
    assert abs(r1.p_value - exact) < 0.01
    assert stats.randomization(a, b, permutations=40000, seed=8).p_value != r1.p_value


@pytest.mark.parametrize("cells", [None, 7 * (4 + 8 * 3)])      # the second: blocks of 7 assignments
def test_randomization_ignores_zero_deltas_and_batches_like_single_tests(monkeypatch, cells):
    if cells:
        monkeypatch.setattr(thresholds, "RESAMPLE_DRAW_CELLS", cells)
    block = thresholds.RESAMPLE_DRAW_CELLS // (4 + 8 * 3)
    a, b = A[:12], B[:12]
    padded = stats.randomization(np.r_[a, np.full(30, 0.5)], np.r_[b, np.full(30, 0.5)])   # 30 ties added
    assert padded.detail == {"method": "exact", "assignments": 2 ** 12}
    assert padded.p_value == _exact_sign_flip_p(b - a)
    d = np.stack([B - A, (B - A) * 0.5 + 0.01, np.r_[B - A][::-1]], axis=1)
    many = stats.randomization_many(d, permutations=3000, seed=5)
    single = [stats.randomization(np.zeros(25), d[:, j], permutations=3000, seed=5) for j in range(3)]
    assert [r.p_value for r in many] == [r.p_value for r in single]
    # by hand: the same random bytes, bit i of byte g = the sign of query 8g + i
    rng = np.random.default_rng(5)
    raw = np.concatenate([np.frombuffer(rng.bytes(min(block, 3000 - s) * 4), np.uint8) for s in range(0, 3000, block)])
    bits = np.unpackbits(raw.reshape(3000, 4), axis=1, bitorder="little")[:, :25]
    sums = (bits * 2.0 - 1) @ d
    hits = (np.abs(sums) >= np.abs(d.sum(axis=0)) - 1e-9).sum(axis=0)
    assert [r.p_value for r in many] == pytest.approx((hits + 1) / 3001)
    assert all(1 / 3001 <= r.p_value <= 1 for r in many)


@pytest.mark.parametrize("cells", [thresholds.RESAMPLE_DRAW_CELLS, 60])       # 60: blocks of 2 resamples (the bound on large inputs)
def test_bootstrap_p_value_and_interval_by_hand(monkeypatch, cells):
    """The resamples redrawn here with the same seed: interval = order statistics, p = the smallest
    level at which that interval excludes 0, so p < alpha exactly when the interval excludes 0."""
    import math
    monkeypatch.setattr(thresholds, "RESAMPLE_DRAW_CELLS", cells)
    d = B - A
    n, R, seed = d.size, 3000, 11
    rows = min(thresholds.RESAMPLE_DRAW_BLOCK, max(1, cells // n))
    rng = np.random.default_rng(seed)
    means = np.concatenate([d[rng.integers(0, n, size=(min(rows, R - s), n), dtype=np.int32)].mean(axis=1)
                            for s in range(0, R, rows)])
    for alpha in (0.05, 0.1, 0.2):
        r = stats.bootstrap_ci(A, B, resamples=R, seed=seed, alpha=alpha)
        j = math.ceil(alpha * (R + 1) / 2) - 1
        s = np.sort(means)
        assert r.detail["ci_low"] == pytest.approx(s[j - 1], abs=1e-12)
        assert r.detail["ci_high"] == pytest.approx(s[R - j], abs=1e-12)
        p = min(1.0, 2 * (1 + min((means <= 0).sum(), (means >= 0).sum())) / (R + 1))
        assert r.p_value == pytest.approx(p)
        assert (r.p_value < alpha) == (r.detail["ci_low"] > 0 or r.detail["ci_high"] < 0)
    # a system worse on purpose: the interval is below 0 and p small
    w = stats.bootstrap_ci(B, A, resamples=R, seed=seed)
    assert w.detail["ci_high"] < 0 and w.p_value < 0.05 and w.p_value >= 2 / (R + 1)


@pytest.mark.parametrize("count_cells", [1, 25 * 3, 25 * 1000])    # one draw per count, 3 (a short last one), a block
@pytest.mark.parametrize("draw_cells", [thresholds.RESAMPLE_DRAW_CELLS, 25 * 7])     # blocks of 1000 draws, of 7
def test_bootstrap_sums_are_those_of_one_count_per_draw(monkeypatch, count_cells, draw_cells):
    """Counted a few draws at a time or one at a time, the counts are the same integers and each block's sums
    the same matrix product: the same bits (the bootstrap's intervals and p-values do not move)."""
    d = np.stack([B - A, A - B, (B - A) * 2], axis=1)
    n, R, seed = 25, 2500, 4
    monkeypatch.setattr(thresholds, "RESAMPLE_DRAW_CELLS", draw_cells)
    rows = min(thresholds.RESAMPLE_DRAW_BLOCK, max(1, draw_cells // n))
    rng = np.random.default_rng(seed)
    by_draw = []
    for start in range(0, R, rows):
        picks = rng.integers(0, n, size=(min(rows, R - start), n), dtype=np.int32)
        by_draw.append(np.stack([np.bincount(p, minlength=n) for p in picks]).astype(np.float64) @ d)
    by_draw = np.concatenate(by_draw)
    monkeypatch.setattr(thresholds, "RESAMPLE_COUNT_CELLS", count_cells)
    sums = stats.resample_sums(d, R, seed)
    assert sums.shape == (R, 3) and np.array_equal(sums, by_draw)
    monkeypatch.setattr(thresholds, "RESAMPLE_COUNT_CELLS", 1)
    one_at_a_time = [r.as_dict() for r in stats.bootstrap_many(d, resamples=R, seed=seed)]
    monkeypatch.setattr(thresholds, "RESAMPLE_COUNT_CELLS", count_cells)
    assert [r.as_dict() for r in stats.bootstrap_many(d, resamples=R, seed=seed)] == one_at_a_time


def test_bootstrap_duality_holds_on_random_cases():
    rng = np.random.default_rng(9)
    for _ in range(40):
        n = int(rng.integers(3, 40))
        d = np.round(rng.normal(rng.normal(0, 0.05), 0.1, n), 2)
        alpha = float(rng.choice([0.01, 0.05, 0.1]))
        r = stats.bootstrap_ci(np.zeros(n), d, resamples=int(rng.integers(200, 2000)), seed=int(rng.integers(0, 99)), alpha=alpha)
        assert (r.p_value < alpha) == (r.detail["ci_low"] > 0 or r.detail["ci_high"] < 0)


def test_bootstrap_with_too_few_resamples_claims_nothing():
    r = stats.bootstrap_ci(A, B + 1.0, resamples=30, seed=1)           # every resample is > 0
    assert r.detail["ci_low"] is None and r.detail["ci_high"] is None and "too few resamples" in r.detail["note"]
    assert r.p_value == pytest.approx(2 / 31) and r.p_value > 0.05
    zero = stats.bootstrap_ci(A, A, resamples=500)
    assert zero.p_value == 1.0 and zero.detail["ci_low"] == zero.detail["ci_high"] == 0.0
    one = stats.bootstrap_ci(A[:1], A[:1] + 0.5, resamples=500)       # a single query resamples to itself
    assert one.p_value is None and one.detail["ci_low"] is None and "at least 2 queries" in one.detail["note"]


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
    return qrels, [ComparedRun("base", base), ComparedRun("better", better)]


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
    from treckit.api import evaluate
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


def test_exit_codes(tmp_path, capsys):
    code, _, err = run_cli(["compare", str(tmp_path / "nope"), str(tmp_path / "a")], capsys)
    assert code == 2
    qrels = tmp_path / "q"
    qrels.write_text("q 0 a 1\n")
    (tmp_path / "a").write_text("q Q0 a 1 1.0 x\n")
    code, _, err = run_cli(["compare", str(qrels), str(tmp_path / "a")], capsys)
    assert code == 2 and "at least two runs" in err


# ---------------------------------------------------------------- one rule for "significant"
def test_every_test_is_significant_by_its_adjusted_p():
    qrels, systems = small_systems()
    comp = compare(qrels, systems, ["map", "P.1", "recall.2"],
                   CompareOptions(tests=stats.TESTS, permutations=500, resamples=500))
    by_test = {}
    for r in comp.tests:
        by_test.setdefault(r["test"], []).append(r)
        assert r["p_adjusted"] is not None or r["p_value"] is None
        assert r["significant"] == (None if r["p_adjusted"] is None else r["p_adjusted"] < 0.05)
        assert (r["correction"], r["adjusted_by"], r["decided_by"]) == ("holm", "holm", "p_adjusted")
    assert set(by_test) == {"t-test", "wilcoxon", "randomization", "bootstrap"}
    for rows in by_test.values():                 # Holm within each test over the 3 comparisons, by hand
        ps = [r["p_value"] for r in rows]
        order = np.argsort(ps, kind="stable")
        adj, running = [0.0] * 3, 0.0
        for rank, i in enumerate(order):
            running = max(running, min(1.0, (3 - rank) * ps[i]))
            adj[i] = running
        assert [r["p_adjusted"] for r in rows] == pytest.approx(adj)
    boot = by_test["bootstrap"][0]
    assert boot["confidence"] == 0.95 and boot["ci_low"] is not None


def test_the_default_test_is_the_paired_t_test_and_the_correction_names_the_p_that_decides():
    """Only the t-test runs unless others are asked for.  --correction none: the raw p decides and Holm's
    adjusted p is shown beside it; bonferroni: p times the number of comparisons decides."""
    from scipy import stats as ss
    qrels, systems = small_systems()
    measures = ["map", "P.1", "recall.2"]
    raw = {}
    for correction in ("none", "holm", "bonferroni"):
        comp = compare(qrels, systems, measures, CompareOptions(correction=correction))
        assert [r["test"] for r in comp.tests] == ["t-test"] * 3
        ps = [r["p_value"] for r in comp.tests]
        for m, r in zip(measures, comp.tests):
            ref = ss.ttest_rel(comp.column("better", r["measure"]), comp.column("base", r["measure"]))
            assert r["p_value"] == ref.pvalue
        order = np.argsort(ps, kind="stable")
        holm, running = [0.0] * 3, 0.0
        for rank, i in enumerate(order):
            running = max(running, min(1.0, (3 - rank) * ps[i]))
            holm[i] = running
        adjusted = [min(1.0, 3 * p) for p in ps] if correction == "bonferroni" else holm
        assert [r["p_adjusted"] for r in comp.tests] == pytest.approx(adjusted)
        deciding = ps if correction == "none" else adjusted
        assert [r["significant"] for r in comp.tests] == [p < 0.05 for p in deciding]
        assert {(r["correction"], r["adjusted_by"], r["decided_by"]) for r in comp.tests} == {
            (correction, "bonferroni" if correction == "bonferroni" else "holm",
             "p_value" if correction == "none" else "p_adjusted")}
        record = report.to_record(comp)
        assert record["significance"]["rule"] == ("p_value < alpha" if correction == "none" else "p_adjusted < alpha")
        assert record["significance"]["test"] == "t-test"
        raw[correction] = ps
    assert raw["none"] == raw["holm"] == raw["bonferroni"]


@pytest.mark.parametrize("correction, decides", [("none", "t-test, raw p < 0.05"), ("holm", "t-test, p holm < 0.05"),
                                                 ("bonferroni", "t-test, p bonferroni < 0.05")])
def test_every_output_names_the_test_and_the_p_that_decides(correction, decides):
    qrels, systems = small_systems()
    comp = compare(qrels, systems, ["map", "P.1"], CompareOptions(correction=correction))
    adjusted = "bonferroni" if correction == "bonferroni" else "holm"
    assert f"\u2020 significant vs base: {decides}" in report.table(comp, width=200)
    assert f"\u2020 = significant: {decides}; p {adjusted}: adjusted over 2 comparisons" in report.markdown(comp)
    assert f"significant against base: {decides}" in report.latex(comp)
    sig = report.to_record(comp)["significance"]
    assert (sig["test"], sig["correction"], sig["adjusted_by"]) == ("t-test", correction, adjusted)
    assert sig["statement"].startswith(decides) and sig["rule"] == ("p_value < alpha" if correction == "none"
                                                                    else "p_adjusted < alpha")


def _holm(ps: list[float]) -> list[float]:
    order = np.argsort(ps, kind="stable")
    out, running = [0.0] * len(ps), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(ps) - rank) * ps[i]))
        out[i] = running
    return out


def test_the_seeds_ab_decides_on_the_raw_t_test_p_of_ndcg_at_10(tmp_path, capsys):
    """Seed 004's A/B as written: config A {fusion_method: rrf, rrf_k: 60}, config B {fusion_method: weighted,
    weights: {bm25: 0.3, splade: 0.4, dense: 0.3}} on a test set; the paired t-test on ndcg_at_10 (gain 2^grade - 1)
    gives the mean difference, t and p, and p < 0.05 decides, with Holm's p over the three measures beside it."""
    import jsonschema
    from scipy import stats as ss
    from treckit import write_run
    from treckit.retrieval.bow import BowRetriever
    from treckit.retrieval.corpus import read_corpus
    from treckit.retrieval.ranking import run_from_rankings
    from treckit.testsets import load_test_set

    ts_path = ROOT / "data" / "test_sets" / "clinical_v1.yaml"
    docs = ROOT / "data" / "test_sets" / "documents.jsonl"
    ts = load_test_set(ts_path)
    bow = BowRetriever(read_corpus(docs))                 # stand-ins for the seed's SPLADE and dense runs
    write_run(run_from_rankings({q.query_id: bow.retrieve(q.query_text, 20) for q in ts.queries}), tmp_path / "splade.trec")
    write_run(run_from_rankings({q.query_id: bow.retrieve(q.query_text, 5) for q in ts.queries}), tmp_path / "dense.trec")
    common = (f"corpus: {docs}\ncomponents:\n  bm25: {{method: bm25}}\n  splade: {{run: splade.trec}}\n"
              "  dense: {run: dense.trec}\n")
    (tmp_path / "A.yaml").write_text("name: A\n" + common + "fusion_method: rrf\nrrf_k: 60\n")
    (tmp_path / "B.yaml").write_text("name: B\n" + common + "fusion_method: weighted\n"
                                     "weights: {bm25: 0.3, splade: 0.4, dense: 0.3}\n")
    code, out, err = run_cli(["compare", "--test-set", ts_path, "--config", tmp_path / "A.yaml", "--config",
                              tmp_path / "B.yaml", "--out", tmp_path / "ab.json"], capsys)
    assert code == 0, err
    d = json.loads((tmp_path / "ab.json").read_text())
    jsonschema.validate(d, json.loads((ROOT / "code" / "treckit" / "compare" / "schema.json").read_text()))
    assert d["definitions"]["ndcg_at_10"]["gain"] == "exp"
    measures = ["ndcg_at_10", "recall_at_10", "mrr"]
    assert [(t["measure"], t["test"]) for t in d["tests"]] == [(m, "t-test") for m in measures]
    refs = [ss.ttest_rel([r["B"][m] for r in d["per_query"]], [r["A"][m] for r in d["per_query"]]) for m in measures]
    holm = _holm([float(r.pvalue) for r in refs])
    ab = d["ab_test"]
    assert (ab["measure"], ab["test"], ab["decided_by"], ab["alpha"]) == ("ndcg_at_10", "t-test", "p_value", 0.05)
    b = ab["systems"]["B"]
    assert b["statistic"] == pytest.approx(refs[0].statistic) and b["p_value"] == pytest.approx(refs[0].pvalue)
    assert b["p_adjusted"] == pytest.approx(holm[0]) and b["adjusted_by"] == "holm"
    assert b["significant"] == (refs[0].pvalue < 0.05)
    assert b["mean_difference"] == pytest.approx(d["delta"]["macro"]["B"]["ndcg_at_10"])
    assert [t["significant"] for t in d["tests"]] == [r.pvalue < 0.05 for r in refs]    # the raw p, every measure
    assert d["significance"]["rule"] == "p_value < alpha" and d["significance"]["correction"] == "none"
    verdict = "significant" if b["significant"] else "not significant"
    assert (f"A/B on ndcg_at_10: B - A {b['mean_difference']:+.4f}, t-test statistic {b['statistic']:.4f}, p "
            f"{b['p_value']:.4f} {'<' if b['significant'] else '>='} 0.05: {verdict} (p holm {b['p_adjusted']:.4f})") in out
    assert "\u2020 significant vs A: t-test, raw p < 0.05" in out


def test_a_plain_compare_keeps_holm_and_says_how_to_get_the_seeds_rule(capsys):
    """On the sample, the dense run's nDCG@10 gain has t-test p 0.0445: not significant after Holm over two measures
    (0.0890), which the output says with the option that gives the seed's rule; --correction none makes it so."""
    sample = ROOT / "data" / "quest_sample"
    argv = ["compare", sample / "test.jsonl", sample / "bm25_predictions.jsonl", sample / "dense_predictions.jsonl",
            "--gold", sample / "test.jsonl", "--name", "bm25", "--name", "dense", "-m", "ndcg_cut.10", "-m", "recip_rank"]
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    assert "\u2020 significant vs bm25: t-test, p holm < 0.05" in out and "--correction none: the raw p decides" in out
    line = significance_row(out, "ndcg_cut_10")
    assert "0.0445" in line and "0.0890" in line and line.endswith("no")
    assert "A/B on" not in out
    code, out, err = run_cli([*argv, "--correction", "none"], capsys)
    assert code == 0, err
    assert "\u2020 significant vs bm25: t-test, raw p < 0.05" in out and "the raw p decides" not in out
    line = significance_row(out, "ndcg_cut_10")
    assert "0.0445" in line and "0.0890" in line and line.endswith("yes")
    assert any(x.startswith("│ dense") and "0.7162\u2020" in x for x in out.splitlines())


@pytest.mark.parametrize("argv, text", [
    (["--permutations", "-5"], "--permutations"), (["--resamples", "0"], "--resamples"),
    (["--resamples", "1"], "--resamples"), (["--alpha", "2"], "--alpha"), (["--alpha", "0"], "--alpha"),
    (["--k", "0"], "--k"), (["--seed", "-1"], "--seed"), (["--test", "bogus"], "--test"),
    (["--correction", "bogus"], "--correction"), (["--plot", "x.gif"], "--plot")])
def test_options_are_validated(tmp_path, capsys, argv, text):
    (tmp_path / "q").write_text("q 0 a 1\n")
    (tmp_path / "a").write_text("q Q0 a 1 1.0 x\n")
    (tmp_path / "b").write_text("q Q0 a 1 1.0 y\n")
    code, out, err = run_cli(["compare", str(tmp_path / "q"), str(tmp_path / "a"), str(tmp_path / "b"), *argv], capsys)
    assert code == 2 and text in err and "Traceback" not in err and "internal error" not in err


@pytest.mark.parametrize("bad", [dict(permutations=-5), dict(resamples=1), dict(alpha=2.0), dict(alpha=0.0),
                                 dict(k=0), dict(seed=-1), dict(tests=("bogus",)), dict(correction="fdr")])
def test_options_are_validated_in_the_api(bad):
    from treckit.console.errors import InputError
    with pytest.raises(InputError):
        CompareOptions(**bad)
    assert CompareOptions(k=np.int64(3), permutations=np.int32(500), alpha=np.float64(0.1)).k == 3
    assert CompareOptions(tests=("bootstrap", "t-test", "bootstrap")).tests == ("bootstrap", "t-test")


# ---------------------------------------------------------------- one evaluation per run
def test_each_run_is_read_and_evaluated_once(monkeypatch):
    import treckit.compare.compare as ev          # the comparison's scorer calls the engine from there
    calls = []
    real = ev.evaluate_requests
    monkeypatch.setattr(ev, "evaluate_requests", lambda *a, **k: calls.append(1) or real(*a, **k))
    qrels, (base, better) = small_systems()
    loads = []
    systems = [ComparedRun(None, None, "base.trec", load=lambda: loads.append("b") or base.run),
               ComparedRun(None, None, "better.trec", load=lambda: loads.append("r") or better.run),
               ComparedRun("third", better.run)]
    comp = compare(qrels, systems, ["map", "P.1"], CompareOptions(permutations=200, resamples=200))
    assert len(calls) == 3 and loads == ["b", "r"]
    assert [s.name for s in comp.systems] == ["base", "better", "third"]      # file names: the tags coincide


def test_hits_equal_a_brute_force_ranking(shared):
    """Relevant docs in the top k, read off the engine's ranking, against a plain sort of the run
    (score descending, then docno descending: trec_eval's order)."""
    from treckit.api import read_qrels, read_run
    qrels = read_qrels(shared / "trec_eval" / "qrels.test")
    run = read_run(shared / "trec_eval" / "results.test")
    comp = compare(qrels, [ComparedRun("a", run), ComparedRun("b", run)], ["map"], CompareOptions(k=20, tests=("t-test",)))
    rel = {(q, d) for q, d, g in zip(*(qrels.table.column(c).to_pylist() for c in ("qid", "docid", "grade"))) if g >= 1}
    rows = sorted(zip(*(run.table.column(c).to_pylist() for c in ("qid", "docid", "score"))),
                  key=lambda r: (r[0], -r[2], [-b for b in r[1].encode()]))
    expected: dict = {}
    for q, d, _ in rows:
        expected.setdefault(q, []).append(d)
    for i, q in enumerate(comp.qids):
        assert comp.hits["a"][i] == [d for d in expected.get(q, [])[:20] if (q, d) in rel]
    assert sum(map(len, comp.hits["a"])) > 0


# ---------------------------------------------------------------- outputs
def test_json_to_stdout_and_table_to_stderr(tmp_path, capsys):
    qrels, runs = _files(tmp_path)
    code, out, err = run_cli(["compare", qrels, *runs, "-m", "map", "--out", "-", "--permutations", "200",
                              "--resamples", "200", "--test", "t-test", "--test", "bootstrap"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert list(data["systems"]) == ["base", "better"] and "mean over 12 queries" in err and "┃" in err
    import jsonschema
    jsonschema.validate(data, json.loads((ROOT / "code" / "treckit" / "compare" / "schema.json").read_text()))
    boot = next(r for r in data["tests"] if r["test"] == "bootstrap")
    assert boot["p_adjusted"] is not None and boot["significant"] == (boot["p_adjusted"] < 0.05)
    import hashlib
    assert data["systems"]["better"]["run_digest"] == hashlib.sha256(open(runs[1], "rb").read()).hexdigest()
    assert data["qrels_digest"] == hashlib.sha256(open(qrels, "rb").read()).hexdigest()


def _files(tmp_path):
    qrels, (base, better) = small_systems()
    from treckit.api import write_qrels, write_run
    write_qrels(qrels, tmp_path / "q")
    write_run(base.run, tmp_path / "base.trec", tag="base")
    write_run(better.run, tmp_path / "better.trec", tag="better")
    return str(tmp_path / "q"), [str(tmp_path / "base.trec"), str(tmp_path / "better.trec")]


def test_reports_show_every_test_with_raw_and_adjusted_p_ci_and_effect_size():
    qrels, systems = small_systems()
    comp = compare(qrels, systems, ["map"], CompareOptions(tests=stats.TESTS, permutations=300, resamples=300))
    md = report.markdown(comp)
    console = report.table(comp, width=200)
    assert "| measure | system | test | statistic | p | p holm | CI of the delta | effect size d | significant |" in md
    for r in comp.tests:
        cells = [r["test"], f"{r['p_value']:.4f}", f"{r['p_adjusted']:.4f}", f"{r['effect_size']:.3f}"]
        line = next(x for x in md.splitlines() if x.startswith(f"| map | better | {r['test']} |"))
        assert all(c in line for c in cells), line
        cline = next(x for x in console.splitlines() if f" {r['test']} " in x and "better" in x)
        assert all(c in cline for c in cells), cline
        if r["test"] == "bootstrap":
            ci = f"[{r['ci_low']:+.4f}, {r['ci_high']:+.4f}]"
            assert ci in line and ci in cline


def test_markdown_and_latex_escape_special_characters():
    qrels, (base, better) = small_systems()
    comp = compare(qrels, [ComparedRun("a|b\\c", base.run), ComparedRun("x_y&z%$#{}~^\\w", better.run)], ["P.1"],
                   CompareOptions(permutations=200, resamples=200))
    md = report.markdown(comp)
    assert "| a\\|b\\\\c |" in md and "a|b" not in md.replace("a\\|b", "")
    row = next(x for x in md.splitlines() if x.startswith("| a"))
    assert len(row.replace("\\|", "").split("|")) == 4           # system cell + one measure cell: 3 real pipes
    tex = report.latex(comp)
    assert r"x\_y\&z\%\$\#\{\}\textasciitilde{}\textasciicircum{}\textbackslash{}w" in tex
    assert r"a|b\textbackslash{}c" in tex and "P\\_1" in tex


@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG\r\n\x1a\n"), (".pdf", b"%PDF-"), (".svg", b"<?xml")])
def test_plot_formats_are_byte_identical_across_processes(tmp_path, suffix, magic):
    qrels, runs = _files(tmp_path)
    outs = []
    for seed in ("0", "7"):
        p = tmp_path / f"p{seed}{suffix}"
        r = subprocess.run([sys.executable, "-m", "treckit", "compare", qrels, *runs, "-m", "map", "--permutations", "200",
                            "--resamples", "200", "--plot", str(p)], env=dict(os.environ, PYTHONHASHSEED=seed),
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        outs.append(p.read_bytes())
    assert outs[0] == outs[1] and outs[0].startswith(magic)
    if suffix == ".svg":                 # text kept as text: the axes name the queries
        svg = outs[0].decode()
        assert "query id" in svg and all(f">q{i}<" in svg for i in range(12))


def test_plot_axes_name_the_queries_in_delta_order():
    qrels, systems = small_systems()
    comp = compare(qrels, systems, ["P.1"], CompareOptions(permutations=200, resamples=200))
    svg = report.plot_bytes(comp, "svg").decode()
    d = comp.column("better", "P_1") - comp.column("base", "P_1")
    expected = [comp.qids[i] for i in np.argsort(d, kind="stable")]
    import re
    labels = [m for m in re.findall(r">(q\d+)<", svg)]
    assert labels == expected


def test_title_breaks_only_between_phrases(tmp_path):
    qrels, systems = small_systems()
    comp = compare(qrels, systems, ["map"], CompareOptions(permutations=200, resamples=200))
    text = report.table(comp, width=60)
    first = text.splitlines()[:5]
    assert first == ["mean over 12 queries", "every judged query (one a run misses scores 0)",
                     "\u2020 significant vs base: t-test, p holm < 0.05",
                     "p holm: adjusted over 1 comparison",
                     "--correction none: the raw p decides (seed 004's A/B)"]
    assert report.title_lines(["aa bb", "cc"], 9) == ["aa bb; cc"] and report.title_lines(["aa bb", "cc"], 8) == ["aa bb", "cc"]


def test_a_missing_corpus_is_named_before_any_run_is_read(tmp_path, capsys, monkeypatch):
    qrels, runs = _files(tmp_path)
    import treckit.api as api
    monkeypatch.setattr(api, "read_run", lambda *a, **k: pytest.fail("a run was read"))
    code, _, err = run_cli(["compare", qrels, *runs, "--corpus", str(tmp_path / "nope.jsonl")], capsys)
    assert code == 2 and "nope.jsonl" in err and "no such file" in err


def test_narrow_console_lists_each_test_without_breaking_a_field():
    qrels, systems = small_systems()
    comp = compare(qrels, systems, ["map"], CompareOptions(tests=stats.TESTS, permutations=200, resamples=200))
    text = report.table(comp, width=56)            # the longest phrase: 53 characters
    assert max(map(len, text.splitlines())) <= 56
    for r in comp.tests:
        assert f"map / better / {r['test']}" in text and f"p holm {r['p_adjusted']:.4f}" in text
    boot = next(r for r in comp.tests if r["test"] == "bootstrap")
    assert f"CI of the delta [{boot['ci_low']:+.4f}, {boot['ci_high']:+.4f}]" in text


# ---------------------------------------------------------------- systems run from their configs
def _fake_clock_configs(tmp_path) -> None:
    for name, fn in (("A", "search_a"), ("B", "search_b")):
        (tmp_path / f"{name}.yaml").write_text(f"name: {name}\ncomponents:\n  f: {{callable: fakeclock:{fn}}}\n"
                                               "fusion_method: rrf\n")


def test_config_systems_are_warmed_up_and_timed_in_turns(fake_clock, tmp_path, capsys):
    """A costs 250 ms a query and B 500 ms (each a second more on its first call, and the first full-size
    fusion a second more): after the untimed warm-up the systems alternate (A B, B A, ...), each reports
    exactly its own cost, and swapping them flips the delta's sign exactly."""
    from treckit.retrieval.system import WARMUP_QUERIES
    from treckit.testsets import load_test_set
    ts_path = ROOT / "data/test_sets/clinical_v1.yaml"
    texts = [q.query_text for q in load_test_set(ts_path).queries]
    _fake_clock_configs(tmp_path)
    deltas = {}
    for first, second in (("A", "B"), ("B", "A")):
        fake_clock.calls.clear()
        fake_clock.seen.clear()
        out_json = tmp_path / f"{first}{second}.json"
        code, out, err = run_cli(["compare", "--test-set", ts_path, "--config", tmp_path / f"{first}.yaml",
                                  "--config", tmp_path / f"{second}.yaml", "-m", "ndcg_cut.10", "--test", "t-test",
                                  "--out", out_json], capsys)
        assert code == 0, err
        d = json.loads(out_json.read_text())
        for name, ms in (("A", 250.0), ("B", 500.0)):
            assert d["systems"][name]["latency_ms"] == {"p50": ms, "p95": ms, "mean": ms, "iqr": 0.0, "min": ms, "max": ms}
        assert "latency A: p50 250.00 ms, p95 250.00 ms, mean 250.00 ms, IQR 0.00 ms, min 250.00, max 250.00" in out
        deltas[first] = d["delta"]["latency_ms"][second]
        calls = fake_clock.calls
        turns = [(who, t) for r, t in enumerate(texts) for who in ((first, second) if r % 2 == 0 else (second, first))]
        assert [c for c in calls if c != "tick"] == turns[:2 * WARMUP_QUERIES] + turns
        assert calls.index("tick") == 2 * WARMUP_QUERIES                  # the warm-up reads no clock
    assert deltas == {"A": 250.0, "B": -250.0}


def test_a_stall_moves_the_mean_difference_and_not_the_median_one(fake_clock, tmp_path, capsys, monkeypatch):
    """A costs 250 ms a query and B 500 ms, but one of A's calls stalls 10 s (50 queries): the mean difference
    reads 500 - (250 + 10000 / 50) = 50 ms, the median of the per-query differences 250 ms, and both are said."""
    from treckit.testsets import load_test_set
    ts_path = ROOT / "data/test_sets/clinical_v1.yaml"
    stalled_text = load_test_set(ts_path).queries[10].query_text
    search_a = fake_clock.search_a

    def stalling(text):
        if text == stalled_text:
            fake_clock.now += 10.0
        return search_a(text)
    monkeypatch.setattr(fake_clock, "search_a", stalling)
    _fake_clock_configs(tmp_path)
    code, out, err = run_cli(["compare", "--test-set", ts_path, "--config", tmp_path / "A.yaml", "--config",
                              tmp_path / "B.yaml", "-m", "ndcg_cut.10", "--out", tmp_path / "c.json"], capsys)
    assert code == 0, err
    d = json.loads((tmp_path / "c.json").read_text())
    assert d["systems"]["A"]["latency_ms"]["mean"] == pytest.approx(450.0)
    assert d["delta"]["latency_ms"] == {"B": pytest.approx(50.0)} and d["delta"]["latency_median_ms"] == {"B": 250.0}
    assert "(vs A: mean +50.00 ms, median +250.00 ms per query)" in out
    import jsonschema
    jsonschema.validate(d, json.loads((ROOT / "code" / "treckit" / "compare" / "schema.json").read_text()))


def test_config_systems_of_run_files_need_no_queries(tmp_path, capsys):
    """Systems whose components are run files (and their fusion) are measured on the judged queries of
    QRELS without query texts, as `treckit fuse` + `treckit eval -c` measure the same runs."""
    (tmp_path / "qrels").write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 2\nq3 0 d 1\n")
    (tmp_path / "one.trec").write_text("q1 Q0 b 1 3.0 one\nq1 Q0 a 2 2.0 one\nq2 Q0 c 1 1.0 one\nq9 Q0 a 1 1.0 one\n")
    (tmp_path / "two.trec").write_text("q1 Q0 a 1 5.0 two\nq2 Q0 x 1 4.0 two\nq2 Q0 c 2 1.0 two\n")
    (tmp_path / "A.yaml").write_text("name: one\ncomponents:\n  one: {run: one.trec}\n")
    (tmp_path / "B.yaml").write_text("name: rrf\ncomponents:\n  one: {run: one.trec}\n  two: {run: two.trec}\n"
                                     "fusion_method: rrf\nrrf_k: 60\n")
    code, _, err = run_cli(["compare", tmp_path / "qrels", "--config", tmp_path / "A.yaml", "--config", tmp_path / "B.yaml",
                            "-m", "recip_rank", "--test", "t-test", "--out", tmp_path / "c.json"], capsys)
    assert code == 0, err
    d = json.loads((tmp_path / "c.json").read_text())
    assert [row["qid"] for row in d["per_query"]] == ["q1", "q2", "q3"]
    # one: q1 b (score 3) above a -> RR 1/2; q2 c first -> 1; q3 unanswered -> 0
    # rrf: q1 a 1/62 + 1/61 above b 1/61 -> 1; q2 c 1/61 + 1/62 above x 1/61 -> 1; q3 -> 0
    assert [row["one"]["recip_rank"] for row in d["per_query"]] == [0.5, 1.0, 0.0]
    assert [row["rrf"]["recip_rank"] for row in d["per_query"]] == [1.0, 1.0, 0.0]
    assert "latency_ms" not in d["systems"]["rrf"] and "latency_ms" not in d["delta"]
    code, _, err = run_cli(["fuse", tmp_path / "one.trec", tmp_path / "two.trec", "--method", "rrf", "-o", tmp_path / "f.trec"], capsys)
    assert code == 0, err
    code, out, err = run_cli(["eval", "-c", "-q", "--format", "json", "-m", "recip_rank", tmp_path / "qrels", tmp_path / "f.trec"], capsys)
    assert code == 0, err
    assert [r["recip_rank"] for r in json.loads(out)[0]["per_query"]] == [1.0, 1.0, 0.0]
    # a component that reads the texts still needs them
    (tmp_path / "C.yaml").write_text(f"components:\n  f: {{callable: {tmp_path / 'f.py'}:search}}\n")
    code, _, err = run_cli(["compare", tmp_path / "qrels", "--config", tmp_path / "A.yaml", "--config", tmp_path / "C.yaml"], capsys)
    assert code == 2 and "--queries" in err


@pytest.mark.parametrize("what", ["permutations", "resamples"])
def test_the_draws_are_bounded_by_thresholds(monkeypatch, what):
    """thresholds.MIN_DRAWS and MAX_DRAWS: 100 and 1,000,000 draws are taken, 99 and 1,000,001 refused with the
    bounds said; moved to 99 and 150, 99 and 150 are taken and 98 and 151 refused."""
    def options(n: int) -> CompareOptions:
        other = "resamples" if what == "permutations" else "permutations"
        return CompareOptions(**{what: n, other: 100})
    for n in (100, 1_000_000):
        assert getattr(options(n), what) == n
    for n in (99, 1_000_001):
        with pytest.raises(InputError, match=f"^{what} must be a whole number from 100 to 1,000,000, got {n}\n"):
            options(n)
    monkeypatch.setattr(thresholds, "MIN_DRAWS", 99)
    monkeypatch.setattr(thresholds, "MAX_DRAWS", 150)
    for n in (99, 150):
        assert getattr(options(n), what) == n
    for n in (98, 151):
        with pytest.raises(InputError, match=f"^{what} must be a whole number from 99 to 150, got {n}\n"):
            options(n)


@pytest.mark.parametrize("option", ["--permutations", "--resamples"])
def test_the_command_line_refuses_fewer_draws_than_the_threshold(tmp_path, capsys, option):
    """The command line says thresholds.MIN_DRAWS as its options' least value, before any run is read; at that value
    the draws pass, and what is refused is the missing qrels."""
    def refusal(n: int) -> str:
        code, _, err = run_cli(["compare", tmp_path / "unread.qrels", tmp_path / "a.trec", tmp_path / "b.trec",
                                option, str(n)], capsys)
        assert code == 2 and "Traceback" not in err, err
        return err
    assert (f"Invalid value for '{option}': Input should be greater than or equal to {thresholds.MIN_DRAWS}\n"
            in refusal(thresholds.MIN_DRAWS - 1))
    passed = refusal(thresholds.MIN_DRAWS)
    assert "Invalid value" not in passed and "unread.qrels" in passed, passed
