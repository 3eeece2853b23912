"""EvalResult.per_query: one measure's per-query values, asked for by a registry name in either syntax or by a
Request, the column found through the registry.  The values are trec_eval 10.0's own -q lines in its test data
(out.test.aq: -m all_trec -q qrels.test results.test; out.test.prefs and out.test.qrels_jg likewise)."""
from __future__ import annotations

from pathlib import Path

import pytest

from treckit.console.errors import InputError
from treckit.engines.choice import choose
from treckit.engines.memory import EvalOptions, evaluate_requests
from treckit.inputs.options import RunReading
from treckit.inputs.reading import read_qrels, read_run
from treckit.measures.registry import resolve

@pytest.fixture(scope="module")
def data(trec_eval_files) -> Path:
    return trec_eval_files


def trec_eval_lines(path: Path) -> dict[str, dict[str, float]]:
    """{printed measure: {qid: value}} of a trec_eval -q output, the summary lines ("all") and relstring's
    strings left out."""
    out: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        name, qid, value = (f.strip() for f in line.split("\t"))
        if qid != "all" and name != "relstring":
            out.setdefault(name, {})[qid] = float(value)
    return out


def assert_same(values: dict[str, float], expected: dict[str, float]) -> None:
    assert list(values) == list(expected)                 # every query trec_eval prints, in its order
    for qid, v in values.items():
        assert v == pytest.approx(expected[qid], abs=5e-5), qid      # trec_eval prints 4 decimals


@pytest.fixture(scope="module")
def all_trec(data):
    qrels, run = read_qrels(data / "qrels.test"), read_run(data / "results.test")
    return evaluate_requests(qrels, run, resolve(["all_trec"]), EvalOptions())


# (name asked for, trec_eval's printed name): trec_eval's spelling with parameters, ir_measures' names, and names
# whose column the evaluation printed under another spelling (AP is computed as map, P@10 as one of P's cutoffs)
NAMES = [("map", "map"), ("AP", "map"), ("P.10", "P_10"), ("P@10", "P_10"), ("recall.100", "recall_100"),
         ("R@100", "recall_100"), ("ndcg_cut.10", "ndcg_cut_10"), ("ndcg", "ndcg"), ("recip_rank", "recip_rank"),
         ("RR", "recip_rank"), ("bpref", "bpref"), ("Rprec", "Rprec"), ("iprec_at_recall.0.5", "iprec_at_recall_0.50"),
         ("num_rel_ret", "num_rel_ret"), ("infAP", "infAP"), ("success.1", "success_1")]


@pytest.mark.parametrize("name,printed", NAMES, ids=[n for n, _ in NAMES])
def test_per_query_values_are_trec_evals(data, all_trec, name, printed):
    assert_same(all_trec.per_query(name), trec_eval_lines(data / "out.test.aq")[printed])


def test_a_request_is_found_by_what_it_computes(data, all_trec):
    expected = trec_eval_lines(data / "out.test.aq")
    assert_same(all_trec.per_query(resolve(["P.30"])[0]), expected["P_30"])
    assert_same(all_trec.per_query(all_trec.requests[5]), expected[all_trec.requests[5].columns[0]])


def test_a_name_of_several_columns_or_not_computed_is_refused(all_trec):
    with pytest.raises(InputError, match="9 columns"):
        all_trec.per_query("P")                     # P's nine default cutoffs
    with pytest.raises(InputError, match="P.7 is not among the measures"):
        all_trec.per_query("P.7")
    with pytest.raises(InputError, match="not among the measures"):
        all_trec.per_query("nDCG(dcg='exp-log2')@10")      # trec_eval's ndcg_cut is linear-gain: another definition
    with pytest.raises(InputError, match="a group of"):
        all_trec.per_query("official")


@pytest.mark.parametrize("rel_format,judgments,expected,measures", [
    ("prefs", "prefs.test", "out.test.prefs", ["prefs_simp", "prefs_pair", "prefs_avgjg_Rnonrel"]),
    ("qrels_jg", "qrels.123", "out.test.qrels_jg", ["map_avgjg", "P_avgjg.10"]),
])
def test_preference_results_answer_the_same_question(data, rel_format, judgments, expected, measures):
    engine = choose(rel_format=rel_format)
    results = "prefs.results.test" if rel_format == "prefs" else "results.test"
    requests = resolve(measures, rel_format=rel_format)
    res = engine.evaluate(engine.read_judgments(data / judgments, None, RunReading()), data / results, requests,
                          EvalOptions(), RunReading())
    lines = trec_eval_lines(data / expected)
    for name in measures:
        assert_same(res.per_query(resolve([name], rel_format=rel_format)[0]), lines[name.replace(".", "_")])
