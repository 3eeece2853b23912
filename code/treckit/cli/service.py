"""``treckit serve``: the evaluation service (FastAPI under uvicorn)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")      # uvicorn's


def serve_cmd(host: str = typer.Option("127.0.0.1", "--host", help="address to bind (default: this machine only)"),
              port: int = typer.Option(8000, "--port", min=1, max=65535),
              config: Optional[Path] = typer.Option(None, "--config", help="SERVER.yaml: system, metrics_prefix, data_dir, limits"),
              log_level: str = typer.Option("info", "--log-level", metavar="|".join(LOG_LEVELS),
                                            help="uvicorn's log level")) -> None:
    """Serve POST /v1/evaluate, GET /v1/health and GET /metrics (set TRECKIT_API_TOKEN to require a bearer token)."""
    from ..errors import InputError
    log_level = log_level.lower()
    if log_level not in LOG_LEVELS:
        raise InputError(f"--log-level {log_level[:40]!r} is not a log level", fix=f"use one of {', '.join(LOG_LEVELS)}")
    try:
        import uvicorn
        from ..service.app import create_app, load_settings
    except ImportError as exc:
        raise InputError(f"the service needs its extra ({exc.name} is missing)", fix="pip install 'treckit[service]'") from None
    settings = load_settings(config) if config else None
    uvicorn.run(create_app(settings), host=host, port=port, log_level=log_level)


def alert_rules_cmd(prefix: str = typer.Option("treckit", "--prefix", help="the server's metrics_prefix"),
                    threshold: float = typer.Option(0.75, "--threshold", min=0.0, max=1.0, help="page below this Recall@10"),
                    duration: str = typer.Option("15m", "--for", help="how long it must stay below (Prometheus duration)")) -> None:
    """Print Prometheus alert rules for the quality gauges (check them with promtool check rules)."""
    from ..service.metrics import alert_rules
    print(alert_rules(prefix, threshold, duration), end="")


def register(app) -> None:
    app.command("serve")(serve_cmd)
    app.command("alert-rules")(alert_rules_cmd)
