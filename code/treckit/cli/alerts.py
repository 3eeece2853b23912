"""``treckit alert-rules`` and ``treckit grafana-dashboard``: Prometheus alert rules for the service's quality gauges,
and a Grafana dashboard of its metrics (no extra needed: both are text)."""
from __future__ import annotations

import typer

from ..service.grafana import dashboard_text
from ..service.metrics import alert_rules
from .common import number_in


def alert_rules_cmd(prefix: str = typer.Option("treckit", "--prefix", help="the server's metrics_prefix"),
                    threshold: float = typer.Option(0.75, "--threshold", parser=number_in(0.0, 1.0), metavar="NUMBER",
                                                    help="page below this Recall@10"),
                    duration: str = typer.Option("15m", "--for", help="how long it must stay below (Prometheus duration)")) -> None:
    """Print Prometheus alert rules for the quality gauges (check them with promtool check rules)."""
    print(alert_rules(prefix, threshold, duration), end="")


def grafana_dashboard_cmd(prefix: str = typer.Option("treckit", "--prefix", help="the server's metrics_prefix")) -> None:
    """Print a Grafana dashboard (JSON, to import) of the service's quality gauges, requests and workers."""
    print(dashboard_text(prefix), end="")


def register(app) -> None:
    app.command("alert-rules")(alert_rules_cmd)
    app.command("grafana-dashboard")(grafana_dashboard_cmd)
