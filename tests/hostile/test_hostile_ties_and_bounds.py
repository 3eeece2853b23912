"""Hostile class "ties and bounds" (#30 items 1, 10, 11): runs whose scores tie, and parameters that size an
allocation.

* Tied runs of several shapes (every score equal, a few values, lines interleaved across queries, queries
  together but unsorted, ids sharing long prefixes, one query of many tied docs) give trec_eval's bytes, in
  bounded memory, through ``eval`` (in memory and streamed), ``--tie-aware``, ``compare``, ``testset eval``, the
  API and the service's evaluator.  Before, ranking listed every (judged row, tied row) pair: 100 queries of
  1,000 tied docs with 500 judged took 3.3 GB.
* ``--tie-aware`` on a run read with its ties settled (``--ties break``, ``--order rank|given``) has no range.
* Every cutoff-like parameter of every measure in the registry, up to 2^63, exits 0 or 2 within 300 MB, and a
  cutoff past the run's depth gives the numbers of that cutoff (trec_eval's where it has the measure).

Peaks are measured in a child process (its own ``ru_maxrss``, read by a small process that starts it, as
bench/README.md says), with an address-space limit so that a regression fails quickly.
"""
from __future__ import annotations

import json
import math
import random
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import treckit
from helpers import run_cli
from treckit import thresholds
from treckit.measures import subtopics
from ties_and_bounds import (LONG_MAX, PEAK_MB, bounded_memory, check_names, evaluated, grade, measured,
                             random_name, reference, treckit_cmd, values_of, write_run)

MEASURES_EVAL = ["P.10", "map", "recip_rank", "ndcg_cut.10", "bpref", "num_rel_ret", "recall.100"]


# ---------------------------------------------------------------- tied runs
def tied_run(directory: Path, shape: str, seed: int = 3) -> tuple[Path, Path]:
    """(qrels, run) of a run with ties, in one of the shapes the attacks used.  Half of each query's docs are judged
    (grades 0, 1, 2 in turn), plus one judged doc the run misses."""
    rng = random.Random(seed)
    queries, docs = {"equal": (100, 1000), "coarse": (50, 1000), "interleaved": (40, 500), "unsorted": (40, 500),
                     "long-prefix": (30, 800), "one-query": (1, 30000)}[shape]
    lines, qrels = [], []
    for q in range(queries):
        if shape == "long-prefix":
            ids = [f"clueweb09-en0000-{k % 97:02d}-{k:05d}" + ("\u00e9" if k % 11 == 0 else "") for k in range(docs)]
        else:
            ids = [f"D{q}_{k}" for k in range(docs)]
        scores = [0.0] * docs
        if shape in ("coarse", "unsorted"):
            scores = sorted((float(rng.randint(0, 2)) / 2 for _ in range(docs)), reverse=shape == "coarse")
        judged = range(0, docs, 2) if shape != "one-query" else range(0, docs, 10)
        lines += [(q, f"{q} Q0 {ids[k]} {k + 1} {scores[k]} tied\n") for k in range(docs)]
        qrels += [f"{q} 0 {ids[k]} {grade(k // 2)}\n" for k in judged] + [f"{q} 0 missing{q} 1\n"]
    if shape == "interleaved":
        rng.shuffle(lines)
    return write_run(directory, shape, [line for _, line in lines], qrels)


SHAPES = ["equal", "coarse", "interleaved", "unsorted", "long-prefix", "one-query"]


@pytest.mark.parametrize("shape", SHAPES)
def test_tied_runs_give_trec_evals_bytes_in_bounded_memory(tmp_path, trec_eval, shape):
    qrels, run = tied_run(tmp_path, shape)
    flags = [a for m in MEASURES_EVAL for a in ("-m", m)]
    expected = reference(trec_eval, "-q", *flags, qrels, run)
    got = measured(treckit_cmd("eval", "-q", *flags, qrels, run))
    assert got["code"] == 0, got["err"]
    assert got["out"] == expected
    assert got["peak_mb"] < PEAK_MB, got["peak_mb"]


def test_a_streamed_tied_run_gives_trec_evals_bytes_in_bounded_memory(tmp_path, trec_eval):
    """--memory-limit 4M streams the 3 MB run a block at a time (each block's ties ranked as a whole run's)."""
    qrels, run = tied_run(tmp_path, "equal")
    flags = [a for m in MEASURES_EVAL for a in ("-m", m)]
    got = measured(treckit_cmd("eval", "--memory-limit", "4M", *flags, qrels, run))
    assert got["code"] == 0, got["err"]
    assert got["out"] == reference(trec_eval, *flags, qrels, run)
    assert got["peak_mb"] < PEAK_MB, got["peak_mb"]


def test_the_api_ranks_a_tied_run_in_bounded_memory(tmp_path, trec_eval):
    """treckit.evaluate on a tied run read in Python: the arrays it allocates (tracemalloc sees numpy's) stay small;
    before, the pairs alone took gigabytes."""
    qrels, run = tied_run(tmp_path, "equal")
    peak, rows = evaluated(qrels, run, ["P.10", "map", "recip_rank"])
    assert peak < 64 << 20, peak
    expected = values_of(reference(trec_eval, "-q", "-m", "P.10", "-m", "map", "-m", "recip_rank", qrels, run))
    for row in rows:
        for name in ("P_10", "map", "recip_rank"):
            assert f"{row[name]:.4f}" == expected[name, row["qid"]], (row["qid"], name)


def test_tie_aware_values_of_a_tied_run_in_bounded_memory(tmp_path):
    """--tie-aware range on 100 queries of 1,000 docs of one score: E[P@10] = R/1,000 (a hypergeometric draw of 10
    from the 1,000, R relevant); best 1 and worst 0 (each query has 10 relevant and 10 non-relevant docs or more);
    E[RR] = sum over i of P(first relevant at i) / i, P(first at i) = C(n-i, r-1) / C(n, r); all computed here."""
    qrels, run = tied_run(tmp_path, "equal")
    got = measured(treckit_cmd("eval", "--tie-aware", "range", "-m", "P.10", "-m", "recip_rank", qrels, run))
    assert got["code"] == 0, got["err"]
    assert got["peak_mb"] < PEAK_MB, got["peak_mb"]
    rows = {line.split("\t")[0].strip(): line.split("\t")[2:] for line in got["out"].splitlines()[1:]}
    relevant = sum(1 for k in range(0, 1000, 2) if grade(k // 2) >= 1)
    n = 1000
    expected_rr = sum(Fraction(math.comb(n - i, relevant - 1), math.comb(n, relevant)) / i for i in range(1, n + 1))
    assert rows["P_10"][1:] == [f"{relevant / n:.4f}", "0.0000", "1.0000"]   # expected, worst, best
    assert rows["recip_rank"][1:] == [f"{float(expected_rr):.4f}", f"{1 / (n - relevant + 1):.4f}", "1.0000"]


def test_compare_and_testset_eval_score_tied_runs_as_trec_eval(tmp_path, trec_eval):
    qrels, run = tied_run(tmp_path, "coarse")
    flat = tmp_path / "flat.run"                  # every score equal
    flat.write_text("".join(" ".join(line.split()[:4] + ["0", "flat"]) + "\n" for line in run.read_text().splitlines()))
    out = tmp_path / "compare.json"
    got = measured(treckit_cmd("compare", "-m", "P.10", "-m", "map", "--test", "t-test", "-o", out, qrels, run, flat))
    assert got["code"] == 0, got["err"]
    assert got["peak_mb"] < PEAK_MB, got["peak_mb"]
    systems = json.loads(out.read_text())["systems"]
    for tag, path in (("tied", run), ("flat", flat)):
        expected = values_of(reference(trec_eval, "-m", "P.10", "-m", "map", qrels, path))
        macro = systems[tag]["metrics"]["macro"]
        assert f"{macro['P_10']:.4f}" == expected["P_10", "all"] and f"{macro['map']:.4f}" == expected["map", "all"]
    # the same tied run against a test set of the same judgments (20 queries)
    queries = {}
    for line in qrels.read_text().splitlines():
        q, _, doc, grade = line.split()
        if int(q) < 20:
            queries.setdefault(q, []).append({"doc_id": doc, "grade": int(grade)})
    test_set = tmp_path / "tied.yaml"
    test_set.write_text(json.dumps({"name": "tied", "version": "1", "queries": [
        {"query_id": q, "query_text": f"query {q}", "query_type": "t", "relevant_docs": docs}
        for q, docs in queries.items()]}))
    small = tmp_path / "small.run"
    small.write_text("".join(line + "\n" for line in run.read_text().splitlines() if int(line.split()[0]) < 20))
    small_qrels = tmp_path / "small.qrels"
    small_qrels.write_text("".join(line + "\n" for line in qrels.read_text().splitlines() if int(line.split()[0]) < 20))
    result = tmp_path / "testset.json"
    got = measured(treckit_cmd("testset", "eval", test_set, "--run", small, "-m", "recall_at_10", "-m", "mrr",
                               "-m", "precision_at_10", "--no-cache", "--out", result))
    assert got["code"] == 0, got["err"]
    expected = values_of(reference(trec_eval, "-q", "-m", "recall.10", "-m", "recip_rank", "-m", "P.10", small_qrels,
                                   small))
    for row in json.loads(result.read_text())["per_query"]:
        for column, name in (("recall_at_10", "recall_10"), ("mrr", "recip_rank"), ("precision_at_10", "P_10")):
            assert f"{row[column]:.4f}" == expected[name, row["qid"]], (row["qid"], column)


_SERVICE = textwrap.dedent("""
    import json, sys
    from treckit.service.evaluator import Evaluator, ServerSettings

    def hwm_kb():          # this process's own peak (ru_maxrss would hold the RSS of the process it was started from)
        return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    body = open(sys.argv[1], "rb").read()
    evaluator = Evaluator(ServerSettings(cache=False, max_body_bytes=32 << 20))
    warm = json.loads(body)
    warm["run"] = {q: dict(list(docs.items())[:50]) for q, docs in list(warm["run"].items())[:2]}
    evaluator.answer("evaluate", json.dumps(warm).encode(), {})
    idle = hwm_kb()
    status, payload, _ = evaluator.answer("evaluate", body, {})
    peak = hwm_kb()
    print(json.dumps({"status": status, "metrics": payload.get("metrics"), "growth_kb": peak - idle}))
""")


def test_the_services_evaluator_holds_a_tied_body_within_its_documented_multiple(tmp_path, trec_eval):
    """docs/service.md: a worker holds 9-23 times a body, the server within 30 times.  A 3 MB body of 20 queries of
    5,000 tied docs, half of them judged (before: a worker past 2 GB on a 316 KB tied body)."""
    queries, docs = 20, 5000
    run = {f"q{q:02d}": {f"d{q}_{k}": 0.0 for k in range(docs)} for q in range(queries)}
    test_set = {"name": "tied", "version": "1", "queries": [
        {"query_id": f"q{q:02d}", "query_text": f"query {q}", "query_type": "t",
         "relevant_docs": [{"doc_id": f"d{q}_{k}", "grade": grade(k // 2)} for k in range(0, docs, 2)]}
        for q in range(queries)]}
    body = json.dumps({"test_set": test_set, "run": run, "measures": ["recall_at_10", "mrr", "precision_at_10"]})
    (tmp_path / "body.json").write_text(body)
    p = subprocess.run([sys.executable, "-c", _SERVICE, tmp_path / "body.json"], capture_output=True, text=True,
                       timeout=600, preexec_fn=bounded_memory)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    assert got["status"] == 200
    assert got["growth_kb"] * 1024 <= 30 * len(body), (got["growth_kb"], len(body))
    (tmp_path / "qrels").write_text("".join(f"{d['query_id']} 0 {j['doc_id']} {j['grade']}\n"
                                            for d in test_set["queries"] for j in d["relevant_docs"]))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {doc} 1 0 t\n" for q, docs_ in run.items() for doc in docs_))
    expected = values_of(reference(trec_eval, "-m", "recall.10", "-m", "recip_rank", "-m", "P.10",
                                   tmp_path / "qrels", tmp_path / "run"))
    for column, name in (("recall_at_10", "recall_10"), ("mrr", "recip_rank"), ("precision_at_10", "P_10")):
        assert f"{got['metrics'][column]:.4f}" == expected[name, "all"], column


# ---------------------------------------------------------------- --tie-aware where no tie is left (item 11)
ISSUE_RUN = "3 Q0 d9 1 1.0 t\n3 Q0 d1 2 1.0 t\n"
ISSUE_QRELS = "3 0 d1 1\n"


@pytest.mark.parametrize("flags", [["--ties", "break"], ["--order", "rank"], ["--order", "given"],
                                   ["--ties", "break", "--memory-limit", "64K"]])
def test_tie_aware_range_collapses_where_the_reading_settles_ties(tmp_path, flags):
    """The issue's run: d9 then d1, one score; d1 relevant.  Read in its given order (d9 first), RR is 1/2 in every
    order left: expected = best = worst = 0.5."""
    (tmp_path / "run").write_text(ISSUE_RUN)
    (tmp_path / "qrels").write_text(ISSUE_QRELS)
    code, out, err = run_cli(["eval", *flags, "-m", "recip_rank", "--tie-aware", "range", tmp_path / "qrels",
                              tmp_path / "run"])
    assert code == 0, err
    assert out.splitlines()[1].split("\t")[2:] == ["0.5000", "0.5000", "0.5000", "0.5000"]


def test_tie_aware_range_stays_where_ties_are_left(tmp_path):
    """By hand: d1 first or second with probability 1/2 each, RR 1 or 1/2: expected 0.75, best 1, worst 0.5;
    trec_eval's order (d9 > d1) gives 0.5."""
    (tmp_path / "run").write_text(ISSUE_RUN)
    (tmp_path / "qrels").write_text(ISSUE_QRELS)
    code, out, err = run_cli(["eval", "-m", "recip_rank", "--tie-aware", "range", tmp_path / "qrels",
                              tmp_path / "run"])
    assert code == 0, err
    assert out.splitlines()[1].split("\t")[2:] == ["0.5000", "0.7500", "0.5000", "1.0000"]   # trec_eval, expected, worst, best


def test_tie_aware_api_and_compare_collapse_with_ties_break(tmp_path):
    (tmp_path / "run").write_text(ISSUE_RUN)
    (tmp_path / "qrels").write_text(ISSUE_QRELS)
    frame = treckit.evaluate(str(tmp_path / "qrels"), str(tmp_path / "run"), ["recip_rank"], tie_aware="range",
                             ties="break", warn=lambda m: None)
    row = frame[frame["qid"] == "all"].iloc[0]
    assert (row["trec_eval"], row["expected"], row["best"], row["worst"]) == (0.5, 0.5, 0.5, 0.5)
    frame = treckit.evaluate(str(tmp_path / "qrels"), str(tmp_path / "run"), ["recip_rank"], tie_aware="range",
                             warn=lambda m: None)
    row = frame[frame["qid"] == "all"].iloc[0]
    assert (row["expected"], row["best"], row["worst"]) == (0.75, 1.0, 0.5)
    out = tmp_path / "compare.json"
    for flags, values in ((["--ties", "break"], [0.5, 0.5, 0.5, 0.5]), ([], [0.5, 0.75, 1.0, 0.5])):
        code, _, err = run_cli(["compare", *flags, "--tie-aware", "range", "-m", "recip_rank", "--test", "t-test",
                                "--name", "a", "--name", "b", "-o", out, tmp_path / "qrels", tmp_path / "run",
                                tmp_path / "run"])
        assert code == 0, err
        pair = json.loads(out.read_text())["ties"]["pairs"][0]
        assert [pair["system_values"][k] for k in ("trec_eval", "expected", "best", "worst")] == values


# ---------------------------------------------------------------- huge cutoffs (item 10)
DIVERSITY = ["alpha_nDCG", "ERR_IA", "nERR_IA", "alpha_DCG", "P_IA", "StRecall"]


@pytest.fixture
def small_run(tmp_path) -> tuple[Path, Path, Path]:
    """(qrels, subtopic qrels, run): the attack's 3-line run, and judgments of two queries."""
    (tmp_path / "run").write_text("1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 c 3 1 t\n2 Q0 a 1 1 t\n2 Q0 d 2 1 t\n")
    (tmp_path / "qrels").write_text("1 0 a 1\n1 0 c 0\n1 0 e 2\n2 0 d 1\n")
    (tmp_path / "sub").write_text("1 1 a 1\n1 2 c 1\n1 2 b 0\n2 1 d 1\n2 3 a 1\n2 3 x 1\n")
    return tmp_path / "qrels", tmp_path / "sub", tmp_path / "run"


@pytest.mark.parametrize("name", DIVERSITY)
@pytest.mark.parametrize("cutoff", [100_000_000, LONG_MAX])
def test_diversity_cutoffs_past_the_run_give_the_deep_value(small_run, monkeypatch, name, cutoff):
    """alpha_nDCG@100000000 grew past 9 GB; @2^63-1 was an internal error.  The value is the one computed over
    every rank up to 5,000 (where the ideal sums of alpha 0.5 have long stopped changing); P-IA's by hand: each
    query has 2 subtopics and 2 (doc, subtopic) pairs retrieved, so 2 / (cutoff x 2)."""
    _, sub, run = small_run
    got = measured(treckit_cmd("eval", "-m", f"{name}@{cutoff}", sub, run))
    assert got["code"] == 0 and got["out"].startswith(f"{name}@{cutoff}"), got["err"]
    assert got["peak_mb"] < PEAK_MB
    peak, rows = evaluated(sub, run, [f"{name}@{cutoff}"])
    values = {row["qid"]: row[f"{name}@{cutoff}"] for row in rows}
    if name == "P_IA":
        assert values["1"] == values["2"] == 2 / float(2 * cutoff)
        return
    monkeypatch.setattr(subtopics, "ranks_needed", lambda asked, *a, **k: asked)
    deep = treckit.evaluate(str(sub), str(run), [f"{name}@5000"], warn=lambda m: None)
    assert dict(zip(deep["qid"], deep[f"{name}@5000"])) == values
    assert values["1"] > 0


def test_diversity_cutoffs_past_the_bound_with_alpha_zero_are_refused(small_run, monkeypatch):
    """With alpha 0 the ideal sums change at every rank: a cutoff past thresholds.DIVERSITY_MAX_RANKS is refused
    (exit 2, naming it), one within is computed."""
    _, sub, run = small_run
    monkeypatch.setattr(thresholds, "DIVERSITY_MAX_RANKS", 64)
    code, out, err = run_cli(["eval", "-m", "alpha_nDCG(alpha=0.0)@65", sub, run])
    assert code == 2 and "alpha_nDCG(alpha=0.0)@65" in err and "at most 64" in err
    code, out, err = run_cli(["eval", "-m", "alpha_nDCG(alpha=0.0)@64", sub, run])
    assert code == 0, err
    monkeypatch.setattr(thresholds, "DIVERSITY_MAX_RANKS", 1 << 62)
    code, wide, err = run_cli(["eval", "-m", "alpha_nDCG(alpha=0.0)@64", sub, run])
    assert wide == out


@pytest.mark.parametrize("name", ["P", "recall", "ndcg_cut", "map_cut", "relative_P", "success", "unj"])
def test_trec_eval_cutoffs_past_the_run_give_trec_evals_numbers(small_run, trec_eval, name):
    """The same numbers as trec_eval's for each cutoff (trec_eval prints cutoffs whose difference overflows an int in
    another order; the lines are compared as a set)."""
    qrels, _, run = small_run
    param = f"{name}.5,{LONG_MAX}"
    code, out, err = run_cli(["eval", "-q", "-m", param, qrels, run])
    assert code == 0, err
    assert sorted(out.splitlines()) == sorted(reference(trec_eval, "-q", "-m", param, qrels, run).splitlines())


@pytest.mark.parametrize("param,ours,theirs", [
    # query 1 retrieves a (grade 1) first and e (grade 2) sixth; query 2's tie puts d (grade 1) first
    ("P.2", {"1": "0.5000", "2": "0.5000"}, {"1": "1.0000", "2": "0.5000"}),
    ("ndcg_cut.5", {"1": "0.3801", "2": "1.0000"}, {"1": "0.6509", "2": "1.0000"}),
])
def test_a_small_cutoff_beside_one_2_31_larger_keeps_its_value(tmp_path, trec_eval, param, ours, theirs):
    """trec_eval sorts a measure's cutoffs by their difference cast to an int: beside a cutoff 2^31 or more larger, a
    small one is sorted after it and then measured at the run's end (its P_2 is every relevant document retrieved
    over 2).  treckit gives each cutoff its value, the value it has alone (a kept difference,
    docs/trec-eval-differences.md)."""
    (tmp_path / "run").write_text("1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 c 3 1 t\n1 Q0 f 4 0.5 t\n1 Q0 g 5 0.4 t\n"
                                  "1 Q0 e 6 0.3 t\n2 Q0 a 1 1 t\n2 Q0 d 2 1 t\n")
    (tmp_path / "qrels").write_text("1 0 a 1\n1 0 c 0\n1 0 e 2\n2 0 d 1\n")
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    name, _, small = param.partition(".")
    alone = values_of(reference(trec_eval, "-q", "-m", param, qrels, run))
    beside = values_of(reference(trec_eval, "-q", "-m", f"{param},{LONG_MAX}", qrels, run))
    code, out, err = run_cli(["eval", "-q", "-m", f"{param},{LONG_MAX}", qrels, run])
    assert code == 0, err
    got = values_of(out)
    measure = f"{name}_{small}"
    assert {q: got[(measure, q)] for q in ours} == ours == {q: alone[(measure, q)] for q in ours}
    assert {q: beside[(measure, q)] for q in theirs} == theirs            # trec_eval's, kept apart


# ---------------------------------------------------------------- every parameter of the registry, up to 2^63
class Drawn:
    """The few random choices :func:`ties_and_bounds.random_name` makes, drawn by hypothesis (so that a failing
    name shrinks)."""

    def __init__(self, data) -> None:
        self.data = data

    def choice(self, values):
        return self.data.draw(st.sampled_from(list(values)))

    def randint(self, low: int, high: int) -> int:
        return self.data.draw(st.integers(low, high))

    def random(self) -> float:
        return self.data.draw(st.floats(0, 1, exclude_max=True))

    def uniform(self, low: float, high: float) -> float:
        return self.data.draw(st.floats(low, high))


@settings(max_examples=3, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_every_parameter_up_to_2_63_exits_0_or_2_within_the_bound(tmp_path_factory, data):
    """Measure names drawn from the whole registry (trec_eval's names with cutoffs, fractional cutoffs, numbers and
    level=gain pairs; ir_measures' names with every parameter they declare), integers up to 2^63 either side,
    floats to 1e300, twelve a process: each exits 0 or 2, and the process stays within 300 MB."""
    drawn = Drawn(data)
    names = [random_name(drawn) for _ in range(12)]
    problems, peak = check_names(tmp_path_factory.mktemp("names"), names)
    assert not problems, problems
    assert peak < PEAK_MB, (peak, names)



def test_rprec_mult_avgjg_takes_rprec_mults_range(tmp_path):
    """Found by the property test above: Rprec_mult_avgjg's multipliers have Rprec_mult's range (0 to 1e9); past it
    the name is refused (exit 2), where a multiplier of 1e300 overflowed its cutoff (an internal error)."""
    (tmp_path / "jg").write_text("1 0 d1 1\n")
    (tmp_path / "run").write_text("1 Q0 d1 1 1.0 r\n")
    argv = ["eval", "-R", "qrels_jg", tmp_path / "jg", tmp_path / "run"]
    code, out, err = run_cli([*argv[:3], "-m", "Rprec_mult_avgjg.1e+300", *argv[3:]])
    assert code == 2 and "outside the range of Rprec_mult_avgjg's parameters (from 0 to 1e+09)" in err, err
    code, out, err = run_cli([*argv[:3], "-m", "Rprec_mult_avgjg.1e9", *argv[3:]])
    assert code == 0 and out.split("\t")[-1].strip() == "0.0000", err      # precision at 1e9 x R ranks: 1 / 1e9
    code, out, err = run_cli([*argv[:3], "-m", "Rprec_mult_avgjg.1", *argv[3:]])
    assert code == 0 and out.split("\t")[-1].strip() == "1.0000", err      # at R = 1 rank: d1, relevant


@pytest.mark.parametrize("multipliers", ["1e9", "1234567,123456,12345.678", "12345678.1,12345678.2,0.5", "0.125,2"])
def test_large_multipliers_are_named_as_trec_eval_names_them(tmp_path, trec_eval, multipliers):
    """trec_eval keeps 8 characters of a multiplier's "%3.2f" in the measure's name (1e9: Rprec_mult_10000000; two
    multipliers may then share a name, both printed); -q too."""
    (tmp_path / "qrels").write_text("1 0 d1 1\n1 0 d2 0\n2 0 d3 1\n")
    (tmp_path / "run").write_text("1 Q0 d2 1 2.0 r\n1 Q0 d1 2 1.0 r\n2 Q0 d3 1 1.5 r\n")
    argv = ["-q", "-m", f"Rprec_mult.{multipliers}", str(tmp_path / "qrels"), str(tmp_path / "run")]
    want = subprocess.run([str(trec_eval), *argv], capture_output=True, text=True, check=True).stdout
    code, out, err = run_cli(["eval", *argv])
    assert code == 0 and out == want, err
