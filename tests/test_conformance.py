"""trec_eval 10.0's own quicktest suite, byte for byte, through the `treckit eval` command line."""
from __future__ import annotations

import pytest

from conftest import run_cli

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
