"""Test-set results as a console table and a Markdown report, and the train/holdout gap."""
from __future__ import annotations

from typing import Any
from ..measures.definitions import Definition
from .lifecycle import split
from .measures import gains_note


def _f(v) -> str:
    return "—" if v is None else f"{v:.4f}"


def _md(text: str) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|")


def _defined(d: dict[str, Any]) -> str:
    """What the numbers of a results dict average over and how nDCG is defined (its definitions)."""
    defs = {m: Definition.from_dict(x, "results") for m, x in d["definitions"].items()}
    note = gains_note(defs)
    n, missing = len(d["per_query"]), d.get("missing_queries") or []
    counted = f"{n} queries (every query of the test set"
    if missing:
        counted += (f"; the {len(missing)} the run does not answer score 0: trec_eval without -c averages "
                    f"the other {n - len(missing)})")
    else:
        counted += ")"
    return counted + (f"; {note}" if note else "")


def results_table(d: dict[str, Any]) -> str:
    ts = d["test_set"]
    lines = [f"{ts['name']} {ts['version']}: {_defined(d)}",
             f"{'measure':<16} {'mean':>8} {'median':>8} {'std':>8}"]
    for m, a in d["aggregates"].items():
        lines.append(f"{m:<16} {_f(a['mean']):>8} {_f(a['median']):>8} {_f(a['std']):>8}")
    if d.get("latency_ms"):
        lat = d["latency_ms"]
        lines.append(f"latency ms       p50 {_f(lat['p50'])}  p95 {_f(lat['p95'])}")
    lines.append("by query type:")
    for t, row in d["per_query_type"].items():
        lines.append(f"  {t:<20} n={row['num_queries']:<4} " + "  ".join(f"{m} {_f(row[m])}" for m in d["measures"]))
    if "split" in d:
        s = d["split"]
        lines.append(f"holdout {s['holdout']:g} (seed {s['seed']}): " + "  ".join(
            f"{m} train {_f(s['train'][m])} holdout {_f(s['holdout_part'][m])} gap {_f(s['gap'][m])}" for m in d["measures"]))
    return "\n".join(lines) + "\n"


def results_markdown(d: dict[str, Any]) -> str:
    ts = d["test_set"]
    lines = [f"## {_md(ts['name'])} {_md(ts['version'])}", "",
             f"{_defined(d)}.", "",
             "| measure | mean | median | std |", "|---|---:|---:|---:|"]
    for m, a in d["aggregates"].items():
        lines.append(f"| {m} | {_f(a['mean'])} | {_f(a['median'])} | {_f(a['std'])} |")
    lines += ["", "### By query type", "", "| query type | queries | " + " | ".join(d["measures"]) + " |",
              "|---|---:|" + "---:|" * len(d["measures"])]
    for t, row in d["per_query_type"].items():
        lines.append(f"| {_md(t)} | {row['num_queries']} | " + " | ".join(_f(row[m]) for m in d["measures"]) + " |")
    if d.get("latency_ms"):
        lines += ["", f"Latency per query: p50 {_f(d['latency_ms']['p50'])} ms, p95 {_f(d['latency_ms']['p95'])} ms."]
    return "\n".join(lines) + "\n"


def holdout_gap(result, test_set, holdout: float, seed: int) -> dict[str, Any]:
    """Means of each measure on the train and holdout parts of a split, and train - holdout (a large
    positive gap suggests a system tuned to the training queries)."""
    import numpy as np

    train, hold = split(test_set, holdout, seed)
    rows = {r["qid"]: r for r in result.per_query}
    parts = {}
    for label, part in (("train", train), ("holdout_part", hold)):
        parts[label] = {m: float(np.mean([rows[q][m] for q in part.query_ids])) for m in result.measures}
    return {"holdout": holdout, "seed": seed, **parts,
            "gap": {m: parts["train"][m] - parts["holdout_part"][m] for m in result.measures}}
