"""Pages (:class:`treckit.report.page.Page`) of a comparison and of evaluations of runs (``treckit eval``, which
loads no test-set code: :mod:`treckit.report.results` draws test sets' results, gates and results files)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..compare.compare import CompareOptions, ComparedRun, Comparison
from ..compare.report import TEST_HEADER, TIE_HEADER, test_cells, tie_cells, tie_statement
from ..console.errors import InputError
from ..dependencies import deferred
from ..measures.definitions import Definition
from .page import (Interval, Page, curve_columns, definition_notes, marks_of, plotted, test_note, type_means_of,
                   with_curves, with_intervals, with_tests)

np = deferred("numpy")

TIE_MOVERS = 10                # the queries whose tie ranges are widest, listed


def describe(defs: dict[str, Definition]) -> dict[str, str]:
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
                definitions=describe({m: comp.definitions[m] for m in measures if m in comp.definitions}))
    page.notes += [f"Means over {len(comp.qids)} queries." + (
        " With --tie-aware expected, the means and tests are on the expected values over random tie orders."
        if o.tie_aware == "expected" else ""), *definition_notes(comp.definitions)]
    with_intervals(page, Interval(o.resamples, o.seed, o.alpha))
    marks = marks_of(comp)
    page.marks = {s: {m: marks[s][m] for m in measures} for s in marks}
    if comp.tests:
        page.notes.append(test_note(comp))
        page.tests = (list(TEST_HEADER), test_cells(comp))
    with_queries(page, texts, types)
    with_curves(page, curves, {s.name: _curve_values(comp, s.name, curves) for s in comp.systems},
                "no precision-recall curve: the comparison measured no iprec_at_recall (compare --html measures it "
                "beside the compared measures; not with --tie-aware)")
    if comp.ties is not None:
        page.ties = {"statement": tie_statement(comp), "header": list(TIE_HEADER), "cells": tie_cells(comp),
                     "movers": _tie_movers(comp)}
    page.inputs = inputs or []
    return plotted(page)


def _curve_values(comp: Comparison, system: str, curves: list[tuple[str, float]]):
    """(Q, levels): the per-query iprec_at_recall values of ``system``, compared or measured apart."""
    return np.column_stack([comp.column(system, m) if m in comp.measures else
                            comp.curves[system][:, comp.curve_columns.index(m)] for m, _ in curves]
                           ) if curves else np.zeros((len(comp.qids), 0))


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


def with_queries(page: Page, texts: dict[str, str] | None, types: dict[str, str] | None) -> None:
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
    measures, unshown = _eval_measures(results[0][2], definitions)
    names = _system_names([(str(p), tag) for p, tag, _ in results])
    qids = sorted({q for _, _, res in results for q in res.qids}, key=lambda q: q.encode("utf-8", "surrogatepass"))
    values = {name: _aligned(res, qids, measures) for name, (_, _, res) in zip(names, results)}
    means = {name: {m: number(res.summary.get(m)) for m in measures} for name, (_, _, res) in zip(names, results)}
    page = Page("eval", "Evaluation" if len(results) == 1 else f"Evaluation against {names[0]}", names, measures,
                qids, values, means, definitions=describe({m: definitions[m] for m in measures if m in definitions}))
    counted = "-c: every judged query" if complete else "each run over the judged queries it answers"
    page.notes += [f"Values as trec_eval prints them ({counted}); a blank cell: the run does not answer that query.",
                   *definition_notes(definitions)]
    if unshown:
        page.notes.append(f"Not shown: {', '.join(unshown)} (their summary is no mean of per-query values; eval "
                          "prints them).")
    with_intervals(page, Interval())
    if len(results) > 1:
        with_tests(page, reason="Deltas and tests over the queries every run answers.")
    page.curve_levels, page.curves = eval_curves(results, definitions, names)
    if not page.curves:
        page.curves, page.no_curves = None, NO_CURVE_EVAL
    page.inputs = inputs or []
    return plotted(page)


def _eval_measures(res, definitions: dict[str, Definition]) -> tuple[list[str], list[str]]:
    """(the measures eval's page shows: those summarised by their mean, but the curve's; the others)."""
    columns, _ = res.per_query_numbers()
    summary_of = {c: r.summary for r in res.requests for c in r.columns}
    curve_names = {c for c, _ in curve_columns({c: definitions[c] for c in columns if c in definitions})}
    shown = [c for c in columns if c not in curve_names and summary_of.get(c) == "mean"]
    return shown, [c for c in columns if c not in curve_names and c not in shown]


def _aligned(res, qids: list[str], measures: list[str]):
    """(len(qids), len(measures)) values of ``res``, NaN for the queries it has no value for."""
    cols, v = res.per_query_numbers()
    full = np.full((len(qids), len(cols)), np.nan)
    at = {q: i for i, q in enumerate(qids)}
    full[[at[q] for q in res.qids]] = v
    return full[:, [cols.index(c) for c in measures]]


NO_CURVE_EVAL = ("no precision-recall curve: iprec_at_recall was not among the measures (-m iprec_at_recall, or "
                 "trec_eval's default measures, draw it)")


def eval_curves(results: list[tuple[Any, str, Any]], definitions: dict[str, Definition],
                names: list[str] | None = None) -> tuple[list[float], dict[str, list[float | None]]]:
    """(recall levels, system -> the iprec_at_recall summary eval printed at each level); no system when the
    measures hold no iprec_at_recall."""
    names = names or _system_names([(str(p), tag) for p, tag, _ in results])
    columns = curve_columns({c: definitions[c] for c in results[0][2].columns if c in definitions})
    return ([level for _, level in columns],
            {n: [number(res.summary.get(c)) for c, _ in columns] for n, (_, _, res) in zip(names, results)}
            if columns else {})


def number(x) -> float | None:
    return None if x is None else float(x)


def _system_names(paths_tags: list[tuple[str, str]]) -> list[str]:
    """Run tags, or the file names where two tags coincide (as compare names its systems)."""
    tags = [t for _, t in paths_tags]
    names = tags if len(set(tags)) == len(tags) else [Path(p).name for p, _ in paths_tags]
    if len(set(names)) != len(names):
        names = [f"{n} ({i + 1})" for i, n in enumerate(names)]
    return names


# ---------------------------------------------------------------- compare's results file
def compare_record_page(record: dict, name: str, texts: dict[str, str] | None = None) -> Page:
    """The page of compare's JSON: its per-query values, means and tests as written."""
    try:
        comp = _comparison_of_record(record)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise InputError(f"not a complete compare results file ({type(exc).__name__}: {str(exc)[:80]})", path=name,
                         fix="pass the --out file of `treckit compare` as it was written") from None
    inputs = [("qrels", "", record.get("qrels_digest"))] + [
        (f"run of {s}", str(v.get("run_path") or v.get("config_path") or ""), v.get("run_digest") or v.get("config_digest"))
        for s, v in record["systems"].items()]
    return comparison_page(comp, inputs=inputs, texts=texts)


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
