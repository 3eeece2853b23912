"""The staged scripts and CLI on the bundled sample, as a user runs them."""
from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from conftest import ROOT, run_cli

SAMPLE = ROOT / "data" / "quest_sample"
GOLD = SAMPLE / "test.jsonl"


def script(name, *args, cwd=ROOT):
    return subprocess.run([sys.executable, str(ROOT / "code" / "evaluation" / name), *map(str, args)],
                          capture_output=True, text=True, cwd=cwd)


def staged(name, *args, capsys):
    """A staged script's main() run in this process (as `treckit` commands are in run_cli): (exit code, stdout,
    stderr)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"staged_{name[:-3]}", ROOT / "code" / "evaluation" / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    code = module.main(list(map(str, args)))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_three_stages(tmp_path):
    gold = ROOT / "data" / "quest_sample" / "test.jsonl"
    r = script("preprocess_qrels.py", "--input", gold, "--output", tmp_path / "qrels")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "test_id_added.jsonl").exists()
    first = json.loads((tmp_path / "test_id_added.jsonl").read_text().splitlines()[0])
    assert first["id"] == "1" and list(first)[0] == "id"
    n_docs = sum(len(json.loads(x)["docs"]) for x in gold.read_text().splitlines())
    assert len((tmp_path / "qrels").read_text().splitlines()) == n_docs
    run_in = tmp_path / "bm25.jsonl"
    run_in.write_text((ROOT / "data" / "quest_sample" / "bm25_predictions.jsonl").read_text())
    r = script("preprocess_run.py", "--input", run_in, "--run_name", "bm25", "--gold", gold)
    assert r.returncode == 0, r.stderr
    assert "treated as negated" in r.stderr
    out = tmp_path / "bm25_trec"
    assert all(line.split()[5] == "bm25" and float(line.split()[4]) >= 0 for line in out.read_text().splitlines())
    r = script("evaluate.py", "--run", out, "--qrels", tmp_path / "qrels", "--cutoffs", "1", "10", "--output", tmp_path / "res.json")
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "res.json").read_text())
    assert list(res) == ["cutoffs", "recall", "ndcg", "mrr", "map", "num_queries"]
    assert res["num_queries"] == 8 and "Cutoff" in r.stdout


def test_evaluate_matches_trec_eval_names(tmp_path, capsys):
    from treckit.stages import cutoff_table
    qrels = tmp_path / "q"
    qrels.write_text("1 0 a 1\n1 0 b 1\n2 0 c 2\n")
    run = tmp_path / "r"
    run.write_text("1 Q0 a 1 3 x\n1 Q0 z 2 2 x\n2 Q0 y 1 5 x\n2 Q0 c 2 4 x\n")
    t = cutoff_table(qrels, run, [1, 2])
    code, out, _ = run_cli(["eval", "--format", "json", "-m", "recall.1,2", "-m", "ndcg_cut.1,2", str(qrels), str(run)], capsys)
    summ = json.loads(out)[0]["summary"]
    assert t["recall"]["1"] == summ["recall_1"] == 0.25
    assert t["ndcg"]["2"] == summ["ndcg_cut_2"]


def test_exit_codes(tmp_path, capsys):
    code, _, err = run_cli(["eval", "-m", "map", str(tmp_path / "missing"), str(tmp_path / "r")], capsys)
    assert code == 2 and "no such file" in err
    code, _, err = run_cli(["eval", "-m", "bogus", str(tmp_path / "x"), str(tmp_path / "y")], capsys)
    assert code == 2 and "unknown measure" in err


# ---------------------------------------------------------------- the pipeline document's reading of TREC files
RAW_QRELS = "8 0 District 9 1\n8 0 American Psycho (film) 1\n8 0 Rio 2 0\n9 0 Saw 3 1\n"
# one line, two readings (tags '2.5' or 'mine'): `auto` cannot tell; the document's rule reads 'District 9'
RAW_RUN = "8 Q0 District 9 1 2.5 mine\n"


def test_staged_scripts_read_trec_files_by_the_documents_rule(tmp_path, capsys):
    """Doc ids with spaces, as the original pipeline wrote them: everything between the second field and the
    last (qrels), between Q0 and the rank (runs).  The count of such lines is said; `--layout auto` is still
    there, and every option its errors name works in the script that printed it."""
    qrels, run = tmp_path / "raw_qrels", tmp_path / "raw.trec"
    qrels.write_text(RAW_QRELS)
    run.write_text(RAW_RUN + "8 Q0 Saw 3 2 1.5 mine\n9 Q0 Saw 3 1 7 mine\n")
    code, _, err = staged("preprocess_qrels.py", "--input", qrels, "--output", tmp_path / "q_escaped", capsys=capsys)
    assert code == 0, err
    assert (tmp_path / "q_escaped").read_text().splitlines() == [
        "8 0 American%20Psycho%20(film) 1", "8 0 District%209 1", "8 0 Rio%202 0", "9 0 Saw%203 1"]
    assert "read 4 doc id(s) containing whitespace (first on line 1)" in err
    code, _, err = staged("preprocess_run.py", "--input", run, "--output", tmp_path / "run_escaped", capsys=capsys)
    assert code == 0, err
    assert (tmp_path / "run_escaped").read_text().splitlines()[0] == "8 Q0 District%209 1 2.5 mine"
    assert "read 3 doc id(s) containing whitespace" in err
    code, _, err = staged("evaluate.py", "--run", run, "--qrels", qrels, "--cutoffs", "1", "2",
                          "--output", tmp_path / "raw.json", capsys=capsys)
    assert code == 0, err
    assert err.count("containing whitespace") == 2          # the qrels' 4 and the run's 3, each said once
    # by hand: query 8 ranks District 9 (relevant) then Saw 3 (unjudged), 2 relevant: R@1 1/2, nDCG@2 1/(1 + 1/log2 3);
    # query 9 ranks Saw 3 (relevant) first: 1.  Means over the two queries:
    res = json.loads((tmp_path / "raw.json").read_text())
    assert res["recall"] == {"1": 0.75, "2": 0.75} and res["mrr"] == 1.0 and res["map"] == 0.75
    assert res["ndcg"]["2"] == pytest.approx((1 / (1 + 1 / math.log2(3)) + 1) / 2, abs=1e-12)
    code, _, err = staged("evaluate.py", "--run", tmp_path / "run_escaped", "--qrels", tmp_path / "q_escaped",
                          "--cutoffs", "1", "2", "--output", tmp_path / "escaped.json", capsys=capsys)
    assert code == 0 and "containing whitespace" not in err          # said only when there were such lines
    assert json.loads((tmp_path / "escaped.json").read_text()) == res

    # --layout auto: the qrels' '8 0 District 9 1' is ambiguous; the fix names options this script takes
    for name, args in (("evaluate.py", ["--run", run, "--qrels", qrels]),
                       ("preprocess_qrels.py", ["--input", qrels, "--output", tmp_path / "x"])):
        code, _, err = staged(name, *args, "--layout", "auto", capsys=capsys)
        assert code == 2 and "ambiguous line of 5 fields" in err and "Traceback" not in err
        for suggested in ("--layout docid-spaces", "--layout extra-columns", "--skip-malformed"):
            assert suggested in err
        code, _, err = staged(name, *args, "--layout", "auto", "--skip-malformed", capsys=capsys)
        assert code == 0 and "skipped 3 malformed qrels line(s)" in err, err      # 9, 2 and 3 read as grades
        code, _, err = staged(name, *args, "--layout", "extra-columns", "--skip-malformed", capsys=capsys)
        assert code == 0 and "grade 'Psycho' is not an integer" in err, err      # 'American' with grade 'Psycho'
        assert "ignored the columns after field 4 on 3 line(s)" in err
    one = tmp_path / "one.trec"
    one.write_text(RAW_RUN)
    code, _, err = staged("preprocess_run.py", "--input", one, "--layout", "auto", "--output", tmp_path / "y",
                          capsys=capsys)
    assert code == 2 and "ambiguous line" in err and "--layout docid-spaces" in err
    assert not (tmp_path / "y").exists()
    code, _, err = staged("preprocess_run.py", "--input", one, "--layout", "docid-spaces", "--output", tmp_path / "y",
                          capsys=capsys)
    assert code == 0 and (tmp_path / "y").read_text() == "8 Q0 District%209 1 2.5 mine\n"


def test_the_documents_workflow_on_quests_own_qrels(shared, tmp_path, capsys):
    """The pipeline document's step 3 on QUEST's published qrels (raw titles: '8 0 District 9 1' on line 97):
    the same numbers as on the same judgments written escaped."""
    quest = shared / "quest" / "test_id_added_qrels"
    run = tmp_path / "bm25.trec"
    code, _, err = staged("preprocess_run.py", "--input", SAMPLE / "bm25_predictions.jsonl", "--gold", GOLD,
                          "--run_name", "bm25", "--output", run, capsys=capsys)
    assert code == 0, err
    code, _, err = staged("evaluate.py", "--run", run, "--qrels", quest, "--output", tmp_path / "raw.json",
                          capsys=capsys)
    assert code == 0, err
    assert "read 14971 doc id(s) containing whitespace (first on line 1)" in err
    code, _, err = run_cli(["qrels", quest, "--layout", "docid-spaces", "-o", tmp_path / "escaped"], capsys)
    assert code == 0, err
    code, _, err = staged("evaluate.py", "--run", run, "--qrels", tmp_path / "escaped", "--output",
                          tmp_path / "escaped.json", capsys=capsys)
    assert code == 0, err
    raw, escaped = (json.loads((tmp_path / f).read_text()) for f in ("raw.json", "escaped.json"))
    assert raw == escaped and raw["num_queries"] == 8
    assert f"{raw['mrr']:.4f}" == "0.0208" and f"{raw['map']:.4f}" == "0.0081"


# ---------------------------------------------------------------- the run name and the default output
def test_run_name_names_only_runs_that_carry_none(tmp_path, capsys):
    """--run_name (optional, default 'run') is the tag of an input without one (JSONL); a TREC file keeps its own,
    and the script says so.  `treckit run --run-name` still sets every line's tag."""
    preds = tmp_path / "preds.jsonl"
    preds.write_text('{"id": "1", "docs": ["a", "b"], "scores": [2.0, 1.0]}\n')
    trec = tmp_path / "mine.trec"
    trec.write_text("1 Q0 a 1 2 mytag\n1 Q0 b 2 1 mytag\n")
    tags = {}
    for label, src, args in (("jsonl", preds, []), ("jsonl named", preds, ["--run_name", "bm25"]),
                             ("trec", trec, []), ("trec named", trec, ["--run_name", "bm25"])):
        out = tmp_path / f"{label.replace(' ', '_')}.out"
        code, _, err = staged("preprocess_run.py", "--input", src, *args, "--output", out, capsys=capsys)
        assert code == 0, err
        tags[label] = {line.split()[5] for line in out.read_text().splitlines()}
        assert ("kept the TREC run's own tag (mytag)" in err) == (src == trec), err
    assert tags == {"jsonl": {"run"}, "jsonl named": {"bm25"}, "trec": {"mytag"}, "trec named": {"mytag"}}
    code, _, err = run_cli(["run", trec, "--run-name", "X", "-o", tmp_path / "cli.out"], capsys)
    assert code == 0 and {ln.split()[5] for ln in (tmp_path / "cli.out").read_text().splitlines()} == {"X"}


def test_default_output_is_said(tmp_path, capsys):
    preds = tmp_path / "preds.jsonl"
    preds.write_text('{"id": "1", "docs": ["a", "b"], "scores": [2.0, 1.0]}\n')
    code, _, err = staged("preprocess_run.py", "--input", preds, capsys=capsys)
    written = tmp_path / "preds_trec"
    assert code == 0 and f"treckit: wrote {written}\n" in err
    assert written.read_text() == "1 Q0 a 1 2 run\n1 Q0 b 2 1 run\n"
    code, _, err = staged("preprocess_run.py", "--input", preds, "--output", tmp_path / "named", capsys=capsys)
    assert code == 0 and "wrote" not in err                  # the path given is not repeated


def test_detection_errors_name_options_the_scripts_take(tmp_path, capsys):
    """A qrels file that looks like a run: the fix names --qrels-format, which evaluate.py (like treckit eval)
    takes; a run whose format cannot be told names --run-format, which every run reader takes."""
    runlike, run = tmp_path / "runlike", tmp_path / "r.trec"
    runlike.write_text("1 Q0 a 1 2.5 t\n1 Q0 b 2 1.5 t\n")
    run.write_text("1 Q0 a 1 2.5 t\n")
    code, _, err = staged("evaluate.py", "--run", run, "--qrels", runlike, capsys=capsys)
    assert code == 2 and "--qrels-format trec" in err
    code, _, err = staged("evaluate.py", "--run", run, "--qrels", runlike, "--qrels-format", "trec", capsys=capsys)
    assert code == 2 and "grade 't' is not an integer" in err          # read as qrels, as asked
    code, out, err = staged("evaluate.py", "--run", SAMPLE / "bm25_predictions.jsonl", "--gold", GOLD, "--qrels", GOLD,
                            "--qrels-format", "quest", "--cutoffs", "10", capsys=capsys)
    assert code == 0 and "MRR 0.3375   MAP 0.2253   queries 8" in out, err
    odd = tmp_path / "odd"
    odd.write_text("just two\n")
    for name, args in (("evaluate.py", ["--run", odd, "--qrels", GOLD]), ("preprocess_run.py", ["--input", odd])):
        code, _, err = staged(name, *args, capsys=capsys)
        assert code == 2 and "pass --run-format trec|trec3|tsv|jsonl" in err
