"""A system config evaluated stage by stage on a test set: each component alone, the fusion, the
fusion with reranking — quality from the one engine, latency per query."""
from __future__ import annotations

from ..testsets.load import TestSet
from ..testsets.measures import canonical_name, per_query_values
from ..testsets.runner import TestSetResult, run_from_rankings, summarise

DEFAULT_SYSTEM_MEASURES = ("recall_at_10", "ndcg_at_10", "mrr")


def evaluate_system(system, test_set: TestSet, *, k: int = 100, measures=None, gain: str = "exp", only=None,
                    cache: bool = True, cache_dir=None) -> dict[str, TestSetResult]:
    """{stage: result} for every stage of ``system`` (a :class:`System`, a config mapping or a path)."""
    from ..testsets.cache import ResultCache, cache_key
    from ..testsets.runner import from_cached
    from .system import as_system

    sysm = as_system(system)
    names = [canonical_name(m, gain) for m in (measures or DEFAULT_SYSTEM_MEASURES)]
    store = ResultCache(cache_dir) if cache else None
    key = cache_key(system={"system_digest": sysm.digest, "components": only}, test_set=test_set, measures=names,
                    k=k, gain=gain) if store else None
    if store is not None:
        hit = store.get(key)
        cached = {stage: from_cached(d, gain) for stage, d in hit.items()} if isinstance(hit, dict) else {}
        if cached and all(r is not None for r in cached.values()):
            return cached
    queries = {q.query_id: q.query_text for q in test_set.queries}
    stages = sysm.run(queries, k, only)
    qrels = test_set.to_qrels()
    out = {}
    for stage, res in stages.items():
        values = per_query_values(qrels, run_from_rankings(res.rankings, stage), names)
        out[stage] = summarise(test_set, values, names, gain, k, res.latency_ms,
                               {"name": sysm.name, "config_digest": sysm.digest, "stage": stage})
    if store is not None:
        store.put(key, {stage: r.to_dict() for stage, r in out.items()})
    return out


def stage_table(results: dict[str, TestSetResult]) -> str:
    """One row per stage: the mean of each measure, and latency p50 / p95 in ms."""
    first = next(iter(results.values()))
    cols = first.measures
    head = f"{'stage':<22}" + "".join(f"{m:>14}" for m in cols) + f"{'p50 ms':>10}{'p95 ms':>10}"
    lines = [head]
    for stage, r in results.items():
        lat = r.latency_ms or {}
        cells = "".join(f"{r.aggregates[m]['mean']:>14.4f}" for m in cols)
        lp = "".join(f"{lat[p]:>10.2f}" if lat.get(p) is not None else f"{'—':>10}" for p in ("p50", "p95"))
        lines.append(f"{stage:<22}{cells}{lp}")
    return "\n".join(lines) + "\n"
