"""What a request to the service asks, done with the library: the request body read within bounds and
validated, then the evaluation.  It runs inside an evaluation worker process (:mod:`.workers`), so no
web framework is imported here.

Reading a body costs memory in proportion to it, and counts are checked before anything is built
from it: the body is decoded (strict UTF-8; a lone surrogate, escaped or not, is refused) and parsed
by the C JSON parser; the number of queries is checked on the parsed lists, before a single model is
built; queries are then validated one at a time, each replacing its parsed dict, so the parsed body
and its models never coexist in full.  A dict run is not copied by validation: it is read as the
Python API reads a dict (:func:`treckit.inputs.objects.as_run`: one reading; NaN, booleans and strings as
scores are errors).  ``bench/service_memory_bench.py`` measures what a body costs.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Annotated, Any, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, ValidationError

from .. import thresholds
from ..console.errors import InputError, shown
from ..console.spelling import respelled
from ..inputs.objects import as_run
from ..inputs.options import ORDERS, ORDER_ALIASES, RunReading
from ..inputs.reading import read_run
from ..inputs.sources import file_digest
from ..retrieval.system import load_system
from ..testsets.cache import ResultCache, cache_key
from ..testsets.load import TestSet, semantic_problems
from ..testsets.measures import canonical_name
from ..testsets.results import from_cached
from ..testsets.rq import rq
from ..testsets.runner import evaluate_run, missing_queries
from ..testsets.schema import Query, QueryMaybeUnlabelled, QuerySetModel, TestSetModel
from ..testsets.systems import evaluate_system

DEFAULT_MAX_BODY = 16 << 20
DEFAULT_MAX_QUERIES = 10_000
DEFAULT_MEASURES = ("recall_at_10", "ndcg_at_10", "mrr")
MAX_MEASURES = 100


class ServerSettings(BaseModel):
    """``treckit serve --config SERVER.yaml``: every key optional."""

    model_config = ConfigDict(extra="forbid")
    system: Optional[str] = Field(None, description="systems config answering queries when a request has no run")
    metrics_prefix: str = "treckit"
    data_dir: Optional[str] = Field(None, description="run files named in requests must lie inside it")
    max_body_bytes: int = Field(DEFAULT_MAX_BODY, ge=1024)
    max_queries: int = Field(DEFAULT_MAX_QUERIES, ge=1)
    measures: list[str] = Field(list(DEFAULT_MEASURES), min_length=1, max_length=MAX_MEASURES)
    cache_dir: Optional[str] = None
    cache: bool = True
    request_timeout_s: float = Field(60.0, gt=0, le=86_400, description="a request's time (waiting for a worker, its "
                                     "body, its evaluation); an evaluation past it is stopped (504)")
    evaluation_workers: int = Field(2, ge=1, le=64, description="evaluations running at once, each in its own process")
    max_waiting_requests: int = Field(16, ge=0, le=10_000,
                                      description="requests waiting for a worker; beyond them the answer is 503")
    shutdown_grace_s: float = Field(10.0, ge=0, le=3_600, description="on SIGTERM, running requests get this long")
    metrics_systems: list[str] = Field(default_factory=list, description="system labels of the quality gauges (the "
                                       "configured system's name is always one); any other system is labelled 'other'")
    metrics_test_sets: list[str] = Field(default_factory=list, description="test_set labels of the quality gauges; "
                                         "any other test set is labelled 'other'")


def _as_sent(value):
    """A run as the request sent it: validation neither copies nor coerces it (it is read below, as the API reads it)."""
    if value is None or isinstance(value, (str, dict)):
        return value
    raise ValueError("run must be TREC run text or {qid: {doc_id: score}}")


_RUN_TYPE = Optional[Union[str, dict[str, dict[str, float]]]]
RunAsSent = Annotated[_RUN_TYPE, PlainValidator(_as_sent, json_schema_input_type=_RUN_TYPE)]
Measures = Optional[list[str]]


class EvaluateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    test_set: TestSetModel
    run: RunAsSent = Field(
        None, description="TREC run text, or {qid: {doc_id: score}}; without a run (and run_file) the server's system answers")
    run_file: Optional[str] = Field(None, description="a run file inside the server's data directory (relative path)")
    order: Optional[str] = Field(None, description="how the run is ranked, as --order: auto (default: a TREC run by "
                                 "score, highest first, as trec_eval ranks it) | desc | asc | given (the rank column)")
    measures: Measures = Field(None, max_length=MAX_MEASURES,
                               description="test-set measure names (recall@10, ndcg@10, mrr, ...)")
    system: Optional[str] = Field(None, max_length=200, description="label for the system in the metrics")


class RQRequest(BaseModel):
    """The RQ acceptance metric of a run on a query set (unlabelled queries allowed: listed and skipped)."""

    model_config = ConfigDict(extra="forbid")
    test_set: QuerySetModel
    run: RunAsSent = Field(None, description="TREC run text, or {qid: {doc_id: score}}")
    run_file: Optional[str] = Field(None, description="a run file inside the server's data directory (relative path)")
    order: Optional[str] = Field(None, description="how the run is ranked, as --order (see /v1/evaluate)")
    k: int = Field(5, ge=1, le=1_000_000, description="cutoff (a query's topK replaces it)")
    threshold: float = Field(0.6, ge=-1e9, le=1e9, description="pass when MRR > threshold")
    system: Optional[str] = Field(None, max_length=200, description="label of the run's system")


REQUESTS = {"evaluate": (EvaluateRequest, Query), "rq": (RQRequest, QueryMaybeUnlabelled)}


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


class RequestInvalid(Exception):
    """A body that is not the request's schema: answered 422 with FastAPI's shape of errors."""

    def __init__(self, errors: list[dict]):
        super().__init__(f"{len(errors)} problems")
        self.errors = errors


def check_settings(s: ServerSettings) -> None:
    """What the settings name must exist and mean something, at start-up rather than on the first request."""
    for m in s.measures:
        try:
            canonical_name(m)
        except InputError as exc:
            raise InputError(f"measures: {exc.reason}", fix=exc.fix) from None
    if s.data_dir is not None and not Path(s.data_dir).is_dir():
        raise InputError(f"data_dir: {s.data_dir} is not a directory", fix="name an existing directory of run files "
                         "(relative to the config), or leave data_dir out")


# ------------------------------------------------------------------ the body
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _refuse_lone_surrogates(body: bytes) -> None:
    """A ``\\uD800``-``\\uDFFF`` escape must be half of a pair: a lone one decodes to text that is no Unicode
    (it cannot be written, compared or hashed as UTF-8).  Cheap: the regex runs in C, pairs are checked
    only where an escape was found."""
    lone = None
    pending = None                               # (start, end) of a high half waiting for its low half
    for m in _SURROGATE_ESCAPE.finditer(body):
        start = i = m.start()
        while i > 0 and body[i - 1] == 0x5C:     # "\\\\ud800" is an escaped backslash, then the letters ud800
            i -= 1
        if (start - i) % 2:
            continue
        high = m.group()[3:4] in b"89abAB"
        if pending is not None and not high and start == pending[1]:
            pending = None
        elif pending is not None:
            lone = pending[0]
            break
        elif high:
            pending = (start, m.end())
        else:
            lone = start
            break
    lone = pending[0] if lone is None and pending is not None else lone
    if lone is not None:
        raise RequestInvalid([{"loc": ["body"], "msg": f"a lone surrogate escape ({body[lone:lone + 6].decode()}) at "
                               f"byte {lone}: not a Unicode character", "type": "unicode_surrogate"}])


def _pydantic_errors(exc: ValidationError, prefix: tuple) -> list[dict]:
    """Where and what, never the value sent (it may be megabytes, or someone's secret)."""
    return [{"loc": [*prefix, *e.get("loc", ())], "msg": e.get("msg"), "type": e.get("type")} for e in exc.errors()]


def listed_errors(errors: list[dict]) -> list[dict]:
    listed = thresholds.MAX_LISTED_PROBLEMS
    if len(errors) <= listed:
        return errors
    more = len(errors) - listed
    return errors[:listed] + [{"loc": ["body"], "msg": f"... and {more} more problems", "type": "more"}]


def read_request(body: bytes, kind: str, max_queries: int):
    """The request of ``kind`` (``evaluate`` or ``rq``) in ``body``, validated; :class:`RequestInvalid` (422)
    or :class:`InputError` (400) otherwise."""
    model, query_model = REQUESTS[kind]
    _refuse_lone_surrogates(body)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RequestInvalid([{"loc": ["body"], "msg": f"the body is not UTF-8 (byte {exc.start})",
                               "type": "json_invalid"}]) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RequestInvalid([{"loc": ["body", exc.pos], "msg": f"JSON decode error: {exc.msg} (line {exc.lineno}, "
                               f"column {exc.colno})", "type": "json_invalid"}]) from None
    except RecursionError:
        raise RequestInvalid([{"loc": ["body"], "msg": "the JSON is nested too deeply", "type": "json_invalid"}]) from None
    except ValueError as exc:                    # an integer of thousands of digits
        raise RequestInvalid([{"loc": ["body"], "msg": f"JSON decode error: {str(exc).split(';')[0]}",
                               "type": "json_invalid"}]) from None
    del text
    if not isinstance(data, dict):
        raise RequestInvalid([{"loc": ["body"], "msg": "the body must be a JSON object", "type": "model_type"}])
    test_set = data.get("test_set")
    queries = test_set.get("queries") if isinstance(test_set, dict) else None
    problems = []
    if isinstance(queries, list):
        if len(queries) > max_queries:
            raise InputError(f"{len(queries)} queries: this server takes at most {max_queries}",
                             fix="split the test set into parts of at most that many queries")
        problems = semantic_problems(test_set, {}, allow_unlabeled=kind == "rq")
        for i, q in enumerate(queries):          # each parsed query gives way to its model as it is built
            try:
                queries[i] = query_model.model_validate(q)
            except ValidationError:
                break                            # reported below, with every other problem, where it is
    try:
        req = model.model_validate(data)
    except ValidationError as exc:
        raise RequestInvalid(listed_errors(_pydantic_errors(exc, ("body",)))) from None
    if problems:
        said = [m for _, m in problems]
        listed = thresholds.MAX_LISTED_PROBLEMS
        more = len(said) - listed
        raise InputError("; ".join(said[:listed]) + (f"; ... and {more} more" if more > 0 else ""),
                         fix="correct the test set" if kind == "evaluate" else "correct the query set")
    return req


# ------------------------------------------------------------------ evaluation
def _for_request(message: str) -> str:
    """A reading's message as a request's sender reads it: ``--order asc`` is the request's ``"order": "asc"``."""
    return respelled(message, lambda name, value: f'"order": "{value}"' if name == "order" and value else None)


def _summary(result) -> dict[str, Any]:
    return {"metrics": result.metrics, "per_query_type": result.per_query_type,
            "latency_ms": result.latency_ms}


class Evaluator:
    """What a request asks, done with the library, in one worker process: one request at a time.
    Its answers carry the gauge values to set (the server process owns the metrics)."""

    def __init__(self, settings: ServerSettings):
        self.s = settings
        self._system = None
        if settings.system:
            self._system = load_system(settings.system)

    def _confined(self, name: str) -> Path:
        if not self.s.data_dir:
            raise InputError("this server reads no run files", fix="send the run in the request body")
        if "\x00" in name:
            raise InputError("run_file holds a NUL character", fix="name the file relative to the server's data directory")
        p = Path(name)
        if p.is_absolute() or ".." in p.parts or not name:
            raise InputError("run_file must be a relative path inside the data directory, without '..'",
                             fix="name the file relative to the server's data directory")
        root = Path(self.s.data_dir).resolve()
        try:
            target = (root / p).resolve()
            found = root in target.parents and target.is_file()
        except (OSError, RuntimeError):          # a symlink loop, a name longer than the file system takes
            found = False
        if not found:
            raise InputError(f"no run file {shown(name)} in the data directory", fix="check the name")
        return target

    def _run(self, req, warnings: list[str]):
        """(the run of the request, read with its ``order``, the digest of its content); what the reading warns of
        is added to ``warnings``, spelled for a request and naming the run as the request does."""
        if req.run is not None and req.run_file is not None:
            raise InputError("give run or run_file, not both", fix="send one of them")
        try:
            reading = RunReading(order=req.order or "auto")
        except InputError:
            raise InputError(f"unknown order {shown(req.order)}",
                             fix=f'send "order" as one of: {", ".join(ORDERS + tuple(ORDER_ALIASES))}') from None

        def warn_as(shown_name: str, path: Path):
            return lambda message: warnings.append(_for_request(message.replace(str(path), shown_name)))
        if req.run_file is not None:
            path = self._confined(req.run_file)
            try:
                digest = file_digest(path)
            except (InputError, OSError):
                raise InputError(f"cannot read run file {shown(req.run_file)}", fix="ask the server's operator to "
                                 "check the file (its permissions, its content)") from None
            run = read_run(path, reading=reading, warn=warn_as(req.run_file, path))
            try:            # the digest of what was read: a file replaced while it was read has none (not cached)
                same = file_digest(path) == digest
            except (InputError, OSError):
                same = False
            return run, digest if same else None
        if isinstance(req.run, dict):
            run = as_run(req.run, reading, warn=lambda m: warnings.append(_for_request(m)))
            return run, hashlib.sha256(json.dumps(req.run, sort_keys=True).encode()).hexdigest()
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / "run.trec"
            f.write_text(req.run, encoding="utf-8")
            run = read_run(f, "trec", reading=reading, warn=warn_as("run", f))
        return run, hashlib.sha256(req.run.encode("utf-8")).hexdigest()

    def rq(self, req: RQRequest) -> tuple[dict[str, Any], list]:
        """RQ as ``treckit rq --run`` computes it, with what reading the run warned of."""
        ts = TestSet(req.test_set)
        if req.run is None and req.run_file is None:
            raise InputError("RQ scores a run, and the request has none", fix="send run (TREC text or "
                             "{qid: {doc: score}}) or run_file")
        warnings: list[str] = []
        run, _ = self._run(req, warnings)
        return {**rq(ts, run, k=req.k, threshold=req.threshold, warn=lambda m: warnings.append(_for_request(m))),
                "warnings": warnings}, []

    def evaluate(self, req: EvaluateRequest, components: list[str] | None) -> tuple[dict[str, Any], list]:
        """(the answer, the gauges to set: (test set, system, component, {measure: value}) each)."""
        measures = [canonical_name(m) for m in (req.measures or self.s.measures)]
        ts = TestSet(req.test_set)
        warnings: list[str] = []
        if req.run is None and req.run_file is None:
            result, system, block = self._system_result(req, ts, measures, components)
            missing = []                     # the system is asked every query
        else:
            result, system, missing = self._sent_run_result(req, ts, measures, components, warnings)
            block = None
        gauges = [(ts.name, system, name, summary["metrics"])
                  for name, summary in (block or {"all": {"metrics": result.metrics}}).items()]
        return {"metrics": result.metrics, "per_query_type": result.per_query_type, "num_queries": len(ts.queries),
                "missing_queries": missing, "warnings": warnings,
                "test_set": {"name": ts.name, "version": ts.version, "digest": ts.digest},
                "system": system, "cached": result.cached, "components": block,
                "definitions": {m: d.to_dict() for m, d in result.definitions.items()}}, gauges

    def _system_result(self, req: EvaluateRequest, ts, measures: list[str], components: list[str] | None):
        """(the result of the server's system on the test set, the system's label, each component's summary),
        for a request without a run."""
        if req.order is not None:
            raise InputError("order says how a run sent in the request is ranked; this request has none",
                             fix="drop order, or send a run (or run_file)")
        if self._system is None:
            raise InputError("the request has no run and the server has no system configured",
                             fix="send a run (TREC text or {qid: {doc: score}}) or run_file")
        stages = evaluate_system(self._system, ts, measures=measures, only=components, cache=self.s.cache,
                                 cache_dir=self.s.cache_dir)
        final = stages[components[-1]] if components else stages[self._system.final_stage()]
        return final, req.system or self._system.name, {name: _summary(r) for name, r in stages.items()}

    def _sent_run_result(self, req: EvaluateRequest, ts, measures: list[str], components: list[str] | None,
                         warnings: list[str]):
        """(the result of the request's run on the test set, cached by the run's digest, the system's label, the
        test set's queries the run does not answer); what reading the run warns of is added to ``warnings``."""
        if components:
            raise InputError("?components= applies to the server's system, not to a run in the request",
                             fix="drop ?components=, or send no run")
        run, digest = self._run(req, warnings)
        system = req.system or ("run" if isinstance(req.run, dict) else run.tag)
        store = ResultCache(self.s.cache_dir) if self.s.cache and digest is not None else None
        ranked = {"order": req.order} if req.order not in (None, "auto") else {}     # another order, other numbers
        key = cache_key(system={"run_digest": digest, **ranked}, test_set=ts, measures=measures, k=None, gain="exp")
        hit = store.get(key) if store else None
        result = from_cached(hit, "exp", measures) if hit else None
        if result is None:
            result = evaluate_run(run, ts, measures)
        if store is not None and not result.cached:
            store.put(key, result.to_dict())
        return result, system, missing_queries(run, ts.query_ids)

    def answer(self, kind: str, body: bytes, params: dict) -> tuple[int, Any, list]:
        """(HTTP status, JSON answer, gauges) of one request; never raises for a request's fault."""
        try:
            req = read_request(body, kind, self.s.max_queries)
            if kind == "rq":
                payload, gauges = self.rq(req)
            else:
                payload, gauges = self.evaluate(req, params.get("components"))
            return 200, payload, gauges
        except RequestInvalid as exc:
            return 422, {"detail": exc.errors}, []
        except InputError as exc:
            return 400, {"detail": exc.reason, "line": exc.line, "fix": exc.fix}, []
