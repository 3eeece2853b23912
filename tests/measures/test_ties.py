"""Tie-aware values (treckit.measures.ties) against the enumeration of every order of the tied documents.

For each generated case (tests/ties_enumeration.py) every order of every query's tie groups is scored by
treckit's engine as a tie-free run; the expected value must equal the exact mean of those values
(``fractions.Fraction`` over the orders' values, within 1e-12 of the float), best and worst their
maximum and minimum (bit for bit where the extreme is the engine's value on an order, within 1e-12 where a
dynamic programme adds the terms: infAP and G).  Cases carry graded and negative judgments, docs outside the
qrels, judged docs not retrieved, and a judged query missing from the run; options -c, -M (a cut inside a
group), -J, -l and -N, and cutoffs that fall inside groups.
"""
from __future__ import annotations

import math
import os
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from treckit import thresholds
from treckit.engines.memory import EvalOptions, evaluate_requests
from treckit.measures.registry import resolve
from treckit.measures.ties import (NotTieAware, TieGroupTooLarge, covered, tie_groups,
                                   tie_sources, tie_values, tied_ranking)
from treckit.model import Qrels, Run

from ties_enumeration import LABELS, Case, compare, qrels_and_run, tie_aware

MAX_ORDERS = 50_000          # orders of one case, all its queries together
MEASURES = [
    "num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret",
    "P.1,2,3,5,8", "recall.2,5", "relative_P.2,4", "success.1,3", "Rprec", "Rprec_mult",
    "set_P", "set_recall", "set_relative_P", "set_map", "set_F", "set_F.0.5", "utility", "utility.-1,1,0.5,0.25",
    "map", "map_cut.1,3,5", "gm_map", "recip_rank", "RR@2", "bpref", "gm_bpref", "binG", "infAP",
    "iprec_at_recall", "11pt_avg",
    "ndcg", "ndcg.1=3,2=-1,-2=2", "ndcg_cut.1,3,5", "nDCG(dcg='exp-log2')@3", "nDCG(gains={0:1,1:0,2:5})@4",
    "ndcg_rel", "ndcg_rel.1=2,2=1", "Rndcg", "Rndcg.1=2,3=-1", "G", "G.1=2,3=1",
    "rbp", "rbp.p=0.5,2=3", "rbp_resid", "rbp_resid.p=0.5", "unj.2,5", "Judged", "Judged@3",
    "P(rel=2)@3", "AP(judged_only=True)",
]
# extremes computed by a dynamic programme rather than on an order (compared within 1e-12, not bit for bit)
BY_PROGRAMME = ("infAP", "G")


def _exact_columns(case: Case) -> set[str]:
    cols = set()
    for req in resolve(MEASURES, first_params_win=False):
        if req.measure.name not in BY_PROGRAMME:
            cols.update(req.columns)
    return cols


@st.composite
def cases(draw, max_orders: int = MAX_ORDERS, max_group: int = 7) -> Case:
    """A few queries, each a few tie groups of up to ``max_group`` docs, all orders together at most ``max_orders``."""
    left = max_orders
    queries = []
    for _ in range(draw(st.integers(1, 3))):
        groups, orders = [], 1
        for _ in range(draw(st.integers(1, 4))):
            most = max(s for s in range(1, max_group + 1) if orders * math.factorial(s) <= left)
            size = draw(st.integers(1, most))
            orders *= math.factorial(size)
            groups.append(draw(st.lists(st.sampled_from(LABELS), min_size=size, max_size=size)))
        left -= orders
        extra = draw(st.lists(st.integers(-1, 3), max_size=3))
        if not extra and all(lab == "n" for g in groups for lab in g):
            extra = [draw(st.integers(-1, 3))]          # a query without judgments is not evaluated (trec_eval)
        queries.append((groups, extra))
        if left < 1:
            break
    total = max(sum(len(g) for g in groups) for groups, _ in queries)
    options = dict(level=draw(st.sampled_from([1, 1, 2, 0, 3])),
                   max_docs=draw(st.one_of(st.none(), st.integers(0, total + 1))),
                   judged_only=draw(st.booleans()), complete=draw(st.booleans()),
                   num_docs_in_coll=draw(st.integers(0, 30)))
    return Case(queries, draw(st.lists(st.integers(-1, 3), max_size=3)), options)


# the suite's number of examples; a longer campaign: TRECKIT_TIES_EXAMPLES=3000
EXAMPLES = int(os.environ.get("TRECKIT_TIES_EXAMPLES", "40"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases(max_orders=2_000))
def test_every_measure_every_mode_equals_the_enumeration(case):
    note(repr(case))
    assert compare(case, MEASURES, _exact_columns(case)) == []


@settings(max_examples=int(os.environ.get("TRECKIT_TIES_LARGE_EXAMPLES", "3")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases(max_orders=MAX_ORDERS))
def test_cases_of_up_to_fifty_thousand_orders(case):
    note(repr(case))
    assert compare(case, MEASURES, _exact_columns(case)) == []


def test_a_group_of_seven_among_others_every_order():
    """One query of 7! x 3! x 2 = 60,480 orders split as two queries (7! x 3! = 30,240 and 4! x 3! x 2 = 288),
    every judgment kind present, the cut inside the seven."""
    case = Case([([[2, "n", 0, 1, -1, "n", 3], [1, 0, "n"], [2]], [1, 3]),
                 ([[1, "n", 0, 2], ["n", 1, 0], [0, 3]], [2])],
                missing=[1], options=dict(max_docs=5, complete=True))
    assert case.orders(0) == 30_240
    assert compare(case, MEASURES, _exact_columns(case)) == []


def test_the_cut_inside_a_group_under_judged_only():
    """-M then -J: how many judged docs of the cut group are retrieved is random; num_ret's expectation is
    fractional and written out here: 1 doc above, then a group of 4 (2 judged) of which 2 are retrieved."""
    case = Case([([[1], [0, "n", 2, "n"]], [])], options=dict(max_docs=3, judged_only=True))
    got = tie_aware(case, ["num_ret", "num_rel_ret", "P.2"], "expected")["q0"]
    # judged retrieved from the group ~ hypergeometric(4, 2, 2): 0, 1, 2 with 1/6, 4/6, 1/6
    assert got["num_ret"] == pytest.approx(1 + (0 * 1 + 1 * 4 + 2 * 1) / 6, abs=1e-15)
    # the relevant (grade 2) doc among the 2 retrieved slots of 4: 1/2
    assert got["num_rel_ret"] == pytest.approx(1 + 0.5, abs=1e-15)
    assert compare(case, ["num_ret", "num_rel_ret", "P.2", "map", "Rprec"], {"num_ret", "num_rel_ret", "P_2",
                                                                             "map", "Rprec"}) == []


def test_mcsherry_najork_by_hand():
    """Hand computation: ranks 1-2 tie (one relevant of two), rank 3 relevant, R = 2.
    AP: orders (rel, non) -> (1/1 + 2/3)/2 = 5/6; (non, rel) -> (1/2 + 2/3)/2 = 7/12; mean 17/24.
    RR: (1 + 1/2)/2 = 3/4.  P@1: 1/2.  nDCG@2 (gain 1): the relevant doc of the pair at rank 1 or 2, DCG@2
    1 or 1/log2(3), on average half of IDCG@2 = 1 + 1/log2(3): 1/2.  nDCG over the whole ranking: DCG
    1 + 1/log2(4) or 1/log2(3) + 1/log2(4), over IDCG 1 + 1/log2(3)."""
    case = Case([([[1, "n"], [1]], [])])
    got = tie_aware(case, ["map", "recip_rank", "P.1", "ndcg_cut.2", "ndcg"], "expected")["q0"]
    assert Fraction(got["map"]).limit_denominator(1000) == Fraction(17, 24)
    assert abs(got["map"] - 17 / 24) < 1e-15
    assert got["recip_rank"] == 0.75 and got["P_1"] == 0.5
    idcg = 1 + 1 / math.log2(3)
    assert got["ndcg_cut_2"] == pytest.approx(0.5, abs=1e-15)
    assert got["ndcg"] == pytest.approx(((1 + 0.5) / idcg + (1 / math.log2(3) + 0.5) / idcg) / 2, abs=1e-15)
    best = tie_aware(case, ["map"], "best")["q0"]["map"]
    worst = tie_aware(case, ["map"], "worst")["q0"]["map"]
    assert (best, worst) == (pytest.approx(5 / 6, abs=1e-15), pytest.approx(7 / 12, abs=1e-15))


def test_an_untied_run_gets_its_plain_values_in_every_mode():
    """No ties (every score distinct within its query): expected, best and worst are the engine's value itself,
    with and without -M, -J and -l."""
    rng = np.random.default_rng(3)
    qrels = Qrels.from_columns([f"q{i // 8}" for i in range(80)], [f"d{i % 8 * 2}" for i in range(80)],
                               rng.integers(-1, 4, 80).tolist())
    rq, rd, rs = [], [], []
    for q in sorted(set(qrels.qids))[:-1]:                  # the last judged query is missing from the run
        rq += [q] * 12; rd += [f"d{k}" for k in range(12)]; rs += rng.permutation(12).astype(float).tolist()
    run = Run.from_columns(rq, rd, rs)
    names = ["map", "ndcg_cut.5", "P.3", "recip_rank", "bpref", "infAP", "iprec_at_recall", "G", "rbp", "set_F",
             "ndcg_rel", "Rndcg", "binG", "rbp_resid", "unj.5", "utility"]
    for opts in (EvalOptions(complete=True), EvalOptions(max_docs=5, judged_only=True, level=2, complete=True)):
        plain = evaluate_requests(qrels, run, resolve(names), opts)
        tied = tied_ranking(qrels, run, opts)
        assert (tied.size == 1).all() and tied.missing.sum() == 1
        col = 0
        for req in resolve(names):
            for mode in ("expected", "best", "worst"):
                got = tie_values(tied, req.measure.name, req.params, mode, kernel=req.measure.kernel, **dict(req.options))
                want = plain.values[~tied.missing, col:col + len(req.columns)]
                np.testing.assert_allclose(got[~tied.missing], want, rtol=1e-12, atol=1e-15, err_msg=req.text)
            col += len(req.columns)


def test_measures_not_covered_are_refused_with_the_covered_ones():
    case = Case([([[1, "n"]], [])])
    qrels, run = qrels_and_run(case)
    tied = tied_ranking(qrels, run, EvalOptions())
    with pytest.raises(NotTieAware) as err:
        tie_values(tied, "relstring", (10.0,), "expected")
    assert "relstring" in str(err.value) and "string" in str(err.value) and "ndcg_cut" in str(err.value)
    assert err.value.exit_code == 2
    with pytest.raises(NotTieAware) as err:
        tie_values(tied, "gm_map", (), "expected")
    assert "geometric mean" in str(err.value) and "gm_map" not in err.value.fix
    assert "gm_map" in covered("best") and "gm_map" not in covered("expected")
    with pytest.raises(NotTieAware):
        tie_values(tied, "prefs_simp", (), "best")
    with pytest.raises(NotTieAware) as err:
        tie_values(tied, "ndcg_rel", (("1", -1.0),), "expected")
    assert "negative gain" in str(err.value)


def test_a_group_too_large_for_the_lattice_is_refused_by_its_size(monkeypatch):
    default = thresholds.TIE_LATTICE_MAX_STATES
    monkeypatch.setattr(thresholds, "TIE_LATTICE_MAX_STATES", 10)
    case = Case([([[1, 0, -1, "n", 1, 0]], [])])
    qrels, run = qrels_and_run(case)
    tied = tied_ranking(qrels, run, EvalOptions())
    with pytest.raises(TieGroupTooLarge, match="6 documents"):
        tie_values(tied, "infAP", (), "expected")
    assert tie_values(tied, "map", (), "expected").shape == (1, 1)      # other measures are not affected
    assert default >= 1_000_000


# ---------------------------------------------------------------- tie groups
@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4)), min_size=1, max_size=40), st.randoms())
def test_tie_groups_in_any_line_order(lines, rnd):
    """Start and size of each line's group: the lines of its query with a greater and an equal score, by
    counting; the same whether the run is listed best first or shuffled."""
    q = np.array([a for a, _ in lines])
    key = np.array([float(b) for _, b in lines])
    perm = list(range(len(lines)))
    rnd.shuffle(perm)
    for order in (np.lexsort((-key, q)), np.array(perm)):
        qq, kk = q[order], key[order]
        start, size = tie_groups(qq, kk, np.arange(qq.size))
        for i in range(qq.size):
            same = qq == qq[i]
            assert start[i] == int(np.sum(same & (kk > kk[i])))
            assert size[i] == int(np.sum(same & (kk == kk[i])))


def test_tie_groups_ignore_rows_without_a_query():
    q = np.array([0, -1, 0, 0, -1])
    key = np.array([1.0, 1.0, 1.0, 2.0, 5.0])
    start, size = tie_groups(q, key, np.array([0, 2, 3]))
    assert start.tolist() == [1, 1, 0] and size.tolist() == [2, 2, 1]


# ---------------------------------------------------------------- where ties come from
def test_rounded_scores_are_told_apart_from_float32_and_full_precision():
    rng = np.random.default_rng(5)
    q = np.repeat(np.arange(50), 40)
    raw = rng.random(q.size) * 20
    rounded = tie_sources(q, np.round(raw, 2))
    assert rounded.verdict == "rounded" and rounded.decimals == 2 and rounded.tied_lines > 0
    assert "2 decimal places" in rounded.describe()
    # float32 scores, some equal once rounded to single precision, read back as doubles
    f32 = (1.0 + rng.integers(0, 3000, q.size) * 2.0 ** -23).astype(np.float32).astype(np.float64)
    got = tie_sources(q, f32)
    assert got.verdict == "float32" and got.float32 and got.decimals is None and got.digits == 17
    # float32 scores written with float32's shortest decimals (what numpy and most writers print)
    text = np.array([float(str(np.float32(x))) for x in f32[:400]])
    written = tie_sources(q[:400], text)
    assert written.float32 and written.verdict == "float32" and written.digits in (8, 9) and "single precision" \
        in written.describe()
    assert not (text == f32[:400]).all()                 # the doubles read are not the float32 values themselves
    full = raw.copy()
    full[1] = full[0]                                     # one tie between full-precision doubles
    got = tie_sources(q, full)
    assert got.verdict == "full precision" and not got.float32 and got.tied_lines == 2 and got.groups == 1
    assert got.digits is not None and got.digits >= 15
    none = tie_sources(q, raw)
    assert none.verdict == "no ties" and none.tied_lines == 0 and none.describe().startswith("no ties")


def test_score_digits_counted_as_written():
    q = np.zeros(4, np.int64)
    s = np.array([12.5, 0.125, 3.0, 3.0])
    got = tie_sources(q, s)
    assert (got.decimals, got.digits, got.tied_lines, got.groups, got.queries_with_ties) == (3, 3, 2, 1, 1)
    assert got.verdict == "rounded"
    assert tie_sources(q, np.array([0.1, 0.1, 1e-7, 2.5e10])).decimals == 7


def test_larger_groups_against_random_orders():
    """Groups beyond enumeration (up to 25 docs): the expected value within five standard errors of the mean
    over 3,000 seeded random orders, and best and worst outside every sampled value."""
    rng = np.random.default_rng(11)
    groups = [[1, "n", "n", 0], list(rng.choice(np.array(LABELS, object), 25)), [2, 0, "n"],
              list(rng.choice(np.array(LABELS, object), 12)), [3]]
    case = Case([(groups, [1, 2])], options=dict(max_docs=30))
    names = ["map", "ndcg_cut.5,20", "P.10", "recip_rank", "bpref", "infAP", "iprec_at_recall.0.2,0.6", "G",
             "binG", "ndcg_rel", "num_rel_ret", "success.3"]
    qrels, run = qrels_and_run(case)
    docs = [[f"d{g}_{k}" for k in range(len(labels))] for g, labels in enumerate(groups)]
    qq, qd, qg, rq, rd, rs = [], [], [], [], [], []
    judged = [(d, int(lab)) for g, labels in enumerate(groups) for d, lab in zip(docs[g], labels) if lab != "n"]
    judged += [("x0", 1), ("x1", 2)]
    for o in range(3000):
        order = [d for part in docs for d in rng.permutation(part).tolist()]
        vq = f"s{o:05d}"
        rq += [vq] * len(order); rd += order; rs += [float(len(order) - i) for i in range(len(order))]
        for d, gr in judged:
            qq.append(vq); qd.append(d); qg.append(gr)
    import treckit
    sample = treckit.evaluate(Qrels.from_columns(qq, qd, qg), Run.from_columns(rq, rd, rs), names, max_docs=30,
                              warn=lambda m: None)
    sample = sample[sample["qid"] != "all"]
    got = {mode: tie_aware(case, names, mode)["q0"] for mode in ("expected", "best", "worst")}
    for col in got["expected"]:
        values = sample[col].to_numpy(float)
        se = values.std() / np.sqrt(values.size)
        assert abs(got["expected"][col] - values.mean()) <= 5 * se + 1e-12, col
        assert got["best"][col] >= values.max() - 1e-12 and got["worst"][col] <= values.min() + 1e-12, col


def test_lattice_worked_in_small_chunks_gives_the_same_values(monkeypatch):
    case = Case([([[1, 0, "n", -1], [2, 2, 0, "n", 1], [1]], [2]), ([[0, 1, 3], ["n", 1]], [])])
    whole = {mode: tie_aware(case, ["infAP", "G"], mode) for mode in ("expected", "best", "worst")}
    monkeypatch.setattr(thresholds, "TIE_LATTICE_CHUNK_STATES", 3)
    for mode, want in whole.items():
        assert tie_aware(case, ["infAP", "G"], mode) == want


def test_ties_of_float32_scores_and_of_the_rank_column():
    """The groups follow the engine's ranking: scores equal once rounded to float32 tie with float32=True;
    with order='rank' equal ranks tie, whatever the scores."""
    qrels = Qrels.from_columns(["q"] * 3, ["a", "b", "c"], [1, 0, 2])
    run = Run.from_columns(["q"] * 3, ["a", "b", "c"], [1.0, 1.0 + 1e-12, 0.5], rank=[1, 1, 2])
    assert tied_ranking(qrels, run, EvalOptions()).size.tolist() == [1, 1, 1]
    assert sorted(tied_ranking(qrels, run, EvalOptions(float32=True)).size.tolist()) == [1, 2, 2]
    by_rank = tied_ranking(qrels, run, EvalOptions(rank_by="rank"))
    assert dict(zip(by_rank.rel.tolist(), zip(by_rank.start.tolist(), by_rank.size.tolist()))) == \
        {1: (0, 2), 0: (0, 2), 2: (2, 1)}


def test_an_unknown_mode_or_a_missing_kernel_is_a_programming_error():
    case = Case([([[1, "n"]], [])])
    qrels, run = qrels_and_run(case)
    tied = tied_ranking(qrels, run, EvalOptions())
    with pytest.raises(ValueError, match="mode"):
        tie_values(tied, "map", (), "mean")
    with pytest.raises(TypeError, match="kernel"):
        tie_values(tied, "map", (), "best")


def test_interpolated_precision_over_a_huge_group_is_refused_by_its_size(monkeypatch):
    monkeypatch.setattr(thresholds, "TIE_IPREC_MAX_CELLS", 5)
    case = Case([([[1, 0, "n", 1, 2, 0]], [])])           # three relevant docs: the path count by DP
    qrels, run = qrels_and_run(case)
    with pytest.raises(TieGroupTooLarge, match="6 documents"):
        tie_values(tied_ranking(qrels, run, EvalOptions()), "iprec_at_recall", (0.5,), "expected")


# ---------------------------------------------------------------- a rational reference
def _rational(labels: list, num_rel: int, level: int, max_docs, cuts) -> dict[str, Fraction]:
    """AP, RR, num_rel_ret, P@k and recall@k of one order, in fractions, from trec_eval's definitions written
    out: ``labels`` the ranked docs (grades, -1 unjudged, "n" outside the qrels), cut at ``max_docs``."""
    ranked = labels if max_docs is None else labels[:max_docs]
    rel = [lab != "n" and lab >= level for lab in ranked]
    hits, ap, rr = 0, Fraction(0), Fraction(0)
    for i, r in enumerate(rel, 1):
        if r:
            hits += 1
            ap += Fraction(hits, i)
            rr = rr or Fraction(1, i)
    out = {"map": ap / num_rel if num_rel else Fraction(0), "recip_rank": rr, "num_rel_ret": Fraction(hits)}
    for k in cuts:
        top = sum(rel[:k])
        out[f"P_{k}"] = Fraction(top, k)
        out[f"recall_{k}"] = Fraction(top, num_rel) if num_rel else Fraction(0)
    return out


@settings(max_examples=int(os.environ.get("TRECKIT_TIES_EXAMPLES", "40")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases(max_orders=5_000), st.lists(st.integers(1, 9), min_size=1, max_size=3, unique=True))
def test_expected_values_equal_the_rational_mean_of_every_order(case, cuts):
    """The expectation computed in rational arithmetic, order by order from the measures' definitions (not
    from the engine's doubles): the tie-aware double within 1e-12 of it, for -M (a cut anywhere, also inside
    a group), -l, graded and unjudged docs and cutoffs inside groups."""
    import itertools

    opts = {k: v for k, v in case.options.items() if k in ("level", "max_docs")}
    case = Case(case.queries, [], opts)
    note(repr(case))
    names = ["map", "recip_rank", "num_rel_ret", "P." + ",".join(map(str, cuts)), "recall." + ",".join(map(str, cuts))]
    got = tie_aware(case, names, "expected")
    level = opts.get("level", 1)
    for qi, (groups, extra) in enumerate(case.queries):
        num_rel = sum(1 for g in groups for lab in g if lab != "n" and lab >= level) + sum(1 for x in extra if x >= level)
        if not any(lab != "n" for g in groups for lab in g) and not extra:
            continue
        total: dict[str, Fraction] = {}
        count = 0
        for order in itertools.product(*(itertools.permutations(g) for g in groups)):
            values = _rational([lab for part in order for lab in part], num_rel, level, opts.get("max_docs"), cuts)
            for col, v in values.items():
                total[col] = total.get(col, Fraction(0)) + v
            count += 1
        for col, v in total.items():
            want = v / count
            have = got[f"q{qi}"][col]
            assert abs(Fraction(have) - want) <= Fraction(1, 10 ** 12) * max(1, abs(want)), (qi, col, have, float(want))
