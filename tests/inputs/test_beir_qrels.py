"""BEIR qrels (TSV with or without its header, and JSON lines): what is read, and every malformed line refused
with the file, the line, its text and the fix -- or, with skip_malformed / --skip-malformed, counted and skipped."""
from __future__ import annotations

import json

import pytest

import treckit
from helpers import run_cli

HEADER = "query-id\tcorpus-id\tscore\n"
RUN = "1 Q0 d1 1 2.0 r\n1 Q0 d2 2 1.0 r\n2 Q0 d5 1 1.0 r\n"


def judgments(qrels) -> list[tuple[str, str, int]]:
    t = qrels.table
    return list(zip(*(t.column(c).to_pylist() for c in ("qid", "docid", "grade"))))


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_blank_lines_before_the_header_and_between_lines_are_skipped(tmp_path):
    path = write(tmp_path, "q.tsv", "\n \n" + HEADER + "1\td1\t2\n\n2\td5\t0\n")
    assert judgments(treckit.read_qrels(path, "beir-tsv")) == [("1", "d1", 2), ("2", "d5", 0)]
    assert judgments(treckit.read_qrels(path)) == [("1", "d1", 2), ("2", "d5", 0)]      # detected as BEIR TSV


@pytest.mark.parametrize("text, line, reason, fix", [
    ("1\td2\n", "1\\td2", "a BEIR qrels line has 3 tab-separated fields (query-id, corpus-id, score), found 2",
     "separate the fields with single tabs"),
    ("1\td3\tx\n", "1\\td3\\tx", "score 'x' is not an integer", "the third field is an integer relevance grade"),
    ("\td4\t1\n", "\\td4\\t1", "empty query id or corpus id", "fill both ids"),
    ("1\t\t1\n", "1\\t\\t1", "empty query id or corpus id", "fill both ids"),
])
def test_a_malformed_line_is_refused_naming_file_line_text_and_fix(tmp_path, text, line, reason, fix):
    path = write(tmp_path, "q.tsv", HEADER + "1\td1\t2\n" + text)
    with pytest.raises(treckit.InputError) as caught:
        treckit.read_qrels(path, "beir-tsv")
    assert str(caught.value) == (f"{path}:3: {reason}\n  line: '{line}'\n  fix: {fix} (or, to count and skip such "
                                 "lines, pass skip_malformed=True to treckit.read_qrels)")


def test_skip_malformed_keeps_the_good_lines_and_counts_each_kind(tmp_path, capsys):
    path = write(tmp_path, "q.tsv", HEADER + "1\td1\t2\n1\td2\n1\td3\tx\n\td4\t1\n1\t\t1\n2\td5\t0\n")
    qrels = treckit.read_qrels(path, "beir-tsv", skip_malformed=True)
    assert judgments(qrels) == [("1", "d1", 2), ("2", "d5", 0)]
    err = capsys.readouterr().err
    assert [x.split(": ")[2] for x in err.splitlines()[:4]] == [f"Skipping malformed line {n}" for n in (3, 4, 5, 6)]
    assert err.splitlines()[-1] + "\n" == (
        f"treckit: {path}: skipped 4 malformed qrels line(s): 1 a BEIR qrels line has 3 tab-separated fields "
        "(query-id, corpus-id, score), found 2 (first: line 3); 2 empty query id or corpus id (first: line 5); "
        "1 score 'x' is not an integer (first: line 4)\n")


@pytest.mark.parametrize("text, reason", [
    ("\n \n", "the file is empty: no judgments in it"),
    (HEADER + "\n", "no judgments found"),
])
def test_a_file_without_judgments_is_refused(tmp_path, text, reason):
    path = write(tmp_path, "q.tsv", text)
    with pytest.raises(treckit.InputError) as caught:
        treckit.read_qrels(path, "beir-tsv")
    assert str(caught.value) == f"{path}: {reason}\n  fix: check that the right file was given"


def test_jsonl_line_without_an_integer_score_is_refused(tmp_path):
    bad = json.dumps({"query-id": "1", "corpus-id": "d2", "score": True})
    path = write(tmp_path, "q.jsonl", json.dumps({"query-id": "1", "corpus-id": "d1", "score": 1}) + "\n" + bad + "\n")
    with pytest.raises(treckit.InputError) as caught:
        treckit.read_qrels(path, "beir-jsonl")
    assert str(caught.value) == (f"{path}:2: a BEIR qrels JSON line needs query-id, corpus-id and an integer score\n"
                                 f"  line: '{bad}'\n"
                                 '  fix: write {"query-id": "1", "corpus-id": "d1", "score": 1}')


def test_eval_refuses_a_malformed_beir_line_with_exit_2_and_skips_it_when_asked(tmp_path, capsys):
    qrels = write(tmp_path, "q.tsv", HEADER + "1\td1\t2\n1\td2\n")
    run = write(tmp_path, "run", RUN)
    code, out, err = run_cli(["eval", "-m", "P.2", "-m", "num_rel", "--qrels-format", "beir-tsv", qrels, run], capsys)
    assert (code, out) == (2, "")
    assert err == (f"treckit: error: {qrels}:3: a BEIR qrels line has 3 tab-separated fields (query-id, corpus-id, "
                   "score), found 2\n  line: '1\\td2'\n  fix: separate the fields with single tabs (or, to count and "
                   "skip such lines, pass --skip-malformed)\n")
    code, out, err = run_cli(["eval", "-m", "P.2", "-m", "num_rel", "--skip-malformed", "--qrels-format", "beir-tsv",
                              qrels, run], capsys)
    # query 1 alone is judged (d1, grade 2): num_rel 1; its top 2 are d1 and d2 (unjudged): P@2 = 1/2.
    # Query 2 has no judgments, so trec_eval's rule leaves it out of the mean.
    assert code == 0
    assert out == "num_rel               \tall\t1\nP_2                   \tall\t0.5000\n"
    assert "skipped 1 malformed qrels line(s)" in err and "(first: line 3)" in err
