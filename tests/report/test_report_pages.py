"""The HTML reports without a browser: what a page holds is what the command computed (means, intervals, marks,
curves, the gate's checks), pages are byte-identical for the same inputs, self-contained, and the report extra is
named when missing.  tests/report/test_report_browser.py opens them in Chromium."""
from __future__ import annotations

import html
import importlib.util
import json
import re
import subprocess

import numpy as np
import pytest

from helpers import ROOT, run_cli
from treckit.compare import stats
from treckit.report import html as report_html

TEST_SET = ROOT / "data" / "test_sets" / "clinical_v1.yaml"
TREC_EVAL = ROOT.parent / "shared" / "tools" / "trec_eval"
FIVE_MB = 5 * 1000 * 1000


def cells(page: str, system: str, measure: str) -> str:
    """The summary cell of ``system`` and ``measure``: its text, tags removed."""
    m = re.search(rf'<td data-system="{re.escape(html.escape(system))}" data-measure="{re.escape(measure)}"[^>]*>(.*?)</td>',
                  page)
    assert m, (system, measure)
    return re.sub(r"<[^>]+>", " ", html.unescape(m.group(1)))


# ---------------------------------------------------------------- the numbers
def test_mean_intervals_by_hand():
    """Two queries scoring 0 and 1: a resample's mean is 0, 1/2 or 1 with probabilities 1/4, 1/2, 1/4, so the 95%
    percentile interval over 10,000 resamples runs from 0 to 1; constant values give a point; one query, none."""
    assert stats.mean_intervals(np.array([[0.0], [1.0]])) == [(0.0, 1.0)]
    assert stats.mean_intervals(np.array([[0.25, 0.5]] * 7)) == [(0.25, 0.25), (0.5, 0.5)]
    assert stats.mean_intervals(np.array([[0.3]])) == [None]


def test_a_mean_s_interval_is_compare_s_bootstrap_interval_of_that_column():
    """The interval of a mean is the one compare's bootstrap gives a mean delta (the same seeded resamples)."""
    rng = np.random.default_rng(3)
    d = rng.random((40, 3))
    boot = stats.bootstrap_many(d, resamples=2000, seed=7, alpha=0.1)
    assert stats.mean_intervals(d, resamples=2000, seed=7, alpha=0.1) == [(r.detail["ci_low"], r.detail["ci_high"])
                                                                          for r in boot]


def test_the_compare_page_shows_compare_s_means_intervals_and_deciding_tests(sample_reports):
    record = json.loads((sample_reports / "compare.json").read_text())
    page = (sample_reports / "compare.html").read_text()
    values = {s: np.array([[r[s][m] for m in record["definitions"]] for r in record["per_query"]])
              for s in record["systems"]}
    for s, v in values.items():
        intervals = stats.mean_intervals(v)                   # compare's seed and resamples: 42, 10,000
        for j, m in enumerate(record["definitions"]):
            text = cells(page, s, m)
            assert f"{record['systems'][s]['metrics']['macro'][m]:.4f}" in text
            assert f"[{intervals[j][0]:.4f}, {intervals[j][1]:.4f}]" in text
            if s != "bm25":
                first = next(t for t in record["tests"] if t["system"] == s and t["measure"] == m
                             and t["significant"] is not None)
                assert f"{first['test']} p = {first['p_adjusted']:.4f}" in text
                assert ("\u2020" in text) == first["significant"]
                assert f"\u0394 {record['delta']['macro'][s][m]:+.4f}" in text


def test_the_compare_page_s_curves_are_trec_eval_s_iprec_at_recall(sample_reports):
    """The curves of compare --html: the mean of each run's iprec_at_recall over the judged queries, as trec_eval
    -c prints it."""
    if not TREC_EVAL.exists():
        pytest.skip(f"trec_eval 10.0 not found at {TREC_EVAL}")
    page = (sample_reports / "compare.html").read_text()
    fig = json.loads(re.search(r'data-for="fig-curves">(.*?)</script>', page).group(1).replace("\\u003c", "<"))
    for trace, run in zip(fig["data"], ("bm25", "dense")):
        out = subprocess.run([TREC_EVAL, "-c", "-m", "iprec_at_recall", sample_reports / "qrels",
                              sample_reports / f"{run}.trec"], capture_output=True, text=True, check=True).stdout
        assert html.unescape(trace["name"]) == run
        assert [f"{y:.4f}" for y in trace["y"]] == [line.split()[2] for line in out.splitlines()]


def test_eval_html_and_plot(sample_reports, tmp_path):
    """eval --html: the means eval prints, their intervals, and the paired tests of compare; --plot: a PNG of the
    curves, byte-identical on a second run; both refused without iprec_at_recall for the plot."""
    d = sample_reports
    argv = ["eval", "-m", "map", "-m", "P.10", "-m", "iprec_at_recall", d / "qrels", d / "bm25.trec", d / "dense.trec"]
    code, out, _ = run_cli(argv + ["--html", tmp_path / "e.html", "--plot", tmp_path / "pr.png"])
    assert code == 0
    printed = {(line.split()[0], i // 13): line.split()[2] for i, line in enumerate(out.splitlines())}
    page = (tmp_path / "e.html").read_text()
    assert printed[("map", 0)] in cells(page, "bm25", "map") and printed[("P_10", 1)] in cells(page, "dense", "P_10")
    assert "iprec_at_recall_0.00" not in re.search(r'<table class="summary" id="summary-table">.*?</table>', page).group(0)
    first = (tmp_path / "pr.png").read_bytes()
    assert first.startswith(b"\x89PNG")
    assert run_cli(argv + ["--plot", tmp_path / "pr2.png"])[0] == 0
    assert (tmp_path / "pr2.png").read_bytes() == first
    code, _, err = run_cli(["eval", "-m", "map", d / "qrels", d / "bm25.trec", "--plot", tmp_path / "no.png"])
    assert code == 2 and "-m iprec_at_recall" in err and not (tmp_path / "no.png").exists()


# ---------------------------------------------------------------- the page as a file
def test_pages_are_self_contained_byte_identical_and_within_5_mb(sample_reports, tmp_path):
    page = (sample_reports / "compare.html").read_text()
    assert len(page.encode()) <= FIVE_MB
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    own = page[:page.rindex("<script>")]                   # the page without plotly.js (whose links are never followed)
    assert not re.search(r'(src|href)\s*=\s*"(https?:)?//', own)                  # nothing fetched from outside
    d = sample_reports
    code, _, _ = run_cli(["compare", d / "qrels", d / "bm25.trec", d / "dense.trec", "-m", "ndcg_cut.10", "-m",
                          "recall.10", "-m", "recip_rank", "-m", "map", "--query-types", d / "id.jsonl", "--html",
                          tmp_path / "again.html"])
    assert code == 0 and (tmp_path / "again.html").read_text() == page


def test_query_texts_are_shown_unless_no_query_text(sample_reports, tmp_path):
    assert "metformin type 2 diabetes HbA1c" in (sample_reports / "testset.html").read_text()
    assert "films set in New York" in (sample_reports / "compare.html").read_text()
    code, _, _ = run_cli(["testset", "eval", TEST_SET, "--run", ROOT / "data/test_sets/baseline_bow.trec", "--html",
                          tmp_path / "t.html", "--no-query-text"])
    page = (tmp_path / "t.html").read_text()
    assert code == 0 and "metformin" not in page and "--no-query-text" in page


def test_the_testset_page_holds_the_results_file_s_numbers(sample_reports):
    data = json.loads((sample_reports / "testset.json").read_text())
    page = (sample_reports / "testset.html").read_text()
    for m in data["measures"]:
        assert f"{data['aggregates'][m]['mean']:.4f}" in cells(page, "baseline_bow.trec", m)
        for t, row in data["per_query_type"].items():
            assert re.search(rf'data-type="{t}" data-system="baseline_bow.trec" data-measure="{m}">{row[m]:.4f}<', page)
    assert "test-set results hold no iprec_at_recall values" in page


def test_the_gate_page_draws_the_limits_and_lists_the_failing_queries(sample_reports):
    page = (sample_reports / "gate.html").read_text()
    base = json.loads((sample_reports / "testset.json").read_text())
    weaker = json.loads((sample_reports / "weaker.json").read_text())
    assert "<h1>Gate FAIL: clinical 1</h1>" in page
    gate = re.search(r'<table class="summary" id="gate-table">.*?</table>', page).group(0)
    for m in ("recall_at_10", "ndcg_at_10"):
        b, c = base["aggregates"][m]["mean"], weaker["aggregates"][m]["mean"]
        assert f"<td>{m}</td><td>{b:.4f}</td><td>{c:.4f}</td><td>{c - b:+.4f}</td><td>{b * 0.99:.4f}</td>" in gate
    rows = {r["qid"]: r for r in base["per_query"]}
    dropped = [(r["qid"], m, rows[r["qid"]][m] - r[m]) for r in weaker["per_query"] for m in ("recall_at_10", "ndcg_at_10")
               if rows[r["qid"]][m] > r[m]]
    listed = re.findall(r"<tr><td>(q\d+)</td><td>[a-z_]+</td><td>([a-z_0-9]+)</td>",
                        re.search(r'id="gate-drops">.*?</table>', page).group(0))
    assert listed and set(listed) <= {(q, m) for q, m, _ in dropped}
    assert listed[0] == max(dropped, key=lambda x: (x[2], [-ord(c) for c in x[0]]))[:2]


def test_treckit_report_draws_a_trend_and_refuses_what_it_cannot_draw(sample_reports, tmp_path):
    d = sample_reports
    code, _, err = run_cli(["report", d / "testset.json", d / "weaker.json", "-o", tmp_path / "trend.html",
                            "--test-set", TEST_SET])
    page = (tmp_path / "trend.html").read_text()
    assert code == 0 and 'id="fig-trend"' in page and "metformin" in page
    fig = json.loads(re.search(r'data-for="fig-trend">(.*?)</script>', page).group(1).replace("\\u003c", "<"))
    weaker = json.loads((d / "weaker.json").read_text())
    trace = next(t for t in fig["data"] if t["name"] == "ndcg_at_10")
    assert trace["y"][1] == weaker["aggregates"]["ndcg_at_10"]["mean"]
    code, _, err = run_cli(["report", d / "compare.json", "-o", tmp_path / "c.html"])
    assert code == 0 and "Comparison against bm25" in (tmp_path / "c.html").read_text()
    (tmp_path / "other.json").write_text('{"hello": 1}')
    code, _, err = run_cli(["report", tmp_path / "other.json", "-o", tmp_path / "x.html"])
    assert code == 2 and "other.json" in err and "not a results file" in err and not (tmp_path / "x.html").exists()


def test_without_the_report_extra_html_exits_2_with_the_pip_command(monkeypatch, tmp_path, sample_reports):
    real = importlib.util.find_spec
    monkeypatch.setattr(report_html.importlib.util, "find_spec", lambda name, *a: None if name == "plotly" else real(name, *a))
    d = sample_reports
    for argv in (["compare", d / "qrels", d / "bm25.trec", d / "dense.trec", "--html", tmp_path / "c.html"],
                 ["eval", d / "qrels", d / "bm25.trec", "--html", tmp_path / "e.html"],
                 ["testset", "eval", TEST_SET, "--run", ROOT / "data/test_sets/baseline_bow.trec", "--html", tmp_path / "t.html"],
                 ["report", d / "testset.json", "-o", tmp_path / "r.html"]):
        code, out, err = run_cli(argv)
        assert code == 2 and "report extra" in err and "pip install" in err and "plotly" in err, (argv, err)
        assert out == "" and not list(tmp_path.glob("*.html"))


def test_the_docs_state_the_sample_page_s_size(sample_reports):
    """docs/reports.md states the size of make demo's compare page; this one differs only by its inputs' paths."""
    size = (sample_reports / "compare.html").stat().st_size
    docs = (ROOT / "docs" / "reports.md").read_text()
    stated = int(re.search(r"\*\*([0-9.]+) MB \(([0-9,]+) bytes\)\*\*", docs).group(2).replace(",", ""))
    assert abs(size - stated) < 1000 and stated <= FIVE_MB
    assert f"**{stated / 1e6:.1f} MB" in docs
    assert (ROOT / "docs" / "report_compare.png").read_bytes().startswith(b"\x89PNG")


def test_the_system_page_shows_every_stage_against_the_first(tmp_path):
    sample = ROOT / "data" / "test_sets"
    code, _, err = run_cli(["system", "eval", sample / "system.yaml", "--test-set", TEST_SET, "--no-cache",
                            "--out", tmp_path / "s.json", "--html", tmp_path / "s.html"])
    assert code == 0, err
    stages = json.loads((tmp_path / "s.json").read_text())
    page = (tmp_path / "s.html").read_text()
    assert list(stages) == ["bm25", "bow", "fusion"]
    for stage, data in stages.items():
        for m in data["measures"]:
            assert f"{data['aggregates'][m]['mean']:.4f}" in cells(page, stage, m)
            if stage != "bm25":
                assert "p = " in cells(page, stage, m)            # tested against the first stage
    assert "metformin" in page


def test_the_tie_ranges_of_compare_tie_aware_are_on_the_page(tmp_path):
    """compare --tie-aware range --html: compare's own tie table, and the queries whose range is widest, each
    range the [worst, best] compare computed (its JSON's)."""
    ties = ROOT / "data" / "ties"
    code, _, err = run_cli(["compare", "-m", "ndcg_cut.10", "-m", "P.5", "--tie-aware", "range", ties / "qrels.test",
                            ties / "full.run", ties / "rounded.run", "--out", tmp_path / "c.json", "--html",
                            tmp_path / "c.html"])
    assert code == 0, err
    record = json.loads((tmp_path / "c.json").read_text())
    page = html.unescape((tmp_path / "c.html").read_text())
    tie_table = re.search(r'id="tie-table">.*?</table>', page).group(0)
    for pair in record["ties"]["pairs"]:
        b, s = pair["baseline_values"], pair["system_values"]
        assert f"<td>{b['worst']:.4f}-{b['best']:.4f}</td><td>{s['worst']:.4f}-{s['best']:.4f}</td>" in tie_table
    movers = re.findall(r"<tr><td>([^<]+)</td><td>([^<]+)</td><td>([^<]+)</td><td>([0-9.]+)</td><td>([0-9.]+)</td>"
                        r"<td>[0-9.]+</td><td>([0-9.]+)</td></tr>", re.search(r'id="tie-movers">.*?</table>', page).group(0))
    assert movers and all(float(hi) - float(lo) == pytest.approx(float(w), abs=1e-4) for *_, lo, hi, w in movers)
    widths = [float(w) for *_, w in movers]
    assert widths == sorted(widths, reverse=True) and widths[0] > 0
    assert "no precision-recall curve" in page                         # --tie-aware measures no curve


def test_names_and_query_ids_are_shown_as_text_never_as_markup(tmp_path):
    """A run tag and a query id written as HTML, a script's end or a plotly template: on the page they are text (no
    element, no script, no template of plotly's), and the table's data read back give them as written."""
    qid, tag = "</script><script>alert(1)</script>", "<img/src=x/onerror=alert(2)>%{y}"
    (tmp_path / "qrels").write_text(f"{qid} 0 d1 1\nq2 0 d2 1\n")
    (tmp_path / "a").write_text(f"{qid} Q0 d1 1 2 {tag}\n{qid} Q0 d3 2 1 {tag}\nq2 Q0 d2 1 1 {tag}\n")
    (tmp_path / "b").write_text(f"{qid} Q0 d3 1 2 b\nq2 Q0 d2 1 1 b\n")
    code, _, err = run_cli(["eval", "-m", "map", tmp_path / "qrels", tmp_path / "a", tmp_path / "b", "--html",
                            tmp_path / "p.html"])
    assert code == 0, err
    page = (tmp_path / "p.html").read_text()
    own = page[:page.rindex("<script>")]
    assert "<script>alert" not in own and "<img/src" not in own
    figures = re.findall(r'class="figure-data" data-for="[^"]+">(.*?)</script>', page)
    assert figures and not any("%{y}" in f for f in figures)          # never a template of plotly's
    data = json.loads(re.search(r'id="treckit-data">(.*?)</script>', page).group(1))
    assert [r[0] for r in data["rows"]] == sorted([qid, "q2"], key=str.encode)
    assert any(c["name"] == f"{tag} map" for c in data["columns"])
