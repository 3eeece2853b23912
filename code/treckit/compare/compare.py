"""compare(): every system against the first (the baseline), per query and in aggregate.

All systems are scored by the one evaluation engine on the same judged queries; a query a run
does not answer scores 0 (trec_eval -c), so the pairs of values always line up.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..model import Qrels, Run
from . import stats

SCHEMA_VERSION = "1.0"


@dataclass
class System:
    name: str
    run: Run
    run_path: str | None = None
    run_digest: str | None = None
    config_path: str | None = None
    config_digest: str | None = None


@dataclass
class CompareOptions:
    k: int = 10                               # depth of the per-query "hits"
    tests: tuple[str, ...] = ("t-test", "wilcoxon", "randomization", "bootstrap")
    correction: str = "holm"
    alpha: float = 0.05
    permutations: int = 10000
    resamples: int = 10000
    seed: int = 42


@dataclass
class Comparison:
    systems: list[System]
    measures: list[str]
    qids: list[str]
    values: dict[str, np.ndarray]            # system -> (Q, M)
    hits: dict[str, list[list[str]]]         # system -> per query, relevant docs in its top k
    tests: list[dict]
    options: CompareOptions
    digests: dict[str, str | None] = field(default_factory=dict)

    @property
    def baseline(self) -> str:
        return self.systems[0].name

    def column(self, system: str, measure: str) -> np.ndarray:
        return self.values[system][:, self.measures.index(measure)]

    def summary(self, system: str) -> dict[str, dict[str, float]]:
        v = self.values[system]
        sd = v.std(axis=0, ddof=1) if v.shape[0] > 1 else np.zeros(v.shape[1])
        return {"macro": dict(zip(self.measures, map(float, v.mean(axis=0)))),
                "median": dict(zip(self.measures, map(float, np.median(v, axis=0)))),
                "std": dict(zip(self.measures, map(float, sd)))}

    def delta(self, system: str) -> dict[str, float]:
        return {m: float(self.column(system, m).mean() - self.column(self.baseline, m).mean()) for m in self.measures}

    def win_tie_loss(self, system: str, measure: str) -> tuple[int, int, int]:
        d = self.column(system, measure) - self.column(self.baseline, measure)
        return int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum())


def compare(qrels: Qrels, systems: list[System], measures: list[str], options: CompareOptions | None = None,
            warn=None) -> Comparison:
    from ..evaluation import EvalOptions, evaluate_requests
    from ..measures.registry import resolve

    o = options or CompareOptions()
    if len(systems) < 2:
        raise InputError("compare needs at least two runs: the baseline first, then the others",
                         fix="treckit compare QRELS BASELINE_RUN OTHER_RUN [...]")
    names = [s.name for s in systems]
    if len(set(names)) != len(names):
        raise InputError(f"two systems share a name: {names}", fix="give distinct names with --name")
    bad = [t for t in o.tests if t not in stats.TESTS]
    if bad:
        raise InputError(f"unknown test(s) {bad}", fix=f"choose from {', '.join(stats.TESTS)}")
    if o.correction not in stats.CORRECTIONS:
        raise InputError(f"unknown correction {o.correction!r}", fix="use holm or bonferroni")
    requests = resolve(measures)
    eopts = EvalOptions(complete=True)
    values, qids, cols = {}, None, None
    for s in systems:
        res = evaluate_requests(qrels, s.run, requests, eopts, source=s.run_path or s.name)
        keep = [j for j, c in enumerate(res.columns) if c in res.per_query_columns and res.kinds[c] in ("double", "long")]
        values[s.name] = res.values[:, keep]
        cols = [res.columns[j] for j in keep]
        qids = res.qids
    if not cols:
        raise InputError("none of the measures has per-query values to compare", fix="pick measures such as map or ndcg_cut.10")
    wanted = _user_order(measures, cols)                  # columns in the order the user asked for them
    idx = [cols.index(c) for c in wanted]
    values = {k: v[:, idx] for k, v in values.items()}
    cols = wanted
    comp = Comparison(systems, cols, qids, values, {s.name: _hits(qrels, s.run, qids, o.k) for s in systems}, [], o)
    comp.tests = _run_tests(comp)
    return comp


def _user_order(measures: list[str], cols: list[str]) -> list[str]:
    from ..measures.registry import resolve
    out: list[str] = []
    for m in measures:
        names = [c for r in resolve([m]) for c in r.columns]
        out += [c for c in names if c in cols and c not in out]
    return out + [c for c in cols if c not in out]


def _hits(qrels: Qrels, run: Run, qids: list[str], k: int) -> list[list[str]]:
    """Relevant docs (grade >= 1) each query has in the run's top k, in rank order (trec_eval's ranking)."""
    from ..convert import convert_run
    ranked, _ = convert_run(run, order="desc", duplicates="error")
    t = ranked.table
    rel = {(q, d) for q, d, g in zip(*(qrels.table.column(c).to_pylist() for c in ("qid", "docid", "grade"))) if g >= 1}
    per: dict[str, list[str]] = {}
    for q, d, r in zip(t.column("qid").to_pylist(), t.column("docid").to_pylist(), t.column("rank").to_pylist()):
        if r <= k and (q, d) in rel:
            per.setdefault(q, []).append(d)
    return [per.get(q, []) for q in qids]


def _run_tests(comp: Comparison) -> list[dict]:
    o = comp.options
    rows = []
    for m in comp.measures:
        a = comp.column(comp.baseline, m)
        for s in comp.systems[1:]:
            b = comp.column(s.name, m)
            for t in o.tests:
                if t == "t-test":
                    r = stats.paired_t(a, b)
                elif t == "wilcoxon":
                    r = stats.wilcoxon(a, b)
                elif t == "randomization":
                    r = stats.randomization(a, b, permutations=o.permutations, seed=o.seed)
                else:
                    r = stats.bootstrap_ci(a, b, resamples=o.resamples, seed=o.seed)
                rows.append({"measure": m, "baseline": comp.baseline, "system": s.name, **r.as_dict(),
                             "effect_size": stats.effect_size(a, b)})
    # correct within each test over every (measure, system) comparison
    correct = stats.CORRECTIONS[o.correction]
    for t in o.tests:
        idx = [i for i, r in enumerate(rows) if r["test"] == t]
        adj = correct([rows[i]["p_value"] for i in idx])
        for i, p in zip(idx, adj):
            rows[i]["p_adjusted"] = p
            rows[i]["correction"] = o.correction
            rows[i]["significant"] = None if p is None else bool(p < o.alpha)
    for r in rows:
        if r["test"] == "bootstrap":
            lo, hi = r["ci_low"], r["ci_high"]
            r["significant"] = None if lo is None else bool(lo > 0 or hi < 0)
    return rows


def significant(comp: Comparison, measure: str, system: str) -> bool | None:
    """The verdict reports mark: the first selected test that gives one (after correction)."""
    for t in comp.options.tests:
        for r in comp.tests:
            if r["measure"] == measure and r["system"] == system and r["test"] == t and r.get("significant") is not None:
                return r["significant"]
    return None
