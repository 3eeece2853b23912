"""What a request to the service asks, done with the library: the request body read within bounds and
validated, then the evaluation.  It runs inside an evaluation worker process (:mod:`.workers`), so no
web framework is imported here.

Reading a body costs memory in proportion to it, and counts are checked before anything is built
from it: the body is decoded (strict UTF-8; a lone surrogate, escaped or not, is refused) and parsed
by the C JSON parser, as RFC 8259 reads it (``NaN``, ``Infinity`` and a number beyond a double are no JSON
number, and a key is said once in an object: each is refused naming where it is); the number of queries is
checked on the parsed lists, before a single model is built; queries are then validated one at a time, each replacing its parsed dict, so the parsed body
and its models never coexist in full.  A dict run is not copied by validation: it is read as the
Python API reads a dict (:func:`treckit.inputs.objects.as_run`: one reading; NaN, booleans and strings as
scores are errors).  ``bench/service_memory_bench.py`` measures what a body costs.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import sys
import typing
from pathlib import Path
from typing import Annotated, Any, Iterator, Optional, Union

from pydantic import (BaseModel, ConfigDict, Field, PlainValidator, StrictBool, StrictInt, StrictStr, ValidationError,
                      create_model)

from .. import thresholds
from ..console import spelling
from ..console.errors import InputError, content_blanked, content_hidden, hidden_because, shown
from ..inputs.objects import as_run
from ..inputs.options import FLAGS, RunReading, python_name
from ..inputs.reading import read_run
from ..inputs.sources import file_digest
from ..retrieval.callables import UserCodeError
from ..retrieval.system import load_system
from ..testsets.cache import ResultCache, cache_key
from ..testsets.load import TestSet, semantic_problems
from ..testsets.measures import TwoMeanings, canonical_name
from ..testsets.results import from_cached
from ..testsets.rq import rq
from ..testsets.runner import evaluate_run, missing_queries
from ..testsets.schema import Query, QueryMaybeUnlabelled, QuerySetModel, TestSetModel
from ..testsets.systems import evaluate_system
from .body_json import RequestInvalid, parse_strict, refuse_lone_surrogates
from .reports import SOURCE

DEFAULT_MAX_BODY = 16 << 20
DEFAULT_MAX_QUERIES = 10_000
DEFAULT_MEASURES = ("recall_at_10", "ndcg_at_10", "mrr")
MAX_MEASURES = 100
BUFFERED_BODIES = 4             # max_buffered_body_bytes's default: this many bodies of max_body_bytes
BODY_RATE_GRACE_S = 5.0         # body_min_rate_bytes_s holds from this many seconds after a request's headers


class ServerSettings(BaseModel):
    """``treckit serve --config SERVER.yaml``: every key optional; numbers are finite and bounded, and never
    coerced from text or booleans."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
    system: Optional[str] = Field(None, description="systems config answering queries when a request has no run")
    metrics_prefix: str = "treckit"
    data_dir: Optional[str] = Field(None, description="run files named in requests must lie inside it")
    max_body_bytes: int = Field(DEFAULT_MAX_BODY, ge=1024, le=1 << 30)
    max_queries: int = Field(DEFAULT_MAX_QUERIES, ge=1, le=10_000_000)
    measures: list[str] = Field(list(DEFAULT_MEASURES), min_length=1, max_length=MAX_MEASURES)
    cache_dir: Optional[str] = None
    cache: bool = True
    request_timeout_s: float = Field(60.0, gt=0, le=86_400, description="a request's time once its body has arrived "
                                     "(waiting for a worker, its evaluation); an evaluation past it is stopped (504)")
    body_read_timeout_s: float = Field(60.0, gt=0, le=86_400, description="a request's body must arrive within this "
                                       "many seconds of its headers (else 408); no worker is taken before it has")
    body_min_rate_bytes_s: int = Field(1024, ge=0, le=1 << 30, description=f"from {BODY_RATE_GRACE_S:g} s after its "
                                       "headers, a body must have arrived at this many bytes a second on average "
                                       "(else 408); 0: no minimum")
    max_buffered_body_bytes: Optional[int] = Field(None, ge=1024, le=1 << 36, description="request bodies the server "
                                                   "process holds at once (arriving, waiting for a worker or being "
                                                   "evaluated); a request that would take it past this is answered "
                                                   f"503 with Retry-After (default: {BUFFERED_BODIES} x max_body_bytes)")
    evaluation_workers: int = Field(2, ge=1, le=64, description="evaluations running at once, each in its own process")
    max_waiting_requests: int = Field(16, ge=0, le=10_000,
                                      description="requests waiting for a worker; beyond them the answer is 503")
    shutdown_grace_s: float = Field(10.0, ge=0, le=3_600, description="on SIGTERM, running requests get this long")
    metrics_systems: list[str] = Field(default_factory=list, description="system labels of the quality gauges (the "
                                       "configured system's name is always one); any other system is labelled 'other'")
    metrics_test_sets: list[str] = Field(default_factory=list, description="test_set labels of the quality gauges; "
                                         "any other test set is labelled 'other'")
    report_pages: int = Field(100, ge=0, le=100_000, description="with the cache off, the HTML reports of the last N "
                              "evaluations kept in memory (GET /v1/report/{id}); with it on, a report lives as long "
                              "as its evaluation's cache entry")
    report_link_ttl_s: float = Field(86_400.0, gt=0, le=31_536_000, description="how long a signed report link works "
                                     "(where a token is set)")

    @property
    def body_buffer_bytes(self) -> int:
        """The cap on the request bodies held at once (max_buffered_body_bytes, or its default)."""
        return self.max_buffered_body_bytes or BUFFERED_BODIES * self.max_body_bytes


def _as_sent(value):
    """A run as the request sent it: validation neither copies nor coerces it (it is read below, as the API reads it)."""
    if value is None or isinstance(value, (str, dict)):
        return value
    raise ValueError("run must be TREC run text or {qid: {doc_id: score}}")


_RUN_TYPE = Optional[Union[str, dict[str, dict[str, float]]]]
RunAsSent = Annotated[_RUN_TYPE, PlainValidator(_as_sent, json_schema_input_type=_RUN_TYPE)]
Measures = Optional[list[str]]
REQUEST_CONFIG = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

# The run's reading options a request may send: every one of RunReading's (as the Python API names them, one meaning
# everywhere), but for a gold file's (a path on the server's disk); they read run text and run files, and order, ties
# and duplicates rank a dict run too.
READING = tuple(f for f in FLAGS if f.field not in ("gold", "fields.query"))
READING_NAMES = tuple(python_name(f) for f in READING)
DICT_READING = ("order", "ties", "duplicates")
_KINDS = {str: StrictStr, int: Annotated[StrictInt, Field(ge=-(1 << 63), lt=1 << 63)], bool: StrictBool}
_READING_FIELDS = {python_name(f): (Optional[_KINDS[f.kind]], Field(None, description=f.help)) for f in READING}
# the service speaks of a run's reading options as the request's members ("skip_malformed": true)
SERVICE = spelling.Command("the service", reads={"run": frozenset(f.flag for f in READING)}, request=True)


class _EvaluateRequest(BaseModel):
    model_config = REQUEST_CONFIG
    test_set: TestSetModel
    run: RunAsSent = Field(
        None, description="TREC run text (another format with \"format\"), or {qid: {doc_id: score}}; without a run "
                          "(and run_file) the server's system answers")
    run_file: Optional[str] = Field(None, description="a run file inside the server's data directory (relative path)")
    measures: Measures = Field(None, max_length=MAX_MEASURES,
                               description="test-set measure names (recall@10, ndcg_at_10, nDCG@10, mrr, ...)")
    system: Optional[str] = Field(None, max_length=200, description="label for the system in the metrics")


class _RQRequest(BaseModel):
    """The RQ acceptance metric of a run on a query set (unlabelled queries allowed: listed and skipped)."""

    model_config = REQUEST_CONFIG
    test_set: QuerySetModel
    run: RunAsSent = Field(None, description="TREC run text (another format with \"format\"), or {qid: {doc_id: score}}")
    run_file: Optional[str] = Field(None, description="a run file inside the server's data directory (relative path)")
    k: int = Field(5, ge=1, le=1_000_000, description="cutoff (a query's topK replaces it)")
    threshold: float = Field(0.6, ge=-1e9, le=1e9, description="pass when MRR > threshold")
    system: Optional[str] = Field(None, max_length=200, description="label of the run's system")


EvaluateRequest = create_model("EvaluateRequest", __base__=_EvaluateRequest, **_READING_FIELDS)
RQRequest = create_model("RQRequest", __base__=_RQRequest, __doc__=_RQRequest.__doc__, **_READING_FIELDS)


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
    report_id: Optional[str] = Field(None, description="the evaluation's HTML report: GET /v1/report/{report_id}")
    report_url: Optional[str] = Field(None, description="the report's path; where a token is set, a signed link that "
                                      "expires (a browser sends no bearer token)")


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
    if s.body_buffer_bytes < s.max_body_bytes:
        raise InputError(f"max_buffered_body_bytes: {s.body_buffer_bytes} is less than max_body_bytes "
                         f"({s.max_body_bytes}): a body of the largest size would never be taken",
                         fix="give max_buffered_body_bytes at least max_body_bytes (or leave it out: "
                             f"{BUFFERED_BODIES} x max_body_bytes)")


def setting_fix(key: str) -> str | None:
    """How to give the SERVER.yaml key ``key``: a number's kind and range, the keys for one that is none; None for
    any other key."""
    field = ServerSettings.model_fields.get(key)
    if field is None:
        return f"use the keys of SERVER.yaml: {', '.join(ServerSettings.model_fields)} (docs/service.md)"
    bounds = [f"{word} {getattr(m, attr):,}" for m in field.metadata
              for attr, word in (("gt", "above"), ("ge", "at least"), ("lt", "below"), ("le", "at most"))
              if getattr(m, attr, None) is not None]
    types = set(typing.get_args(field.annotation) or (field.annotation,)) - {type(None)}
    kind = {int: "a whole number", float: "a finite number"}.get(types.pop() if len(types) == 1 else None)
    if kind is None:
        return None
    return f"give {key} as {kind}" + (f" ({' and '.join(bounds)})" if bounds else "")


def _pydantic_errors(exc: ValidationError, prefix: tuple, bare: bool = False) -> list[dict]:
    """Where and what, never the value sent (it may be megabytes, or someone's secret); ``bare``: the body is the
    test set itself (its fields are named where they were sent)."""
    def where(loc: tuple) -> list:
        return [*prefix, *(loc[1:] if bare and loc[:1] == ("test_set",) else loc)]
    return [{"loc": where(tuple(e.get("loc", ()))), "msg": e.get("msg"), "type": e.get("type")} for e in exc.errors()]


def listed_errors(errors: list[dict]) -> list[dict]:
    listed = thresholds.MAX_LISTED_PROBLEMS
    if len(errors) <= listed:
        return errors
    more = len(errors) - listed
    return errors[:listed] + [{"loc": ["body"], "msg": f"... and {more} more problems", "type": "more"}]


def read_request(body: bytes, kind: str, max_queries: int):
    """The request of ``kind`` (``evaluate`` or ``rq``) in ``body``, validated; :class:`RequestInvalid` (422)
    or :class:`InputError` (400) otherwise.  An ``evaluate`` body that is a test set itself (``queries`` and no
    ``test_set``: seed 004's upload) asks for the configured system's evaluation on it."""
    model, query_model = REQUESTS[kind]
    refuse_lone_surrogates(body)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RequestInvalid([{"loc": ["body"], "msg": f"the body is not UTF-8 (byte {exc.start})",
                               "type": "json_invalid"}]) from None
    try:
        data = parse_strict(text)
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
    bare = kind == "evaluate" and "test_set" not in data and "queries" in data
    if bare:
        data = {"test_set": data}
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
        raise RequestInvalid(listed_errors(_pydantic_errors(exc, ("body",), bare))) from None
    if problems:
        said = [m for _, m in problems]
        listed = thresholds.MAX_LISTED_PROBLEMS
        more = len(said) - listed
        raise InputError("; ".join(said[:listed]) + (f"; ... and {more} more" if more > 0 else ""),
                         fix="correct the test set" if kind == "evaluate" else "correct the query set")
    return req


# ------------------------------------------------------------------ evaluation
DATA_DIR_WHY = "the file is in the data directory of the server, not sent by the request"     # no quote mark


def _for_request(message: str) -> str:
    """A reading's message as a request's sender reads it: ``--order asc`` is the request's ``"order": "asc"``;
    about a file of the server's (a ``run_file``, read inside :func:`content_hidden`), none of its content."""
    why = hidden_because()
    if why is not None:
        message = content_blanked(message, why)
    return SERVICE.spell(message)


def _measures(names: list[str]) -> list[str]:
    """The canonical names of a request's measures; a name of two meanings (``ndcg@10``: either gain) is a value the
    request's schema does not take (422, at its place in ``measures``)."""
    out = []
    for i, name in enumerate(names):
        try:
            out.append(canonical_name(name))
        except TwoMeanings as exc:
            raise RequestInvalid([{"loc": ["body", "measures", i], "msg": f"{exc.reason}; {exc.fix}",
                                   "type": "value_error"}]) from None
    return out


def _reading(req) -> tuple[RunReading, dict[str, Any]]:
    """(how the request's run is read, the reading options the request sent)."""
    sent = {name: value for name in READING_NAMES if (value := getattr(req, name)) is not None}
    return RunReading.from_options(**sent), sent


def _say(names) -> str:
    names = list(names)
    return f"{', '.join(names)} {'says' if len(names) == 1 else 'say'}"


@contextlib.contextmanager
def _run_file_hidden(req, path: Path | None) -> Iterator[None]:
    """A block in which a request's ``run_file`` (at ``path``) is read and evaluated: a file of the server's, so no
    message (error, warning, the server's log) shows anything of its content; an error about it names the file as
    the request does, its line and the field."""
    if req.run_file is None:
        yield
        return
    try:
        with content_hidden(DATA_DIR_WHY):
            yield
    except UserCodeError:
        raise
    except InputError as exc:
        if exc.path is None or Path(exc.path) != path:
            raise
        line = f", line {exc.line}" if exc.line is not None else ""
        raise InputError(f"run_file {shown(req.run_file)}{line}: {exc.reason}", line=exc.line, fix=exc.fix) from None


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

    def _run_path(self, req) -> Path | None:
        """Where the request's ``run_file`` is (checked: :meth:`_confined`), or None."""
        return self._confined(req.run_file) if req.run_file is not None else None

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
        reading, sent = _reading(req)
        unread = [name for name in sent if name not in DICT_READING]
        if isinstance(req.run, dict) and unread:
            raise InputError(f"{_say(unread)} how run text or a run file is read; this request's run is "
                             "{qid: {doc: score}}", fix=f"drop {', '.join(unread)}, or send the run as text")

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
            run = read_run(f, None if reading.format else "trec", reading=reading, warn=warn_as("run", f))
        return run, hashlib.sha256(req.run.encode("utf-8")).hexdigest()

    def rq(self, req: RQRequest) -> tuple[dict[str, Any], list]:
        """RQ as ``treckit rq --run`` computes it, with what reading the run warned of."""
        ts = TestSet(req.test_set)
        if req.run is None and req.run_file is None:
            raise InputError("RQ scores a run, and the request has none", fix="send run (TREC text or "
                             "{qid: {doc: score}}) or run_file")
        warnings: list[str] = []
        with _run_file_hidden(req, self._run_path(req)):
            run, _ = self._run(req, warnings)
            report = rq(ts, run, k=req.k, threshold=req.threshold, warn=lambda m: warnings.append(_for_request(m)))
        return {**report, "warnings": warnings}, []

    def evaluate(self, req: EvaluateRequest, components: list[str] | None) -> tuple[dict[str, Any], list]:
        """(the answer, the gauges to set: (test set, system, component, {measure: value}) each)."""
        measures = _measures(req.measures or self.s.measures)
        ts = TestSet(req.test_set)
        warnings: list[str] = []
        if req.run is None and req.run_file is None:
            result, system, block, source = self._system_result(req, ts, measures, components)
            missing = []                     # the system is asked every query
        else:
            with _run_file_hidden(req, self._run_path(req)):
                result, system, missing = self._sent_run_result(req, ts, measures, components, warnings)
            block, source = None, {"key": result.cache_key, "results": {system: result.to_dict()}}
        gauges = [(ts.name, system, name, summary["metrics"])
                  for name, summary in (block or {"all": {"metrics": result.metrics}}).items()]
        return {"metrics": result.metrics, "per_query_type": result.per_query_type, "num_queries": len(ts.queries),
                "missing_queries": missing, "warnings": warnings,
                "test_set": {"name": ts.name, "version": ts.version, "digest": ts.digest},
                "system": system, "cached": result.cached, "components": block,
                "definitions": {m: d.to_dict() for m, d in result.definitions.items()}, SOURCE: source}, gauges

    def _system_result(self, req: EvaluateRequest, ts, measures: list[str], components: list[str] | None):
        """(the result of the server's system on the test set, the system's label, each component's summary),
        for a request without a run."""
        sent = _reading(req)[1]
        if sent:
            raise InputError(f"{_say(sent)} how a run sent in the request is read; this request has none",
                             fix=f"drop {', '.join(sent)}, or send a run (or run_file)")
        if self._system is None:
            raise InputError("the request has no run and the server has no system configured",
                             fix="send a run (TREC text or {qid: {doc: score}}) or run_file")
        stages = evaluate_system(self._system, ts, measures=measures, only=components, cache=self.s.cache,
                                 cache_dir=self.s.cache_dir)
        final = stages[components[-1]] if components else stages[self._system.final_stage()]
        source = {"key": final.cache_key, "results": {name: r.to_dict() for name, r in stages.items()}}
        return final, req.system or self._system.name, {name: _summary(r) for name, r in stages.items()}, source

    def _sent_run_result(self, req: EvaluateRequest, ts, measures: list[str], components: list[str] | None,
                         warnings: list[str]):
        """(the result of the request's run on the test set, cached by the run's digest, the system's label, the
        test set's queries the run does not answer); what reading the run warns of is added to ``warnings``."""
        if components:
            raise InputError("?components= applies to the server's system, not to a run in the request",
                             fix="drop ?components=, or send no run")
        run, digest = self._run(req, warnings)
        # a run file's label is its name as the request gives it: its tag is the file's content, never shown
        system = req.system or req.run_file or ("run" if isinstance(req.run, dict) else run.tag)
        store = ResultCache(self.s.cache_dir) if self.s.cache and digest is not None else None
        read = {k: v for k, v in _reading(req)[1].items() if (k, v) != ("order", "auto")}   # read otherwise: other numbers
        key = cache_key(system={"run_digest": digest, **read}, test_set=ts, measures=measures, k=None, gain="exp")
        hit = store.get(key) if store else None
        result = from_cached(hit, "exp", measures) if hit else None
        if result is None:
            read_warnings = len(warnings)
            result = evaluate_run(run, ts, measures, warn=lambda m: warnings.append(_for_request(m)))
            if len(warnings) > read_warnings:    # the entry keeps no warnings: the next answer would lack them
                store = None
        if req.run_file is not None:             # the record (cached, drawn in a report) names the file, not its tag
            result.system = {"run_file": req.run_file}
        if store is not None and not result.cached:
            store.put(key, result.to_dict())
        result.cache_key = key if store is not None else None
        return result, system, missing_queries(run, ts.query_ids)

    def answer(self, kind: str, body: bytes, params: dict) -> tuple[int, Any, list]:
        """(HTTP status, JSON answer, gauges) of one request; never raises for a request's fault.  Its messages name
        options as the request's members."""
        with spelling.running(SERVICE):
            try:
                req = read_request(body, kind, self.s.max_queries)
                if kind == "rq":
                    payload, gauges = self.rq(req)
                else:
                    payload, gauges = self.evaluate(req, params.get("components"))
                return 200, payload, gauges
            except RequestInvalid as exc:
                return 422, {"detail": exc.errors}, []
            except UserCodeError as exc:               # the server's own system failed, not the request
                where = f" ({exc.path}:{exc.line})" if exc.path is not None else ""
                print(f"treckit: the system failed: {exc.reason}{where}", file=sys.stderr, flush=True)
                return 500, {"detail": f"the server's system failed: {exc.reason}; the server is still up",
                             "fix": "tell the server's operator: the server's log says where it failed"}, []
            except InputError as exc:
                return 400, {"detail": exc.reason, "line": exc.line, "fix": exc.fix}, []
