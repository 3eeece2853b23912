"""Conversion rules, each with a test that fails without it; the written files are read back by
pytrec_eval and ir_measures to prove trec_eval-style readers see the intended ranking."""
from __future__ import annotations

import pytest

from treckit.api import read_run, write_qrels, write_run
from treckit.ranking.convert import convert_run
from treckit.console.errors import InputError
from treckit.model import Qrels, Run


def ranking(run: Run) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for q, d in zip(run.table.column("qid").to_pylist(), run.table.column("docid").to_pylist()):
        out.setdefault(q, []).append(d)
    return out


def trec_eval_order(run_dict: dict[str, dict[str, float]]) -> dict[str, list[str]]:
    """What trec_eval does with a file: sort by score desc, then docno desc."""
    return {q: [d for d, _ in sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)] for q, docs in run_dict.items()}


def quest_bm25() -> Run:
    # QUEST BM25: -bm25 stored, best first, non-matching docs 0.0
    return Run.from_columns(["1"] * 4 + ["2"] * 3,
                            ["Rio 2", "American Psycho (film)", "Zürich", "Saw 3", "a", "b", "c"],
                            [-12.5, -7.25, 0.0, 0.0, 3.0, 1.0, 2.0])


def test_auto_order_negated_with_zero_tail():
    out, rep = convert_run(quest_bm25())
    assert ranking(out)["1"][:2] == ["Rio 2", "American Psycho (film)"]
    assert out.table.column("score").to_pylist()[:2] == [12.5, 7.25]
    assert ranking(out)["2"] == ["a", "c", "b"]
    assert rep.negated_queries == 1
    assert rep.tied_queries == 1 and rep.tied_docs == 2


def test_explicit_orders():
    r = quest_bm25()
    assert ranking(convert_run(r, order="desc")[0])["1"][0] in ("Zürich", "Saw 3")
    assert ranking(convert_run(r, order="asc")[0])["2"] == ["b", "c", "a"]
    given, rep = convert_run(r, order="given")
    assert ranking(given)["2"] == ["a", "b", "c"]
    assert rep.rank_derived_queries >= 1


def test_written_file_is_read_back_in_the_intended_order(tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    import ir_measures
    out, _ = convert_run(quest_bm25(), ties="break")
    p = tmp_path / "run.trec"
    write_run(out, p)
    with open(p) as fh:
        parsed = pytrec_eval.parse_run(fh)
    decoded = {q: {d.replace("%20", " "): s for d, s in docs.items()} for q, docs in parsed.items()}
    assert trec_eval_order(decoded) == ranking(out)
    irm = {}
    for sd in ir_measures.read_trec_run(str(p)):
        irm.setdefault(sd.query_id, {})[sd.doc_id.replace("%20", " ")] = sd.score
    assert trec_eval_order(irm) == ranking(out)
    # break-ties kept the input order of the two 0.0 docs
    assert ranking(out)["1"][2:] == ["Zürich", "Saw 3"]


def test_ties_default_follow_trec_eval_docno_descending():
    out, _ = convert_run(Run.from_columns(["q"] * 3, ["a", "c", "b"], [1.0, 1.0, 2.0]))
    assert ranking(out)["q"] == ["b", "c", "a"]
    assert out.table.column("rank").to_pylist() == [1, 2, 3]


@pytest.mark.parametrize("policy,expected", [("keep-first", 1.0), ("keep-max", 5.0), ("keep-last", 3.0)])
def test_duplicate_policies(policy, expected):
    r = Run.from_columns(["q"] * 4, ["x", "y", "x", "x"], [1.0, 2.0, 5.0, 3.0])
    out, rep = convert_run(r, duplicates=policy)
    assert out.to_dict()["q"]["x"] == expected
    assert rep.duplicates_dropped == 2


def test_duplicates_error_by_default():
    with pytest.raises(InputError, match="duplicate document: query 'q' lists doc 'x' 2 times"):
        convert_run(Run.from_columns(["q"] * 2, ["x", "x"], [1.0, 2.0]))


def test_depth_and_run_name():
    out, rep = convert_run(Run.from_columns(["q"] * 5, list("abcde"), [5, 4, 3, 2, 1.0]), depth=2, run_name="mine")
    assert ranking(out)["q"] == ["a", "b"] and rep.depth_dropped == 3 and out.tag == "mine"


def test_escaped_ids_read_by_pytrec_eval_and_ir_measures(tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    import ir_measures
    q = Qrels.from_columns(["1", "1", "1"], ["Rio 2", "100% Wolf", "a\tb"], [1, 1, 0])
    r = Run.from_columns(["1", "1", "1"], ["Rio 2", "100% Wolf", "a\tb"], [3.0, 2.0, 1.0])
    qp, rp = tmp_path / "q", tmp_path / "r"
    write_qrels(q, qp)
    write_run(convert_run(r)[0], rp)
    with open(qp) as fh:
        pq = pytrec_eval.parse_qrel(fh)
    with open(rp) as fh:
        pr = pytrec_eval.parse_run(fh)
    assert set(pq["1"]) == set(pr["1"]) == {"Rio%202", "100%25%20Wolf", "a%09b"}
    ev = pytrec_eval.RelevanceEvaluator(pq, {"map"}).evaluate(pr)
    assert ev["1"]["map"] == 1.0
    assert {x.doc_id for x in ir_measures.read_trec_qrels(str(qp))} == {"Rio%202", "100%25%20Wolf", "a%09b"}
    assert read_run(rp).to_dict() == {"1": {"Rio 2": 3.0, "100% Wolf": 2.0, "a\tb": 1.0}}


def test_failed_write_leaves_no_file(tmp_path):
    p = tmp_path / "out.trec"
    bad = Run.from_columns(["q 1"], ["d"], [1.0])
    with pytest.raises(InputError, match="whitespace"):
        write_run(bad, p)
    assert not p.exists() and list(tmp_path.iterdir()) == []


def test_jsonl_predictions_joined_by_query_text(tmp_path):
    from treckit.stages import gold_query_map
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"query": "a b", "docs": ["x"]}\n{"query": "c", "docs": ["y"]}\n')
    pred = tmp_path / "pred.jsonl"
    pred.write_text('{"query": "c", "docs": ["y", "z"], "scores": [-1.0, 0.0]}\n{"query": "a b", "docs": ["x"], "scores": [-2.0]}\n')
    r = read_run(pred, query_to_qid=gold_query_map(gold), order="desc")     # scores as written
    assert set(r.table.column("qid").to_pylist()) == {"1", "2"}
    assert r.to_dict()["2"] == {"y": -1.0, "z": 0.0}


@pytest.mark.parametrize("flags, said", [
    ([], "trec_eval orders them by docno descending (use --break-ties to keep the input order instead)"),
    (["--break-ties"], "they keep their input order (--break-ties)"),
    (["--ties", "break"], "they keep their input order (--break-ties)"),
    (["--ties", "docid-asc"], "they are ordered by doc id ascending (--ties docid-asc)"),
])
def test_the_tie_report_names_the_policy_in_force(tmp_path, capsys, flags, said):
    """--break-ties is suggested only to a conversion that did not use it; the report says what was done."""
    from helpers import run_cli
    (tmp_path / "run.tsv").write_text("q\tb\t1.0\nq\ta\t1.0\nq\tc\t2.0\n")
    code, _, err = run_cli(["run", tmp_path / "run.tsv", "-o", tmp_path / "out.trec", *flags], capsys)
    assert code == 0, err
    assert f"2 docs in 1 queries share a score with another doc of their query; {said}" in err
    assert ("use --break-ties" in err) is (not flags)
