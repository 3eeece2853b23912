"""The regression gate: fail the build when a metric drops more than allowed.

Relative by default: a metric fails when current < baseline x (1 - max_drop); with ``absolute``
when current < baseline - max_drop (points).  ``max_drop`` is a fraction (``0.05``) or a percentage
(``"5%"``).  Both results must come from the same test set (name, version and content digest):
a gate across different test sets compares nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..console.errors import InputError
from ..measures.definitions import check_same, read_definitions
from .measures import canonical_name
from .results import check_results

DEFAULT_GATED = ("recall_at_10", "ndcg_at_10")
DEFAULT_MAX_DROP = 0.05
FAILING_QUERIES_SHOWN = 10


def parse_drop(text: str | float) -> float:
    s = str(text).strip()
    try:
        value = float(s[:-1]) / 100 if s.endswith("%") else float(s)
    except ValueError:
        raise InputError(f"--max-drop {text!r} is not a number", fix="e.g. --max-drop 5% or --max-drop 0.05") from None
    if not 0 <= value < 1:
        raise InputError(f"--max-drop {text!r} must be between 0 and 100%", fix="e.g. --max-drop 5%")
    return value


@dataclass
class MetricCheck:
    metric: str
    baseline: float
    current: float
    limit: float
    passed: bool

    @property
    def drop(self) -> float:
        return self.baseline - self.current


@dataclass
class GateResult:
    checks: list[MetricCheck]
    max_drop: float
    absolute: bool
    baseline: dict[str, Any] = field(repr=False)
    current: dict[str, Any] = field(repr=False)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def failures(self) -> list[str]:
        rule = f"{self.max_drop:g} points" if self.absolute else f"{self.max_drop:.0%}"
        return [f"{c.metric} dropped from {c.baseline:.4f} to {c.current:.4f} (drop {c.drop:.4f}; "
                f"the limit is {c.limit:.4f}, a drop of at most {rule})" for c in self.checks if not c.passed]

    def query_drops(self) -> list[dict[str, Any]]:
        """Per-query drops of the gated metrics, largest first."""
        base = {r["qid"]: r for r in self.baseline["per_query"]}
        out = []
        for r in self.current["per_query"]:
            b = base.get(r["qid"])
            if b is None:
                continue
            for c in self.checks:
                d = b[c.metric] - r[c.metric]
                if d > 0:
                    out.append({"qid": r["qid"], "query_type": r.get("query_type"), "metric": c.metric,
                                "baseline": b[c.metric], "current": r[c.metric], "drop": d})
        return sorted(out, key=lambda x: (-x["drop"], x["qid"], x["metric"]))

    def markdown(self) -> str:
        shown = list(dict.fromkeys([m for m in DEFAULT_GATED if m in self.current["aggregates"]
                                    and m in self.baseline["aggregates"]] + [c.metric for c in self.checks]))
        gated = {c.metric: c for c in self.checks}
        ts = self.current["test_set"]
        lines = [f"## Retrieval quality gate: {'PASS' if self.passed else 'FAIL'}", "",
                 f"Test set `{ts['name']}` version `{ts['version']}`; allowed drop "
                 + (f"{self.max_drop:g} points" if self.absolute else f"{self.max_drop:.0%} (relative)"), "",
                 "| metric | baseline | current | change | gate |", "|---|---:|---:|---:|---|"]
        for m in shown:
            b, c = self.baseline["aggregates"][m]["mean"], self.current["aggregates"][m]["mean"]
            verdict = ("pass" if gated[m].passed else "**FAIL**") if m in gated else "(not gated)"
            lines.append(f"| {m} | {b:.4f} | {c:.4f} | {c - b:+.4f} | {verdict} |")
        types = list(self.current["per_query_type"])
        if types:
            lines += ["", "### By query type", "", "| query type | queries | " + " | ".join(
                f"{m} (baseline → current)" for m in shown) + " |", "|---|---:|" + "---:|" * len(shown)]
            for t in types:
                cur = self.current["per_query_type"][t]
                base = self.baseline["per_query_type"].get(t, {})
                cells = [f"{base[m]:.4f} → {cur[m]:.4f}" if m in base else f"— → {cur[m]:.4f}" for m in shown]
                lines.append(f"| {_md(t)} | {cur['num_queries']} | " + " | ".join(cells) + " |")
        drops = self.query_drops()[:FAILING_QUERIES_SHOWN]
        if drops:
            lines += ["", "### Queries that dropped most", "", "| query | type | metric | baseline | current | drop |",
                      "|---|---|---|---:|---:|---:|"]
            for d in drops:
                lines.append(f"| {_md(d['qid'])} | {_md(str(d['query_type']))} | {d['metric']} | {d['baseline']:.4f} | "
                             f"{d['current']:.4f} | {d['drop']:.4f} |")
        return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|")


def check_results_file(data: Any, name: str) -> dict:
    """A results file of ``testset eval`` that records the definitions of its measures and is a valid record
    (:func:`treckit.testsets.results.check_results`); exit 2 for anything else, naming the field and the fix."""
    return check_results(data, name)


def gate(baseline: dict, current: dict, metrics=None, max_drop: float = DEFAULT_MAX_DROP,
         absolute: bool = False, sources: tuple[str, str] = ("the baseline results", "the current results")) -> GateResult:
    """Gate ``current`` against ``baseline`` (results dicts of ``testset eval``; ``sources`` name them in
    errors).  Both must be valid records (:func:`check_results_file`), come from the same test set and define
    every gated metric alike."""
    names = [canonical_name(m) for m in metrics] if metrics else list(DEFAULT_GATED)
    for data, source in ((baseline, sources[0]), (current, sources[1])):
        check_results_file(data, source)
    for key in ("name", "version", "digest"):
        if baseline["test_set"].get(key) != current["test_set"].get(key):
            raise InputError(f"the baseline and the current results come from different test sets ({key}: "
                             f"{baseline['test_set'].get(key)!r} vs {current['test_set'].get(key)!r})",
                             fix="evaluate the baseline on the same test set version again")

    checks = []
    for m in names:
        for side, data in (("baseline", baseline), ("current", current)):
            if m not in data["aggregates"]:
                raise InputError(f"the {side} results have no {m}",
                                 fix=f"evaluate with it (`treckit testset eval TEST_SET --run RUN --measure {m} --out "
                                     f"RESULTS.json`), or gate on one of {', '.join(data['aggregates'])} (--metric NAME)")
    check_same(read_definitions(baseline, sources[0]), read_definitions(current, sources[1]), names, "gate")
    for m in names:
        b, c = baseline["aggregates"][m]["mean"], current["aggregates"][m]["mean"]
        limit = b - max_drop if absolute else b * (1 - max_drop)
        checks.append(MetricCheck(m, b, c, limit, c >= limit))
    return GateResult(checks, max_drop, absolute, baseline, current)
