"""The reference of the tie-aware tests: every order of every tie group, each scored by treckit's engine.

A case is a few queries, each a list of tie groups (docs with equal scores), each doc a label: ``"n"``
(retrieved, not in the qrels), ``-1`` (in the qrels with a negative grade: pooled, not judged) or a grade
0-3; plus judged docs the run does not retrieve, and judged queries the run misses (for -c).  For every
query, every order of its docs (the product over its groups of every permutation of each group) becomes
one tie-free query of its own, scored n, n-1, ..., 1, with the query's judgments copied: one call of
``treckit.evaluate`` scores them all, with trec_eval's semantics and the options of the case.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction

import treckit
from treckit.engines.memory import EvalOptions, placeholder as _placeholder
from treckit.measures.registry import resolve
from treckit.measures.ties import SPECS, tie_values, tied_ranking
from treckit.model import Qrels, Run

LABELS = ("n", -1, 0, 1, 2, 3)


@dataclass
class Case:
    queries: list[tuple[list[list], list[int]]]     # per query: tie groups of labels, grades judged but not retrieved
    missing: list[int] = field(default_factory=list)  # grades of a judged query the run misses (none: no such query)
    options: dict = field(default_factory=dict)      # EvalOptions fields

    def __repr__(self) -> str:
        return f"Case(queries={self.queries!r}, missing={self.missing!r}, options={self.options!r})"

    def orders(self, qi: int) -> int:
        return math.prod(math.factorial(len(g)) for g in self.queries[qi][0])


def _qid(qi: int) -> str:
    return f"q{qi}"


def qrels_and_run(case: Case) -> tuple[Qrels, Run]:
    """The case as qrels and a run with ties (group g of a query scored len(groups) - g)."""
    qq, qd, qg, rq, rd, rs = [], [], [], [], [], []
    for qi, (groups, extra) in enumerate(case.queries):
        for g, labels in enumerate(groups):
            for k, lab in enumerate(labels):
                doc = f"d{g}_{k}"
                rq.append(_qid(qi)); rd.append(doc); rs.append(float(len(groups) - g))
                if lab != "n":
                    qq.append(_qid(qi)); qd.append(doc); qg.append(int(lab))
        for k, grade in enumerate(extra):
            qq.append(_qid(qi)); qd.append(f"x{k}"); qg.append(int(grade))
    for k, grade in enumerate(case.missing):
        qq.append("zmissing"); qd.append(f"m{k}"); qg.append(int(grade))
    return Qrels.from_columns(qq, qd, qg), Run.from_columns(rq, rd, rs, tag="ties")


def enumerated(case: Case, measures: list[str]) -> dict[str, dict[str, list[float]]]:
    """{qid: {column: [value of each order]}}: every order of every query scored by treckit.evaluate."""
    qq, qd, qg, rq, rd, rs = [], [], [], [], [], []
    owner = {}
    for qi, (groups, extra) in enumerate(case.queries):
        judged = [(f"d{g}_{k}", int(lab)) for g, labels in enumerate(groups) for k, lab in enumerate(labels)
                  if lab != "n"] + [(f"x{k}", int(gr)) for k, gr in enumerate(extra)]
        per_group = [[f"d{g}_{k}" for k in range(len(labels))] for g, labels in enumerate(groups)]
        for o, order in enumerate(itertools.product(*(itertools.permutations(docs) for docs in per_group))):
            docs = [d for part in order for d in part]
            vq = f"{_qid(qi)}~{o:06d}"
            owner[vq] = _qid(qi)
            n = len(docs)
            rq.extend([vq] * n); rd.extend(docs); rs.extend(float(n - i) for i in range(n))
            for d, gr in judged:
                qq.append(vq); qd.append(d); qg.append(gr)
    for k, grade in enumerate(case.missing):
        qq.append("zmissing"); qd.append(f"m{k}"); qg.append(int(grade))
    owner["zmissing"] = "zmissing"
    df = treckit.evaluate(Qrels.from_columns(qq, qd, qg), Run.from_columns(rq, rd, rs, tag="ties"), measures,
                          warn=lambda message: None, **case.options)
    df = df[df["qid"] != "all"]
    out: dict[str, dict[str, list[float]]] = {}
    columns = [c for c in df.columns if c != "qid"]
    for row in df.itertuples(index=False):
        q = owner[row[0]]
        slot = out.setdefault(q, {c: [] for c in columns})
        for c, v in zip(columns, row[1:]):
            slot[c].append(float(v))
    return out


def tie_aware(case: Case, measures: list[str], mode: str) -> dict[str, dict[str, float]]:
    """{qid: {column: value}} from the tie-aware kernels, wired as the engine wires plain kernels: one tied
    ranking per (-J, level) a request asks for, then -c's placeholder rules."""
    qrels, run = qrels_and_run(case)
    o = EvalOptions(**case.options)
    base = tied_ranking(qrels, run, o)
    out: dict[str, dict[str, float]] = {q: {} for q in base.qids}
    for req in resolve(measures, first_params_win=False):
        if req.measure.value == "runid" or (mode == "expected" and SPECS[req.measure.name].expected is None):
            continue
        judged = o.judged_only if req.judged_only is None else req.judged_only
        level = o.level if req.level is None else req.level
        tied = base.judged_only(judged).at_level(level)
        block = tie_values(tied, req.measure.name, req.params, mode, kernel=req.measure.kernel, **dict(req.options))
        if base.missing.any():
            _placeholder(req, block, None, base.missing)
        for qi, q in enumerate(base.qids):
            for j, col in enumerate(req.columns):
                out[q][col] = float(block[qi, j])
    evaluated = [q for q, m in zip(base.qids, base.missing.tolist()) if not m or o.complete]
    return {q: out[q] for q in evaluated}


_SCALE = 1 << 1100          # every finite double times this is an integer (their denominators are 2^k, k <= 1074)


def exact_mean(values: list[float]) -> Fraction:
    """The exact mean of ``values`` (doubles), as a fraction: summed as integers of 2^-1100."""
    total = 0
    for v in values:
        num, den = v.as_integer_ratio()
        total += num * (_SCALE // den)
    return Fraction(total, _SCALE * len(values))


def close(a: float, b, tol: float = 1e-12) -> bool:
    if isinstance(b, Fraction):
        if math.isnan(a):
            return False
        return abs(Fraction(a) - b) <= Fraction(tol) * max(1, abs(b))
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= tol * max(1.0, abs(b))


def compare(case: Case, measures: list[str], exact_extremes: set[str] = frozenset()) -> list[str]:
    """Every difference between the tie-aware values and the enumeration (empty when they agree): expected
    against the exact mean of the orders' values, best and worst against their max and min."""
    reference = enumerated(case, measures)
    got = {mode: tie_aware(case, measures, mode) for mode in ("expected", "best", "worst")}
    problems = []
    for q, cols in reference.items():
        for col, values in cols.items():
            nan = any(math.isnan(v) for v in values)
            mean = float("nan") if nan else exact_mean(values)
            hi = float("nan") if nan else max(values)
            lo = float("nan") if nan else min(values)
            for mode, want in (("expected", mean), ("best", hi), ("worst", lo)):
                have = got[mode][q].get(col)
                if have is None:
                    if not (mode == "expected" and col.startswith("gm_")):
                        problems.append(f"{q} {col} {mode}: missing")
                    continue
                if mode != "expected" and col in exact_extremes and not nan:
                    ok = have == want
                else:
                    ok = close(have, want)
                if not ok:
                    problems.append(f"{q} {col} {mode}: tie-aware {have!r}, enumeration {float(want)!r}")
    return problems
