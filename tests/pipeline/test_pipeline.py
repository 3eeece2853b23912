"""The staged scripts and CLI on the bundled sample, as a user runs them."""
from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import treckit
from helpers import ROOT, run_cli, staged

SAMPLE = ROOT / "data" / "quest_sample"
GOLD = SAMPLE / "test.jsonl"


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
    assert list(res) == ["cutoffs", "recall", "ndcg", "mrr", "map", "num_queries", "malformed_lines_skipped"]
    assert res["num_queries"] == 8 and res["malformed_lines_skipped"] == {"qrels": 0, "run": 0}
    assert r.stdout.splitlines()[:6] == ["=" * 60, "Evaluation Results", "=" * 60, "", "Cutoff     Recall@k        NDCG@k",
                                         "-" * 60]


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
    for name, args in (("evaluate.py", ["--run", run, "--qrels", qrels, "--strict"]),
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
    the same numbers as on the same judgments written escaped, and the cross-check passes."""
    quest = shared / "quest" / "test_id_added_qrels"
    run = tmp_path / "bm25.trec"
    code, _, err = staged("preprocess_run.py", "--input", SAMPLE / "bm25_predictions.jsonl", "--gold", GOLD,
                          "--run_name", "bm25", "--output", run, capsys=capsys)
    assert code == 0, err
    code, _, err = staged("evaluate.py", "--run", run, "--qrels", quest, "--output", tmp_path / "raw.json",
                          "--cross-check", capsys=capsys)
    assert code == 0, err
    assert "read 14971 doc id(s) containing whitespace (first on line 1)" in err
    assert "15 numbers agree with ir_measures" in err
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


# ---------------------------------------------------------------- --cross-check: every number again, with ir_measures
def sample_outputs(tmp_path, capsys) -> tuple[Path, Path]:
    qrels, run = tmp_path / "test_qrels", tmp_path / "bm25.trec"
    assert run_cli(["qrels", GOLD, "-o", qrels], capsys)[0] == 0
    assert run_cli(["run", SAMPLE / "bm25_predictions.jsonl", "--gold", GOLD, "--run-name", "bm25", "-o", run],
                   capsys)[0] == 0
    return qrels, run


def irm_mean(measure, qrels: dict, run: dict) -> float:
    """ir_measures' per-query values averaged over the queries both files have (trec_eval's query set)."""
    import ir_measures
    values = [m.value for m in ir_measures.iter_calc([measure], qrels, run) if m.query_id in run]
    return sum(values) / len(values)


def test_cross_check_passes_on_the_sample(tmp_path, capsys):
    import ir_measures
    qrels, run = sample_outputs(tmp_path, capsys)
    argv = ["eval", "--cross-check", "-m", "map", "-m", "recip_rank", "-m", "ndcg_cut.10", "-m", "recall.100", qrels, run]
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    assert out == run_cli(argv[:1] + argv[2:], capsys)[1]              # the same output as without the check
    assert f"cross-check {run}: 4 numbers agree with ir_measures {ir_measures.__version__} (pytrec_eval " in err
    assert "within 1e-9" in err and "(and the 32 values behind them, over 8 queries)" in err
    assert "not compared" not in err and "differ" not in err
    # the numbers docs/pipeline.md shows, from ir_measures itself
    q = {k: v for k, v in treckit.read_qrels(qrels).to_dict().items()}
    r = treckit.read_run(run).to_dict()
    assert f"{irm_mean(ir_measures.AP, q, r):.4f}" == "0.2253" and f"{irm_mean(ir_measures.RR, q, r):.4f}" == "0.3375"
    code, _, err = run_cli(["eval", "--cross-check", "-q", "-m", "map", "-m", "P.5", qrels, run], capsys)
    assert code == 0 and ": 18 numbers agree" in err              # 8 queries and the mean, twice


def test_cross_check_compares_like_with_like_in_float32(tmp_path, capsys):
    """pytrec_eval reads scores as float32: 1.0000000001 and 1.0 tie there, and the tie goes to the greater docno
    (b, not relevant).  treckit prints trec_eval 10.0's doubles (a first: RR 1); the check compares ir_measures
    with treckit's --float32 reading (RR 0.5 for query 1) and says which printed numbers differ from it."""
    import ir_measures
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n")
    run.write_text("1 Q0 a 1 1.0000000001 t\n1 Q0 b 2 1.0 t\n2 Q0 c 1 2.5 t\n2 Q0 d 2 1.5 t\n")
    code, out, err = run_cli(["eval", "--cross-check", "-m", "recip_rank", "-m", "P.1", qrels, run], capsys)
    assert code == 0, err
    assert out.split() == ["recip_rank", "all", "1.0000", "P_1", "all", "1.0000"]
    assert "2 numbers agree" in err and "recip_rank, P_1 as printed (scores as doubles" in err
    assert "float32 reading: scores that tie only in float32" in err
    _, out32, _ = run_cli(["eval", "--float32", "-m", "recip_rank", qrels, run], capsys)
    theirs = irm_mean(ir_measures.RR, {"1": {"a": 1, "b": 0}, "2": {"c": 1}},
                      {"1": {"a": 1.0000000001, "b": 1.0}, "2": {"c": 2.5, "d": 1.5}})
    assert theirs == 0.75 and out32.split()[2] == "0.7500"          # (0.5 + 1) / 2
    code, _, err = run_cli(["eval", "--cross-check", "--float32", "-m", "recip_rank", qrels, run], capsys)
    assert code == 0 and "1 number agrees" in err and "differ" not in err


def _perturbed(monkeypatch, measure: str, query: str, by: float) -> None:
    """ir_measures' value of ``measure`` for ``query`` moved by ``by``: a disagreement the check must report."""
    import ir_measures
    real = ir_measures.pytrec_eval.iter_calc            # the provider the check asks

    def iter_calc(measures, qrels, run):
        for m in real(measures, qrels, run):
            yield m._replace(value=m.value + by) if str(m.measure) == measure and m.query_id == query else m
    monkeypatch.setattr(ir_measures.pytrec_eval, "iter_calc", iter_calc)


def test_cross_check_fails_loudly_on_a_difference(tmp_path, capsys, monkeypatch):
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n")
    run.write_text("1 Q0 a 1 1.0000000001 t\n1 Q0 b 2 1.0 t\n2 Q0 c 1 2.5 t\n2 Q0 d 2 1.5 t\n")
    _perturbed(monkeypatch, "AP", "2", 0.01)
    code, out, err = run_cli(["eval", "--cross-check", "-m", "map", "-m", "P.1", qrels, run], capsys)
    assert code == 3 and out == ""                  # nothing printed that disagrees
    assert "cross-check" in err and "failed: 2 number(s) differ from ir_measures" in err
    assert "map (AP), query 2: treckit 1.0, ir_measures 1.01" in err
    # the mean: treckit's float32 reading (0.5 + 1) / 2, printed 1.0 as doubles; ir_measures (0.5 + 1.01) / 2
    assert ("map (AP), all 2 queries judged and in the run: treckit 0.75 with scores as float32 (printed: 1.0), "
            "ir_measures 0.755") in err
    assert "P_1" not in err

    code, _, err = run_cli(["eval", "--cross-check", "--float32", "-m", "map", qrels, run], capsys)
    assert code == 3 and "map (AP), all 2 queries judged and in the run: treckit 0.75, ir_measures 0.755" in err


def test_evaluate_py_cross_check_fails_with_exit_3_and_writes_nothing(tmp_path):
    """End to end, as `make eval` runs it: ir_measures made to disagree on one query's nDCG@10."""
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("1 0 a 1\n1 0 b 2\n2 0 c 1\n")
    run.write_text("1 Q0 a 1 3 t\n1 Q0 x 2 2 t\n1 Q0 b 3 1 t\n2 Q0 c 1 2.5 t\n")
    patch = ("import ir_measures, runpy, sys\n"
             "real = ir_measures.pytrec_eval.iter_calc\n"
             "def iter_calc(ms, q, r):\n"
             "    for m in real(ms, q, r):\n"
             "        yield m._replace(value=m.value - 0.001) if str(m.measure) == 'nDCG@10' and m.query_id == '1' else m\n"
             "ir_measures.pytrec_eval.iter_calc = iter_calc\n"
             "sys.argv = sys.argv[1:]\n"
             "runpy.run_path(sys.argv[0], run_name='__main__')\n")
    script_path = ROOT / "code" / "evaluation" / "evaluate.py"
    argv = [script_path, "--run", run, "--qrels", qrels, "--cutoffs", "1", "10", "--output", tmp_path / "res.json"]
    p = subprocess.run([sys.executable, "-c", patch, *map(str, argv), "--cross-check"], capture_output=True, text=True)
    assert p.returncode == 3 and p.stdout == "" and not (tmp_path / "res.json").exists()
    # query 1: a (1) at rank 1, b (2) at rank 3; ideal b, a: (1 + 2/2) / (2 + 1/log2 3)
    ndcg_1 = (1 + 2 / 2) / (2 + 1 / math.log2(3))
    assert f"ndcg_cut_10 (nDCG@10), query 1: treckit {ndcg_1!r}, ir_measures {ndcg_1 - 0.001!r}" in p.stderr
    assert "ndcg_cut_10 (nDCG@10), all 2 queries judged and in the run" in p.stderr
    p = subprocess.run([sys.executable, "-c", patch.replace("0.001", "0.0"), *map(str, argv), "--cross-check"],
                       capture_output=True, text=True)
    assert p.returncode == 0 and ": 7 numbers agree with ir_measures" in p.stderr    # 2 + 2 cutoffs, MRR, MAP, queries
    assert json.loads((tmp_path / "res.json").read_text())["ndcg"]["10"] == pytest.approx((ndcg_1 + 1) / 2, abs=1e-15)


def test_cross_check_names_what_it_does_not_compare(tmp_path, capsys):
    """IPrec: pytrec_eval's trec_eval 9 rounding (R = 4: recall 0.3 needs (long)(1.2 + 0.9) = 2 relevant docs there,
    lround(1.2) = 1 here); RR@k: ir_measures breaks ties its own way (c and d tied, c relevant: its RR@1 is 1,
    trec_eval's ranking puts d first); gm_map: no such measure.  Each is named with its reason; map is compared."""
    import ir_measures
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("1 0 a 1\n1 0 r1 1\n1 0 r2 1\n1 0 r3 1\n2 0 c 1\n")
    run.write_text("1 Q0 a 1 2 t\n1 Q0 x 2 1 t\n1 Q0 y 3 0.75 t\n1 Q0 r1 4 0.5 t\n2 Q0 c 1 1 t\n2 Q0 d 2 1 t\n")
    q = {"1": {"a": 1, "r1": 1, "r2": 1, "r3": 1}, "2": {"c": 1}}
    r = {"1": {"a": 2.0, "x": 1.0, "y": 0.75, "r1": 0.5}, "2": {"c": 1.0, "d": 1.0}}
    theirs = {(m.query_id, str(m.measure)): m.value
              for m in ir_measures.iter_calc([ir_measures.RR @ 1, ir_measures.IPrec @ 0.3], q, r)}
    ours = treckit.evaluate(qrels, run, ["RR@1", "IPrec@0.3"]).set_index("qid")
    assert theirs["1", "IPrec@0.3"] == 0.5 and ours.loc["1", "IPrec@0.3"] == 1.0    # 2/4 at r1; 1/1 at a
    assert theirs["2", "RR@1"] == 1.0 and ours.loc["2", "RR@1"] == 0.0
    code, _, err = run_cli(["eval", "--cross-check", "-m", "map", "-m", "gm_map", "-m", "RR@1", "-m", "IPrec@0.3",
                            "-m", "iprec_at_recall", qrels, run], capsys)
    assert code == 0, err
    assert ": 1 number agrees" in err                         # map
    assert "not compared: gm_map (no equal in ir_measures)" in err
    assert "not compared: iprec_at_recall, IPrec@0.3 (pytrec_eval turns a recall level into relevant docs" in err
    assert "not compared: RR@1 (ir_measures' RR@k breaks score ties its own way" in err


def test_cross_check_refuses_what_ir_measures_cannot_recompute(tmp_path, capsys):
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("1 0 a 1\n")
    run.write_text("1 Q0 a 1 1 t\n")
    (tmp_path / "z").write_text("1 map 0.5 0.1\n")
    for flags, named in ((["-c"], "-c"), (["-M", "5"], "-M"), (["-Z", tmp_path / "z"], "-Z"),
                         (["--missing", "zero"], "--missing zero"), (["-R", "qrels_jg"], "-R qrels_jg")):
        code, out, err = run_cli(["eval", "--cross-check", *flags, "-m", "map", qrels, run], capsys)
        assert code == 2 and out == "" and f"ir_measures, which has no {named}" in err, (flags, err)
    code, _, err = staged("evaluate.py", "--run", run, "--qrels", qrels, "--missing", "zero", "--cross-check",
                          capsys=capsys)
    assert code == 2 and "which has no --missing zero" in err


def test_cross_check_with_levels_judged_only_and_negative_judgments(tmp_path, capsys):
    """-l and -J become ir_measures' rel= and judged_only= where a measure takes them; where it does not, the
    measure is named.  A query judged only with negative grades is not handed to pytrec_eval (its trec_eval 9
    code keeps the last query's grade levels there) and is named."""
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("1 0 a 2\n1 0 b 1\n1 0 c 0\n1 0 d 2\n2 0 e 1\n2 0 f 2\n3 0 g -1\n")
    run.write_text("1 Q0 u 1 9 t\n1 Q0 b 2 8 t\n1 Q0 a 3 7 t\n1 Q0 c 4 6 t\n"
                   "2 Q0 f 1 5 t\n2 Q0 v 2 4 t\n2 Q0 e 3 3 t\n3 Q0 g 1 1 t\n")
    measures = ["-m", "map", "-m", "P.2", "-m", "recall.3", "-m", "ndcg_cut.3", "-m", "num_rel_ret", "-m", "bpref"]
    code, out, err = run_cli(["eval", "--cross-check", "-l", "2", "-J", *measures, qrels, run], capsys)
    assert code == 0, err
    assert ": 3 numbers agree" in err                         # map, P_2, recall_3 with rel=2, judged_only=True
    assert "not compared: ndcg_cut.3 (no equal in ir_measures at -l 2)" in err
    assert "not compared: num_rel_ret, bpref (no equal in ir_measures with -J)" in err
    assert "1 query whose judgments are all negative not given to pytrec_eval (it misreads them): 3" in err
    code, _, err = run_cli(["eval", "--cross-check", "-l", "2", *measures, qrels, run], capsys)
    assert code == 0 and ": 5 numbers agree" in err and "no equal in ir_measures at -l 2" in err
    code, _, err = run_cli(["eval", "--cross-check", *measures, qrels, run], capsys)
    assert code == 0 and ": 6 numbers agree" in err


DOC_IDS = ["a", "b", "a b", "a!", "100%", "x%20y", "d1", "d2", "d10", "é"]


@st.composite
def judged_runs(draw):
    """Qrels and a run with tied scores, scores that tie only in float32, doc ids that escape, negative grades
    (queries judged only with them too), judged queries the run misses and run queries nobody judged."""
    qrels, run = {}, {}
    for q in range(draw(st.integers(1, 4))):
        qid = f"q{q}"
        if draw(st.booleans()) or q == 0:
            qrels[qid] = draw(st.dictionaries(st.sampled_from(DOC_IDS), st.integers(-1, 3), min_size=1, max_size=6))
        if draw(st.booleans()) or q == 0:
            base = st.sampled_from([0.5, 1.0, 2.0, -1.0])
            near = base.map(lambda x: x + 1e-10)             # equal to its base in float32, not in double
            run[qid] = draw(st.dictionaries(st.sampled_from(DOC_IDS), st.one_of(base, near, st.floats(-5, 5)),
                                            min_size=1, max_size=8))
    return qrels, run


@settings(max_examples=40, deadline=None)
@given(judged_runs(), st.sampled_from([1, 2]), st.booleans())
def test_cross_check_agrees_on_random_runs(case, level, judged_only):
    """Every measure with an equal in ir_measures, on random data, at -l 1 and 2, with and without -J: the check
    passes, so treckit's numbers (as --float32 reads them) are ir_measures' through pytrec_eval."""
    from treckit.engines.crosscheck import cross_check
    from treckit.engines.memory import EvalOptions, evaluate_requests
    from treckit.measures.registry import resolve
    from treckit.model import Qrels, Run

    qrels, run = Qrels.from_dict(case[0]), Run.from_dict(case[1])
    if not set(case[0]) & set(case[1]):
        return                                                 # nothing to evaluate
    requests = resolve(["official", "ndcg", "ndcg_cut.3,10", "recall.2,10", "success.1,5", "map_cut.5", "set",
                        "infAP", "Judged", "Judged@5", "RR", "nDCG(dcg='exp-log2')@5", "P(rel=2)@3"])
    options = EvalOptions(level=level, judged_only=judged_only)
    result = evaluate_requests(qrels, run, requests, options)
    done = cross_check(qrels, run, result, options, per_query_printed=True)
    assert done.numbers > 0


def test_cross_check_of_a_run_evaluated_in_bounded_memory(tmp_path, capsys, monkeypatch):
    """A run streamed under --memory-limit is read again, whole, for the check; one read whole is checked as it
    was read (stdin too), never read twice."""
    from treckit.engines import crosscheck
    from treckit.engines.stream import plan
    from treckit.inputs.options import RunReading
    from treckit.stages import cutoff_table

    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("".join(f"{q} 0 d{q}_{d} {d % 3}\n" for q in range(1, 6) for d in range(0, 30, 4)))
    run.write_text("".join(f"{q} Q0 d{q}_{d} {d + 1} {30 - d}.5 t\n" for q in range(1, 6) for d in range(30)))
    reread = []
    real = crosscheck.read_for_check
    monkeypatch.setattr(crosscheck, "read_for_check", lambda *a: reread.append(a) or real(*a))
    assert plan(run, RunReading(), 1024).stream
    streamed = cutoff_table(qrels, run, [1, 10], memory_limit=1024, cross_check=True)
    assert len(reread) == 1 and ": 7 numbers agree with ir_measures" in capsys.readouterr().err
    whole = cutoff_table(qrels, run, [1, 10], memory_limit=None, cross_check=True)
    assert len(reread) == 1 and whole == streamed
    from treckit.inputs import sources as tio
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(run.read_bytes())))
    try:
        code, _, err = run_cli(["eval", "--cross-check", "-m", "map", qrels, "-"], capsys)
    finally:
        tio.forget_streams()          # stdin is read once per process: later tests give their own
    assert code == 0 and "cross-check -: 1 number agrees" in err and len(reread) == 1


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


def test_cross_check_joins_docs_as_treckit_does(tmp_path, capsys):
    """A doc id with a no-break space written raw in the qrels (kept as written) and escaped in the run treckit
    converts from JSONL: treckit joins them on the decoded id, and so must what pytrec_eval is given.  Ties go
    by the run's written form: a%C2%A0b ranks above a! and c ('%' > '!', 'a' < 'c': c, then a%C2%A0b, then a!)."""
    qrels, run = tmp_path / "q", tmp_path / "r.jsonl"
    qrels.write_text("1 0 a\u00a0b 1\n1 0 c 0\n", encoding="utf-8")
    run.write_text(json.dumps({"id": "1", "docs": ["a\u00a0b", "c", "a!"], "scores": [1.0, 1.0, 1.0]}) + "\n")
    code, out, err = run_cli(["eval", "--cross-check", "-m", "recip_rank", qrels, run, "--order", "desc"], capsys)
    assert code == 0, err
    assert out.split() == ["recip_rank", "all", "0.5000"] and ": 1 number agrees" in err


# ---------------------------------------------------------------- the pipeline document's words (seed 001)
def test_staged_scripts_skip_malformed_lines_with_a_counted_warning(tmp_path, capsys, trec_eval):
    """Seed 001: "Skipping malformed line" warnings, not a stop.  preprocess_run.py skips a line that is not JSON
    and evaluate.py the run and qrels lines it cannot read, each said, all counted (in evaluate.py's JSON too), and
    the numbers are the clean files' (trec_eval's); --strict stops at the first (exit 2, nothing written), and
    `treckit eval` stays strict, as trec_eval is."""
    preds = tmp_path / "preds.jsonl"
    preds.write_text('{"id": "1", "docs": ["Rio 2", "Up"], "scores": [2.0, 1.0]}\n{"id": "2", "docs": ["Saw 3"\n'
                     '{"id": "3", "docs": ["Up"], "scores": [0.5]}\n')
    code, _, err = staged("preprocess_run.py", "--input", preds, "--run_name", "mine", capsys=capsys)
    assert code == 0, err
    assert "preds.jsonl: Skipping malformed line 2: not valid JSON" in err and "skipped 1 malformed run line(s)" in err
    assert (tmp_path / "preds_trec").read_text().splitlines() == ["1 Q0 Rio%202 1 2 mine", "1 Q0 Up 2 1 mine",
                                                                  "3 Q0 Up 1 0.5 mine"]
    code, _, err = staged("preprocess_run.py", "--input", preds, "--output", tmp_path / "strict.trec", "--strict",
                          capsys=capsys)
    assert code == 2 and "preds.jsonl:2: not valid JSON" in err and not (tmp_path / "strict.trec").exists()

    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 Rio%202 1\n1 0 Up two\n3 0 Up 1\n3 0 Saw%203 2\n")
    run.write_text("1 Q0 Rio%202 1 2 mine\n1 Q0 Up 2 one mine\n3 Q0 Up 1 0.5 mine\n3 Q0\n3 Q0 Saw%203 2 0.25 mine\n")
    code, out, err = staged("evaluate.py", "--run", run, "--qrels", qrels, "--cutoffs", "1", "2", "--output",
                            tmp_path / "res.json", capsys=capsys)
    assert code == 0, err
    for line in ("qrels: Skipping malformed line 2: grade 'two' is not an integer",
                 "run: Skipping malformed line 2: score 'one' is not a number", "run: Skipping malformed line 4:"):
        assert line in err, line
    res = json.loads((tmp_path / "res.json").read_text())
    assert res["malformed_lines_skipped"] == {"qrels": 1, "run": 2}
    clean_qrels, clean_run = tmp_path / "clean_qrels", tmp_path / "clean_run"
    clean_qrels.write_text("1 0 Rio%202 1\n3 0 Up 1\n3 0 Saw%203 2\n")
    clean_run.write_text("1 Q0 Rio%202 1 2 mine\n3 Q0 Up 1 0.5 mine\n3 Q0 Saw%203 2 0.25 mine\n")
    ref = subprocess.run([str(trec_eval), "-m", "recall.1,2", "-m", "ndcg_cut.1,2", "-m", "recip_rank", "-m", "map",
                          str(clean_qrels), str(clean_run)], capture_output=True, text=True, check=True).stdout
    want = {f.split()[0]: float(f.split()[2]) for f in ref.splitlines()}
    assert {k: round(v, 4) for k, v in want.items()} == {
        "recall_1": round(res["recall"]["1"], 4), "recall_2": round(res["recall"]["2"], 4),
        "ndcg_cut_1": round(res["ndcg"]["1"], 4), "ndcg_cut_2": round(res["ndcg"]["2"], 4),
        "recip_rank": round(res["mrr"], 4), "map": round(res["map"], 4)}
    code, _, err = staged("evaluate.py", "--run", run, "--qrels", qrels, "--strict", "--output", tmp_path / "s.json",
                          capsys=capsys)
    assert code == 2 and "qrels:2: grade 'two' is not an integer" in err and not (tmp_path / "s.json").exists()
    code, _, err = run_cli(["eval", "-m", "map", qrels, run], capsys)
    assert code == 2 and "grade 'two' is not an integer" in err
    # a run evaluated in bounded memory (over --memory-limit) is not read whole to skip a line: said, with the fix
    clean_qrels_args = ["--qrels", clean_qrels, "--cutoffs", "1", "2"]
    run.write_text(run.read_text() + "".join(f"9 Q0 x{i} {i} 0.5 mine\n" for i in range(1, 400)))   # over 1K x 3
    code, _, err = staged("evaluate.py", "--run", run, *clean_qrels_args, "--memory-limit", "1K", capsys=capsys)
    assert code == 2 and "run:2: score 'one' is not a number" in err and "it is not skipped here" in err
    code, _, err = staged("evaluate.py", "--run", run, *clean_qrels_args, "--memory-limit", "0", "--output",
                          tmp_path / "whole.json", capsys=capsys)
    assert code == 0 and json.loads((tmp_path / "whole.json").read_text())["malformed_lines_skipped"]["run"] == 2


def test_evaluate_py_prints_the_documents_banner_and_says_when_no_query_overlaps(tmp_path, capsys):
    """Seed 001's "Evaluation Results" table, and its message when the files share no query id."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 a 1\n")
    run.write_text("1 Q0 a 1 1.0 r\n")
    code, out, err = staged("evaluate.py", "--run", run, "--qrels", qrels, "--cutoffs", "1", "5", capsys=capsys)
    assert code == 0, err
    assert out.splitlines() == ["=" * 60, "Evaluation Results", "=" * 60, "", "Cutoff     Recall@k        NDCG@k",
                                "-" * 60, "1          1.0000          1.0000", "5          1.0000          1.0000",
                                "-" * 60, "MRR 1.0000   MAP 1.0000   queries 1", "=" * 60]
    run.write_text("2 Q0 a 1 1.0 r\n")
    code, out, err = staged("evaluate.py", "--run", run, "--qrels", qrels, capsys=capsys)
    assert code == 2 and out == "" and "No overlapping query IDs between ground truth and run file" in err


def test_the_staged_files_read_the_same_in_trec_eval(tmp_path, capsys, trec_eval):
    """docs/pipeline.md's trec_eval block (not run there: make demo installs no trec_eval): the reference binary on
    the sample's staged qrels and run prints the bytes `treckit eval` prints."""
    assert staged("preprocess_qrels.py", "--input", GOLD, "--output", tmp_path / "test_qrels", capsys=capsys)[0] == 0
    assert staged("preprocess_run.py", "--input", SAMPLE / "bm25_predictions.jsonl", "--gold", GOLD, "--run_name", "bm25",
                  "--output", tmp_path / "bm25.trec", capsys=capsys)[0] == 0
    args = ["-m", "map", "-m", "recip_rank", "-m", "ndcg_cut.10", "-m", "recall.100", tmp_path / "test_qrels",
            tmp_path / "bm25.trec"]
    code, out, err = run_cli(["eval", *args], capsys)
    assert code == 0, err
    ref = subprocess.run([str(trec_eval), *map(str, args)], capture_output=True, text=True, check=True).stdout
    assert out == ref and "map                   \tall\t0.2253\n" in ref
