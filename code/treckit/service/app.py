"""The FastAPI application: ``POST /v1/evaluate``, ``POST /v1/rq``, ``GET /v1/health``, ``GET /metrics``.

Safety: the server binds to localhost unless told otherwise; with ``TRECKIT_API_TOKEN`` set every
route but health needs ``Authorization: Bearer <token>`` (the scheme in any case, RFC 6750; the
OpenAPI schema and the /docs and /redoc pages too, and any route added later: the check stands in
front of every route, before a byte of the body is read); bodies, query counts and each request's time
are bounded; evaluations run in worker processes (:mod:`.workers`), so health and metrics answer
however busy the server is, and an evaluation whose time is up or whose client left is stopped; run
files named in requests must lie inside the configured data directory (no absolute paths, no ``..``,
no symlinks leading out); errors say what is wrong with the request and never echo a file's contents;
an evaluation that fails answers 400/422 (bad input) or 500 (a bug), and the server stays up.

Metrics: every response is counted, 5xx included, under a bounded set of labels (route, method and
status; the quality gauges' systems and test sets from the config's allow-lists, anything else
``other``; gauges only for the config's ``measures``).
"""
from __future__ import annotations

import hmac
import json
import os
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Optional

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from .. import __version__
from ..console.errors import InputError
from . import TOKEN_ENV
from ..inputs.bounded import load_yaml_mapping
from ..retrieval.system import load_system
from ..testsets.measures import canonical_name
from .evaluator import EvaluateRequest, EvaluateResponse, RQRequest, ServerSettings, check_settings
from .metrics import LabelBounds, OTHER, QualityGauges
from .workers import Saturated, WorkerFailed, WorkerPool, raised_at

OPEN_PATHS = ("/v1/health",)          # the only paths answered without the token when one is set
ROUTES = ("/v1/evaluate", "/v1/rq", "/v1/health", "/metrics", "/openapi.json")
METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS")
RETRY_AFTER_S = 5                     # what a 503 for a busy server asks the client to wait
CLIENT_GONE = 499                     # counted for a request whose client disconnected before its answer


class _BodyTooLarge(Exception):
    pass


def _bearer(header: str | None) -> str | None:
    """The credentials of an ``Authorization: Bearer <token>`` header, the scheme in any case (RFC 6750)."""
    scheme, _, credentials = (header or "").partition(" ")
    return credentials.lstrip(" ") if scheme.lower() == "bearer" else None


async def _send_json(send, status: int, payload, headers: tuple = ()) -> None:
    body = json.dumps(payload).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *headers]})
    await send({"type": "http.response.body", "body": body})


class Guard:
    """In front of every route (ASGI): the token before anything is read, the body's size as it arrives,
    and every response counted with its status, a 500 from an exception included."""

    def __init__(self, app, *, token: str | None, max_body: int, requests, latency):
        self.app, self.token, self.max_body, self.requests, self.latency = app, token, max_body, requests, latency

    def authorised(self, path: str, header: str | None) -> bool:
        if self.token is None or path in OPEN_PATHS:
            return True
        given = _bearer(header)
        return given is not None and hmac.compare_digest(given.encode("latin-1"), self.token.encode())   # the bytes sent

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        import anyio
        t0 = time.perf_counter()
        path = scope["path"]
        route = path if path in ROUTES else OTHER
        method = scope["method"] if scope["method"] in METHODS else OTHER
        headers: dict[str, str] = {}
        for k, v in scope["headers"]:
            headers.setdefault(k.decode("latin-1").lower(), v.decode("latin-1"))
        status = None
        received = 0

        async def counted(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        async def bounded():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    raise _BodyTooLarge
            return message

        length = headers.get("content-length")
        too_large = {"detail": f"the body is larger than {self.max_body} bytes",
                     "fix": "send a smaller body (the server's max_body_bytes)"}
        try:
            if not self.authorised(path, headers.get("authorization")):   # before the body: a stranger's upload is not read
                await _send_json(counted, 401, {"detail": "a bearer token is required (Authorization: Bearer <token>)"},
                                 ((b"www-authenticate", b"Bearer"),))
            elif length is not None and (not length.isdigit() or int(length) > self.max_body):
                await _send_json(counted, 413, too_large)
            else:
                await self.app(scope, bounded, counted)
        except _BodyTooLarge:
            if status is None:
                await _send_json(counted, 413, too_large)
        except anyio.get_cancelled_exc_class():
            status = status or 503                # stopped by the server's shutdown
            raise
        except Exception as exc:
            print(f"treckit: request failed: {type(exc).__name__} at {raised_at(exc)}", file=sys.stderr, flush=True)
            if status is None:
                await _send_json(counted, 500, {"detail": f"the request failed ({type(exc).__name__}); "
                                                "the server is still up"})
        finally:
            self.requests.labels(route, method, str(status or 500)).inc()
            self.latency.labels(route).observe(time.perf_counter() - t0)


def _openapi_with_bodies(app, bodies: tuple[type, ...]):
    """The OpenAPI schema, with the request bodies the routes read themselves (``/v1/evaluate`` and
    ``/v1/rq`` read their body within bounds in a worker, so FastAPI does not see their models)."""
    from fastapi.openapi.utils import get_openapi

    def openapi():
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            found = schema.setdefault("components", {}).setdefault("schemas", {})
            for model in bodies:
                js = model.model_json_schema(ref_template="#/components/schemas/{model}")
                for name, definition in js.pop("$defs", {}).items():
                    found.setdefault(name, definition)
                found[model.__name__] = js
            app.openapi_schema = schema
        return app.openapi_schema
    return openapi


def _body_is(model: type) -> dict:
    return {"requestBody": {"required": True, "content": {"application/json": {
        "schema": {"$ref": f"#/components/schemas/{model.__name__}"}}}}}


def create_app(settings: ServerSettings | None = None, token: str | None = None):
    import anyio
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest


    s = settings or ServerSettings()
    check_settings(s)
    token = (token if token is not None else os.environ.get(TOKEN_ENV)) or None     # "": no token
    system_name = None
    if s.system:
        system_name = load_system(s.system).name          # a broken config stops the start, not a request
    registry = CollectorRegistry()
    gauges = QualityGauges(registry, s.metrics_prefix, LabelBounds(
        systems=frozenset(s.metrics_systems) | ({system_name} if system_name else frozenset()),
        test_sets=frozenset(s.metrics_test_sets), measures=frozenset(canonical_name(m) for m in s.measures)))
    requests = Counter(f"{s.metrics_prefix}_http_requests_total", "HTTP requests", ("route", "method", "status"),
                       registry=registry)
    latency = Histogram(f"{s.metrics_prefix}_http_request_duration_seconds", "HTTP request latency", ("route",),
                        registry=registry)
    pool = WorkerPool(s, s.evaluation_workers, s.max_waiting_requests)
    for name, what, count in (("evaluation_workers", "evaluation worker processes started and ready", pool.ready),
                              ("evaluations_running", "evaluations running in worker processes", pool.running),
                              ("evaluations_waiting", "requests waiting for an evaluation worker", pool.waiting)):
        Gauge(f"{s.metrics_prefix}_{name}", what, registry=registry).set_function(count)

    @asynccontextmanager
    async def lifespan(app):
        await anyio.to_thread.run_sync(pool.start)
        try:
            yield
        finally:
            pool.close()

    app = FastAPI(title="treckit evaluation service", version=__version__, lifespan=lifespan,
                  description="Evaluate runs or the configured system on a test set; Prometheus metrics at /metrics.")
    app.add_middleware(Guard, token=token, max_body=s.max_body_bytes, requests=requests, latency=latency)
    app.openapi = _openapi_with_bodies(app, (EvaluateRequest, RQRequest))

    async def evaluated(request: Request, kind: str, params: dict):
        """The worker's answer to the request, within the request's time; a client that leaves stops it.  A worker
        is taken before the body is read: a request waiting for one holds no body in memory."""
        from starlette.requests import ClientDisconnect
        deadline = time.monotonic() + s.request_timeout_s
        try:
            worker = await pool.acquire(deadline)
        except Saturated as exc:
            return JSONResponse({"detail": f"the server is busy: {exc}", "fix": f"try again in {RETRY_AFTER_S} s"},
                                status_code=503, headers={"Retry-After": str(RETRY_AFTER_S)})
        body, answer, client_gone = None, None, False
        try:
            with anyio.move_on_after(max(0.0, deadline - time.monotonic())):
                body = b"".join([chunk async for chunk in request.stream()])
                async with anyio.create_task_group() as tasks:
                    async def watch_client():
                        nonlocal client_gone
                        while (await request.receive())["type"] != "http.disconnect":
                            pass
                        client_gone = True
                        tasks.cancel_scope.cancel()
                    tasks.start_soon(watch_client)
                    try:
                        answer = await anyio.to_thread.run_sync(worker.exchange, kind, params, body,
                                                                abandon_on_cancel=True)
                    except WorkerFailed:
                        pass
                    tasks.cancel_scope.cancel()
        except (_BodyTooLarge, ClientDisconnect) as exc:
            pool.release(worker)                          # nothing was sent to it
            if isinstance(exc, ClientDisconnect):
                return Response(status_code=CLIENT_GONE)
            raise
        except anyio.get_cancelled_exc_class():
            pool.discard(worker, replace=False)           # the server is shutting down: the evaluation stops
            raise
        except BaseException:
            pool.discard(worker)
            raise
        if body is None:
            pool.release(worker)
            return JSONResponse({"detail": f"the body did not arrive within {s.request_timeout_s:g} s",
                                 "fix": "send the body faster"}, status_code=408)
        del body
        if answer is not None and not answer[3]:
            pool.release(worker)
        else:
            pool.discard(worker)                          # time up, client gone or worker dead: it stops now
        if client_gone:
            return Response(status_code=CLIENT_GONE)
        if answer is None:
            if time.monotonic() >= deadline:
                return JSONResponse({"detail": f"the evaluation took longer than the server's limit of "
                                     f"{s.request_timeout_s:g} s and was stopped",
                                     "fix": "send fewer queries or a smaller run (or raise request_timeout_s "
                                            "in the server config)"}, status_code=504)
            print("treckit: an evaluation worker stopped without an answer; a fresh one is started", file=sys.stderr,
                  flush=True)
            return JSONResponse({"detail": "the evaluation worker stopped without an answer (out of memory, killed, or "
                                 "the system's code ended the process); the server is still up",
                                 "fix": f"try again in {RETRY_AFTER_S} s, or send a smaller body"},
                                status_code=503, headers={"Retry-After": str(RETRY_AFTER_S)})
        status, payload, updates, _ = answer
        if status != 200:
            return JSONResponse(payload, status_code=status)
        for test_set, system, component, metrics in updates:
            gauges.set(metrics, test_set=test_set, system=system, component=component)
        return payload

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        errors = [{"loc": list(e.get("loc", ())), "msg": e.get("msg"), "type": e.get("type")} for e in exc.errors()]
        return JSONResponse({"detail": errors}, status_code=422)

    @app.exception_handler(InputError)
    async def bad_input(request: Request, exc: InputError):
        return JSONResponse({"detail": exc.reason, "line": exc.line, "fix": exc.fix}, status_code=400)

    @app.get("/v1/health")
    async def health() -> dict[str, str]:
        return {"status": "ok", "version": __version__}

    @app.post("/v1/evaluate", response_model=EvaluateResponse, openapi_extra=_body_is(EvaluateRequest))
    async def evaluate(request: Request, components: Optional[str] = Query(
            None, max_length=2000, description="evaluate only these components (comma-separated)")):
        only = [c.strip() for c in components.split(",") if c.strip()] if components else None
        return await evaluated(request, "evaluate", {"components": only})

    @app.post("/v1/rq", openapi_extra=_body_is(RQRequest))
    async def rq(request: Request) -> dict[str, Any]:
        """RQ (MRR@k over the labelled queries; null with none), as `treckit rq --run` computes it."""
        return await evaluated(request, "rq", {})

    @app.get("/metrics", response_class=PlainTextResponse)
    async def metrics():
        return PlainTextResponse(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return app


def load_settings(path) -> ServerSettings:
    from pydantic import ValidationError
    data = load_yaml_mapping(path, what="server config", example="max_queries: 1000")
    base = Path(path).parent
    try:
        s = ServerSettings.model_validate(data)
    except ValidationError as exc:
        e = exc.errors()[0]
        raise InputError(f"{'.'.join(map(str, e['loc']))}: {e['msg']}", path=str(path), fix="see `treckit serve --help`") from None
    for key in ("system", "data_dir", "cache_dir"):
        value = getattr(s, key)
        if value is not None and not Path(value).is_absolute():
            setattr(s, key, str(base / value))
    try:
        check_settings(s)
    except InputError as exc:
        raise InputError(exc.reason, path=str(path), fix=exc.fix) from None
    return s
