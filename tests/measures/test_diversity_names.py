"""ir_measures' diversity names (alpha_nDCG@k, ERR_IA@k, NRBP, nNRBP, P_IA@k, StRecall@k, AP_IA, ...) in treckit
eval and the API: the values of pyndeval (ir_measures' provider for them) on trec_eval's test files with generated
subtopic qrels, the rule for subtopic qrels beside other measures, the tie rule, judged_only and -J, -c, and what
is refused (-M, a streamed run, a line judged twice, a name without its cutoff)."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

from treckit import thresholds
import treckit
from helpers import run_cli

pyndeval = pytest.importorskip("pyndeval", reason="pyndeval (the test extra) is not installed")

# ir_measures' name -> the name pyndeval computes it under, with the alpha and beta ir_measures gives it
NAMES = {"alpha_nDCG@20": ("alpha-nDCG@20", 0.5, 0.5), "alpha_nDCG(alpha=0.3)@10": ("alpha-nDCG@10", 0.3, 0.5),
         "α_DCG@5": ("alpha-DCG@5", 0.5, 0.5), "ERR_IA@20": ("ERR-IA@20", 0.5, 0.5),
         "nERR_IA@1": ("nERR-IA@1", 0.5, 0.5), "NRBP": ("NRBP", 0.5, 0.5),
         "nNRBP(alpha=0.7, beta=0.8)": ("nNRBP", 0.7, 0.8), "AP_IA": ("MAP-IA", 0.5, 0.5),
         "MAP_IA(rel=2)": ("MAP-IA", 0.5, 0.5), "P_IA@10": ("P-IA@10", 0.5, 0.5),
         "StRecall@20": ("strec@20", 0.5, 0.5)}


def subtopic_qrels(qrels_path, out, seed=3, subtopics=5):
    """trec_eval's qrels as subtopic qrels: each judged document judged on 1-3 of ``subtopics`` subtopics, with its
    grade (doubled now and then) where it is relevant to one (0 on the others), subtopics in a shuffled order."""
    r = random.Random(seed)
    names = [f"s{i}" for i in range(subtopics)]
    r.shuffle(names)
    lines = []
    for line in open(qrels_path):
        q, _, d, g = line.split()
        for s in r.sample(names, r.randint(1, 3)):
            lines.append((q, s, d, int(g) * r.choice([1, 2]) if r.random() < 0.7 else 0))
    out.write_text("".join(f"{q} {s} {d} {g}\n" for q, s, d, g in lines))
    return lines


def reference(lines, run_path, name, *, judged_only=False):
    """{query: value} as ir_measures computes ``name`` with pyndeval (its run read by ir_measures' reader)."""
    import ir_measures
    nd, alpha, beta = NAMES[name]
    rel = ir_measures.parse_measure(name)["rel"]
    judged = {(q, d) for q, _, d, _ in lines}
    rows = [(x.query_id, x.doc_id, x.score) for x in ir_measures.read_trec_run(str(run_path))
            if not judged_only or (x.query_id, x.doc_id) in judged]
    got = pyndeval.RelevanceEvaluator(lines, [nd], relevance_level=rel, alpha=alpha, beta=beta).evaluate(rows)
    return {q: v[nd] for q, v in got.items()}


def same(a, b) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def test_trec_eval_test_files_equal_pyndeval(shared, tmp_path):
    """Every name, every query of trec_eval's results.test against generated subtopic qrels: pyndeval's doubles."""
    lines = subtopic_qrels(shared / "trec_eval" / "qrels.test", tmp_path / "sub")
    run = shared / "trec_eval" / "results.test"
    df = treckit.evaluate(str(tmp_path / "sub"), str(run), list(NAMES), warn=lambda m: None)
    per_query = df[df.qid != "all"]
    assert len(per_query) == 3                  # the queries results.test answers
    for name in NAMES:
        ref = reference(lines, run, name)
        ours = dict(zip(per_query.qid, per_query[name]))
        assert set(ours) == set(ref)
        assert [q for q in ref if not same(ref[q], ours[q])] == [], name
        assert any(v > 0 for v in ours.values()), name


def test_same_values_as_ir_measures_itself(shared, tmp_path):
    """ir_measures' own iter_calc (one name a call), on the same files: the same doubles."""
    import contextlib
    import io

    import ir_measures
    subtopic_qrels(shared / "trec_eval" / "qrels.test", tmp_path / "sub", seed=5)
    run = shared / "trec_eval" / "results.test"
    df = treckit.evaluate(str(tmp_path / "sub"), str(run), list(NAMES), warn=lambda m: None)
    for name in NAMES:
        with contextlib.redirect_stderr(io.StringIO()):
            got = {m.query_id: m.value for m in ir_measures.iter_calc(
                [ir_measures.parse_measure(name)], ir_measures.read_trec_qrels(str(tmp_path / "sub")),
                ir_measures.read_trec_run(str(run)))}
        ours = dict(zip(df.qid, df[name]))
        assert [q for q in got if not same(got[q], ours[q])] == [], name


def test_judged_only_and_minus_J(shared, tmp_path):
    """judged_only=True ranks only the judged documents (any judgment), as ir_measures' code filters the run; -J
    sets its default; StRecall and NRBP take no judged_only in ir_measures, so -J leaves them alone."""
    lines = subtopic_qrels(shared / "trec_eval" / "qrels.test", tmp_path / "sub", seed=9)
    run = shared / "trec_eval" / "results.test"
    q = str(tmp_path / "sub")
    only = treckit.evaluate(q, str(run), ["alpha_nDCG(judged_only=True)@20", "alpha_nDCG@20"], warn=lambda m: None)
    ref = reference(lines, run, "alpha_nDCG@20", judged_only=True)
    ours = dict(zip(only.qid, only["alpha_nDCG(judged_only=True)@20"]))
    assert [x for x in ref if not same(ref[x], ours[x])] == []
    assert (only["alpha_nDCG(judged_only=True)@20"] != only["alpha_nDCG@20"]).any()
    code, with_j, _ = run_cli(["eval", "-q", "-J", "-m", "alpha_nDCG@20", "-m", "StRecall@20", q, run])
    code2, without, _ = run_cli(["eval", "-q", "-m", "alpha_nDCG(judged_only=True)@20", "-m", "StRecall@20", q, run])
    assert code == code2 == 0
    column = [ln.split()[1:] for ln in with_j.splitlines()]
    assert column == [ln.split()[1:] for ln in without.splitlines()]


def test_ties_go_to_the_lesser_doc_id(tmp_path):
    """Two documents of equal score, the relevant one with the greater doc id: pyndeval ranks it second (doc id
    ascending), trec_eval's order first; ERR_IA@k says which is first.  By hand: one subtopic, alpha 0.5, the
    relevant document at rank 2 scores 1: ERR-IA@1 = 0; ERR-IA@2 = (0/1 + 1/2) over ndeval's ideal-ideal sum
    (1/1 + 0.5/2 = 1.25) = 0.4."""
    (tmp_path / "q").write_text("1 s1 b 1\n1 s1 a 0\n")
    (tmp_path / "r").write_text("1 Q0 a 1 1.0 r\n1 Q0 b 2 1.0 r\n")
    df = treckit.evaluate(str(tmp_path / "q"), str(tmp_path / "r"), ["ERR_IA@1", "ERR_IA@2", "P@1"],
                          warn=lambda m: None)
    row = df[df.qid == "1"].iloc[0]
    assert row["ERR_IA@1"] == 0.0 and row["ERR_IA@2"] == 0.4 and row["P@1"] == 1.0   # trec_eval ranks b first
    ref = pyndeval.RelevanceEvaluator([("1", "s1", "b", 1), ("1", "s1", "a", 0)], ["ERR-IA@1", "ERR-IA@2"]).evaluate(
        [("1", "a", 1.0), ("1", "b", 1.0)])
    assert ref["1"] == {"ERR-IA@1": 0.0, "ERR-IA@2": 0.4}


def test_subtopics_numbered_by_first_appearance(tmp_path):
    """The order each document's gains are summed in is the subtopics' first appearance over the whole file, as
    pyndeval numbers them: with alpha 0.3 the sums differ in the last bit by order; equal to pyndeval's."""
    r = random.Random(11)
    lines = [(str(q), f"t{r.randint(0, 9)}", f"d{r.randint(0, 30)}", r.choice([0, 1, 1])) for q in range(1, 30)
             for _ in range(40)]
    lines = list({(q, s, d): (q, s, d, g) for q, s, d, g in lines}.values())
    run = {str(q): {f"d{i}": float(r.randint(0, 4)) for i in range(31)} for q in range(1, 30)}
    from treckit.model import Qrels
    qrels = Qrels.from_columns([x[0] for x in lines], [x[2] for x in lines], [x[3] for x in lines],
                               iter=[x[1] for x in lines])
    names = ["alpha_nDCG(alpha=0.3)@20", "NRBP(alpha=0.3, beta=0.9)", "AP_IA"]
    df = treckit.evaluate(qrels, run, names, warn=lambda m: None)
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    for name, nd, alpha, beta in zip(names, ["alpha-nDCG@20", "NRBP", "MAP-IA"], [0.3, 0.3, 0.5], [0.5, 0.9, 0.5]):
        ref = pyndeval.RelevanceEvaluator(lines, [nd], alpha=alpha, beta=beta).evaluate(rows)
        ours = dict(zip(df.qid, df[name]))
        assert [q for q in ref if ref[q][nd] != ours[q]] == [], name


def test_complete_gives_zero_to_a_query_the_run_lacks(tmp_path):
    """-c: a judged query the run lacks counts 0 (ndeval -c), and the mean is over both queries."""
    (tmp_path / "q").write_text("1 s1 a 1\n1 s2 b 1\n2 s1 c 1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n")
    df = treckit.evaluate(str(tmp_path / "q"), str(tmp_path / "r"), ["StRecall@1", "StRecall@2"], complete=True,
                          warn=lambda m: None)
    assert df.set_index("qid")["StRecall@2"].to_dict() == {"1": 1.0, "2": 0.0, "all": 0.5}
    assert df.set_index("qid")["StRecall@1"].to_dict() == {"1": 0.5, "2": 0.0, "all": 0.25}


def test_beside_other_measures(shared, tmp_path, capsys):
    """Qrels judging each document once serve both: map is trec_eval's map of the same file, the diversity names
    read the iteration field as the subtopic.  Subtopic qrels (a document judged on several) beside map are
    refused, with the fix: each in a treckit eval of its own."""
    qrels = shared / "trec_eval" / "qrels.test"
    run = shared / "trec_eval" / "results.test"
    code, both, _ = run_cli(["eval", "-m", "map", "-m", "alpha_nDCG@20", qrels, run], capsys)
    code2, alone, _ = run_cli(["eval", "-m", "map", qrels, run], capsys)
    assert code == code2 == 0 and both.splitlines()[0] == alone.splitlines()[0]
    assert float(both.splitlines()[1].split()[2]) > 0
    subtopic_qrels(qrels, tmp_path / "sub")
    code, out, err = run_cli(["eval", "-m", "map", "-m", "alpha_nDCG@20", tmp_path / "sub", run], capsys)
    assert code == 2 and out == ""
    assert "subtopic qrels, as alpha_nDCG@20 reads them" in err and "map reads one judgment per document" in err
    assert "evaluate map in a treckit eval of its own" in err


@pytest.mark.parametrize("argv,words", [
    (["-M", "5", "-m", "alpha_nDCG@5"], "-M keeps the first documents of trec_eval's order"),
    (["--memory-limit", "1", "-m", "NRBP"], "computed in memory only"),
    (["-m", "alpha_nDCG"], "alpha_nDCG without a cutoff"),
    (["-m", "StRecall"], "StRecall without a cutoff"),
    (["-m", "NRBP(beta=1.5)"], "beta=1.5 must be from 0 to 1"),
    (["-m", "NRBP@5"], "NRBP has no parameter cutoff"),
])
def test_refusals(tmp_path, capsys, argv, words):
    (tmp_path / "q").write_text("1 s1 a 1\n1 s2 a 1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 2.0 r\n")
    code, out, err = run_cli(["eval", *argv, tmp_path / "q", tmp_path / "r"], capsys)
    assert code == 2 and out == "" and words in err and "Traceback" not in err, err


def test_a_subtopic_line_judged_twice_is_refused(tmp_path, capsys):
    """pyndeval keeps the last judgment of a (query, subtopic, document) while counting both towards the subtopic:
    refused here, naming the line's fields."""
    (tmp_path / "q").write_text("1 s1 a 1\n1 s1 a 0\n")
    (tmp_path / "r").write_text("1 Q0 a 1 2.0 r\n")
    code, out, err = run_cli(["eval", "-m", "AP_IA", tmp_path / "q", tmp_path / "r"], capsys)
    assert code == 2 and "judge doc 'a' twice for query '1' and subtopic 's1'" in err



def test_the_first_line_judging_again_is_named(tmp_path, capsys):
    """Of several repeated judgments, the message names the first line (in the file's order) that repeats one:
    here query 2's, though query 1 sorts first."""
    (tmp_path / "q").write_text("1 s1 a 1\n2 s1 b 1\n2 s1 b 0\n1 s1 a 0\n")
    (tmp_path / "r").write_text("1 Q0 a 1 2.0 r\n2 Q0 b 1 2.0 r\n")
    code, out, err = run_cli(["eval", "-m", "AP_IA", tmp_path / "q", tmp_path / "r"], capsys)
    assert code == 2 and "judge doc 'b' twice for query '2' and subtopic 's1'" in err
    (tmp_path / "q").write_text("1 s1 a 1\n2 s1 b 1\n2 s2 b 1\n1 s2 a 1\n")
    code, out, err = run_cli(["eval", "-m", "alpha_nDCG@20", "-m", "map", tmp_path / "q", tmp_path / "r"], capsys)
    assert code == 2 and "judge doc 'b' more than once for query '2'" in err

def test_api_reads_the_iteration_field():
    """A pandas qrels frame in ir_measures' column names (query_id, iteration, doc_id, relevance) and a list of
    ir_measures' Qrel namedtuples: the iteration is the subtopic.  By hand: a covers s1 and s2, b covers s1;
    strec@1 = 2/2; P-IA@2 = 3 (document, subtopic) pairs / (2 x 2) = 0.75."""
    import ir_measures
    import pandas as pd
    rows = [("1", "s1", "a", 1), ("1", "s2", "a", 1), ("1", "s1", "b", 1)]
    frame = pd.DataFrame(rows, columns=["query_id", "iteration", "doc_id", "relevance"])
    tuples = [ir_measures.Qrel(q, d, g, s) for q, s, d, g in rows]
    for qrels in (frame, tuples, iter(tuples)):
        df = treckit.evaluate(qrels, {"1": {"a": 2.0, "b": 1.0}}, ["StRecall@1", "P_IA@2"], warn=lambda m: None)
        row = df[df.qid == "1"].iloc[0]
        assert row["StRecall@1"] == 1.0 and row["P_IA@2"] == np.float64(3 / 4)


def test_cross_check_compares_or_says_why_not(shared, tmp_path, capsys):
    """--cross-check compares the C/W/L names and Compat through ir_measures' cwl_eval and compat providers (the
    run's scores handed as float32, as treckit recomputes them), and names each measure it cannot compare with the
    truth of why (not 'no equal in ir_measures': ir_measures has them)."""
    pytest.importorskip("pytrec_eval")
    qrels, run = shared / "trec_eval" / "qrels.test", shared / "trec_eval" / "results.test"
    code, out, err = run_cli(["eval", "-q", "--cross-check", "-m", "map", "-m", "ERR@5", "-m", "INST(max_rel=1)",
                              "-m", "Compat", "-m", "alpha_nDCG@5", qrels, run], capsys)
    assert code == 0 and out, err
    assert ": 12 numbers agree with ir_measures" in err           # map, INST, Compat: 3 queries and the mean each
    assert "not compared: ERR@5 (ir_measures computes it by running gdeval.pl, whose output has 5 decimals" in err
    assert "not compared: alpha_nDCG@5 (ir_measures computes it with pyndeval over subtopic qrels" in err
    assert "INST(max_rel=1) (" not in err and "Compat (" not in err and "no equal in ir_measures" not in err
    code, _, err = run_cli(["eval", "-J", "--cross-check", "-m", "INST(max_rel=1)", qrels, run], capsys)
    assert code == 0 and "not compared: INST(max_rel=1) (no equal in ir_measures with -J)" in err



def test_each_name_alone_gives_the_doubles_of_all_together(shared, tmp_path):
    """Only the measures asked for are computed (and the greedy ideal only to the depth the asked ones read): each
    name alone gives the bytes it gives beside every other."""
    subtopic_qrels(shared / "trec_eval" / "qrels.test", tmp_path / "sub", seed=6)
    run = str(shared / "trec_eval" / "results.test")
    whole = treckit.evaluate(str(tmp_path / "sub"), run, list(NAMES), warn=lambda m: None)
    for name in NAMES:
        alone = treckit.evaluate(str(tmp_path / "sub"), run, [name], warn=lambda m: None)
        assert alone[name].tolist() == whole[name].tolist() and (alone[name] > 0).any(), name

def test_topics_in_small_groups_give_the_same_doubles(shared, tmp_path, monkeypatch):
    """The topics are computed in groups of bounded size (thresholds.DIVERSITY_BLOCK_CELLS): groups of one or two topics give the
    bytes of one group of all."""
    from treckit.measures import subtopics
    subtopic_qrels(shared / "trec_eval" / "qrels.test", tmp_path / "sub", seed=4)
    run = str(shared / "trec_eval" / "results.test")
    whole = treckit.evaluate(str(tmp_path / "sub"), run, list(NAMES), warn=lambda m: None)
    monkeypatch.setattr(thresholds, "DIVERSITY_BLOCK_CELLS", 1)
    small = treckit.evaluate(str(tmp_path / "sub"), run, list(NAMES), warn=lambda m: None)
    assert whole.equals(small)
    assert len(subtopics.topic_chunks(np.array([0, 0, 1, 2]), np.array([0, 1, 0, 0]), np.array([0, 0, 0, 1]), 3, 20)) == 3
