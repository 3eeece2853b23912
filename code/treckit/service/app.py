"""The FastAPI application: ``POST /v1/evaluate``, ``POST /v1/rq``, ``GET /v1/health``, ``GET /metrics``.

Safety: the server binds to localhost unless told otherwise; with ``TRECKIT_API_TOKEN`` set every
route but health needs ``Authorization: Bearer <token>`` (the scheme in any case, RFC 6750; the
OpenAPI schema and the /docs and /redoc pages too, and any route added later: the check stands in
front of every route, before a byte of the body is read); bodies, query counts and each request's time
are bounded; a body is read whole, within its own time and at a minimum rate, before a worker is taken
(a slow client costs a connection, never a worker), and the bodies held at once are capped; evaluations run in worker processes (:mod:`.workers`), so health and metrics answer
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

from fastapi import FastAPI, Path as PathParam, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response

from .. import __version__
from ..console.errors import InputError
from . import TOKEN_ENV
from ..inputs.bounded import load_yaml_mapping
from ..inputs.urls import is_url
from ..retrieval.system import load_system
from ..testsets.measures import canonical_name
from ..testsets.schema import TestSetModel
from .evaluator import (BODY_RATE_GRACE_S, EvaluateRequest, EvaluateResponse, RQRequest, ServerSettings,
                        check_settings, setting_fix)
from .metrics import LabelBounds, OTHER, QualityGauges
from .reports import ROUTE as REPORT_ROUTE, SOURCE as REPORT_SOURCE, ReportPages, page as report_page, signed_ok
from .workers import Saturated, WorkerFailed, WorkerPool, raised_at

OPEN_PATHS = ("/v1/health",)          # the only paths answered without the token when one is set
ROUTES = ("/v1/evaluate", "/v1/rq", "/v1/health", "/metrics", "/openapi.json")
METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS")
RETRY_AFTER_S = 5                     # what a 503 for a busy server asks the client to wait
CLIENT_GONE = 499                     # counted for a request whose client disconnected before its answer


class _BodyTooLarge(Exception):
    pass


class _BodyRefused(Exception):
    """A body that came too slowly (408) or would take the bodies held past their cap (503): the answer."""

    def __init__(self, status: int, detail: str, fix: str):
        super().__init__(detail)
        self.status, self.detail, self.fix = status, detail, fix

    def answer(self) -> tuple:
        """(status, payload, headers): the connection closes (the rest of the body is not read)."""
        retry = ((b"retry-after", str(RETRY_AFTER_S).encode()),) if self.status == 503 else ()
        return self.status, {"detail": self.detail, "fix": self.fix}, ((b"connection", b"close"), *retry)


class BodyBudget:
    """The request bodies the server process holds (arriving, waiting for a worker or being evaluated): their bytes,
    at most ``cap``, and how many are arriving.  Used from the event loop's thread only."""

    def __init__(self, cap: int):
        self.cap, self.held, self.arriving = cap, 0, 0

    def refusal(self, more: int) -> _BodyRefused | None:
        """The 503 of a request whose ``more`` bytes would take the bodies held past the cap, else None."""
        if self.held + more <= self.cap:
            return None
        return _BodyRefused(503, f"the server holds as many request bodies as it takes at once "
                                 f"(max_buffered_body_bytes: {self.cap} bytes)", f"try again in {RETRY_AFTER_S} s")


def _is_json(content_type: str | None) -> bool:
    """Whether a Content-Type header says JSON (``application/json`` or ``application/...+json``, any parameters)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


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
    """In front of every route (ASGI): the token before anything is read, the body's size, time and rate as it
    arrives and the cap on the bodies held (:class:`_Body`), and every response counted with its status, a 500 from
    an exception included."""

    def __init__(self, app, *, token: str | None, max_body: int, requests, latency, budget: BodyBudget,
                 read_timeout: float, min_rate: int):
        self.app, self.token, self.max_body, self.requests, self.latency = app, token, max_body, requests, latency
        self.budget, self.read_timeout, self.min_rate = budget, read_timeout, min_rate

    def authorised(self, path: str, header: str | None, query: bytes = b"") -> bool:
        if self.token is None or path in OPEN_PATHS or signed_ok(self.token, path, query):
            return True
        given = _bearer(header)
        return given is not None and hmac.compare_digest(given.encode("latin-1"), self.token.encode())   # the bytes sent

    def answer_unread(self, path: str, headers: dict[str, str], query: bytes = b"") -> tuple | None:
        """(status, payload, headers) of a request answered before a byte of its body is read: no token (a stranger's
        upload is not read), a Content-Length past max_body_bytes, or one that would take the bodies held past
        their cap; None for any other."""
        length = headers.get("content-length")
        if not self.authorised(path, headers.get("authorization"), query):
            return 401, {"detail": "a bearer token is required (Authorization: Bearer <token>)"}, \
                ((b"www-authenticate", b"Bearer"),)
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            return 413, self.too_large, ()
        refused = self.budget.refusal(int(length)) if length is not None else None
        return None if refused is None else refused.answer()

    @property
    def too_large(self) -> dict:
        return {"detail": f"the body is larger than {self.max_body} bytes",
                "fix": "send a smaller body (the server's max_body_bytes)"}

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        import anyio
        t0 = time.perf_counter()
        path = scope["path"]
        route = path if path in ROUTES else REPORT_ROUTE[:-1] if path.startswith(REPORT_ROUTE) else OTHER
        method = scope["method"] if scope["method"] in METHODS else OTHER
        headers: dict[str, str] = {}
        for k, v in scope["headers"]:
            headers.setdefault(k.decode("latin-1").lower(), v.decode("latin-1"))
        status = None
        body = _Body(self, receive, t0)

        async def counted(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            unread = self.answer_unread(path, headers, scope.get("query_string", b""))
            if unread is not None:
                await _send_json(counted, *unread)
            else:
                await self.app(scope, body.receive, counted)
        except _BodyTooLarge:
            if status is None:
                await _send_json(counted, 413, self.too_large)
        except _BodyRefused as exc:             # the rest of the body is not read: the connection closes
            if status is None:
                await _send_json(counted, *exc.answer())
        except anyio.get_cancelled_exc_class():
            status = status or 503                # stopped by the server's shutdown
            raise
        except Exception as exc:
            print(f"treckit: request failed: {type(exc).__name__} at {raised_at(exc)}", file=sys.stderr, flush=True)
            if status is None:
                await _send_json(counted, 500, {"detail": f"the request failed ({type(exc).__name__}); "
                                                "the server is still up"})
        finally:
            body.release()
            self.requests.labels(route, method, str(status or 500)).inc()
            self.latency.labels(route).observe(time.perf_counter() - t0)


class _Body:
    """One request's body as the route reads it, within the Guard's bounds: its size, its time and rate, and the
    cap on the bodies held (its bytes count in :class:`BodyBudget` until the request is answered)."""

    def __init__(self, guard: Guard, receive, t0: float):
        self.guard, self._receive, self.t0 = guard, receive, t0
        self.received = self.held = 0
        self.arriving = self.arrived = False

    def due(self) -> tuple[float, str]:
        """(when the next part must have come, what is late then): the whole body within body_read_timeout_s of the
        headers, and from BODY_RATE_GRACE_S on at body_min_rate_bytes_s on average."""
        g = self.guard
        due, late = self.t0 + g.read_timeout, f"the body did not arrive within {g.read_timeout:g} s (the server's " \
                                              "body_read_timeout_s)"
        if g.min_rate and self.t0 + max(BODY_RATE_GRACE_S, self.received / g.min_rate) < due:
            due = self.t0 + max(BODY_RATE_GRACE_S, self.received / g.min_rate)
            late = (f"the body arrived slower than {g.min_rate} bytes a second (the server's body_min_rate_bytes_s, "
                    f"from {BODY_RATE_GRACE_S:g} s after the headers)")
        return due, late

    async def receive(self):
        """The next part of the body, in time and within the bounds; once the body is in, what comes next (a
        disconnect) whenever it comes."""
        import anyio
        if self.arrived:
            return await self._receive()
        budget = self.guard.budget
        if not self.arriving:
            self.arriving, budget.arriving = True, budget.arriving + 1
        due, late = self.due()
        with anyio.move_on_after(due - time.perf_counter()):
            message = await self._receive()
            if message["type"] == "http.request":
                part = len(message.get("body", b""))
                self.received += part
                if self.received > self.guard.max_body:
                    raise _BodyTooLarge
                refused = budget.refusal(part)
                if refused is not None:
                    raise refused
                self.held, budget.held = self.held + part, budget.held + part
                if not message.get("more_body", False):
                    self.arrived, budget.arriving = True, budget.arriving - 1
            return message
        raise _BodyRefused(408, late, "send the body faster (or ask the server's operator about the limit)")

    def release(self) -> None:
        """The request is answered: its body is no longer held."""
        self.guard.budget.held -= self.held
        self.guard.budget.arriving -= self.arriving and not self.arrived


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


def _body_is(*models: type) -> dict:
    """The request body is one of ``models``."""
    refs = [{"$ref": f"#/components/schemas/{model.__name__}"} for model in models]
    return {"requestBody": {"required": True, "content": {"application/json": {
        "schema": refs[0] if len(refs) == 1 else {"anyOf": refs}}}}}


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
    pages = ReportPages(s.report_pages, s.cache, s.cache_dir, token, s.report_link_ttl_s)
    budget = BodyBudget(s.body_buffer_bytes)
    for name, what, count in (("evaluation_workers", "evaluation worker processes started and ready", pool.ready),
                              ("evaluations_running", "evaluations running in worker processes", pool.running),
                              ("evaluations_waiting", "requests waiting for an evaluation worker", pool.waiting),
                              ("request_bodies_arriving", "request bodies being received", lambda: budget.arriving),
                              ("request_body_bytes_held", "bytes of request bodies the server holds (arriving, "
                               "waiting or being evaluated)", lambda: budget.held)):
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
    app.add_middleware(Guard, token=token, max_body=s.max_body_bytes, requests=requests, latency=latency, budget=budget,
                       read_timeout=s.body_read_timeout_s, min_rate=s.body_min_rate_bytes_s)
    app.openapi = _openapi_with_bodies(app, (EvaluateRequest, RQRequest, TestSetModel))

    async def evaluated(request: Request, kind: str, params: dict):
        """The worker's answer to the request, within the request's time; a client that leaves stops it.  The body
        is read whole before a worker is taken (the Guard bounds its size, its time and its rate): a slow client
        holds no worker, and the request's time starts once its body is in."""
        from starlette.requests import ClientDisconnect
        if not _is_json(request.headers.get("content-type")):     # nor can a web page post here without a preflight
            return JSONResponse({"detail": "the body must be JSON, said with Content-Type: application/json",
                                 "fix": "send the header Content-Type: application/json"}, status_code=415,
                                headers={"Connection": "close"})
        try:
            body = b"".join([chunk async for chunk in request.stream()])
        except ClientDisconnect:
            return Response(status_code=CLIENT_GONE)
        deadline = time.monotonic() + s.request_timeout_s
        worker, answer, client_gone, busy = None, None, False, None
        try:
            async with anyio.create_task_group() as tasks:
                async def watch_client():
                    nonlocal client_gone
                    while (await request.receive())["type"] != "http.disconnect":
                        pass
                    client_gone = True
                    tasks.cancel_scope.cancel()
                tasks.start_soon(watch_client)
                try:
                    worker = await pool.acquire(deadline)
                    with anyio.move_on_after(max(0.0, deadline - time.monotonic())):
                        answer = await anyio.to_thread.run_sync(worker.exchange, kind, params, body,
                                                                abandon_on_cancel=True)
                except Saturated as exc:
                    busy = exc
                except WorkerFailed:
                    pass
                tasks.cancel_scope.cancel()
        except anyio.get_cancelled_exc_class():
            if worker is not None:
                pool.discard(worker, replace=False)       # the server is shutting down: the evaluation stops
            raise
        except BaseException:
            if worker is not None:
                pool.discard(worker)
            raise
        del body
        if busy is not None:
            return JSONResponse({"detail": f"the server is busy: {busy}", "fix": f"try again in {RETRY_AFTER_S} s"},
                                status_code=503, headers={"Retry-After": str(RETRY_AFTER_S)})
        if worker is None:                                # the client left while it waited for a worker
            return Response(status_code=CLIENT_GONE)
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
        if REPORT_SOURCE in payload:
            rid = pages.add(payload.pop(REPORT_SOURCE))
            payload.update(report_id=rid, report_url=pages.link(rid))
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

    @app.post("/v1/evaluate", response_model=EvaluateResponse, openapi_extra=_body_is(EvaluateRequest, TestSetModel))
    async def evaluate(request: Request, components: Optional[str] = Query(
            None, max_length=2000, description="evaluate only these components (comma-separated)")):
        only = [c.strip() for c in components.split(",") if c.strip()] if components else None
        return await evaluated(request, "evaluate", {"components": only})

    @app.post("/v1/rq", openapi_extra=_body_is(RQRequest))
    async def rq(request: Request) -> dict[str, Any]:
        """RQ (MRR@k over the labelled queries; null with none), as `treckit rq --run` computes it."""
        return await evaluated(request, "rq", {})

    @app.get(REPORT_ROUTE + "{report_id}", response_class=HTMLResponse)
    async def report(report_id: str = PathParam(..., pattern="^[0-9a-f]{64}$"),
                     expires: Optional[int] = Query(None, description="a signed link's expiry (unix time)"),
                     signature: Optional[str] = Query(None, max_length=64, description="a signed link's HMAC")):
        """The HTML report of an evaluation (its id: POST /v1/evaluate's report_id); a browser follows the answer's
        signed report_url where a token is set."""
        results = await anyio.to_thread.run_sync(pages.results, report_id)
        if results is None:
            return JSONResponse({"detail": f"no report {report_id}: it went with its evaluation's cache entry, or the "
                                 "server keeps it no longer", "fix": "evaluate again (POST /v1/evaluate)"},
                                status_code=404)
        try:
            text = await anyio.to_thread.run_sync(report_page, results)
        except InputError as exc:              # the report extra (plotly) is not installed
            return JSONResponse({"detail": exc.reason, "fix": exc.fix}, status_code=501)
        return HTMLResponse(text)

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
        raise InputError(f"{'.'.join(map(str, e['loc']))}: {e['msg']}", path=str(path),
                         fix=setting_fix(str(e["loc"][0]) if e["loc"] else "") or "see `treckit serve --help`") from None
    for key in ("system", "data_dir", "cache_dir"):
        value = getattr(s, key)
        if is_url(value):           # read as a path, its credentials would be in messages and folder names
            raise InputError(f"{key}: is a URL, and a server config names local files and folders (paths relative "
                             "to the config)", path=str(path), fix=f"give {key} a local path")
        if value is not None and not Path(value).is_absolute():
            setattr(s, key, str(base / value))
    try:
        check_settings(s)
    except InputError as exc:
        raise InputError(exc.reason, path=str(path), fix=exc.fix) from None
    return s
