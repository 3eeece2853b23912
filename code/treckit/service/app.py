"""The FastAPI application: ``POST /v1/evaluate``, ``GET /v1/health``, ``GET /metrics``.

Safety: the server binds to localhost unless told otherwise; with ``TRECKIT_API_TOKEN`` set every
route but health needs ``Authorization: Bearer <token>`` (the OpenAPI schema and the /docs and /redoc
pages too, and any route added later: the check stands in front of every route); bodies and query
counts are bounded; run files named in requests must lie inside the configured data directory (no
absolute paths, no ``..``, no symlinks leading out); errors say what is wrong with the request and
never echo a file's contents; an evaluation that fails answers 400/422 (bad input) or 500 (a bug),
and the server stays up.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import time
from pathlib import Path
from typing import Any, Optional, Union

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError
from ..testsets.schema import QuerySetModel, TestSetModel

TOKEN_ENV = "TRECKIT_API_TOKEN"
OPEN_PATHS = ("/v1/health",)          # the only paths answered without the token when one is set
DEFAULT_MAX_BODY = 16 << 20
DEFAULT_MAX_QUERIES = 10_000
DEFAULT_MEASURES = ("recall_at_10", "ndcg_at_10", "mrr")


class ServerSettings(BaseModel):
    """``treckit serve --config SERVER.yaml``: every key optional."""

    model_config = ConfigDict(extra="forbid")
    system: Optional[str] = Field(None, description="systems config answering queries when a request has no run")
    metrics_prefix: str = "treckit"
    data_dir: Optional[str] = Field(None, description="run files named in requests must lie inside it")
    max_body_bytes: int = Field(DEFAULT_MAX_BODY, ge=1024)
    max_queries: int = Field(DEFAULT_MAX_QUERIES, ge=1)
    measures: list[str] = list(DEFAULT_MEASURES)
    cache_dir: Optional[str] = None
    cache: bool = True


class EvaluateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    test_set: TestSetModel
    run: Optional[Union[str, dict[str, dict[str, float]]]] = Field(
        None, description="TREC run text, or {qid: {doc_id: score}}; without a run (and run_file) the server's system answers")
    run_file: Optional[str] = Field(None, description="a run file inside the server's data directory (relative path)")
    order: Optional[str] = Field(None, description="how the run is ranked, as --order: auto (default: a TREC run by "
                                 "score, highest first, as trec_eval ranks it) | desc | asc | given (the rank column)")
    measures: Optional[list[str]] = Field(None, description="test-set measure names (recall@10, ndcg@10, mrr, ...)")
    system: Optional[str] = Field(None, max_length=200, description="label for the system in the metrics")


class RQRequest(BaseModel):
    """The RQ acceptance metric of a run on a query set (unlabelled queries allowed: listed and skipped)."""

    model_config = ConfigDict(extra="forbid")
    test_set: QuerySetModel
    run: Optional[Union[str, dict[str, dict[str, float]]]] = Field(
        None, description="TREC run text, or {qid: {doc_id: score}}")
    run_file: Optional[str] = Field(None, description="a run file inside the server's data directory (relative path)")
    order: Optional[str] = Field(None, description="how the run is ranked, as --order (see /v1/evaluate)")
    k: int = Field(5, ge=1, le=1_000_000, description="cutoff (a query's topK replaces it)")
    threshold: float = Field(0.6, ge=-1e9, le=1e9, description="pass when MRR > threshold")
    system: Optional[str] = Field(None, max_length=200, description="label of the run's system")


class EvaluateResponse(BaseModel):
    metrics: dict[str, Optional[float]]
    per_query_type: dict[str, dict[str, Any]]
    num_queries: int
    missing_queries: list[str]
    warnings: list[str] = Field(default_factory=list, description="what reading the run found doubtful, with the "
                                "fix (e.g. a rank column rising with the scores: send \"order\": \"asc\")")
    test_set: dict[str, str]
    system: str
    cached: bool
    components: Optional[dict[str, dict[str, Any]]] = None
    definitions: dict[str, dict[str, Any]] = Field(
        description="each metric's full definition: measure, cutoff, gain, relevance, query set, ranking")


def _for_request(message: str) -> str:
    """A reading's message as a request's sender reads it: ``--order asc`` is the request's ``"order": "asc"``."""
    from ..reading import respelled
    return respelled(message, lambda name, value: f'"order": "{value}"' if name == "order" and value else None)


def _summary(result) -> dict[str, Any]:
    return {"metrics": result.metrics, "per_query_type": result.per_query_type,
            "latency_ms": result.latency_ms}


class Evaluator:
    """What a request asks, done with the library (thread-safe: no shared mutable state but the
    gauges and the cache, both safe)."""

    def __init__(self, settings: ServerSettings, gauges):
        self.s, self.gauges = settings, gauges
        self._system = None
        if settings.system:
            from ..retrieval.system import load_system
            self._system = load_system(settings.system)

    def _confined(self, name: str) -> Path:
        if not self.s.data_dir:
            raise InputError("this server reads no run files", fix="send the run in the request body")
        p = Path(name)
        if p.is_absolute() or ".." in p.parts or not name:
            raise InputError("run_file must be a relative path inside the data directory, without '..'",
                             fix="name the file relative to the server's data directory")
        root = Path(self.s.data_dir).resolve()
        target = (root / p).resolve()
        if root not in target.parents or not target.is_file():
            raise InputError(f"no run file {name!r} in the data directory", fix="check the name")
        return target

    def _run(self, req: EvaluateRequest, warnings: list[str]):
        """(the run of the request, read with its ``order``, the digest of its content); what the reading warns of
        is added to ``warnings``, spelled for a request and naming the run as the request does."""
        from ..api import read_run
        from ..model import Run
        from ..reading import RunReading
        if req.run is not None and req.run_file is not None:
            raise InputError("give run or run_file, not both", fix="send one of them")
        try:
            reading = RunReading(order=req.order or "auto")
        except InputError:
            from ..reading import ORDER_ALIASES, ORDERS
            raise InputError(f"unknown order {req.order!r}",
                             fix=f'send "order" as one of: {", ".join(ORDERS + tuple(ORDER_ALIASES))}') from None

        def warn_as(shown: str, path: Path):
            return lambda message: warnings.append(_for_request(message.replace(str(path), shown)))
        if req.run_file is not None:
            path = self._confined(req.run_file)
            return (read_run(path, reading=reading, warn=warn_as(req.run_file, path)),
                    hashlib.sha256(path.read_bytes()).hexdigest())
        if isinstance(req.run, dict):
            digest = hashlib.sha256(json.dumps(req.run, sort_keys=True).encode()).hexdigest()
            run = Run.from_dict(req.run, tag=req.system or "run")
            return reading.apply(run, "memory", warn=lambda m: warnings.append(_for_request(m))).run, digest
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / "run.trec"
            f.write_text(req.run, encoding="utf-8")
            run = read_run(f, "trec", reading=reading, warn=warn_as("run", f))
        return run, hashlib.sha256(req.run.encode("utf-8", "surrogatepass")).hexdigest()

    def rq(self, req: RQRequest) -> dict[str, Any]:
        """RQ as ``treckit rq --run`` computes it, with what reading the run warned of."""
        from ..testsets.load import TestSet, semantic_problems
        from ..testsets.rq import rq

        problems = semantic_problems(req.test_set.model_dump(mode="json"), {}, allow_unlabeled=True)
        if problems:
            raise InputError("; ".join(m for _, m in problems), fix="correct the query set")
        ts = TestSet(req.test_set)
        if len(ts.queries) > self.s.max_queries:
            raise InputError(f"{len(ts.queries)} queries: this server takes at most {self.s.max_queries}",
                             fix="split the query set")
        if req.run is None and req.run_file is None:
            raise InputError("RQ scores a run, and the request has none", fix="send run (TREC text or "
                             "{qid: {doc: score}}) or run_file")
        warnings: list[str] = []
        run, _ = self._run(req, warnings)
        return {**rq(ts, run, k=req.k, threshold=req.threshold, warn=lambda m: warnings.append(_for_request(m))),
                "warnings": warnings}

    def evaluate(self, req: EvaluateRequest, components: list[str] | None) -> dict[str, Any]:
        from ..testsets.cache import ResultCache, cache_key
        from ..testsets.load import TestSet, semantic_problems
        from ..testsets.measures import canonical_name
        from ..testsets.runner import evaluate_run, from_cached, missing_queries

        problems = semantic_problems(req.test_set.model_dump(mode="json"), {})
        if problems:
            raise InputError("; ".join(m for _, m in problems), fix="correct the test set")
        ts = TestSet(req.test_set)
        if len(ts.queries) > self.s.max_queries:
            raise InputError(f"{len(ts.queries)} queries: this server takes at most {self.s.max_queries}",
                             fix="split the test set")
        measures = [canonical_name(m) for m in (req.measures or self.s.measures)]
        block = None
        warnings: list[str] = []
        if req.order is not None and req.run is None and req.run_file is None:
            raise InputError("order says how a run sent in the request is ranked; this request has none",
                             fix="drop order, or send a run (or run_file)")
        if req.run is None and req.run_file is None:
            if self._system is None:
                raise InputError("the request has no run and the server has no system configured",
                                 fix="send a run (TREC text or {qid: {doc: score}}) or run_file")
            from ..retrieval.evaluate import evaluate_system
            stages = evaluate_system(self._system, ts, measures=measures, only=components, cache=self.s.cache,
                                     cache_dir=self.s.cache_dir)
            final = stages[components[-1]] if components else stages[self._system.final_stage()]
            result, system = final, req.system or self._system.name
            block = {name: _summary(r) for name, r in stages.items()}
            missing = []                     # the system is asked every query
        else:
            if components:
                raise InputError("?components= applies to the server's system, not to a run in the request",
                                 fix="drop ?components=, or send no run")
            run, digest = self._run(req, warnings)
            system = req.system or run.tag
            store = ResultCache(self.s.cache_dir) if self.s.cache else None
            ranked = {"order": req.order} if req.order not in (None, "auto") else {}     # another order, other numbers
            key = cache_key(system={"run_digest": digest, **ranked}, test_set=ts, measures=measures, k=None, gain="exp")
            hit = store.get(key) if store else None
            result = from_cached(hit, "exp") if hit else None
            if result is None:
                result = evaluate_run(run, ts, measures)
            if store is not None and not result.cached:
                store.put(key, result.to_dict())
            missing = missing_queries(run, ts.query_ids)
        for name, summary in (block or {"all": {"metrics": result.metrics}}).items():
            self.gauges.set(summary["metrics"], test_set=ts.name, system=system, component=name)
        return {"metrics": result.metrics, "per_query_type": result.per_query_type, "num_queries": len(ts.queries),
                "missing_queries": missing, "warnings": warnings,
                "test_set": {"name": ts.name, "version": ts.version, "digest": ts.digest},
                "system": system, "cached": result.cached, "components": block,
                "definitions": {m: d.to_dict() for m, d in result.definitions.items()}}


def create_app(settings: ServerSettings | None = None, token: str | None = None):
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest

    from .. import __version__
    from .metrics import QualityGauges

    s = settings or ServerSettings()
    token = token if token is not None else os.environ.get(TOKEN_ENV) or None
    registry = CollectorRegistry()
    gauges = QualityGauges(registry, s.metrics_prefix)
    requests = Counter(f"{s.metrics_prefix}_http_requests_total", "HTTP requests", ("route", "method", "status"),
                       registry=registry)
    latency = Histogram(f"{s.metrics_prefix}_http_request_duration_seconds", "HTTP request latency", ("route",),
                        registry=registry)
    evaluator = Evaluator(s, gauges)
    app = FastAPI(title="treckit evaluation service", version=__version__,
                  description="Evaluate runs or the configured system on a test set; Prometheus metrics at /metrics.")

    def authorised(request: Request) -> bool:
        if token is None or request.url.path in OPEN_PATHS:
            return True
        given = request.headers.get("authorization", "")
        return given.startswith("Bearer ") and hmac.compare_digest(given[7:].encode(), token.encode())

    @app.middleware("http")
    async def guarded_bounded_and_counted(request: Request, call_next):
        t0 = time.perf_counter()
        route = request.url.path if request.url.path in ("/v1/evaluate", "/v1/rq", "/v1/health", "/metrics",
                                                         "/openapi.json") else "other"
        length = request.headers.get("content-length")
        if not authorised(request):          # before the body is read: a stranger's upload is not taken in
            response = JSONResponse({"detail": "a bearer token is required (Authorization: Bearer <token>)"},
                                    status_code=401, headers={"WWW-Authenticate": "Bearer"})
        elif length is not None and (not length.isdigit() or int(length) > s.max_body_bytes):
            response = JSONResponse({"detail": f"the body is larger than {s.max_body_bytes} bytes"}, status_code=413)
        else:
            if length is None and request.method == "POST":
                body = b""
                async for chunk in request.stream():
                    body += chunk
                    if len(body) > s.max_body_bytes:
                        response = JSONResponse({"detail": f"the body is larger than {s.max_body_bytes} bytes"},
                                                status_code=413)
                        break
                else:
                    request._body = body
                    response = await call_next(request)
            else:
                response = await call_next(request)
        requests.labels(route, request.method, str(response.status_code)).inc()
        latency.labels(route).observe(time.perf_counter() - t0)
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        errors = [{"loc": list(e.get("loc", ())), "msg": e.get("msg"), "type": e.get("type")} for e in exc.errors()]
        return JSONResponse({"detail": errors}, status_code=422)

    @app.exception_handler(InputError)
    async def bad_input(request: Request, exc: InputError):
        return JSONResponse({"detail": exc.reason, "line": exc.line, "fix": exc.fix}, status_code=400)

    @app.exception_handler(Exception)
    async def failure(request: Request, exc: Exception):
        return JSONResponse({"detail": f"evaluation failed ({type(exc).__name__}); the server is still up"},
                            status_code=500)

    @app.get("/v1/health")
    def health() -> dict[str, str]:
        return {"status": "ok", "version": __version__}

    @app.post("/v1/evaluate", response_model=EvaluateResponse)
    def evaluate(req: EvaluateRequest,
                 components: Optional[str] = Query(None, description="evaluate only these components (comma-separated)")):
        only = [c.strip() for c in components.split(",") if c.strip()] if components else None
        return evaluator.evaluate(req, only)

    @app.post("/v1/rq")
    def rq(req: RQRequest) -> dict[str, Any]:
        """RQ (MRR@k over the labelled queries; null with none), as `treckit rq --run` computes it."""
        return evaluator.rq(req)

    @app.get("/metrics", response_class=PlainTextResponse)
    def metrics():
        return PlainTextResponse(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return app


def load_settings(path) -> ServerSettings:
    from pydantic import ValidationError
    from ..bounded import load_yaml_mapping
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
    return s
