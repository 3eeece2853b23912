"""Inputs that used to be accepted and should not be, and messages that said something other than what was there
(issue 30, items 14-17 and 20-22): ids trec_eval cannot read back, infinite scores in fusion, one id and field rule
for test sets, annotators' files that judge a doc twice, what detection found, NaN options, the tie-aware report's
columns, and options checked before any file is read.  Each asserts the message (file, line, field) and, where a
command then runs, its numbers (by hand, or trec_eval's)."""
from __future__ import annotations

import json
import math
import re
import subprocess

import pytest

from helpers import run_cli

QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 1\n2 0 d4 1\n2 0 d5 1\n"
RUN = "1 Q0 d2 1 3.0 t\n1 Q0 d1 2 2.0 t\n1 Q0 d3 3 1.0 t\n2 Q0 d5 1 4.0 t\n2 Q0 d9 2 3.5 t\n2 Q0 d4 3 3.0 t\n"
MAP = ((1 / 2 + 2 / 3) / 2 + (1 + 2 / 3) / 2) / 2        # trec_eval's map of RUN, by hand


def _trec_eval(trec_eval, qrels, run, *args) -> dict[str, str]:
    got = subprocess.run([str(trec_eval), *(args or ("-m", "map")), str(qrels), str(run)], capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    return {m: v for m, q, v in (ln.split() for ln in got.stdout.splitlines()) if q == "all"}


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return tmp_path / "qrels", tmp_path / "run"


# ------------------------------------------------------------------ 14: ids trec_eval cannot read back
def test_retrieve_refuses_an_empty_doc_id_at_read(tmp_path, capsys):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "d1", "text": "alpha"}\n{"id": "", "text": "alpha beta"}\n')
    (tmp_path / "q.tsv").write_text("q1\talpha\n")
    for method in ("bow", "bm25"):
        code, _, err = run_cli(["retrieve", "--corpus", corpus, "--queries", tmp_path / "q.tsv", "--method", method,
                                "-o", tmp_path / "out.trec"], capsys)
        assert code == 2 and err.startswith(f"treckit: error: {corpus}:2: the document's id (id) is empty"), err
        assert not (tmp_path / "out.trec").exists()


def test_a_whitespace_doc_id_is_written_escaped_and_read_back(tmp_path, capsys, trec_eval):
    """An id of one space is escaped (%20): six fields, which trec_eval and treckit read back as that id."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": " ", "text": "alpha beta"}\n{"id": "d2", "text": "gamma"}\n')
    (tmp_path / "q.tsv").write_text("q1\talpha\n")
    code, _, err = run_cli(["retrieve", "--corpus", corpus, "--queries", tmp_path / "q.tsv", "--method", "bow",
                            "-o", tmp_path / "out.trec"], capsys)
    assert code == 0, err
    lines = (tmp_path / "out.trec").read_text().splitlines()
    assert [ln.split()[2] for ln in lines] == ["%20"] and all(len(ln.split()) == 6 for ln in lines)
    (tmp_path / "qrels").write_text("q1 0 %20 1\n")
    assert _trec_eval(trec_eval, tmp_path / "qrels", tmp_path / "out.trec")["map"] == "1.0000"


def test_every_trec_writer_refuses_what_trec_eval_cannot_read_back(tmp_path):
    import treckit
    from treckit.console.errors import InputError
    from treckit.model import Qrels, Run
    with pytest.raises(InputError, match=r"^a doc id of query 'q1' is empty; a TREC file cannot hold it"):
        treckit.write_run(Run.from_columns(["q1", "q1"], ["d1", ""], [2.0, 1.0]), tmp_path / "r.trec")
    with pytest.raises(InputError, match=r"^a doc id of query 'q2' is empty"):
        treckit.write_qrels(Qrels.from_columns(["q1", "q2"], ["d1", ""], [1, 1]), tmp_path / "q.trec")
    with pytest.raises(InputError, match=r"^iteration field 'a b' contains whitespace"):
        treckit.write_qrels(Qrels.from_columns(["q1"], ["d1"], [1], ["a b"]), tmp_path / "q.trec")
    with pytest.raises(InputError, match=r"^query id 'q 1' contains whitespace \(TREC files split"):
        treckit.write_run(Run.from_columns(["q 1"], ["d1"], [1.0]), tmp_path / "r.trec")
    assert not any(tmp_path.iterdir())


# ------------------------------------------------------------------ 15: fusion and infinite scores
@pytest.mark.parametrize("method, norm", [("combsum", "zscore"), ("combsum", "minmax"), ("combsum", "sum"),
                                          ("combsum", "none"), ("combmnz", None), ("max", None), ("weighted", None)])
def test_fuse_refuses_an_infinite_score_where_scores_are_added(files, capsys, method, norm):
    qrels, run = files
    infinite = run.with_name("inf.trec")
    infinite.write_text(RUN.replace("d3 3 1.0", "d3 3 -inf"))
    code, out, err = run_cli(["fuse", run, infinite, "--method", method, *(["--norm", norm] if norm else []),
                              "-o", "-"], capsys)
    assert code == 2 and out == "" and "RuntimeWarning" not in err, err
    assert err.startswith(f"treckit: error: {infinite}: query '1' gives doc 'd3' an infinite score (1 score(s) that are "
                          f"not finite numbers in all); {method} fusion adds normalised scores"), err
    assert "fix: fuse ranks instead (--method rrf)" in err


def test_fuse_in_python_names_a_nan_score(files):
    """Readers refuse NaN scores; a Run built in Python may hold one, and fusion says it is a NaN."""
    from treckit.console.errors import InputError
    from treckit.model import Run
    from treckit.retrieval.fusion import fuse
    nan = Run.from_columns(["q", "q"], ["a", "b"], [math.nan, 1.0])
    with pytest.raises(InputError, match=r"^run 1: query 'q' gives doc 'a' a NaN score \(1 score\(s\) that are not finite"):
        fuse([nan, nan], "combsum")
    assert fuse([nan, nan], "rrf").table.column("docid").to_pylist() == ["b", "a"]       # NaN ranks last


def test_fuse_normalises_scores_near_a_doubles_limit(files, capsys):
    """1e308 and -1e308: min-max 1, 0, 1/2 and z-scores ±sqrt(3/2), 0 as for any scale; no overflow, no warning."""
    qrels, run = files
    huge = run.with_name("huge.trec")
    huge.write_text("1 Q0 a 1 1e308 h\n1 Q0 b 2 -1e308 h\n1 Q0 c 3 0 h\n")
    other = run.with_name("other.trec")
    other.write_text("1 Q0 a 1 2 o\n1 Q0 b 2 5 o\n1 Q0 c 3 1 o\n")
    expected = {"minmax": {"a": 1 + 1 / 4, "b": 0 + 1, "c": 1 / 2 + 0},
                "zscore": {"a": math.sqrt(1.5) + (2 - 8 / 3) / math.sqrt(26 / 9),
                           "b": -math.sqrt(1.5) + (5 - 8 / 3) / math.sqrt(26 / 9), "c": 0 + (1 - 8 / 3) / math.sqrt(26 / 9)},
                "sum": {"a": 2 / 3 + 2 / 8, "b": 0 + 5 / 8, "c": 1 / 3 + 1 / 8}}
    for norm, want in expected.items():
        code, out, err = run_cli(["fuse", huge, other, "--method", "combsum", "--norm", norm, "-o", "-"], capsys)
        assert code == 0 and err == "", err
        got = {ln.split()[2]: float(ln.split()[4]) for ln in out.splitlines()}
        assert got == pytest.approx(want, rel=1e-12), (norm, got)


def test_rrf_takes_infinite_scores_as_first_and_last(files, capsys):
    qrels, run = files
    infinite = run.with_name("inf.trec")
    infinite.write_text(RUN.replace("d2 1 3.0", "d2 1 inf").replace("d3 3 1.0", "d3 3 -inf"))
    code, out, err = run_cli(["fuse", run, infinite, "--method", "rrf", "-o", "-"], capsys)
    assert code == 0, err
    assert [ln.split()[2] for ln in out.splitlines()[:3]] == ["d2", "d1", "d3"]
    assert float(out.splitlines()[0].split()[4]) == 2 / 61


# ------------------------------------------------------------------ 16: one id and field rule for test sets
def _test_set(qid: str, qtype: str = "t", text: str = "alpha") -> str:
    return (f"name: s\nversion: '1'\nqueries:\n- query_id: {json.dumps(qid)}\n  query_text: {json.dumps(text)}\n"
            f"  query_type: {json.dumps(qtype)}\n  relevant_docs: [{{doc_id: d1, grade: 1}}]\n")


@pytest.mark.parametrize("qid, qtype, said", [
    ("q 1", "t", "line 4: query 'q 1': its id contains whitespace (TREC files split their lines on it)"),
    ("q\n1", "t", "line 4: query 'q\\n1': its id contains whitespace (TREC files split their lines on it)"),
    ("q1", "a\tb", "line 6: query 'q1': its type holds a tab or a line break (a TSV line cannot hold it)"),
    ("q1", "a\nb", "line 6: query 'q1': its type holds a tab or a line break (a TSV line cannot hold it)"),
])
def test_validate_refuses_what_export_could_not_write_back(tmp_path, capsys, qid, qtype, said):
    (tmp_path / "s.yaml").write_text(_test_set(qid, qtype))
    for argv in (["testset", "validate", tmp_path / "s.yaml"],
                 ["testset", "export", tmp_path / "s.yaml", "-o", tmp_path / "q.trec", "--types", tmp_path / "t.tsv"]):
        code, _, err = run_cli(argv, capsys)
        assert code == 2 and said in err, err
    assert not (tmp_path / "q.trec").exists() and not (tmp_path / "t.tsv").exists()


def test_export_and_import_round_trip_types_exactly(tmp_path, capsys):
    """A type with spaces (and one with a space at its end) comes back as written."""
    text = _test_set("q1", "complex clinical ") + (
        "- query_id: q2\n  query_text: beta gamma\n  query_type: short\n  relevant_docs: [{doc_id: 'a b', grade: 2}]\n")
    (tmp_path / "s.yaml").write_text(text)
    code, _, err = run_cli(["testset", "export", tmp_path / "s.yaml", "-o", tmp_path / "q.trec", "--queries",
                            tmp_path / "q.tsv", "--types", tmp_path / "t.tsv"], capsys)
    assert code == 0, err
    assert (tmp_path / "t.tsv").read_text() == "q1\tcomplex clinical \nq2\tshort\n"
    code, _, err = run_cli(["testset", "import", "--qrels", tmp_path / "q.trec", "--queries", tmp_path / "q.tsv",
                            "--types", tmp_path / "t.tsv", "--name", "s", "-o", tmp_path / "back.yaml"], capsys)
    assert code == 0, err
    from treckit.testsets import load_test_set
    back, original = load_test_set(tmp_path / "back.yaml"), load_test_set(tmp_path / "s.yaml")
    assert [(q.query_id, q.query_text, q.query_type, q.relevant_docs) for q in back.queries] == \
        [(q.query_id, q.query_text, q.query_type, q.relevant_docs) for q in original.queries]


@pytest.mark.parametrize("types, said", [
    ("q1\ta\tb\n", "t.tsv:1: a query-types line is 'qid<TAB>type' (3 tab-separated fields here)"),
    ("q1\ta\nq1\tb\n", "t.tsv:2: query id 'q1' has a type twice"),
])
def test_import_reads_a_types_file_exactly(tmp_path, capsys, types, said):
    (tmp_path / "q.trec").write_text("q1 0 d1 1\n")
    (tmp_path / "q.tsv").write_text("q1\talpha\n")
    (tmp_path / "t.tsv").write_text(types)
    code, _, err = run_cli(["testset", "import", "--qrels", tmp_path / "q.trec", "--queries", tmp_path / "q.tsv",
                            "--types", tmp_path / "t.tsv", "--name", "s", "-o", tmp_path / "s.yaml"], capsys)
    assert code == 2 and said in err and not (tmp_path / "s.yaml").exists(), err


def test_import_refuses_a_query_id_with_a_space_at_its_line(tmp_path, capsys):
    (tmp_path / "q.trec").write_text("q1 0 d1 1\n")
    (tmp_path / "q.tsv").write_text("q1\talpha\nq 2\tbeta\n")
    code, _, err = run_cli(["testset", "import", "--qrels", tmp_path / "q.trec", "--queries", tmp_path / "q.tsv",
                            "--name", "s", "-o", tmp_path / "s.yaml"], capsys)
    assert code == 2 and "q.tsv:2: the query id contains whitespace" in err, err


# ------------------------------------------------------------------ 17 and 20: annotators' files
def test_kappa_refuses_a_doc_judged_twice_naming_the_lines(tmp_path, capsys):
    (tmp_path / "a").write_text("# annotator A\n1 0 d1 1\n\n1 0 d2 0\n1 0 d1 0\n")
    (tmp_path / "b").write_text("1 0 d1 1\n1 0 d2 0\n")
    for first, second in (("a", "b"), ("b", "a")):
        code, out, err = run_cli(["testset", "kappa", tmp_path / first, tmp_path / second], capsys)
        assert code == 2 and out == "", err
        assert err.startswith(f"treckit: error: {tmp_path / 'a'}: doc 'd1' of query '1' is judged twice (lines 2 and 5, "
                              "grades 1 and 0): which grade is the annotator's is unknown"), err
    (tmp_path / "a").write_text("1 0 d1 1\n1 0 d2 0\n1 0 d3 1\n")
    (tmp_path / "b").write_text("1 0 d1 1\n1 0 d2 1\n1 0 d3 1\n")
    code, out, _ = run_cli(["testset", "kappa", tmp_path / "a", tmp_path / "b"], capsys)
    # by hand: A gives 1, 0, 1 and B 1, 1, 1; observed agreement 2/3, chance (2/3)(1) + (1/3)(0) = 2/3: kappa 0
    assert code == 1 and json.loads(out)["kappa"] == 0.0


def _refresh(tmp_path, capsys, labels_a: str, labels_b: str):
    (tmp_path / "ts.yaml").write_text(_test_set("q1") + "- query_id: q2\n  query_text: b\n  query_type: t\n"
                                      "  relevant_docs: [{doc_id: d2, grade: 1}]\n")
    (tmp_path / "c.jsonl").write_text('{"query_id": "c1", "query_text": "gamma"}\n')
    (tmp_path / "la").write_text(labels_a)
    (tmp_path / "lb").write_text(labels_b)
    return run_cli(["testset", "refresh", tmp_path / "ts.yaml", "--candidates", tmp_path / "c.jsonl", "--replace", "1",
                    "--labels-a", tmp_path / "la", "--labels-b", tmp_path / "lb", "-o", tmp_path / "next.yaml"], capsys)


def test_refresh_names_the_label_file_and_line_of_a_grade_a_test_set_cannot_hold(tmp_path, capsys):
    code, _, err = _refresh(tmp_path, capsys, "c1 0 d1 1\nc1 0 d2 0\nc1 0 d3 7\n", "c1 0 d1 1\nc1 0 d2 0\nc1 0 d3 2\n")
    assert code == 2 and not (tmp_path / "next.yaml").exists(), err
    assert err.startswith(f"treckit: error: {tmp_path / 'la'}:3: grade 7 of doc 'd3' for query 'c1' is outside a test "
                          "set's grades (0 to 3)"), err
    assert "next.yaml" not in err and "refreshed" not in err
    code, _, err = _refresh(tmp_path, capsys, "c1 0 d1 1\nc1 0 d2 0\nc1 0 d1 0\n", "c1 0 d1 1\nc1 0 d2 0\n")
    assert code == 2 and f"{tmp_path / 'la'}: doc 'd1' of query 'c1' is judged twice (lines 1 and 3" in err, err


# ------------------------------------------------------------------ 20: what detection found, NaN, empty qrels
def test_detection_says_the_lines_it_read_were_blank_or_comments(files, capsys, monkeypatch, trec_eval):
    from treckit import thresholds
    monkeypatch.setattr(thresholds, "DETECT_MAX_BYTES", 100_000)      # the 64 MiB of a real run, scaled down
    qrels, run = files
    padded = run.with_name("padded.trec")
    padded.write_text("\n" * 60_000 + "# a comment\n" * 10_000 + RUN)
    code, _, err = run_cli(["eval", qrels, padded], capsys)
    assert code == 2 and "longer than" not in err, err
    read = re.search(r"its first ([\d,]+) lines \(([\d,]+) bytes\) are blank or comments, and detection reads at most "
                     r"100,000 bytes, so the format cannot be detected from it", err)
    lines, size = (int(x.replace(",", "")) for x in read.groups())
    assert 60_000 < lines < 70_000 and size == 60_000 + (lines - 60_000) * len("# a comment\n") <= 100_000, err
    assert "fix: say which format it has: pass --run-format FORMAT" in err
    code, out, err = run_cli(["eval", "-m", "map", "--run-format", "trec", qrels, padded], capsys)
    assert code == 0 and out.split()[-1] == _trec_eval(trec_eval, qrels, run)["map"] == f"{MAP:.4f}", err
    long = run.with_name("long.trec")
    long.write_text("x" * 200_000 + "\n" + RUN)
    code, _, err = run_cli(["eval", qrels, long], capsys)
    assert code == 2 and "the first line is longer than 100,000 bytes" in err, err


@pytest.mark.parametrize("run_text, line", [("1 Q0 d1 1 nan t\n" + RUN, "1 Q0 d1 1 nan t"), ("1 d1 NaN\n1 d2 2\n", "1 d1 NaN")])
def test_a_nan_score_on_line_1_is_named_with_its_line_and_field(files, capsys, run_text, line):
    qrels, run = files
    run.write_text(run_text)
    for command in (["eval", qrels, run], ["run", run, "-o", run.with_name("out")]):
        code, _, err = run_cli(command, capsys)
        assert code == 2 and f"{run}:1: score is NaN" in err and f"line: {line!r}" in err, err
        assert "cannot tell the run format" not in err and "--skip-malformed" in err
    code, out, err = run_cli(["eval", "-m", "num_ret", "--skip-malformed", qrels, run], capsys)
    assert code == 0 and "skipped 1 malformed run line(s)" in err and out.split()[-1] == str(len(run_text.splitlines()) - 1)


@pytest.mark.parametrize("argv, option, span", [
    (["testset", "split", "{ts}", "--holdout", "nan"], "--holdout", "from 0.01 to 0.99"),
    (["testset", "eval", "{ts}", "--run", "{run}", "--holdout", "nan"], "--holdout", "from 0.01 to 0.99"),
    (["testset", "kappa", "{qrels}", "{qrels}", "--threshold", "nan"], "--threshold", "from -1 to 1"),
    (["testset", "refresh", "{ts}", "--candidates", "{qrels}", "--labels-a", "{qrels}", "--labels-b", "{qrels}",
      "--threshold", "nan", "-o", "{out}"], "--threshold", "from -1 to 1"),
    (["alert-rules", "--threshold", "nan"], "--threshold", "from 0 to 1"),
])
def test_nan_for_a_number_option_is_said_to_be_no_finite_number(files, capsys, tmp_path, argv, option, span):
    qrels, run = files
    ts = tmp_path / "ts.yaml"
    ts.write_text(_test_set("1"))
    argv = [a.format(ts=ts, run=run, qrels=qrels, out=tmp_path / "o") for a in argv]
    code, _, err = run_cli(argv, capsys)
    assert code == 2 and f"Invalid value for '{option}': 'nan' is not a finite number (give one {span})" in err, err
    assert "less than or equal" not in err


def test_retrieve_says_a_nan_k1_is_no_finite_number(tmp_path, capsys):
    """--k1 and --b go to the library's BM25 parameters, whose check says what a number must be, NaN included."""
    (tmp_path / "docs.jsonl").write_text('{"_id": "d1", "text": "cats"}\n')
    (tmp_path / "q.tsv").write_text("q1\tcats\n")
    for option in (["--k1", "nan"], ["--b", "nan"], ["--b", "-1"]):
        code, _, err = run_cli(["retrieve", "--corpus", tmp_path / "docs.jsonl", "--queries", tmp_path / "q.tsv",
                                *option, "-o", tmp_path / "r.trec"], capsys)
        assert code == 2 and "BM25 needs numbers k1 >= 0 (finite) and 0 <= b <= 1" in err, err
        assert "less than or equal" not in err and "greater than or equal" not in err


def test_gdeval_refuses_empty_qrels_as_eval_and_ndeval_do(files, capsys, tmp_path):
    qrels, run = files
    empty = tmp_path / "empty"
    empty.write_text("")
    for command in (["gdeval", empty, run, "10"], ["ndeval", empty, run], ["eval", empty, run]):
        code, out, err = run_cli(command, capsys)
        assert code == 2 and out == "" and f"{empty}: " in err and "empty" in err, (command, err)


# ------------------------------------------------------------------ 21: the tie-aware report's columns
def test_the_tie_aware_report_keeps_columns_apart(tmp_path, capsys):
    """30,000 tied docs (num_ret 30000.0000) and a long ir_measures name: every row splits into its six cells."""
    (tmp_path / "qrels").write_text("1 0 d1 1\n1 0 d2 1\n")
    (tmp_path / "run").write_text("".join(f"1 Q0 d{i} {i} 1.0 t\n" for i in range(1, 30_001)))
    name = "nDCG(dcg='exp-log2')@10"
    code, out, err = run_cli(["eval", "--tie-aware", "report", "-m", "num_ret", "-m", "P@5", "-m", name,
                              tmp_path / "qrels", tmp_path / "run"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.split()[:2] == ["measure", "trec_eval"])
    rows = [re.split(r"\s{2,}", ln.strip()) for ln in lines[at:at + 4]]
    assert rows[0] == ["measure", "trec_eval", "expected", "worst", "best", "largest query range"]
    assert rows[1] == ["num_ret", "30000.0000", "30000.0000", "30000.0000", "30000.0000", "0.0000"]
    # P@5 with 2 of 30,000 tied docs relevant: best 2/5, worst 0, expected 5 x 2/30000 / 5
    assert rows[2] == ["P@5", "0.0000", f"{2 / 30000:.4f}", "0.0000", "0.4000", "0.4000 (1)"]
    assert rows[3][0] == name and len(rows[3]) == 6
    # right-aligned numbers: each column ends where its header ends
    assert lines[at].index("trec_eval") + len("trec_eval") == lines[at + 1].index("30000.0000") + len("30000.0000")
    moved = [re.split(r"\s{2,}", ln.strip()) for ln in lines[lines.index(next(ln for ln in lines if "move most" in ln)) + 1:]]
    # query 1 moves most on nDCG@10 (worst 0: no relevant doc in the top 10; best 1: both first)
    assert moved == [["1", name, "0.0000 - 1.0000", "(range 1.0000; trec_eval 0.0000)"]], moved


# ------------------------------------------------------------------ 22: options checked before any file is read
def test_eval_refuses_bad_gauge_options_before_printing_anything(files, capsys, tmp_path):
    qrels, run = files
    for option in (["--metrics-prefix", "a-b", "--prometheus-textfile", tmp_path / "g.prom"],
                   ["--pushgateway", "http://a b"]):
        code, out, err = run_cli(["eval", *option, qrels, run], capsys)
        assert code == 2 and out == "" and not (tmp_path / "g.prom").exists(), (out, err)


@pytest.mark.parametrize("argv, said", [
    (["gate", "--baseline", "{missing}", "--current", "{missing}", "--max-drop", "200%"], "--max-drop '200%' must be"),
    (["gate", "--baseline", "{missing}", "--current", "{missing}", "--metric", "bogus"], "unknown test-set measure 'bogus'"),
    (["gate", "--baseline", "{missing}", "--current", "{missing}", "--metrics-prefix", "a-b"], "'a-b' is not a valid"),
    (["testset", "eval", "{ts}", "--run", "{missing}", "-m", "bogus"], "unknown test-set measure 'bogus'"),
    (["testset", "eval", "{ts}", "--run", "{missing}", "--metrics-prefix", "a-b"], "'a-b' is not a valid"),
    (["compare", "{missing}", "{missing}", "{missing}", "-m", "bogus"], "unknown measure 'bogus'"),
    (["fuse", "{missing}", "{missing}", "--tune", "{missing}", "--measure", "bogus", "-o", "{out}"], "unknown measure 'bogus'"),
    (["fuse", "{missing}", "{missing}", "--weights", "a,b", "-o", "{out}"], "--weights 'a,b' is not a list of numbers"),
    (["system", "eval", "{missing}", "--test-set", "{ts}", "-m", "bogus"], "unknown test-set measure 'bogus'"),
    (["rq", "--test-set", "{ts}", "--run", "{missing}", "--k", str(10 ** 20)], "the RQ cutoff k must be a whole number"),
])
def test_options_are_checked_before_any_file_is_read(tmp_path, capsys, argv, said):
    (tmp_path / "ts.yaml").write_text(_test_set("1"))
    argv = [a.format(missing=tmp_path / "missing", ts=tmp_path / "ts.yaml", out=tmp_path / "o") for a in argv]
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and said in err and "missing" not in err.split("\n")[0].replace(str(tmp_path / "missing"), ""), err
    assert "no such file" not in err, err
