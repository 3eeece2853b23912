"""``treckit serve``: the evaluation service (FastAPI under uvicorn: the service extra).  Without the extra the
command still shows its help (``treckit serve -h``); serving says which extra to install."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from ..console.errors import InputError
from ..dependencies import install_hint
from ..service import TOKEN_ENV

try:
    from ..service.app import create_app, load_settings
    from ..service.evaluator import ServerSettings
    SERVICE_MISSING: ImportError | None = None
except ImportError as missing:          # the service extra is not installed: said when serving, not before
    SERVICE_MISSING = missing

LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server to this machine."""
    import ipaddress
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False                  # a name other than localhost may resolve to any interface


def exposure_warning(host: str, token: str | None) -> str | None:
    """What to say when the server would answer anyone who can reach ``host`` without a token."""
    if token or is_loopback(host):
        return None
    return (f"treckit: WARNING: serving on {host} with no token: anyone who can reach this address can use the "
            "service, read its metrics and have it read run files in its data_dir; set TRECKIT_API_TOKEN (clients "
            "then send Authorization: Bearer <token>), or bind 127.0.0.1")


def serve_cmd(host: str = typer.Option("127.0.0.1", "--host", help="address to bind (default: this machine only)"),
              port: int = typer.Option(8000, "--port", min=1, max=65535),
              config: Optional[Path] = typer.Option(None, "--config", help="SERVER.yaml: system, metrics_prefix, "
                                                    "data_dir, limits, timeouts, workers, metric label allow-lists"),
              log_level: str = typer.Option("info", "--log-level", help=f"uvicorn's log level: {', '.join(LOG_LEVELS)}")) -> None:
    """Serve POST /v1/evaluate, POST /v1/rq, GET /v1/health and GET /metrics (set TRECKIT_API_TOKEN to require a
    bearer token)."""
    import os

    if log_level.lower() not in LOG_LEVELS:
        raise InputError(f"--log-level {log_level[:40]!r} is not a log level", fix=f"use one of {', '.join(LOG_LEVELS)}")
    try:
        if SERVICE_MISSING is not None:
            raise SERVICE_MISSING
        import uvicorn
    except ImportError as exc:
        raise InputError(f"the service needs its extra ({exc.name} is missing)", fix=install_hint("service")) from None
    settings = load_settings(config) if config else ServerSettings()
    app = create_app(settings)
    warning = exposure_warning(host, os.environ.get(TOKEN_ENV))
    if warning:
        print(warning, file=sys.stderr, flush=True)
    uvicorn.run(app, host=host, port=port, log_level=log_level.lower(),
                timeout_graceful_shutdown=settings.shutdown_grace_s)



def register(app) -> None:
    app.command("serve")(serve_cmd)
