"""A system config evaluated stage by stage on a test set: each component alone, the fusion, the
fusion with reranking — quality from the one engine, latency per query."""
from __future__ import annotations

from ..console.errors import InputError
from ..inputs.sources import file_digest
from ..retrieval.bm25 import library_versions
from ..retrieval.system import as_system
from .cache import ResultCache, cache_key, code_identity, say_once
from .load import TestSet
from .measures import canonical_name, gains_note, per_query_values
from ..retrieval.ranking import run_from_rankings
from .results import RecordError, TestSetResult, read_cached, summarise

DEFAULT_SYSTEM_MEASURES = ("recall_at_10", "ndcg_at_10", "mrr")


def evaluate_system(system, test_set: TestSet, *, k: int = 100, measures=None, gain: str = "exp", only=None,
                    cache: bool = True, cache_dir=None) -> dict[str, TestSetResult]:
    """{stage: result} for every stage of ``system`` (a :class:`treckit.retrieval.system.System`, a config mapping or a path)."""
    sysm = as_system(system)
    names = [canonical_name(m, gain) for m in (measures or DEFAULT_SYSTEM_MEASURES)]
    store = ResultCache(cache_dir) if cache else None
    inputs = system_inputs(sysm, only) if store is not None else None
    if inputs is None:
        store = None
    key = cache_key(system={"system_digest": sysm.digest, "components": only, "inputs": inputs}, test_set=test_set,
                    measures=names, k=k, gain=gain) if store else None
    if store is not None:
        cached = store.get(key, lambda stored: _stages(stored, gain, names))
        if cached:
            for r in cached.values():
                r.cache_key = key
            return cached
    queries = {q.query_id: q.query_text for q in test_set.queries}
    stages = sysm.run(queries, k, only)
    qrels = test_set.to_qrels()
    out = {}
    for stage, res in stages.items():
        values = per_query_values(qrels, run_from_rankings(res.rankings, stage), names)
        out[stage] = summarise(test_set, values, names, gain, k, res.latency_ms,
                               {"name": sysm.name, "config_digest": sysm.digest, "stage": stage})
    if store is not None and system_inputs(sysm, only) == inputs:     # nothing it read changed meanwhile
        store.put(key, {stage: r.to_dict() for stage, r in out.items()})
        for r in out.values():
            r.cache_key = key
    return out


def _stages(stored, gain: str, names: list[str]) -> dict[str, TestSetResult]:
    """{stage: result} as :func:`evaluate_system` stores them; a :class:`RecordError` when one is not a valid result."""
    if not isinstance(stored, dict) or not stored:
        raise RecordError("stages", "not a result per stage", path=None)
    return {stage: read_cached(d, gain, names) for stage, d in stored.items()}


def system_inputs(sysm, only=None) -> dict | None:
    """What the numbers of ``sysm``'s stages (``only``: those components') depend on besides its config:
    the content digest of every file it names, the code of every function it calls
    (:func:`treckit.testsets.cache.code_identity`) and, with a BM25 component, the versions of the
    libraries that tokenize and index.  None: not to be cached (a function whose code is not in a file,
    said once; a file that cannot be read, which the evaluation reports)."""
    files, functions = sysm.inputs(only)
    digests = {}
    for where, path in files:
        try:
            digests[where] = file_digest(path)
        except (InputError, OSError):
            return None
    code = {}
    for where, spec in functions:
        code[where] = code_identity(sysm.callable(spec))
        if code[where] is None:
            say_once(f"system {sysm.name}: the code of {spec} ({where}) is not in a file treckit can digest, so "
                     "its results are not cached (a change to it could not be told)")
            return None
    out: dict = {"files": digests, "code": code}
    if any(spec.get("method") == "bm25" for n, spec in sysm.components.items() if not only or n in only):
        out["libraries"] = library_versions()
    return out


def stage_table(results: dict[str, TestSetResult]) -> str:
    """One row per stage: the mean of each measure, and latency p50 / p95 in ms; every column as wide as its
    longest cell and two spaces from the next, so long measure or stage names never run together."""
    first = next(iter(results.values()))
    rows = [["stage", *first.measures, "p50 ms", "p95 ms"]]
    for stage, r in results.items():
        lat = r.latency_ms or {}
        rows.append([stage, *(f"{r.aggregates[m]['mean']:.4f}" for m in first.measures),
                     *(f"{lat[p]:.2f}" if lat.get(p) is not None else "—" for p in ("p50", "p95"))])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    note = gains_note(first.definitions)
    head = (f"{len(first.per_query)} queries, each asked of every stage (none is left out)"
            + (f"; {note}" if note else "") + "\n")
    return head + "".join(f"{row[0]:<{widths[0]}}" + "".join(f"  {cell:>{w}}" for cell, w in zip(row[1:], widths[1:])) + "\n"
                   for row in rows)
