"""Pages (:class:`treckit.report.page.Page`) of test-set results: one result, a system's stages, a gate, a trend of
several results of one test set, and results files read back (``treckit report``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..console.errors import InputError
from ..dependencies import deferred
from ..measures.definitions import Definition
from ..testsets.gate import GateResult, check_results_file
from ..testsets.results import RESULTS_SCHEMA
from .page import Interval, Page, definition_notes, plotted, with_intervals, with_tests
from .sources import compare_record_page, describe, with_queries

np = deferred("numpy")

GATE_DROPS = 50                # the queries that dropped most on a gated metric, listed
NO_CURVE_TESTSET = ("no precision-recall curve: test-set results hold no iprec_at_recall values (their measures are "
                    "the test set's); `treckit eval` or `treckit compare --html` on the runs draw one")


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
    label = s.get("stage") or s.get("name") or (Path(str(s["run"])).name if s.get("run") else None) \
        or s.get("function") or "system"
    return str(label)


def testset_page(data: dict, *, texts: dict[str, str] | None = None) -> Page:
    """The page of one ``testset eval`` result: its means, per-query values and per-type means as written."""
    return results_page([data], [system_label(data)], texts=texts, kind="testset")


def results_page(datas: list[dict], labels: list[str], *, texts: dict[str, str] | None = None,
                 sources: list[str] | None = None, kind: str = "testset") -> Page:
    """Test-set results of one test set side by side (the first the baseline): each result's means as written,
    their per-query values over the first result's queries, and compare's tests where the queries are the same."""
    first = datas[0]
    measures = _same_measures(datas, sources)
    qids = [r["qid"] for r in first["per_query"]]
    names = _unique(labels)
    values = {n: _rows_values(d, qids) for n, d in zip(names, datas)}
    means = {n: {m: d["aggregates"][m]["mean"] for m in measures} for n, d in zip(names, datas)}
    defs = {m: Definition.from_dict(x, sources[0] if sources else "results", m)
            for m, x in first["definitions"].items()}
    ts = first["test_set"]
    title = f"{ts['name']} {ts['version']}" + ("" if len(datas) == 1 else f": {len(datas)} results")
    page = Page(kind, title, names, measures, qids, values, means, definitions=describe(defs))
    page.notes += [f"Means as the results files hold them, over {len(qids)} queries.", *definition_notes(defs)]
    with_intervals(page, Interval())
    if len(datas) > 1 and all(d["test_set"]["digest"] == ts["digest"] for d in datas):
        with_tests(page)
    elif len(datas) > 1:
        page.notes.append("No significance test: the results are of different test-set versions.")
    with_queries(page, texts, {r["qid"]: r.get("query_type") for r in first["per_query"]})
    if len(datas) == 1:                     # the results file's own per-type means
        page.type_means = {t: {"queries": row["num_queries"], names[0]: {m: row.get(m) for m in measures}}
                           for t, row in first["per_query_type"].items()}
    page.no_curves = NO_CURVE_TESTSET
    page.inputs = [("test set", f"{ts['name']} {ts['version']}", ts["digest"])] + [
        (f"system {n}", _system_text(d), None) for n, d in zip(names, datas)]
    page.notes += [_latency_note(n, d["latency_ms"]) for n, d in zip(names, datas) if d.get("latency_ms")]
    return plotted(page)


def _same_measures(datas: list[dict], sources: list[str] | None) -> list[str]:
    measures = list(datas[0]["measures"])
    for d, src in zip(datas, sources or [""] * len(datas)):
        if list(d["measures"]) != measures:
            raise InputError("these results have other measures than the first", path=src,
                             fix="draw results of the same measures together")
    return measures


def _latency_note(name: str, latency: dict) -> str:
    return f"Latency of {name}: " + ", ".join(f"{k} {v:.2f} ms" for k, v in latency.items() if v is not None) + "."


def _system_text(data: dict) -> str:
    s = data.get("system") or {}
    return ", ".join(f"{k} {v}" for k, v in s.items()) or "\u2013"


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


def trend_page(datas: list[dict], labels: list[str], sources: list[str], texts: dict[str, str] | None = None) -> Page:
    """Several results of one test set, in the order given (system or test-set versions): a trend of each mean."""
    names = {d["test_set"]["name"] for d in datas}
    if len(names) > 1:
        raise InputError(f"these results are of different test sets ({', '.join(sorted(names))})",
                         path=sources[-1], fix="draw a trend from results of one test set")
    page = results_page(datas, labels, sources=sources, kind="trend", texts=texts)
    page.trend = {"labels": page.systems, "versions": [d["test_set"]["version"] for d in datas],
                  "means": {m: [page.means[s][m] for s in page.systems] for m in page.measures}}
    return page


# ---------------------------------------------------------------- gate
def gate_page(res: GateResult, sources: tuple[str, str]) -> Page:
    """The page of a gate: the baseline and the current results side by side, each gated metric's limit drawn, and
    the queries that dropped most."""
    page = results_page([res.baseline, res.current], ["baseline", "current"], sources=list(sources), kind="gate")
    page.inputs += [(f"{side} results", name, None) for side, name in zip(("baseline", "current"), sources)]
    rule = f"{res.max_drop:g} points" if res.absolute else f"{res.max_drop:.0%} (relative)"
    ts = res.current["test_set"]
    page.title = f"Gate {'PASS' if res.passed else 'FAIL'}: {ts['name']} {ts['version']}"
    failing = {c.metric for c in res.checks if not c.passed}
    drops = [d for d in res.query_drops() if d["metric"] in failing] or res.query_drops()
    page.gate = {"passed": res.passed, "rule": rule,
                 "checks": [{"metric": c.metric, "baseline": c.baseline, "current": c.current, "limit": c.limit,
                             "passed": c.passed} for c in res.checks],
                 "drops": drops[:GATE_DROPS], "dropped": len(drops),
                 "drops_of": "failing metrics" if failing else "gated metrics"}
    return page


# ---------------------------------------------------------------- results files (treckit report)
def page_of_files(files: list[tuple[str, Any, str | None]], texts: dict[str, str] | None = None) -> Page:
    """The page of results files written earlier ((name, data, digest) each): one comparison (compare --out), one
    system's stages (system eval --out), or one test-set result or several of one test set (a trend, in the order
    given); ``texts``: the queries' texts, where known."""
    kinds = [_kind(data, name) for name, data, _ in files]
    if "compare" in kinds or "system" in kinds:
        if len(files) > 1:
            raise InputError("a comparison or a system's stages is drawn alone", path=files[1][0],
                             fix="give one compare or system eval results file, or test-set results of one test set")
        name, data, _ = files[0]
        page = compare_record_page(data, name, texts) if kinds[0] == "compare" else system_page(
            {s: check_results_file(d, name) for s, d in data.items()}, texts=texts)
    else:
        datas = [check_results_file(data, name) for name, data, _ in files]
        page = (testset_page(datas[0], texts=texts) if len(datas) == 1 else
                trend_page(datas, [Path(name).stem for name, _, _ in files], [name for name, _, _ in files], texts))
    page.inputs += [("results file", name, digest) for name, _, digest in files]
    return page


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


