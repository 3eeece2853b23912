"""``treckit compare --tie-aware range|expected`` (compare/compare.py, compare/report.py): each pair's
difference against the systems' tie ranges, the values the tests run on stated, and the numbers equal to
``treckit.evaluate(tie_aware=)``'s."""
from __future__ import annotations

import json

import numpy as np
import pytest

import treckit
from helpers import ROOT, run_cli
from treckit.compare import report
from treckit.compare.compare import CompareOptions, ComparedRun, compare
from treckit.console.errors import InputError
from treckit.model import Qrels, Run

DATA = ROOT / "data" / "ties"
MEASURES = ["map", "ndcg_cut.10", "P.10"]
OPTS = dict(tests=("t-test", "randomization"), permutations=500)


def _systems():
    from treckit.api import read_qrels, read_run
    qrels = read_qrels(DATA / "qrels.test")
    return qrels, [ComparedRun(None, run=read_run(DATA / "full.run")), ComparedRun(None, run=read_run(DATA / "rounded.run"))]


def _tie_aware(run: str, mode: str) -> dict[str, float]:
    df = treckit.evaluate(str(DATA / "qrels.test"), str(DATA / run), MEASURES, tie_aware=mode, complete=True,
                          per_query=False, warn=lambda m: None)
    return {c: float(df[c].iloc[0]) for c in df.columns if c != "qid"}


def test_each_pair_against_the_tie_ranges():
    qrels, systems = _systems()
    plain = compare(qrels, _systems()[1], MEASURES, CompareOptions(**OPTS))
    comp = compare(qrels, systems, MEASURES, CompareOptions(**OPTS, tie_aware="range"))
    # range: the means and the tests are trec_eval's, unchanged
    for s in ("full", "rounded"):
        np.testing.assert_array_equal(comp.values[s], plain.values[s])
    assert [(t["measure"], t["test"], t["p_value"]) for t in comp.tests] == \
        [(t["measure"], t["test"], t["p_value"]) for t in plain.tests]
    pairs = {r["measure"]: r for r in comp.tie_pairs()}
    assert set(pairs) == {"map", "ndcg_cut_10", "P_10"}
    for mode in ("expected", "best", "worst"):
        base, other = _tie_aware("full.run", mode), _tie_aware("rounded.run", mode)
        for m, r in pairs.items():
            assert r["baseline_values"][mode] == pytest.approx(base[m], abs=1e-12)
            assert r["system_values"][mode] == pytest.approx(other[m], abs=1e-12)
    nd = pairs["ndcg_cut_10"]
    # docs/ties.md's example: the baseline's 0.3016 inside the rounded run's 0.3007-0.3279: the difference is inside
    assert nd["inside_tie_ranges"] and nd["system_values"]["worst"] < nd["baseline_values"]["best"]
    assert nd["delta_trec_eval"] == pytest.approx(plain.delta("rounded")["ndcg_cut_10"], abs=1e-15)
    text = report.table(comp, width=200)
    assert "tests are on trec_eval's values" in text and "inside tie ranges" in text


def test_a_narrow_console_lists_means_and_tie_ranges_whole():
    """At 60 columns the tables would cut numbers short ("0.3007-0\u2026"): each row becomes a block of lines
    instead, every number whole, every line with numbers within the width."""
    qrels, systems = _systems()
    measures = ["map", "P.5", "P.10", "ndcg_cut.10", "recall.100", "recip_rank", "bpref", "ndcg"]
    comp = compare(qrels, systems, measures, CompareOptions(tests=("t-test",), tie_aware="range"))
    text = report.table(comp, width=60)
    assert "\u2026" not in text and "\u2503" not in text               # no cut cell, no table
    assert all(len(line) <= 60 for line in text.splitlines() if any(c.isdigit() for c in line))
    for s in comp.systems:
        for m in comp.measures:
            assert f"{m} {comp.column(s.name, m).mean():.4f}" in text
    nd = {r["measure"]: r for r in comp.tie_pairs()}["ndcg_cut_10"]
    assert "ndcg_cut_10 / rounded; baseline range 0.3016-0.3016" in text and "system range 0.3007-0.3279" in text
    assert f"delta trec_eval {nd['delta_trec_eval']:+.4f}" in text and "inside tie ranges yes" in text
    wide = report.table(comp, width=300)                   # wide enough: the tables
    assert "\u2503 system " in wide and " inside tie ranges \u2503" in wide and "\u2026" not in wide


def test_a_difference_beyond_the_ranges_is_not_inside():
    """A system whose worst order beats the baseline's best: q's relevant doc tied with one non-relevant doc at
    the top (baseline: both tied at rank 2-3 behind a non-relevant doc)."""
    qrels = Qrels.from_columns(["q"] * 3, ["r", "n1", "n2"], [1, 0, 0])
    base = Run.from_columns(["q"] * 3, ["n2", "r", "n1"], [3.0, 2.0, 2.0], tag="base")
    better = Run.from_columns(["q"] * 3, ["r", "n1", "n2"], [3.0, 3.0, 1.0], tag="better")
    comp = compare(qrels, [ComparedRun(None, run=base), ComparedRun(None, run=better)], ["recip_rank"],
                   CompareOptions(tests=("t-test",), tie_aware="range"))
    (r,) = comp.tie_pairs()
    # base: RR 1/2 or 1/3; better: 1 or 1/2.  Ranges [1/3, 1/2] and [1/2, 1] touch: inside
    assert (r["baseline_values"]["worst"], r["baseline_values"]["best"]) == (pytest.approx(1 / 3), 0.5)
    assert (r["system_values"]["worst"], r["system_values"]["best"]) == (0.5, 1.0) and r["inside_tie_ranges"]
    better = Run.from_columns(["q"] * 3, ["r", "n1", "n2"], [3.0, 2.0, 1.0], tag="better")
    comp = compare(qrels, [ComparedRun(None, run=base), ComparedRun(None, run=better)], ["recip_rank"],
                   CompareOptions(tests=("t-test",), tie_aware="range"))
    (r,) = comp.tie_pairs()
    assert r["system_values"]["worst"] == 1.0 and not r["inside_tie_ranges"]


def test_tests_on_expected_values_and_the_json_says_so(tmp_path):
    import jsonschema

    qrels, systems = _systems()
    comp = compare(qrels, systems, MEASURES, CompareOptions(**OPTS, tie_aware="expected"))
    want = _tie_aware("rounded.run", "expected")
    assert comp.column("rounded", "ndcg_cut_10").mean() == pytest.approx(want["ndcg_cut_10"], abs=1e-12)
    from scipy import stats as ss
    t = [r for r in comp.tests if r["measure"] == "ndcg_cut_10" and r["test"] == "t-test"][0]
    assert t["p_value"] == ss.ttest_rel(comp.column("rounded", "ndcg_cut_10"), comp.column("full", "ndcg_cut_10")).pvalue
    p = tmp_path / "c.json"
    report.write_json(comp, p)
    data = json.loads(p.read_text())
    jsonschema.validate(data, json.loads((ROOT / "code" / "treckit" / "compare" / "schema.json").read_text()))
    assert data["ties"]["tests_on"] == "expected" and "expected values" in data["ties"]["statement"]
    assert list(data)[-2:] == ["ties", "per_query"]
    assert "## Ties" in report.markdown(comp) and "expected values" in report.markdown(comp)


def test_the_command_and_its_refusals(capsys, monkeypatch):
    monkeypatch.chdir(DATA)
    code, out, _ = run_cli(["compare", "-m", "ndcg_cut.10", "--test", "t-test", "--tie-aware", "range", "qrels.test",
                            "full.run", "rounded.run"], capsys)
    assert code == 0 and "inside tie ranges" in out and "0.3007-0.3279" in out
    code, _, err = run_cli(["compare", "--tie-aware", "best", "qrels.test", "full.run", "rounded.run"], capsys)
    assert code == 2 and "range or expected" in err
    code, _, err = run_cli(["compare", "--tie-aware", "range", "--engine", "dask", "qrels.test", "full.run",
                            "rounded.run"], capsys)
    assert code == 2 and "--engine local" in err
    code, _, err = run_cli(["compare", "--tie-aware", "range", "-m", "relstring", "qrels.test", "full.run",
                            "rounded.run"], capsys)
    assert code == 2 and "relstring" in err
    with pytest.raises(InputError):
        CompareOptions(tie_aware="best")
