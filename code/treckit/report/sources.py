"""Pages (:class:`treckit.report.page.Page`) from what each command computed: a comparison, evaluations of runs,
a test set's results, a system's stages, a gate, and results files read back (``treckit report``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..compare.compare import CompareOptions, ComparedRun, Comparison
from ..compare.report import TEST_HEADER, TIE_HEADER, test_cells, tie_cells, tie_statement
from ..console.errors import InputError
from ..dependencies import deferred
from ..measures.definitions import Definition
from ..testsets.gate import GateResult, check_results_file
from ..testsets.results import RESULTS_SCHEMA
from .page import (Interval, Page, curve_columns, definition_notes, marks_of, plotted, test_note, type_means_of,
                   with_curves, with_intervals, with_tests)

np = deferred("numpy")

TIE_MOVERS = 10                # the queries whose tie ranges are widest, listed
GATE_DROPS = 50                # the queries that dropped most on a gated metric, listed
NO_CURVE_TESTSET = ("no precision-recall curve: test-set results hold no iprec_at_recall values (their measures are "
                    "the test set's); `treckit eval` or `treckit compare --html` on the runs draw one")


def _describe(defs: dict[str, Definition]) -> dict[str, str]:
    return {m: d.describe() for m, d in defs.items()}


# ---------------------------------------------------------------- compare
def comparison_page(comp: Comparison, *, types: dict[str, str] | None = None, texts: dict[str, str] | None = None,
                    inputs: list | None = None) -> Page:
    """The page of a comparison: its values, means, marks and tests as compare computed them."""
    o = comp.options
    curves = curve_columns(comp.definitions)
    curve_names = {m for m, _ in curves}
    measures = [m for m in comp.measures if m not in curve_names]
    idx = [comp.measures.index(m) for m in measures]
    page = Page("compare", f"Comparison against {comp.baseline}", [s.name for s in comp.systems], measures,
                list(comp.qids), {s.name: comp.values[s.name][:, idx] for s in comp.systems},
                {s.name: {m: float(comp.column(s.name, m).mean()) for m in measures} for s in comp.systems},
                definitions=_describe({m: comp.definitions[m] for m in measures if m in comp.definitions}))
    page.notes += [f"Means over {len(comp.qids)} queries." + (
        " With --tie-aware expected, the means and tests are on the expected values over random tie orders."
        if o.tie_aware == "expected" else ""), *definition_notes(comp.definitions)]
    with_intervals(page, Interval(o.resamples, o.seed, o.alpha))
    marks = marks_of(comp)
    page.marks = {s: {m: marks[s][m] for m in measures} for s in marks}
    if comp.tests:
        page.notes.append(test_note(comp))
        page.tests = (list(TEST_HEADER), test_cells(comp))
    _queries(page, texts, types)
    if curves:
        with_curves(page, curves, {s.name: comp.values[s.name][:, [comp.measures.index(m) for m, _ in curves]]
                                   for s in comp.systems}, "")
    else:
        columns = [(c, float(c.rsplit("_", 1)[1])) for c in comp.curve_columns]
        with_curves(page, columns, comp.curves or {}, "no precision-recall curve: the comparison measured no "
                    "iprec_at_recall (compare --html measures it beside the compared measures; --tie-aware does not)")
    if comp.ties is not None:
        page.ties = {"statement": tie_statement(comp), "header": list(TIE_HEADER), "cells": tie_cells(comp),
                     "movers": _tie_movers(comp)}
    page.inputs = inputs or []
    return plotted(page)


def _tie_movers(comp: Comparison) -> list[list[str]]:
    """The queries whose [worst, best] range is widest, for any system and measure."""
    widths = []
    for s in comp.systems:
        t = comp.ties[s.name]
        w = t["best"] - t["worst"]
        for i, q in enumerate(comp.qids):
            j = int(np.argmax(w[i])) if w.shape[1] else 0
            if w.shape[1] and w[i, j] > 0:
                widths.append((-float(w[i, j]), q, s.name, comp.measures[j], float(t["worst"][i, j]),
                               float(t["best"][i, j]), float(t["trec_eval"][i, j])))
    widths.sort(key=lambda x: (x[0], x[1], x[2]))
    return [[q, s, m, f"{lo:.4f}", f"{hi:.4f}", f"{te:.4f}", f"{-w:.4f}"]
            for w, q, s, m, lo, hi, te in widths[:TIE_MOVERS]]


def _queries(page: Page, texts: dict[str, str] | None, types: dict[str, str] | None) -> None:
    if texts is not None:
        page.texts = [texts.get(q) for q in page.qids]
    if types is not None:
        page.types = [types.get(q) for q in page.qids]
        page.type_means = type_means_of(page)


# ---------------------------------------------------------------- eval
def eval_page(results: list[tuple[Any, str, Any]], definitions: dict[str, Definition], *, complete: bool,
              inputs: list | None = None) -> Page:
    """The page of ``treckit eval`` on one run or several (the first the baseline): the summary values eval printed,
    the per-query values it computed, and, with several runs, compare's tests over the queries every run has."""
    first = results[0][2]
    columns, _ = first.per_query_numbers()
    summary_of = {c: r.summary for r in first.requests for c in r.columns}
    curves = curve_columns({c: definitions[c] for c in columns if c in definitions})
    curve_names = {c for c, _ in curves}
    measures = [c for c in columns if c not in curve_names]
    names = _system_names([(str(p), tag) for p, tag, _ in results])
    qids = sorted({q for _, _, res in results for q in res.qids}, key=lambda q: q.encode("utf-8", "surrogatepass"))
    values, curve_values = {}, {}
    for name, (_, _, res) in zip(names, results):
        cols, v = res.per_query_numbers()
        full = np.full((len(qids), len(cols)), np.nan)
        at = {q: i for i, q in enumerate(qids)}
        full[[at[q] for q in res.qids]] = v
        values[name] = full[:, [cols.index(c) for c in measures]]
        curve_values[name] = full[:, [cols.index(c) for c, _ in curves]]
    means = {name: {m: _number(res.summary.get(m)) for m in measures} for name, (_, _, res) in zip(names, results)}
    page = Page("eval", "Evaluation" if len(results) == 1 else f"Evaluation against {names[0]}", names, measures,
                qids, values, means, definitions=_describe({m: definitions[m] for m in measures if m in definitions}))
    page.notes += [f"Values as trec_eval prints them ({'-c: every judged query' if complete else 'each run over the judged queries it answers'}); "
                   "a blank cell: the run does not answer that query.", *definition_notes(definitions)]
    mean_summarised = {m for m in measures if summary_of.get(m) == "mean"}
    with_intervals(page, Interval(), mean_summarised)
    if len(results) > 1:
        with_tests(page, reason="Deltas and tests over the queries every run answers.")
    with_curves(page, curves, curve_values, "no precision-recall curve: iprec_at_recall was not among the measures "
                "(-m iprec_at_recall, or trec_eval's default measures, draw it)")
    page.inputs = inputs or []
    return plotted(page, {m for m in measures if summary_of.get(m) != "mean"})


def _number(x) -> float | None:
    return None if x is None else float(x)


def _system_names(paths_tags: list[tuple[str, str]]) -> list[str]:
    """Run tags, or the file names where two tags coincide (as compare names its systems)."""
    tags = [t for _, t in paths_tags]
    names = tags if len(set(tags)) == len(tags) else [Path(p).name for p, _ in paths_tags]
    if len(set(names)) != len(names):
        names = [f"{n} ({i + 1})" for i, n in enumerate(names)]
    return names


# ---------------------------------------------------------------- test-set results
def _rows_values(data: dict, qids: list[str]):
    """(Q, M) values of a results dict's per-query rows for ``qids`` (NaN where it has no row)."""
    rows = {r["qid"]: r for r in data["per_query"]}
    return np.array([[_nan(rows.get(q, {}).get(m)) for m in data["measures"]] for q in qids], dtype=np.float64
                    ).reshape(len(qids), len(data["measures"]))


def _nan(x) -> float:
    return float("nan") if x is None else float(x)


def system_label(data: dict) -> str:
    """What a results file says it is of: its system's run, function, name and stage."""
    s = data.get("system") or {}
    label = s.get("stage") or s.get("name") or s.get("run") or s.get("function") or "system"
    return str(label)


def testset_page(data: dict, *, texts: dict[str, str] | None = None, source: str | None = None) -> Page:
    """The page of one ``testset eval`` result: its means, per-query values and per-type means as written."""
    return results_page([data], [system_label(data)], texts=texts, sources=[source or "results"], kind="testset")


def results_page(datas: list[dict], labels: list[str], *, texts: dict[str, str] | None = None,
                 sources: list[str] | None = None, kind: str = "testset") -> Page:
    """Test-set results of one test set side by side (the first the baseline): each result's means as written,
    their per-query values over the first result's queries, and compare's tests where the queries are the same."""
    first = datas[0]
    measures = list(first["measures"])
    for d, src in zip(datas, sources or [""] * len(datas)):
        if list(d["measures"]) != measures:
            raise InputError("these results have other measures than the first", path=src,
                             fix="draw results of the same measures together")
    qids = [r["qid"] for r in first["per_query"]]
    names = _unique(labels)
    values = {n: _rows_values(d, qids) for n, d in zip(names, datas)}
    means = {n: {m: d["aggregates"][m]["mean"] for m in measures} for n, d in zip(names, datas)}
    defs = {m: Definition.from_dict(x, sources[0] if sources else "results", m)
            for m, x in first["definitions"].items()}
    ts = first["test_set"]
    title = f"{ts['name']} {ts['version']}" + ("" if len(datas) == 1 else f": {len(datas)} results")
    page = Page(kind, title, names, measures, qids, values, means, definitions=_describe(defs))
    page.notes += [f"Means as the results files hold them, over {len(qids)} queries.", *definition_notes(defs)]
    with_intervals(page, Interval())
    same = all(d["test_set"]["digest"] == ts["digest"] for d in datas)
    if len(datas) > 1 and same:
        with_tests(page)
    elif len(datas) > 1:
        page.notes.append("No significance test: the results are of different test-set versions.")
    types = {r["qid"]: r.get("query_type") for r in first["per_query"]}
    _queries(page, texts, types)
    if len(datas) == 1:
        page.type_means = {t: {"queries": row["num_queries"], names[0]: {m: row.get(m) for m in measures}}
                           for t, row in first["per_query_type"].items()}
    page.no_curves = NO_CURVE_TESTSET
    page.inputs = [("test set", f"{ts['name']} {ts['version']}", ts["digest"])] + [
        (f"results of {n}", src, None) for n, src in zip(names, sources or [])]
    latency = {n: d.get("latency_ms") for n, d in zip(names, datas) if d.get("latency_ms")}
    for n, lat in latency.items():
        page.notes.append(f"Latency of {n}: " + ", ".join(f"{k} {v:.2f} ms" for k, v in lat.items() if v is not None)
                          + ".")
    return plotted(page)


def _unique(labels: list[str]) -> list[str]:
    if len(set(labels)) == len(labels):
        return list(labels)
    return [f"{x} ({i + 1})" for i, x in enumerate(labels)]


def system_page(stages: dict[str, dict], *, texts: dict[str, str] | None = None) -> Page:
    """The page of ``system eval``: every stage on the test set, the first stage the baseline."""
    page = results_page(list(stages.values()), list(stages), texts=texts, kind="system")
    first = next(iter(stages.values()))
    page.title = f"System {first.get('system', {}).get('name', '')} on {page.title}"
    return page


def trend_page(datas: list[dict], labels: list[str], sources: list[str]) -> Page:
    """Several results of one test set, in the order given (system or test-set versions): a trend of each mean."""
    names = {d["test_set"]["name"] for d in datas}
    if len(names) > 1:
        raise InputError(f"these results are of different test sets ({', '.join(sorted(names))})",
                         path=sources[-1], fix="draw a trend from results of one test set")
    page = results_page(datas, labels, sources=sources, kind="trend")
    page.trend = {"labels": page.systems, "versions": [d["test_set"]["version"] for d in datas],
                  "means": {m: [page.means[s][m] for s in page.systems] for m in page.measures}}
    return page


# ---------------------------------------------------------------- gate
def gate_page(res: GateResult, sources: tuple[str, str]) -> Page:
    """The page of a gate: the baseline and the current results side by side, each gated metric's limit drawn, and
    the queries that dropped most."""
    page = results_page([res.baseline, res.current], ["baseline", "current"], sources=list(sources), kind="gate")
    rule = f"{res.max_drop:g} points" if res.absolute else f"{res.max_drop:.0%} (relative)"
    page.title = f"Gate {'PASS' if res.passed else 'FAIL'}: {page.title}"
    failing = {c.metric for c in res.checks if not c.passed}
    drops = [d for d in res.query_drops() if d["metric"] in failing] or res.query_drops()
    page.gate = {"passed": res.passed, "rule": rule,
                 "checks": [{"metric": c.metric, "baseline": c.baseline, "current": c.current, "limit": c.limit,
                             "passed": c.passed} for c in res.checks],
                 "drops": drops[:GATE_DROPS], "dropped": len(drops),
                 "drops_of": "failing metrics" if failing else "gated metrics"}
    return page


# ---------------------------------------------------------------- results files (treckit report)
def page_of_files(files: list[tuple[str, Any]]) -> Page:
    """The page of results files written earlier: one comparison (compare --out), one system's stages (system eval
    --out), or one test-set result or several of one test set (a trend, in the order given)."""
    kinds = [_kind(data, name) for name, data in files]
    if "compare" in kinds or "system" in kinds:
        if len(files) > 1:
            raise InputError("a comparison or a system's stages is drawn alone", path=files[1][0],
                             fix="give one compare or system eval results file, or test-set results of one test set")
        name, data = files[0]
        return compare_record_page(data, name) if kinds[0] == "compare" else system_page(
            {s: check_results_file(d, name) for s, d in data.items()})
    datas = [check_results_file(data, name) for name, data in files]
    labels = [Path(name).stem for name, _ in files]
    if len(datas) == 1:
        return testset_page(datas[0], source=files[0][0])
    return trend_page(datas, labels, [name for name, _ in files])


def _kind(data: Any, name: str) -> str:
    if isinstance(data, dict) and data.get("schema") == RESULTS_SCHEMA:
        return "testset"
    if isinstance(data, dict) and "schema_version" in data and "per_query" in data and "systems" in data:
        return "compare"
    if isinstance(data, dict) and data and all(isinstance(d, dict) and d.get("schema") == RESULTS_SCHEMA
                                               for d in data.values()):
        return "system"
    raise InputError("not a results file treckit report draws", path=name,
                     fix="give the --out file of treckit compare, testset eval or system eval")


def compare_record_page(record: dict, name: str) -> Page:
    """The page of compare's JSON: its per-query values, means and tests as written."""
    try:
        comp = _comparison_of_record(record)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise InputError(f"not a complete compare results file ({type(exc).__name__}: {str(exc)[:80]})", path=name,
                         fix="pass the --out file of `treckit compare` as it was written") from None
    inputs = [("qrels", "", record.get("qrels_digest"))] + [
        (f"run of {s}", str(v.get("run_path") or v.get("config_path") or ""), v.get("run_digest") or v.get("config_digest"))
        for s, v in record["systems"].items()] + [("compare results", name, None)]
    return comparison_page(comp, inputs=inputs)


def _comparison_of_record(record: dict) -> Comparison:
    systems = list(record["systems"])
    definitions = {m: Definition.from_dict(d, "compare results", m) for m, d in record["definitions"].items()}
    measures = list(definitions)
    rows = record["per_query"]
    qids = [r["qid"] for r in rows]
    values = {s: np.array([[float(r[s][m]) for m in measures] for r in rows], dtype=np.float64).reshape(
        len(rows), len(measures)) for s in systems}
    tests = record.get("tests") or []
    sig = record.get("significance") or {}
    boot = next((t for t in tests if t.get("test") == "bootstrap"), {})
    options = CompareOptions(k=int(record.get("k") or 10), tests=tuple(dict.fromkeys(t["test"] for t in tests))
                             or CompareOptions.tests, correction=sig.get("correction", "holm"),
                             alpha=float(sig.get("alpha", 0.05)), resamples=int(boot.get("resamples", 10000)),
                             seed=int(boot.get("seed", 42)))
    comp = Comparison([ComparedRun(s) for s in systems], measures, qids, values,
                      {s: [r[s].get("hits", []) for r in rows] for s in systems}, list(tests), options,
                      definitions=definitions)
    return comp
