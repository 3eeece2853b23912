"""What an evaluation on a test set found (:class:`TestSetResult`: per-query values, their mean / median / std, the
per-query-type breakdown, latency), made from per-query values (:func:`summarise`) and read back from the
cache (:func:`read_cached`); its :meth:`~TestSetResult.to_dict` is the results file's shape, and
:func:`check_results` the one definition of a valid one (the cache, the gate and the reports read only those)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..dependencies import deferred
from .. import __version__
from ..console.errors import InputError, finite_number, shown
from ..measures.definitions import Definition, read_definitions
from ..measures.readable import bounds, canonical_name
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
    if len(values) == 0:
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


def read_cached(d, gain: str, measures: list[str] | None = None) -> TestSetResult:
    """A result stored by :meth:`TestSetResult.to_dict` (the cache's), marked as answered from the cache; a
    :class:`RecordError` when it is not a valid result (:func:`check_results`), not of ``measures`` (when given),
    or its measures are not defined as this treckit defines them."""
    check_results(d, CACHED, measures)
    stored = d["measures"]
    defs = read_definitions(d, CACHED)
    if any(defs[m] != want for m, want in definitions(stored).items()):
        raise RecordError("definitions", "definitions: not this treckit's definitions of its measures", path=CACHED)
    return TestSetResult(d["test_set"], stored, gain, d.get("k"), d["per_query"], d["aggregates"],
                         d["per_query_type"], d.get("latency_ms"), d["system"], cached=True,
                         definitions={m: defs[m] for m in stored}, missing_queries=d.get("missing_queries"))


def from_cached(d, gain: str, measures: list[str] | None = None) -> TestSetResult | None:
    """:func:`read_cached`, or None when ``d`` is not a valid result of ``measures`` (then it is evaluated again)."""
    try:
        return read_cached(d, gain, measures)
    except InputError:
        return None


# ---------------------------------------------------------------- what a valid results record is
OLD_SCHEMAS = ("treckit.testset-results/1",)     # results files written before definitions were recorded
CACHED = "the evaluation cache"
REWRITE = ("pass the --out file of `treckit testset eval` as it was written (this one was changed or cut), "
           "or write it again")
ROUNDING = 1e-9      # how far a stored mean, median or std may be from the one its per-query values give
REQUIRED = ("test_set", "measures", "definitions", "aggregates", "per_query_type", "per_query", "system")
_STATS = ("mean", "median", "std")
LATENCY = ("p50", "p95", "mean")      # a function's latency per query, in ms (a run has none: null)


class RecordError(InputError):
    """A results record that is not valid; ``part`` is the top-level field at fault (one of a fixed list, so
    a message about a record that is not an input can name it without quoting the record)."""

    def __init__(self, part: str, message: str, *, path: str | None, fix: str | None = REWRITE):
        super().__init__(message, path=path, fix=fix)
        self.part = part


def check_results(data: Any, where: str, measures: list[str] | None = None) -> dict:
    """``data`` when it is a valid results record of ``testset eval`` (of ``measures``, when given): the one
    definition of one, which the cache, the gate and the reports read.  A :class:`RecordError` (exit 2) names
    ``where`` and the field, never a value.  A valid record:

    - has this treckit's schema and every part the readers read (``test_set``, ``system``, ``measures``,
      ``definitions``, ``aggregates``, ``per_query``, ``per_query_type``), each of its type;
    - lists known test-set measures, each once, each defined (name, cutoff and gain as this treckit means them);
    - holds at least one query, each qid once, with a value of every measure that is a finite number within
      the measure's range (the registry's: [0, 1] for every test-set measure);
    - has means, medians and stds that are those of the per-query values (within :data:`ROUNDING`), and a
      per-query-type breakdown that counts and averages those rows;
    - has latencies that are finite and not negative, ``k`` a whole number of at least 1, and missing queries
      that are queries of the record.
    """
    _Record(data, where).check(measures)
    return data


class _Record:
    """The checks of :func:`check_results`, each failure naming the field's path (``per_query[3].mrr``)."""

    def __init__(self, data: Any, where: str):
        self.data, self.where = data, where

    def fail(self, field: str, what: str) -> None:
        raise RecordError(field.split(".")[0].split("[")[0], f"{field}: {what}", path=self.where)

    def mapping(self, value: Any, field: str) -> dict:
        if not isinstance(value, dict):
            self.fail(field, f"must be a mapping, found {_kind(value)}")
        return value

    def text(self, value: Any, field: str) -> str:
        if not isinstance(value, str) or not value:
            self.fail(field, f"must be text, found {_kind(value)}")
        return value

    def number(self, value: Any, field: str, low: float = -math.inf, high: float = math.inf, what: str = "") -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(field, f"must be a number, found {_kind(value)}")
        if not finite_number(value):
            self.fail(field, "must be a finite number (within a double's range), found "
                             + ("NaN" if value != value else "an infinite or out-of-range number"))
        if not low <= value <= high:
            self.fail(field, f"must be {f'at least {low:g}' if high == math.inf else f'from {low:g} to {high:g}'}{what}")
        return float(value)

    def check(self, measures: list[str] | None) -> None:
        d = self.data
        schema = d.get("schema") if isinstance(d, dict) else None
        if schema in OLD_SCHEMAS or (schema == RESULTS_SCHEMA and "definitions" not in d):
            read_definitions({}, self.where)       # says: no definitions recorded, re-run the baseline
        if schema != RESULTS_SCHEMA:
            raise RecordError("schema", "not a results file of `treckit testset eval`", path=self.where,
                              fix="write one with `treckit testset eval TEST_SET --run RUN --out results.json`")
        for key in REQUIRED:
            if key not in d:
                self.fail(key, "missing")
        ts = self.mapping(d["test_set"], "test_set")
        for key in ("name", "version", "digest"):
            self.text(ts.get(key), f"test_set.{key}")
        self.mapping(d["system"], "system")
        names = self.measures(d["measures"], measures)
        self.definitions(names)
        ranges = {m: bounds(m) or (-math.inf, math.inf) for m in names}
        values, types = self.rows(d["per_query"], names, ranges)
        self.aggregates(self.mapping(d["aggregates"], "aggregates"), names, values, ranges)
        self.per_type(self.mapping(d["per_query_type"], "per_query_type"), names, values, types)
        self.extras(d, {r["qid"] for r in d["per_query"]})

    def measures(self, names: Any, wanted: list[str] | None) -> list[str]:
        if not isinstance(names, list) or not names:
            self.fail("measures", f"must be a non-empty list of measure names, found {_kind(names)}")
        for i, m in enumerate(names):
            self.text(m, f"measures[{i}]")
            try:
                known = canonical_name(m) == m
            except InputError:
                known = False
            if not known:
                self.fail(f"measures[{i}]", "not a test-set measure (recall_at_K, ndcg_at_K, nDCG@K, ndcg_cut_K, mrr, "
                                            "mrr_at_K, precision_at_K or map)")
        if len(set(names)) != len(names):
            self.fail("measures", "a measure is listed twice")
        if wanted is not None and names != list(wanted):
            self.fail("measures", "not the measures asked for")
        return names

    def definitions(self, names: list[str]) -> None:
        try:
            defs = read_definitions(self.data, self.where)
        except InputError as exc:
            raise RecordError("definitions", exc.reason, path=self.where, fix=exc.fix) from None
        for m, want in definitions(names).items():
            got = defs.get(m)
            if got is None:
                self.fail("definitions", f"no definition of {m}")
            if want.gain == "linear" and got.gain == "exp" and m.startswith("nDCG@"):
                k = m[len("nDCG@"):]
                raise RecordError("definitions", f"definitions.{m}: exp gain (2^grade - 1) under the name {m}, which "
                                  "is ir_measures' nDCG, linear gain; exp-gain nDCG is named ndcg_at_K", path=self.where,
                                  fix=f"evaluate again with its name for exp gain: treckit testset eval TEST_SET --run RUN "
                                      f"-m ndcg_at_{k} --out RESULTS.json")
            if got.name != m or any(getattr(got, f) != getattr(want, f) for f in ("measure", "cutoff", "gain")):
                self.fail(f"definitions.{m}", f"does not define {m} (its measure, cutoff or gain differ)")

    def rows(self, rows: Any, names: list[str], ranges: dict) -> tuple[dict[str, Any], list[str]]:
        """Each measure's per-query values (an array) and each row's query type, the rows checked: column by column
        (a million rows in about a second); the first problem, if any, is then found and named row by row."""
        if not isinstance(rows, list) or not rows:
            self.fail("per_query", "holds no query (a result has the values of every query of its test set)"
                      if isinstance(rows, list) else f"must be a list of per-query values, found {_kind(rows)}")
        valid = _valid_columns(rows, names, ranges)
        if valid is not None:
            return valid
        self.first_bad_row(rows, names, ranges)
        self.fail("per_query", "is not a list of valid per-query values")     # each row passed, yet not the whole

    def first_bad_row(self, rows: list, names: list[str], ranges: dict) -> None:
        """Fail naming the first field of the first row that is not valid."""
        seen: set[str] = set()
        for i, row in enumerate(rows):
            where = f"per_query[{i}]"
            qid = self.text(self.mapping(row, where).get("qid"), f"{where}.qid")
            if qid in seen:
                self.fail(f"{where}.qid", "a query is listed twice")
            seen.add(qid)
            self.text(row.get("query_type"), f"{where}.query_type")
            for m in names:
                if m not in row:
                    self.fail(f"{where}.{m}", "missing")
                self.number(row[m], f"{where}.{m}", *ranges[m], f" (the range of {m})")
            if row.get("latency_ms") is not None:
                self.number(row["latency_ms"], f"{where}.latency_ms", 0.0)

    def aggregates(self, agg: dict, names: list[str], values: dict, ranges: dict) -> None:
        if set(agg) != set(names):
            odd = sorted(map(str, set(agg) ^ set(names)))
            self.fail("aggregates", f"must hold exactly the measures listed in 'measures' (differ in {', '.join(odd)})")
        for m in names:
            stats = self.mapping(agg[m], f"aggregates.{m}")
            want = _stats(values[m])
            for s in _STATS:
                field = f"aggregates.{m}.{s}"
                if s not in stats:
                    self.fail(field, "missing")
                if want[s] is None:
                    if stats[s] is not None:
                        self.fail(field, "must be null: a standard deviation needs two queries or more")
                    continue
                low, high = ranges[m] if s != "std" else (0.0, math.inf)
                got = self.number(stats[s], field, low, high, f" (the range of {m})" if s != "std" else "")
                if not math.isclose(got, want[s], rel_tol=ROUNDING, abs_tol=ROUNDING):
                    self.fail(field, f"is not the {s} of the per-query values of {m}")

    def per_type(self, by_type: dict, names: list[str], values: dict, types: list[str]) -> None:
        import pandas as pd

        codes, kinds = pd.factorize(pd.Series(types, dtype=object), sort=False)
        counts = np.bincount(codes, minlength=len(kinds))
        if set(by_type) != set(kinds):
            self.fail("per_query_type", "must hold exactly the query types of the per-query values")
        sums = {m: np.bincount(codes, weights=values[m], minlength=len(kinds)) for m in names}
        for j, t in enumerate(kinds):
            where = f"per_query_type.{shown(t)[1:-1]}"
            row = self.mapping(by_type[t], where)
            n = row.get("num_queries")
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                self.fail(f"{where}.num_queries", f"must be a count, found {_kind(n)}")
            if n != counts[j]:
                self.fail(f"{where}.num_queries", "is not the number of queries of that type")
            for m in names:
                if m not in row:
                    self.fail(f"{where}.{m}", "missing")
                got = self.number(row[m], f"{where}.{m}")
                if not math.isclose(got, float(sums[m][j] / n), rel_tol=ROUNDING, abs_tol=ROUNDING):
                    self.fail(f"{where}.{m}", f"is not the mean of {m} over the queries of that type")

    def extras(self, d: dict, qids: set[str]) -> None:
        """``k``, ``latency_ms`` and ``missing_queries``, when given."""
        k = d.get("k")
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            self.fail("k", f"must be a whole number of at least 1, found {_kind(k)}")
        lat = d.get("latency_ms")
        if lat is not None:
            if set(self.mapping(lat, "latency_ms")) != set(LATENCY):
                self.fail("latency_ms", f"must hold exactly {', '.join(LATENCY)}")
            for key in LATENCY:
                if lat[key] is not None:
                    self.number(lat[key], f"latency_ms.{key}", 0.0)
        missing = d.get("missing_queries")
        if missing is not None:
            if not isinstance(missing, list) or len(set(map(str, missing))) != len(missing) \
                    or not all(isinstance(q, str) and q in qids for q in missing):
                self.fail("missing_queries", "must list queries of the per-query values, each once")


def _valid_columns(rows: list, names: list[str], ranges: dict) -> tuple[dict[str, Any], list[str]] | None:
    """(each measure's values, each row's query type) when every row is valid, checked column by column; else None."""
    if set(map(type, rows)) != {dict}:
        return None
    qids = [r.get("qid") for r in rows]
    types = [r.get("query_type") for r in rows]
    columns = {m: [r.get(m) for r in rows] for m in names}
    latency = [v for v in (r.get("latency_ms") for r in rows) if v is not None]
    if not (set(map(type, qids)) == {str} and set(map(type, types)) == {str} and all(qids) and all(types)
            and len(set(qids)) == len(qids) and all(_plain_numbers(c) for c in (*columns.values(), latency))):
        return None
    arrays = {m: np.asarray(c, np.float64) for m, c in columns.items()}
    if not (all(_within(a, *ranges[m]) for m, a in arrays.items())
            and _within(np.asarray(latency, np.float64), 0.0, math.inf)):
        return None
    return arrays, types


def _plain_numbers(values: list) -> bool:
    """Whether every value is a float, or an int within a double's range (never a bool, text or None)."""
    kinds = set(map(type, values))
    return kinds <= {float} or (kinds <= {float, int} and all(finite_number(v) for v in values if type(v) is int))


def _within(a, low: float, high: float) -> bool:
    return bool(np.all(np.isfinite(a) & (a >= low) & (a <= high)))


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", str: "text", int: "a number", float: "a number", list: "a list",
            dict: "a mapping"}.get(type(value), type(value).__name__)
