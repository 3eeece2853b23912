"""The evaluation runner: a retrieval function (or a run) over a test set, measured by the engine.

``evaluate(retrieval_fn, test_set)`` calls ``retrieval_fn(query_text)`` for every query (or a batch
function over all query texts), takes what it returns as the ranking (doc ids in rank order, or
``(doc_id, score)`` pairs in rank order: the list order is the ranking, scores are only reported),
keeps the top ``k``, and returns per-query values, their mean / median / std, a per-query-type
breakdown and per-query latency.  Measures are computed by the one engine (see
:mod:`treckit.testsets.measures`); nDCG uses gain 2^grade - 1 unless ``gain="linear"``.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import InputError, shown
from .load import TestSet, load_test_set
from ..measures.definitions import Definition
from .measures import DEFAULT_MEASURES, canonical_name, definitions, per_query_values

DEFAULT_DEPTH = 100      # docs kept per query when k is not given
RESULTS_SCHEMA = "treckit.testset-results/2"     # /2: each measure's definition is recorded


@dataclass
class TestSetResult:
    """What one evaluation of a system on a test set found; ``to_dict`` is the results-file shape."""

    test_set: dict[str, str]
    measures: list[str]
    gain: str
    k: int | None
    per_query: list[dict[str, Any]]
    aggregates: dict[str, dict[str, float | None]]
    per_query_type: dict[str, dict[str, Any]]
    latency_ms: dict[str, float | None] | None = None
    system: dict[str, Any] = field(default_factory=dict)
    cached: bool = False
    definitions: dict[str, Definition] = field(default_factory=dict)
    # a run's queries without a line in it (each scores 0), in the test set's order; None: not a run
    missing_queries: list[str] | None = None

    def to_dict(self) -> dict[str, Any]:
        from .. import __version__
        return {"schema": RESULTS_SCHEMA, "treckit_version": __version__, "test_set": self.test_set,
                "system": self.system, "k": self.k, "measures": self.measures,
                "definitions": {m: self.definitions[m].to_dict() for m in self.measures},
                "aggregates": self.aggregates, "per_query_type": self.per_query_type,
                "latency_ms": self.latency_ms, "missing_queries": self.missing_queries, "per_query": self.per_query}

    @property
    def metrics(self) -> dict[str, float | None]:
        """The mean of each measure."""
        return {m: a["mean"] for m, a in self.aggregates.items()}


def _stats(values: Sequence[float]) -> dict[str, float | None]:
    """mean, median and sample standard deviation (ddof = 1, as compare uses); None where undefined."""
    if not values:
        return {"mean": None, "median": None, "std": None}
    a = np.asarray(values, np.float64)
    return {"mean": float(a.mean()), "median": float(np.median(a)),
            "std": float(a.std(ddof=1)) if a.size > 1 else None}


def _percentile(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def _as_ranking(result: list, qid: str, k: int, role: str = "retrieval function") -> list[tuple[str, float | None]]:
    """A retrieval function's answer for one query (a list: :func:`ask`) as [(doc_id, score or None)], top k:
    doc ids (non-empty text) or (doc_id, score) pairs, each doc once; a score is read as a dict run's is
    (:func:`treckit.inputs.score_value`)."""
    from ..inputs import score_value
    from ..io import has_surrogate
    out: list[tuple[str, float | None]] = []
    seen: set[str] = set()
    for item in result:
        if isinstance(item, str):
            doc, score = item, None
        elif isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str):
            doc, score = item[0], score_value(item[1], f"query {qid!r}: the {role}'s doc {shown(item[0])}")
        else:
            raise InputError(f"query {qid!r}: the {role} returned {type(item).__name__} items in its ranking",
                             fix="return doc ids as str, or (doc_id, score) pairs")
        if not doc or has_surrogate(doc):
            raise InputError(f"query {qid!r}: the {role} returned the doc id {shown(doc)}, "
                             + ("an empty text" if not doc else "which is not Unicode text (a lone surrogate)"),
                             fix="return doc ids as they are in the corpus and the judgments")
        if doc in seen:
            raise InputError(f"query {qid!r}: doc {shown(doc)} is returned twice", fix="return each doc once")
        seen.add(doc)
        out.append((doc, score))
    return out[:k]


def ask(fn: Callable, qid: str, *args, role: str = "retrieval function") -> list:
    """``fn(*args)``, a function's answer for query ``qid``, as a list (checked: :mod:`treckit.retrieval.callables`)."""
    from ..retrieval.callables import as_list, call, function_name
    context = f"for query {qid!r}"
    return call(fn, role, context, lambda: as_list(fn(*args), role, function_name(fn), context))


def ask_batch(fn: Callable, qids: Sequence[str], texts: list[str], role: str = "batch function") -> list[list]:
    """``fn(texts)``, a batch function's answers, one list per query (checked: one answer per query text)."""
    from ..retrieval.callables import as_list, call, function_name
    name, context = function_name(fn), f"for a batch of {len(texts)} queries"

    def work() -> list[list]:
        out = as_list(fn(texts), role, name, context, what="a list of rankings")
        if len(out) != len(texts):
            raise InputError(f"the {role} {name} returned {len(out)} rankings for {len(texts)} queries",
                             fix="return one ranking per query text, in the same order")
        return [as_list(r, role, name, f"for query {q!r}") for q, r in zip(qids, out)]
    return call(fn, role, context, work)


def run_from_rankings(rankings: dict[str, list[tuple[str, float | None]]], tag: str = "testset"):
    """A Run whose scores are rank-derived (n, n-1, ..., 1), so every tool ranks it in list order."""
    from ..model import Run
    q, d, s, r = [], [], [], []
    for qid, ranking in rankings.items():
        n = len(ranking)
        for i, (doc, _) in enumerate(ranking):
            q.append(qid), d.append(doc), s.append(float(n - i)), r.append(i + 1)
    return Run.from_columns(q, d, s, r, tag)


def summarise(test_set: TestSet, values: dict[str, dict[str, float]], measures: list[str], gain: str, k: int,
              latencies: dict[str, float] | None = None, system: dict | None = None) -> TestSetResult:
    """Per-query rows, aggregates and the per-type breakdown from per-query values."""
    types = test_set.query_types()
    order = list(dict.fromkeys(types.values()))
    rows = []
    for qid in test_set.query_ids:
        row: dict[str, Any] = {"qid": qid, "query_type": types[qid]}
        row.update({m: values[m][qid] for m in measures})
        if latencies is not None:
            row["latency_ms"] = latencies[qid]
        rows.append(row)
    aggregates = {m: _stats([r[m] for r in rows]) for m in measures}
    of_type: dict[str, list[dict[str, Any]]] = {t: [] for t in order}
    for r in rows:                                  # one pass, however many types
        of_type[r["query_type"]].append(r)
    per_type: dict[str, dict[str, Any]] = {}
    for t in order:
        sel = of_type[t]
        per_type[t] = {"num_queries": len(sel), **{m: float(np.mean([r[m] for r in sel])) for m in measures}}
    lat = None
    if latencies is not None:
        ms = list(latencies.values())
        lat = {"p50": _percentile(ms, 50), "p95": _percentile(ms, 95), "mean": float(np.mean(ms)) if ms else None}
    return TestSetResult({"name": test_set.name, "version": test_set.version, "digest": test_set.digest},
                         measures, gain, k, rows, aggregates, per_type, lat, system or {},
                         definitions=definitions(measures))


def evaluate(retrieval_fn: Callable, test_set: TestSet | str, config: dict | None = None, k: int | None = None,
             measures: Sequence[str] | None = None, *, gain: str = "exp", batch: bool = False, workers: int = 1,
             cache: bool = True, cache_dir=None, warn=None, config_dir=None) -> TestSetResult:
    """Evaluate ``retrieval_fn`` on ``test_set`` (a :class:`TestSet`, a path or a name).

    ``retrieval_fn`` may also be a system config (a mapping, a YAML path or a
    :class:`treckit.retrieval.system.System`): its last stage is evaluated, cached by its digest.

    ``retrieval_fn(query_text)`` returns the ranking for one query; with ``batch=True`` it takes the
    list of all query texts and returns one ranking per text.  ``workers`` > 1 calls a per-query
    function from that many threads.  ``config`` (a dict describing the system, e.g.
    ``{"fusion_method": "rrf", "rrf_k": 60}``) identifies the function for the cache, with the code
    of the function (the files of its code and of its module, :func:`.cache.code_identity`): with a
    config, an unchanged (config, code, test set, measures, k) is answered from the cache without
    calling the function; without one, or for a function whose code is not in a file (said once),
    nothing is cached.  Each file the config names (a text that is a file's name, relative to
    ``config_dir`` or the current directory) is in the key by its content (:func:`.cache.named_files`).
    The evaluation's warnings (e.g. no returned doc is judged) go to ``warn`` (None: InputWarning).
    """
    ts = test_set if isinstance(test_set, TestSet) else load_test_set(test_set)
    if not callable(retrieval_fn):            # a system config (a mapping, a path, a System): its last stage
        from ..retrieval.evaluate import evaluate_system
        from ..retrieval.system import as_system
        system = as_system(retrieval_fn)
        stages = evaluate_system(system, ts, k=k or DEFAULT_DEPTH, measures=measures or DEFAULT_MEASURES, gain=gain,
                                 cache=cache, cache_dir=cache_dir)
        return stages[system.final_stage()]
    names = [canonical_name(m, gain) for m in (measures or DEFAULT_MEASURES)]
    depth = k or max([DEFAULT_DEPTH] + [int(n.rpartition("_at_")[2]) for n in names if "_at_" in n])
    if workers < 1:
        raise InputError(f"workers must be at least 1, got {workers}", fix="pass workers=1 or more")
    from ..retrieval.callables import check_arguments
    from .cache import ResultCache, cache_key, code_identity, named_files, say_once

    store = ResultCache(cache_dir) if (cache and config is not None) else None
    code = code_identity(retrieval_fn) if store is not None else None
    if store is not None and code is None:
        say_once(f"the code of the retrieval function {_function_name(retrieval_fn)} is not in a file treckit can "
                 "digest, so its results are not cached (a change to it could not be told)")
        store = None
    files = named_files(config, config_dir) if store is not None else None
    if files is None:
        store = None
    key = cache_key(system={"config": config, "code": code, "files": files}, test_set=ts, measures=names, k=depth,
                    gain=gain) if store else None
    if store is not None:
        hit = store.get(key)
        cached = from_cached(hit, gain, names) if hit is not None else None
        if cached is not None:
            return cached
    texts = [q.query_text for q in ts.queries]
    qids = ts.query_ids
    latencies: dict[str, float] = {}
    answers: dict[str, Any] = {}
    check_arguments(retrieval_fn, 1, "batch function" if batch else "retrieval function")
    if batch:
        t0 = time.perf_counter()
        out = ask_batch(retrieval_fn, qids, texts)
        each = (time.perf_counter() - t0) * 1000 / max(len(texts), 1)     # a batch's time, shared evenly
        answers = dict(zip(qids, out))
        latencies = {q: each for q in qids}
    else:
        def one(i: int):
            t0 = time.perf_counter()
            res = ask(retrieval_fn, qids[i], texts[i])
            return i, res, (time.perf_counter() - t0) * 1000
        if workers == 1:
            results = [one(i) for i in range(len(texts))]
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                results = list(pool.map(one, range(len(texts))))
        for i, res, ms in results:
            answers[qids[i]] = res
            latencies[qids[i]] = ms
    rankings = {q: _as_ranking(answers[q], q, depth) for q in qids}
    values = per_query_values(ts.to_qrels(), run_from_rankings(rankings), names, warn)
    result = summarise(ts, values, names, gain, depth, latencies, {"config": config})
    if store is not None and named_files(config, config_dir) == files:     # nothing it names changed meanwhile
        store.put(key, result.to_dict())
    return result


def _function_name(fn) -> str:
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    module = getattr(fn, "__module__", None)
    return f"{module}:{name}" if module else name


def evaluate_run(run, test_set: TestSet | str, measures: Sequence[str] | None = None, *,
                 gain: str = "exp", engine: str = "local", scheduler: str | None = None, warn=None) -> TestSetResult:
    """The same measures for a run (a path or a Run, every doc it lists) on a test set, ranked as
    trec_eval ranks it; ``engine="dask"``: read and measured on a worker of a Dask cluster.  What reading
    the run has to say goes to ``warn`` (default: a :class:`treckit.InputWarning`)."""
    ts = test_set if isinstance(test_set, TestSet) else load_test_set(test_set)
    names = [canonical_name(m, gain) for m in (measures or DEFAULT_MEASURES)]
    args = (ts.to_qrels(), run, names, ts.query_ids, warn)
    if engine == "local" and scheduler is None:
        values, missing = run_values(*args)
        del args
        import pyarrow as pa
        from ..startup import give_back_freed_memory
        pa.default_memory_pool().release_unused()     # the run's tables are gone: the per-query rows reuse
        give_back_freed_memory()                      # nothing of theirs, so their memory goes back first
    else:
        from ..engines.dask import check_engine, on_cluster
        check_engine(engine, scheduler)
        values, missing = on_cluster(run_values, *args, name="testset-run", scheduler=scheduler)
    result = summarise(ts, values, names, gain, None, None, {"run": str(run) if not hasattr(run, "table") else run.tag})
    result.missing_queries = missing
    return result


def run_values(qrels, run, names: list[str], query_ids: Sequence[str],
               warn=None) -> tuple[dict[str, dict[str, float]], list[str]]:
    """({measure: {qid: value}}, the ``query_ids`` without a line in the run) of a run (a path, read here
    with ``warn`` (None: the library's InputWarning), or a Run).  A TREC run file too large to read whole
    within :data:`treckit.thresholds.TESTSET_RUN_MEMORY` is evaluated as it is read, as ``treckit eval``
    streams one (the same numbers)."""
    from .. import thresholds
    from ..inputs import as_run
    from ..reading import RunReading, warn_python
    warn = warn or warn_python
    if not hasattr(run, "table"):
        from ..engines.stream import plan
        if plan(run, RunReading(), thresholds.TESTSET_RUN_MEMORY).stream:
            return _streamed_run_values(qrels, run, names, query_ids, warn)
    run = as_run(run, warn=warn, order_option=False)       # no reading options here
    return per_query_values(qrels, run, names, warn), missing_queries(run, query_ids)


def _streamed_run_values(qrels, path, names: list[str], query_ids: Sequence[str], warn):
    """:func:`run_values` of a TREC run file, evaluated a part at a time in bounded memory."""
    from .. import thresholds
    from ..engines.stream import evaluate_path
    from ..evaluation import EvalOptions
    from ..inputs import as_measures
    from ..measures.registry import resolve
    from ..reading import RunReading
    from .measures import engine_column, engine_measure

    answered: set[str] = set()

    def note_answered(part, _run) -> None:
        answered.update(q for q, a in zip(part.qids, part.answered.tolist()) if a)
    requests = resolve(as_measures([engine_measure(n) for n in names]), first_params_win=False)
    res = evaluate_path(qrels, path, requests, EvalOptions(complete=True), RunReading(), warn=warn,
                        memory_limit=thresholds.TESTSET_RUN_MEMORY, on_part=note_answered, order_option=False)
    column = {c: i for i, c in enumerate(res.columns)}
    values = {n: dict(zip(res.qids, res.values[:, column[engine_column(n)]].tolist())) for n in names}
    return values, [q for q in query_ids if q not in answered]


def missing_queries(run, query_ids: Sequence[str]) -> list[str]:
    """The ``query_ids`` (in their order) for which ``run`` (a Run) has no line."""
    import pyarrow.compute as pc
    have = set(pc.unique(run.table.column("qid")).to_pylist())
    return [q for q in query_ids if q not in have]


def from_cached(d, gain: str, measures: list[str] | None = None) -> TestSetResult | None:
    """A result stored by :meth:`TestSetResult.to_dict` (the cache's), marked as answered from the cache;
    None when it is not such a result (a damaged row), not of ``measures`` (when given), or its measures
    are not defined as this treckit defines them (then it is evaluated again)."""
    try:
        stored = d["measures"]
        if not (isinstance(stored, list) and all(isinstance(m, str) for m in stored)):
            return None
        if measures is not None and stored != list(measures):
            return None
        measures = stored
        defs = {m: Definition.from_dict(x, "the evaluation cache") for m, x in d["definitions"].items()}
        if defs != definitions(measures) or not _stored_shape(d, measures):
            return None
        return TestSetResult(d["test_set"], measures, gain, d["k"], d["per_query"], d["aggregates"],
                             d["per_query_type"], d["latency_ms"], d["system"], cached=True, definitions=defs,
                             missing_queries=d["missing_queries"])
    except (InputError, KeyError, TypeError, AttributeError, ValueError):
        return None


def _number(x) -> bool:
    return x is None or (isinstance(x, (int, float)) and not isinstance(x, bool))


def _stored_shape(d: dict, measures: list[str]) -> bool:
    """Whether ``d`` has the shape of :meth:`TestSetResult.to_dict` for ``measures`` (what reports read)."""
    ts, agg, rows, types, lat = d["test_set"], d["aggregates"], d["per_query"], d["per_query_type"], d["latency_ms"]
    missing, k = d["missing_queries"], d["k"]
    return (isinstance(ts, dict) and all(isinstance(ts.get(f), str) for f in ("name", "version", "digest"))
            and isinstance(d["system"], dict) and (k is None or (isinstance(k, int) and not isinstance(k, bool)))
            and isinstance(agg, dict) and all(isinstance(agg.get(m), dict)
                                              and all(_number(agg[m].get(s)) for s in ("mean", "median", "std"))
                                              for m in measures)
            and isinstance(rows, list) and all(isinstance(r, dict) and isinstance(r.get("qid"), str)
                                               and all(m in r and _number(r[m]) for m in measures) for r in rows)
            and isinstance(types, dict) and all(isinstance(t, dict) for t in types.values())
            and (lat is None or (isinstance(lat, dict) and all(_number(v) for v in lat.values())))
            and (missing is None or (isinstance(missing, list) and all(isinstance(q, str) for q in missing))))
