"""What an evaluation on a test set found (:class:`TestSetResult`: per-query values, their mean / median / std, the
per-query-type breakdown, latency), made from per-query values (:func:`summarise`) and read back from the
cache (:func:`from_cached`); its :meth:`~TestSetResult.to_dict` is the results file's shape."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from ..dependencies import deferred
from .. import __version__
from ..console.errors import InputError
from ..measures.definitions import Definition
from .load import TestSet
from .measures import definitions

np = deferred("numpy")

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
    cache_key: str | None = field(default=None, repr=False)      # where the cache holds it (None: not cached)

    def to_dict(self) -> dict[str, Any]:
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
    return (_identifies_test_set(ts) and isinstance(d["system"], dict) and _whole_or_none(k)
            and _aggregates_of(agg, measures) and _rows_of(rows, measures)
            and isinstance(types, dict) and all(isinstance(t, dict) for t in types.values())
            and (lat is None or (isinstance(lat, dict) and all(_number(v) for v in lat.values())))
            and (missing is None or (isinstance(missing, list) and all(isinstance(q, str) for q in missing))))


def _identifies_test_set(ts) -> bool:
    return isinstance(ts, dict) and all(isinstance(ts.get(f), str) for f in ("name", "version", "digest"))


def _whole_or_none(k) -> bool:
    return k is None or (isinstance(k, int) and not isinstance(k, bool))


def _aggregates_of(agg, measures: list[str]) -> bool:
    """Each measure's mean, median and std: numbers or None."""
    return isinstance(agg, dict) and all(isinstance(agg.get(m), dict)
                                         and all(_number(agg[m].get(s)) for s in ("mean", "median", "std"))
                                         for m in measures)


def _rows_of(rows, measures: list[str]) -> bool:
    """Per-query rows: each a qid and a number (or None) for every measure."""
    return isinstance(rows, list) and all(isinstance(r, dict) and isinstance(r.get("qid"), str)
                                          and all(m in r and _number(r[m]) for m in measures) for r in rows)
