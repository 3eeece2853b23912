"""compare(): every system against the first (the baseline), per query and in aggregate.

All systems are scored by the one evaluation engine on the same judged queries; a query a run
does not answer scores 0 (trec_eval -c), so the pairs of values always line up.  Each run is read,
evaluated once (its per-query values and the relevant docs it ranks in the top k come from the same
evaluation) and dropped before the next is read, so memory stays that of one run.
"""
from __future__ import annotations

import functools
import numbers
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Sequence

from .. import thresholds
from ..dependencies import deferred
from ..console.errors import InputError
from ..engines.budget import MemoryLimit
from ..engines.memory import EvalOptions, evaluate_requests
from ..engines.stream import evaluate_path, plan
from ..engines.tie_aware import COMPARE_MODES, check_requests, evaluate_tie_aware, named_measures, refuse
from ..fast.strings import take
from ..measures.definitions import definitions_of
from ..measures.readable import to_engine
from ..measures.registry import resolve
from ..model import Qrels, Run
from . import stats

np = deferred("numpy")

SCHEMA_VERSION = "1.0"


@dataclass
class ComparedRun:
    """A system's run to compare: the run (``run``, or ``load`` to read it when its turn comes) and what
    identifies it.  ``name`` None: the run's tag (the file names when tags coincide)."""
    name: str | None
    run: Run | None = None
    run_path: str | None = None
    run_digest: str | None = None
    config_path: str | None = None
    config_digest: str | None = None
    load: Callable[[], Run] | None = field(default=None, repr=False, compare=False)
    # scores the run without reading it whole, when it is too large for memory (else None: then ``load``)
    score: Callable[[Qrels, list, int], "Scored | None"] | None = field(default=None, repr=False, compare=False)
    latency_ms: dict | None = None          # a system run from its config: per-query latency p50, p95, mean


@dataclass
class CompareOptions:
    k: int = 10                               # depth of the per-query "hits"
    tests: tuple[str, ...] = ("t-test", "wilcoxon", "randomization", "bootstrap")
    correction: str = "holm"
    alpha: float = 0.05
    permutations: int = 10000
    resamples: int = 10000
    seed: int = 42
    tie_aware: str | None = None              # None | range (ranges beside trec_eval's values) | expected (tests on them)

    def __post_init__(self) -> None:
        if self.tie_aware is not None and self.tie_aware not in COMPARE_MODES:
            raise InputError(f"tie_aware must be one of {', '.join(COMPARE_MODES)}, got {self.tie_aware!r}",
                             fix="pass e.g. --tie-aware range")
        self.tests = tuple(dict.fromkeys(self.tests))          # a test named twice runs once
        bad = [t for t in self.tests if t not in stats.TESTS]
        if bad:
            raise InputError(f"unknown test(s) {bad}", fix=f"choose from {', '.join(stats.TESTS)}")
        if self.correction not in stats.CORRECTIONS:
            raise InputError(f"unknown correction {self.correction!r}", fix="use holm or bonferroni")
        if not (_whole(self.k) and self.k >= 1):
            raise InputError(f"k must be a whole number of at least 1, got {self.k!r}", fix="pass e.g. --k 10")
        if not (isinstance(self.alpha, numbers.Real) and 0 < self.alpha < 1):
            raise InputError(f"alpha must lie strictly between 0 and 1, got {self.alpha!r}", fix="pass e.g. --alpha 0.05")
        for what, n in (("permutations", self.permutations), ("resamples", self.resamples)):
            if not (_whole(n) and thresholds.MIN_DRAWS <= n <= thresholds.MAX_DRAWS):
                raise InputError(f"{what} must be a whole number from {thresholds.MIN_DRAWS:,} to "
                                 f"{thresholds.MAX_DRAWS:,}, got {n!r}",
                                 fix=f"pass e.g. --{what} 10000")
        if not (_whole(self.seed) and self.seed >= 0):
            raise InputError(f"the seed must be a whole number >= 0, got {self.seed!r}", fix="pass e.g. --seed 42")


def _whole(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


@dataclass
class Comparison:
    systems: list[ComparedRun]
    measures: list[str]
    qids: list[str]
    values: dict[str, np.ndarray]            # system -> (Q, M)
    hits: dict[str, list[list[str]]]         # system -> per query, relevant docs in its top k
    tests: list[dict]
    options: CompareOptions
    digests: dict[str, str | None] = field(default_factory=dict)
    definitions: dict = field(default_factory=dict)        # measure -> treckit.measures.definitions.Definition
    # --tie-aware: system -> {trec_eval, expected, best, worst: (Q, M)}; ``values`` holds trec_eval's (range)
    # or the expected ones (expected: the tests run on them)
    ties: dict[str, dict[str, np.ndarray]] | None = None
    # compare(curves=True): system -> (Q, 11) per-query iprec_at_recall values at recall 0, 0.1, ..., 1 (``curve_columns``),
    # measured in the same evaluation for the HTML report's precision-recall curves and never tested
    curves: dict[str, np.ndarray] | None = None
    curve_columns: list[str] = field(default_factory=list)

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

    def rename(self, names: dict[str, str]) -> None:
        """Print measures under other names (``names``: old -> new), in the measures, the tests and the
        definitions alike."""
        self.measures = [names.get(m, m) for m in self.measures]
        for t in self.tests:
            t["measure"] = names.get(t["measure"], t["measure"])
        self.definitions = {names.get(m, m): d.with_name(names.get(m, m)) for m, d in self.definitions.items()}

    def tie_pairs(self) -> list[dict]:
        """For each (measure, system) against the baseline: both systems' mean trec_eval value, expected value,
        worst and best, the difference of trec_eval's and of the expected values, and whether the difference
        lies inside the tie ranges (the two [worst, best] ranges overlap: some orders of the tied documents
        put the systems the other way round)."""
        if self.ties is None:
            return []
        rows = []
        base = self.ties[self.baseline]
        for j, m in enumerate(self.measures):
            b = {k: float(v[:, j].mean()) for k, v in base.items()}
            for s in self.systems[1:]:
                o = {k: float(v[:, j].mean()) for k, v in self.ties[s.name].items()}
                rows.append({"measure": m, "baseline": self.baseline, "system": s.name,
                             "baseline_values": b, "system_values": o,
                             "delta_trec_eval": o["trec_eval"] - b["trec_eval"],
                             "delta_expected": o["expected"] - b["expected"],
                             "inside_tie_ranges": bool(o["worst"] <= b["best"] and b["worst"] <= o["best"])})
        return rows

    def test_rows(self, measure: str, system: str) -> list[dict]:
        return [r for r in self.tests if r["measure"] == measure and r["system"] == system]


@dataclass
class Scored:
    """One run's evaluation: per-query values (queries x columns) and its relevant docs in the top k."""
    tag: str
    qids: list[str]
    columns: list[str]
    values: np.ndarray
    hits: list[list[str]]
    ties: dict[str, np.ndarray] | None = None      # --tie-aware: {trec_eval, expected, best, worst: (Q, columns)}


def score_run(qrels: Qrels, run: Run, requests, k: int, source: str, tie_aware: str | None = None) -> Scored:
    """Evaluate ``run`` once with the engine (every judged query, missing ones scoring 0) and read
    the relevant docs of its top k off the same ranking; with ``tie_aware``, also its tie-aware values
    (:mod:`treckit.engines.tie_aware`)."""
    ties = None
    if tie_aware is None:
        res = evaluate_requests(qrels, run, requests, EvalOptions(complete=True), source=source)
    else:
        ev = evaluate_tie_aware(qrels, run, requests, EvalOptions(complete=True), None, "range")
        res = ev.plain
    columns, values = res.per_query_numbers()
    if tie_aware is not None:
        ties = {"trec_eval": values, **{m: r.per_query_numbers()[1] for m, r in ev.values.items()}}
    return Scored(run.tag, res.qids, columns, values, _hits(res.view, run, k), ties)


def score_path(qrels: Qrels, path, requests, k: int, reading, memory_limit) -> Scored | None:
    """:func:`score_run` of the run file ``path`` evaluated in bounded memory (engines.stream), the hits
    read off each part's ranking; None when the file is not to be streamed (then it is read whole)."""
    memory_limit = MemoryLimit.parse(memory_limit)
    if not plan(path, reading, memory_limit.bytes).stream:
        return None
    hits: dict[str, list[str]] = {}

    def on_part(part, run: Run) -> None:
        hits.update(zip(part.view.qids, _hits(part.view, run, k)))

    res = evaluate_path(qrels, path, requests, EvalOptions(complete=True), reading, memory_limit=memory_limit,
                        on_part=on_part)
    columns, values = res.per_query_numbers()
    return Scored(res.runid, res.qids, columns, values, [hits.get(q, []) for q in res.qids])     # a judged query in no part retrieves nothing


def score_system(qrels: Qrels, s: ComparedRun, requests, k: int, tie_aware: str | None = None) -> Scored:
    """One system scored: its run file in bounded memory when it is to be streamed (``s.score``), else its
    run read (or ``load``-ed) whole and dropped afterwards.  With ``tie_aware`` every run is read whole."""
    scored = s.score(qrels, requests, k) if s.score is not None and s.run is None and tie_aware is None else None
    if scored is not None:
        return scored
    run = s.run if s.run is not None else s.load()
    return score_run(qrels, run, requests, k, s.run_path or s.name or "run", tie_aware)


def _in_turn(qrels: Qrels, systems: list[ComparedRun], score) -> Iterator[Scored]:
    for s in systems:
        yield score(qrels, s)


def _hits(view, run: Run, k: int) -> list[list[str]]:
    """Relevant docs (grade >= 1) each query has in the run's top k, in rank order (the engine's ranking)."""
    sel = np.flatnonzero((view.rel >= 1) & (view.pos < k))      # entries are sorted by (query, rank)
    docs = take(run.table.column("docid"), view.row[sel]).to_pylist() if sel.size else []
    out: list[list[str]] = [[] for _ in range(view.Q)]
    for q, d in zip(view.q[sel].tolist(), docs):
        out[q].append(d)
    return out


def compare(qrels: Qrels, systems: list[ComparedRun], measures: list[str], options: CompareOptions | None = None,
            warn=None, advance: Callable[[], None] | None = None, scorer=None, ranking: str = "trec_eval",
            query_ids: Sequence[str] | None = None, scored: Callable[[], None] | None = None,
            curves: bool = False) -> Comparison:
    """Score every system (reading each in turn when it comes with ``load``) and test each against the
    first.  ``measures``: engine names (trec_eval's, ir_measures') or readable ones (``ndcg_at_10``:
    :mod:`treckit.measures.readable`), printed as given.  ``ranking``: the rule the runs were read with
    (recorded in the definitions).  ``advance`` (optional) is called after each system is scored and
    after the tests.  ``scorer(qrels, systems, score_system)`` (optional; the Dask engine's) yields each
    system's ``score_system(qrels, system)`` in order, computed where it likes.  ``query_ids`` (optional):
    the query set in place of the judged queries: a query without judgments scores 0 on every measure
    and has no hits, a judged query outside it is left out; queries in byte order, as the engine orders them.
    ``scored`` (optional) is called once every system is scored, before the tests: work that would take the
    cores from the reading of the runs (the files' digests) starts there.  ``curves``: also measure
    iprec_at_recall in the same evaluation, kept apart (``Comparison.curves``) unless it is one of ``measures``."""
    o = options or CompareOptions()
    query_ids = _in_byte_order(query_ids)
    if len(systems) < 2:
        raise InputError("compare needs at least two runs: the baseline first, then the others",
                         fix="treckit compare QRELS BASELINE_RUN OTHER_RUN [...]")
    measures, printed = to_engine(measures)
    requests = resolve(measures, first_params_win=False)      # -m P.5 -m P.10: both compared
    if o.tie_aware is not None:
        if scorer is not None:
            refuse("dask")
        requests = check_requests(requests, "range", named=named_measures(measures), warn=warn)
    extra = curve_requests(requests, curves and o.tie_aware is None)
    requests = requests + extra
    score = functools.partial(score_system, requests=requests, k=o.k, tie_aware=o.tie_aware)
    runs = _score_each(qrels, systems, scorer or _in_turn, score, query_ids, advance)
    cols = runs[-1].columns if runs else None
    if not cols:
        raise InputError("none of the measures has per-query values to compare", fix="pick measures such as map or ndcg_cut.10")
    _name(systems, [r.tag for r in runs])
    if scored:
        scored()
    apart = [c for r in extra for c in r.columns]
    wanted = _user_order(measures, cols, apart)           # columns in the order the user asked for them
    idx = [cols.index(c) for c in wanted]
    defined = definitions_of(requests, query_set="judged" if query_ids is None else "listed", ranking=ranking)
    names = [printed.get(c, c) for c in wanted]
    by_system, tie_values = _compared_values(o, systems, runs, idx)
    comp = Comparison(systems, names, runs[-1].qids, by_system, {s.name: r.hits for s, r in zip(systems, runs)}, [], o,
                      definitions={n: defined[c].with_name(n) for n, c in zip(names, wanted)}, ties=tie_values)
    _keep_curves(comp, runs, apart, defined)
    comp.tests = _run_tests(comp)
    if advance:
        advance()
    return comp


def _in_byte_order(query_ids: Sequence[str] | None) -> list[str] | None:
    """The listed query ids once each, in byte order (the engine's order); None: the judged queries."""
    if query_ids is None:
        return None
    return sorted(set(query_ids), key=lambda q: q.encode("utf-8", "surrogatepass"))


def _score_each(qrels: Qrels, systems: list[ComparedRun], scorer, score, query_ids: list[str] | None,
                advance: Callable[[], None] | None) -> list[Scored]:
    """Each system scored in turn (by ``scorer``), over ``query_ids`` when given; ``advance`` after each."""
    runs = []
    for scored in scorer(qrels, systems, score):
        runs.append(_over(scored, query_ids) if query_ids is not None else scored)
        if advance:
            advance()
    return runs


def _compared_values(o: CompareOptions, systems: list[ComparedRun], runs: list[Scored], idx: list[int]):
    """The values the means and tests run on (system -> (Q, M)), and with --tie-aware every system's tie-aware
    values (system -> {trec_eval, expected, best, worst: (Q, M)}, else None); the columns ``idx`` of each."""
    by_system = {s.name: r.values[:, idx] for s, r in zip(systems, runs)}
    if o.tie_aware is None:
        return by_system, None
    tie_values = {s.name: {m: v[:, idx] for m, v in r.ties.items()} for s, r in zip(systems, runs)}
    if o.tie_aware == "expected":           # the tests (and the means shown) on the expected values
        by_system = {name: t["expected"] for name, t in tie_values.items()}
    return by_system, tie_values


def _over(scored: Scored, query_ids: list[str]) -> Scored:
    """``scored`` with one row per query of ``query_ids``: 0 and no hits where it has none."""
    row = {q: i for i, q in enumerate(scored.qids)}
    values = np.zeros((len(query_ids), scored.values.shape[1]), scored.values.dtype)
    hits: list[list[str]] = []
    rows = np.array([row.get(q, -1) for q in query_ids], np.int64)
    for i, q in enumerate(query_ids):
        if q in row:
            values[i] = scored.values[row[q]]
        hits.append(scored.hits[row[q]] if q in row else [])
    ties = None
    if scored.ties is not None:
        ties = {m: np.where((rows >= 0)[:, None], v[np.maximum(rows, 0)], 0.0) if v.size else np.zeros_like(values)
                for m, v in scored.ties.items()}
    return Scored(scored.tag, list(query_ids), scored.columns, values, hits, ties)


def _name(systems: list[ComparedRun], tags: list[str]) -> None:
    """Unnamed systems take their run's tag; when two names coincide, unnamed systems take their
    file's name instead."""
    given = [s.name for s in systems]
    for s, tag in zip(systems, tags):
        s.name = s.name or tag
    if len({s.name for s in systems}) != len(systems):
        for i, (s, g) in enumerate(zip(systems, given)):
            if g is None:
                s.name = Path(s.run_path).stem if s.run_path else f"system{i + 1}"
    names = [s.name for s in systems]
    if len(set(names)) != len(names):
        raise InputError(f"two systems share a name: {names}", fix="give distinct names with --name")


def _user_order(measures: list[str], cols: list[str], apart: list[str]) -> list[str]:
    """The columns ``cols`` but those kept ``apart``, the asked-for ones first, in the order asked."""
    out: list[str] = []
    for m in measures:
        names = [c for r in resolve([m]) for c in r.columns]
        out += [c for c in names if c in cols and c not in out]
    return [c for c in out + [c for c in cols if c not in out] if c not in apart]


def _keep_curves(comp: Comparison, runs: list[Scored], apart: list[str], defined: dict) -> None:
    """The iprec_at_recall columns measured apart (``apart``), with their definitions, kept on ``comp``."""
    if apart:
        cols = runs[-1].columns
        comp.curves = {s.name: r.values[:, [cols.index(c) for c in apart]] for s, r in zip(comp.systems, runs)}
        comp.curve_columns = apart
        comp.definitions.update({c: defined[c] for c in apart})


def _run_tests(comp: Comparison) -> list[dict]:
    """Every selected test on every (measure, system) pair; p-values corrected within each test over
    all pairs; significant = corrected p < alpha, for every test alike (see stats).  The bootstrap, the
    longest, runs on a thread of its own beside the others (its numbers are drawn from its own seeded
    generator, so they do not depend on what runs beside it)."""
    o = comp.options
    pairs = [(m, s.name) for m in comp.measures for s in comp.systems[1:]]
    a = np.stack([comp.column(comp.baseline, m) for m, _ in pairs], axis=1)
    b = np.stack([comp.column(s, m) for m, s in pairs], axis=1)
    results: dict[str, list[stats.TestResult]] = {}
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        bootstrap = pool.submit(stats.bootstrap_many, b - a, resamples=o.resamples, seed=o.seed,
                                alpha=o.alpha) if "bootstrap" in o.tests else None
        for t in o.tests:
            if t == "t-test":
                results[t] = [stats.paired_t(a[:, j], b[:, j]) for j in range(len(pairs))]
            elif t == "wilcoxon":
                results[t] = [stats.wilcoxon(a[:, j], b[:, j]) for j in range(len(pairs))]
            elif t == "randomization":
                results[t] = stats.randomization_many(b - a, permutations=o.permutations, seed=o.seed)
        if bootstrap is not None:
            results["bootstrap"] = bootstrap.result()
    finally:
        pool.shutdown(wait=False)            # an error or Ctrl-C here does not wait for the bootstrap to end
    correct = stats.CORRECTIONS[o.correction]
    adjusted = {t: correct([r.p_value for r in rs]) for t, rs in results.items()}
    effects = [stats.effect_size(a[:, j], b[:, j]) for j in range(len(pairs))]
    rows = []
    for j, (m, s) in enumerate(pairs):
        for t in o.tests:
            r, p = results[t][j], adjusted[t][j]
            rows.append({"measure": m, "baseline": comp.baseline, "system": s, **r.as_dict(), "p_adjusted": p,
                         "correction": o.correction, "significant": None if p is None else bool(p < o.alpha),
                         "effect_size": effects[j]})
    return rows


def significant(comp: Comparison, measure: str, system: str) -> bool | None:
    """The verdict reports mark: the first selected test that gives one (after correction)."""
    row = deciding_test(comp, measure, system)
    return None if row is None else row["significant"]


def deciding_test(comp: Comparison, measure: str, system: str) -> dict | None:
    """The test row whose verdict reports mark (:func:`significant`): the first selected test that gives one."""
    for t in comp.options.tests:
        for r in comp.test_rows(measure, system):
            if r["test"] == t and r.get("significant") is not None:
                return r
    return None


def curve_requests(requests, wanted: bool = True) -> list:
    """The request of trec_eval's iprec_at_recall (11 recall levels) when ``wanted``, unless ``requests`` measure it
    already."""
    if not wanted or any(r.measure.name == "iprec_at_recall" for r in requests):
        return []
    return resolve(["iprec_at_recall"])


def compare_values(names: list[str], measures: list[str], qids: list[str], values: dict[str, np.ndarray],
                   options: CompareOptions | None = None, definitions: dict | None = None) -> Comparison:
    """The comparison of per-query values computed elsewhere (system -> (Q, M): the same queries in the same order;
    the first system is the baseline), with :func:`compare`'s paired tests run on them."""
    comp = Comparison([ComparedRun(n) for n in names], list(measures), list(qids), values,
                      {n: [[] for _ in qids] for n in names}, [], options or CompareOptions(),
                      definitions=dict(definitions or {}))
    comp.tests = _run_tests(comp)
    return comp
