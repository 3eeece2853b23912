"""A Grafana dashboard for the service's Prometheus metrics (``treckit grafana-dashboard``): the quality gauges
(Recall@k, nDCG@k, MRR per test set, system and component), the requests (rate by route and status, 5xx, latency
quantiles) and the evaluation workers (ready, running, waiting).  Its variables pick the data source, the test sets
and the systems; every query is PromQL that Prometheus answers as written once ``$test_set`` and ``$system`` are
set (their "All" is ``.*``)."""
from __future__ import annotations

import json

from .metrics import DEFAULT_PREFIX, check_prefix

DATASOURCE = {"type": "prometheus", "uid": "${DS_PROMETHEUS}"}
SELECT = 'test_set=~"$test_set", system=~"$system"'


def panels(prefix: str) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(title, unit, [(PromQL, legend)]) of each panel."""
    p = prefix
    return [
        ("Recall@k", "percentunit", [(f"{p}_retrieval_recall_at_k{{{SELECT}}}", "{{system}} {{component}} @{{k}} ({{test_set}})")]),
        ("nDCG@k", "percentunit", [(f"{p}_retrieval_ndcg_at_k{{{SELECT}}}", "{{system}} {{component}} @{{k}} ({{test_set}})")]),
        ("MRR", "percentunit", [(f"{p}_retrieval_mrr{{{SELECT}}}", "{{system}} {{component}} ({{test_set}})")]),
        ("Requests per second", "reqps", [(f"sum by (route, status) (rate({p}_http_requests_total[5m]))",
                                          "{{route}} {{status}}")]),
        ("Server errors (5xx) per second", "reqps", [(f'sum(rate({p}_http_requests_total{{status=~"5.."}}[5m])) or vector(0)',
                                                     "5xx")]),
        ("Request latency", "s", [(f"histogram_quantile({q}, sum by (le, route) (rate({p}_http_request_duration_seconds_bucket[5m])))",
                                   f"p{round(q * 100)} {{{{route}}}}") for q in (0.5, 0.95)]),
        ("Evaluation workers", "short", [(f"{p}_evaluation_workers", "ready"), (f"{p}_evaluations_running", "running"),
                                         (f"{p}_evaluations_waiting", "waiting")]),
    ]


def queries(prefix: str = DEFAULT_PREFIX) -> list[str]:
    """Every PromQL query of the dashboard."""
    return [q for _, _, targets in panels(check_prefix(prefix)) for q, _ in targets]


def _variable(name: str, prefix: str) -> dict:
    return {"name": name, "label": name.replace("_", " "), "type": "query", "datasource": DATASOURCE,
            "query": {"query": f"label_values({prefix}_retrieval_mrr, {name})", "refId": name},
            "definition": f"label_values({prefix}_retrieval_mrr, {name})", "includeAll": True, "multi": True,
            "allValue": ".*", "current": {"selected": True, "text": ["All"], "value": ["$__all"]}, "refresh": 2,
            "sort": 1}


def dashboard(prefix: str = DEFAULT_PREFIX) -> dict:
    """The dashboard's JSON model, for Grafana's import (its data source asked for on import)."""
    prefix = check_prefix(prefix)
    out = []
    for i, (title, unit, targets) in enumerate(panels(prefix)):
        out.append({"id": i + 1, "type": "timeseries", "title": title, "datasource": DATASOURCE,
                    "gridPos": {"h": 8, "w": 12, "x": 12 * (i % 2), "y": 8 * (i // 2)},
                    "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
                    "options": {"legend": {"displayMode": "list", "placement": "bottom"}, "tooltip": {"mode": "multi"}},
                    "targets": [{"datasource": DATASOURCE, "expr": q, "legendFormat": legend, "refId": chr(65 + j)}
                                for j, (q, legend) in enumerate(targets)]})
    return {
        "__inputs": [{"name": "DS_PROMETHEUS", "label": "Prometheus", "type": "datasource", "pluginId": "prometheus",
                      "pluginName": "Prometheus"}],
        "title": f"treckit evaluation service ({prefix})", "uid": f"treckit-{prefix}"[:40], "tags": ["treckit"],
        "timezone": "browser", "schemaVersion": 39, "version": 1, "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {"list": [_variable("test_set", prefix), _variable("system", prefix)]},
        "panels": out,
    }


def dashboard_text(prefix: str = DEFAULT_PREFIX) -> str:
    return json.dumps(dashboard(prefix), indent=2) + "\n"
