"""The staged scripts and CLI on the bundled sample, as a user runs them."""
from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT, run_cli


def script(name, *args, cwd=ROOT):
    return subprocess.run([sys.executable, str(ROOT / "code" / "evaluation" / name), *map(str, args)],
                          capture_output=True, text=True, cwd=cwd)


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
