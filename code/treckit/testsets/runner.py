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
from typing import Any, Callable, Sequence

from .. import thresholds
from ..console.errors import InputError
from ..console.messages import warn_python
from ..console.progress import Meter
from ..console.process import memory_freed
from ..engines.budget import DEFAULT_MEMORY, MemoryLimit
from ..console.timing import quiet_collector
from ..engines.choice import choose
from ..engines.dask import on_cluster
from ..engines.memory import EvalOptions
from ..engines.stream import evaluate_path, plan
from ..inputs.objects import as_measures, as_run
from ..inputs.options import RunReading
from ..inputs.sources import display_name
from ..measures.registry import resolve
from ..retrieval.callables import ask, ask_batch, check_arguments, in_threads, ranking_of
from ..retrieval.ranking import run_from_rankings
from ..retrieval.system import as_system
from .cache import ResultCache, cache_key, code_identity, named_files, say_once
from .load import TestSet, load_test_set
from .measures import DEFAULT_MEASURES, canonical_name, cutoff_of, engine_measure, per_query_values
from .results import TestSetResult, read_cached, summarise
from .systems import evaluate_system

DEFAULT_DEPTH = 100      # docs kept per query when k is not given


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
        system = as_system(retrieval_fn)
        stages = evaluate_system(system, ts, k=k or DEFAULT_DEPTH, measures=measures or DEFAULT_MEASURES, gain=gain,
                                 cache=cache, cache_dir=cache_dir)
        return stages[system.final_stage()]
    names = [canonical_name(m, gain) for m in (measures or DEFAULT_MEASURES)]
    depth = k or max([DEFAULT_DEPTH] + [c for c in map(cutoff_of, names) if c is not None])
    if workers < 1:
        raise InputError(f"workers must be at least 1, got {workers}", fix="pass workers=1 or more")

    store, key, files = _cache_of(retrieval_fn, config, config_dir, ts, names, depth, gain, cache, cache_dir)
    if store is not None:
        cached = store.get(key, lambda stored: read_cached(stored, gain, names))
        if cached is not None:
            return cached
    qids = ts.query_ids
    check_arguments(retrieval_fn, 1, "batch function" if batch else "retrieval function")
    answers, latencies = _answers(retrieval_fn, qids, [q.query_text for q in ts.queries], batch, workers, depth)
    rankings = {q: ranking_of(retrieval_fn, answers[q], q, depth) for q in qids}
    values = per_query_values(ts.to_qrels(), run_from_rankings(rankings), names, warn)
    result = summarise(ts, values, names, gain, depth, latencies, {"config": config})
    if store is not None and named_files(config, config_dir) == files:     # nothing it names changed meanwhile
        store.put(key, result.to_dict())
    return result


def _cache_of(retrieval_fn: Callable, config, config_dir, ts: TestSet, names: list[str], depth: int, gain: str,
              cache: bool, cache_dir):
    """(the cache, the key, the files the config names) of a function's evaluation; (None, None, None) when it is
    not cached: no config, no cache, code not in a file (said once), or files the config names that cannot be
    digested."""
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
    return store, key, files


def _answers(retrieval_fn: Callable, qids: list[str], texts: list[str], batch: bool,
             workers: int, depth: int) -> tuple[dict[str, Any], dict[str, float]]:
    """({qid: the function's answer, its first ``depth`` items}, {qid: milliseconds}): one batch call (its time
    shared evenly), or one call per query, from ``workers`` threads."""
    if batch:
        with quiet_collector():
            t0 = time.perf_counter()
            out = ask_batch(retrieval_fn, qids, texts, most=depth)
            each = (time.perf_counter() - t0) * 1000 / max(len(texts), 1)     # a batch's time, shared evenly
        return dict(zip(qids, out)), {q: each for q in qids}

    def one(i: int):
        with quiet_collector():              # no collection inside the clock (console.timing)
            t0 = time.perf_counter()
            res = ask(retrieval_fn, qids[i], texts[i], most=depth)
            took = (time.perf_counter() - t0) * 1000
        bar.advance(1)
        return i, res, took
    with Meter(f"asking {_function_name(retrieval_fn)}", len(texts), counts=True) as bar:
        if workers == 1:
            results = [one(i) for i in range(len(texts))]
        else:               # Ctrl-C ends the wait at once, even for a function that never returns
            results = in_threads(one, len(texts), workers)
    answers: dict[str, Any] = {}
    latencies: dict[str, float] = {}
    for i, res, ms in results:
        answers[qids[i]] = res
        latencies[qids[i]] = ms
    return answers, latencies


def _function_name(fn) -> str:
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    module = getattr(fn, "__module__", None)
    return f"{module}:{name}" if module else name


def evaluate_run(run, test_set: TestSet | str, measures: Sequence[str] | None = None, *,
                 gain: str = "exp", engine: str = "local", scheduler: str | None = None, warn=None,
                 memory_limit: MemoryLimit = DEFAULT_MEMORY) -> TestSetResult:
    """The same measures for a run (a path or a Run, every doc it lists) on a test set, ranked as
    trec_eval ranks it; ``engine="dask"``: read and measured on a worker of a Dask cluster.  What reading
    the run has to say goes to ``warn`` (default: a :class:`treckit.InputWarning`).  ``memory_limit``: the
    command's budget, half of which is the run's (:data:`~treckit.thresholds.TESTSET_RUN_MEMORY` by default)."""
    ts = test_set if isinstance(test_set, TestSet) else load_test_set(test_set)
    names = [canonical_name(m, gain) for m in (measures or DEFAULT_MEASURES)]
    args = (ts.to_qrels(), run, names, ts.query_ids, warn)
    if choose(engine, scheduler).name == "local":
        values, missing = run_values(*args, memory_limit=memory_limit)
        del args
        memory_freed(arrow=True)    # the run's tables are gone: the per-query rows reuse nothing of theirs
    else:
        values, missing = on_cluster(run_values, *args, name="testset-run", scheduler=scheduler)
    named = display_name(run) if not hasattr(run, "table") else run.tag          # a URL without its credentials
    result = summarise(ts, values, names, gain, None, None, {"run": named})
    result.missing_queries = missing
    return result


def run_values(qrels, run, names: list[str], query_ids: Sequence[str],
               warn=None, memory_limit: MemoryLimit = DEFAULT_MEMORY) -> tuple[dict[str, dict[str, float]], list[str]]:
    """({measure: {qid: value}}, the ``query_ids`` without a line in the run) of a run (a path, read here
    with ``warn`` (None: the library's InputWarning), or a Run).  A TREC run file too large to read whole
    within the run's share of ``memory_limit`` (:func:`run_budget`) is evaluated as it is read, as ``treckit
    eval`` streams one (the same numbers)."""
    warn = warn or warn_python
    if not hasattr(run, "table"):
        budget = run_budget(memory_limit)
        if plan(run, RunReading(), budget).stream:
            return _streamed_run_values(qrels, run, names, query_ids, warn, budget)
    run = as_run(run, warn=warn, order_option=False)       # no reading options here
    return per_query_values(qrels, run, names, warn), missing_queries(run, query_ids)


def run_budget(memory_limit: MemoryLimit) -> int | None:
    """The run's share of a test-set evaluation's budget: half of it (the other half is the test set's and its
    per-query results'); by default :data:`~treckit.thresholds.TESTSET_RUN_MEMORY`; None: no limit."""
    if memory_limit.default:
        return thresholds.TESTSET_RUN_MEMORY
    return None if memory_limit.bytes is None else max(1, memory_limit.bytes // 2)


def _streamed_run_values(qrels, path, names: list[str], query_ids: Sequence[str], warn, memory_limit: int):
    """:func:`run_values` of a TREC run file, evaluated a part at a time in bounded memory."""
    answered: set[str] = set()

    def note_answered(part, _run) -> None:
        answered.update(q for q, a in zip(part.qids, part.answered.tolist()) if a)
    requests = resolve(as_measures([engine_measure(n) for n in names]), first_params_win=False)
    res = evaluate_path(qrels, path, requests, EvalOptions(complete=True), RunReading(), warn=warn,
                        memory_limit=memory_limit, on_part=note_answered, order_option=False)
    values = {n: res.per_query(engine_measure(n)) for n in names}
    return values, [q for q in query_ids if q not in answered]


def missing_queries(run, query_ids: Sequence[str]) -> list[str]:
    """The ``query_ids`` (in their order) for which ``run`` (a Run) has no line."""
    import pyarrow.compute as pc
    have = set(pc.unique(run.table.column("qid")).to_pylist())
    return [q for q in query_ids if q not in have]


