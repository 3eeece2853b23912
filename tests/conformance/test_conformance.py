"""trec_eval 10.0's own quicktest suite, byte for byte, through the `treckit eval` command line."""
from __future__ import annotations

import pytest

from helpers import run_cli

CASES = [
    ("out.test", "qrels.test results.test"),
    ("out.test", "qrels.test.with-comments results.test"),
    ("out.comment.test", "qrels.comment.test results.comment.test"),
    ("out.test.a", "-m all_trec qrels.test results.test"),
    ("out.test.aq", "-m all_trec -q qrels.test results.test"),
    ("out.test.aqc", "-m all_trec -q -c qrels.test results.trunc"),
    ("out.test.aqcM", "-m all_trec -q -c -M100 qrels.test results.trunc"),
    ("out.test.aql", "-m all_trec -mrelstring.20 -q -l2 qrels.rel_level results.test"),
    ("out.test.meas_params", "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 "
                             "-m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 -mndcg.1=3,2=9,4=4.5 "
                             "-mndcg_cut.10,20,23.4 -msuccess.2,5,20 qrels.test results.test"),
    ("out.test.aqZ", "-q -m all_trec -Z zscores_file qrels.test results.test"),
]


@pytest.mark.parametrize("expected,args", CASES, ids=[f"{e}:{a.split()[-2]}" for e, a in CASES])
def test_quicktest_byte_identical(shared, capsys, monkeypatch, expected, args):
    monkeypatch.chdir(shared / "trec_eval")
    code, out, err = run_cli(["eval", "--format", "trec_eval", *args.split()], capsys)
    assert code == 0, err
    assert out == (shared / "trec_eval" / expected).read_text()


def test_missing_query_policies(shared, capsys, monkeypatch):
    """results.trunc lacks topic 302: skipped with a warning by default, an error on request, 0 with -c."""
    monkeypatch.chdir(shared / "trec_eval")
    code, out, err = run_cli(["eval", "--format", "trec_eval", "-m", "num_q", "qrels.test", "results.trunc"], capsys)
    assert code == 0 and "num_q                 \tall\t2\n" in out and "302" in err
    code, out, err = run_cli(["eval", "--missing", "error", "-m", "map", "qrels.test", "results.trunc"], capsys)
    assert code == 2 and "302" in err
    code, out, err = run_cli(["eval", "--format", "trec_eval", "--missing", "zero", "-m", "num_q", "qrels.test", "results.trunc"], capsys)
    assert "num_q                 \tall\t3\n" in out


def test_judged_only_and_level_against_pytrec_eval(shared):
    """-J and -l, per query, against trec_eval's C code through pytrec_eval (doubles: exact scores here)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from treckit.api import read_qrels, read_run
    from treckit.engines.memory import EvalOptions, evaluate_requests
    from treckit.measures.registry import resolve
    q = read_qrels(shared / "trec_eval" / "qrels.rel_level")
    r = read_run(shared / "trec_eval" / "results.test")
    names = ["map", "P_10", "ndcg_cut_10", "bpref", "recip_rank", "num_ret", "Rprec", "infAP"]
    for judged, level in ((True, 1), (False, 2), (True, 2)):
        ours = evaluate_requests(q, r, resolve(["map", "P.10", "ndcg_cut.10", "bpref", "recip_rank", "num_ret", "Rprec", "infAP"]),
                                 EvalOptions(judged_only=judged, level=level))
        ev = pytrec_eval.RelevanceEvaluator(q.to_dict(), {"map", "P.10", "ndcg_cut.10", "bpref", "recip_rank", "num_ret",
                                                          "Rprec", "infAP"}, relevance_level=level,
                                            judged_docs_only_flag=judged).evaluate(r.to_dict())
        for i, qid in enumerate(ours.qids):
            for m in names:
                assert ours.values[i, ours.columns.index(m)] == pytest.approx(ev[qid][m], abs=1e-12), (judged, level, qid, m)


def test_other_formats_several_runs_and_nosummary(shared, capsys, monkeypatch, tmp_path):
    import json
    monkeypatch.chdir(shared / "trec_eval")
    code, out, _ = run_cli(["eval", "--format", "trec_eval", "-n", "-q", "-m", "map", "qrels.test", "results.test"], capsys)
    assert code == 0 and "\tall\t" not in out and out.count("map") == 3
    code, out, _ = run_cli(["eval", "--format", "csv", "-q", "-m", "map", "qrels.test", "results.test", "results.trunc"], capsys)
    rows = out.splitlines()
    assert rows[0] == "run,qid,measure,value,path"
    summary = [r.split(",") for r in rows if ",all,map," in r]
    assert len(summary) == 2 and {s[0] for s in summary} == {"STANDARD"}      # both files carry that tag
    assert round(float(summary[0][3]), 4) == 0.1785
    assert sum(1 for r in rows if r.startswith("STANDARD,30")) == 3 + 2       # results.trunc lacks 302
    code, out, _ = run_cli(["eval", "--format", "jsonl", "-q", "-m", "map", "qrels.test", "results.test"], capsys)
    lines = [json.loads(x) for x in out.splitlines()]
    assert [x["qid"] for x in lines] == ["301", "302", "303", "all"] and round(lines[-1]["map"], 4) == 0.1785
    code, out, _ = run_cli(["eval", "--format", "table", "-m", "map", "qrels.test", "results.test"], capsys)
    assert "0.1785" in out and "STANDARD" in out


def test_a_table_too_wide_for_its_width_lists_one_value_per_line(shared, capsys, monkeypatch):
    """-q -m all_trec is over a hundred columns: at 160 columns each would be cut to nothing, so the table lists
    (qid, measure, value) rows instead; every value is trec_eval's, to the table's four places."""
    monkeypatch.chdir(shared / "trec_eval")
    code, te, _ = run_cli(["eval", "-q", "-m", "all_trec", "qrels.test", "results.test"], capsys)
    code2, out, _ = run_cli(["eval", "--format", "table", "-q", "-m", "all_trec", "qrels.test", "results.test"], capsys)
    assert code == code2 == 0 and "\u2026" not in out
    assert max(map(len, out.splitlines())) <= 160
    cells = {}
    for line in out.splitlines():
        parts = [p.strip() for p in line.strip("\u2502").split("\u2502")]
        if len(parts) == 3 and parts[0] and parts[0] != "qid":
            cells[(parts[0], parts[1])] = parts[2]
    expected = {}
    for line in te.splitlines():
        name, qid, value = line.split("\t")
        if name.strip() not in ("runid", "relstring"):          # the table holds numbers (so does the CSV)
            expected[(qid, name.strip())] = value if "." not in value else f"{float(value):.4f}"
    assert cells == expected and len(cells) > 300
    code, out, _ = run_cli(["eval", "--format", "table", "-q", "-m", "map", "qrels.test", "results.test"], capsys)
    assert "\u2503 qid \u2503    map \u2503" in out         # narrow enough: one row per query, as before


def test_evaluate_accepts_paths_dataframes_and_dicts(shared):
    import pandas as pd
    from treckit import evaluate
    from treckit.api import read_qrels, read_run
    qp, rp = shared / "trec_eval" / "qrels.test", shared / "trec_eval" / "results.test"
    by_path = evaluate(qp, rp, ["map", "nDCG@10"])
    by_frame = evaluate(read_qrels(qp).to_pandas(), read_run(rp).to_pandas(), ["map", "nDCG@10"])
    by_dict = evaluate(read_qrels(qp).to_dict(), read_run(rp).to_dict(), ["map", "nDCG@10"])
    assert isinstance(by_path, pd.DataFrame) and list(by_path["qid"]) == ["301", "302", "303", "all"]
    assert by_path.equals(by_frame) and by_path.equals(by_dict)
    assert round(float(by_path.iloc[-1]["map"]), 4) == 0.1785
