"""The evaluation service, as a real uvicorn server in a subprocess called over HTTP, and scraped by a
real Prometheus when one is installed."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers import ROOT, patience, run_cli
from service_server import (BASELINE_RUN, SAMPLE, TOKEN_ENV, Prometheus, Server, alive, children, free_port,
                            negated, sample_test_set)

httpx = pytest.importorskip("httpx", reason="the service tests need the dev extra (httpx)")
pytest.importorskip("fastapi", reason="the service tests need the service extra")

TOKEN = "s3cret-token"


def relevant(qid: str) -> list[str]:
    """The sample's documents of grade > 0 for ``qid``."""
    q = next(q for q in sample_test_set()["queries"] if q["query_id"] == qid)
    return [d["doc_id"] for d in q["relevant_docs"] if d["grade"] > 0]


def recall_at_10_by_hand(run_text: str) -> float:
    """Mean over the sample's queries of (relevant docs in the run's top 10) / (relevant docs); trec_eval's
    order (score descending, then docno descending); a query without lines scores 0."""
    lines: dict[str, list[tuple[float, str]]] = {}
    for line in run_text.splitlines():
        qid, _, doc, _, score, _ = line.split()
        lines.setdefault(qid, []).append((float(score), doc))
    recalls = []
    for q in sample_test_set()["queries"]:
        top = {doc for _, doc in sorted(lines.get(q["query_id"], []), reverse=True)[:10]}
        rel = set(relevant(q["query_id"]))
        recalls.append(len(top & rel) / len(rel))
    return sum(recalls) / len(recalls)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("srv"))
    yield s
    s.stop()


def test_evaluate_a_run_equals_testset_eval(server, tmp_path, capsys):
    # the baseline's run without q05's lines: the answer names q05 as missing, and scores it 0
    run = "".join(line for line in BASELINE_RUN.read_text().splitlines(keepends=True) if not line.startswith("q05 "))
    (tmp_path / "run.trec").write_text(run)
    r = server.post({"test_set": sample_test_set(), "run": run, "system": "bow"})
    assert r.status_code == 200, r.text
    body = r.json()
    code, _, err = run_cli(["testset", "eval", SAMPLE, "--run", tmp_path / "run.trec", "--out", tmp_path / "r.json"], capsys)
    assert code == 0, err
    cli = json.loads((tmp_path / "r.json").read_text())
    for m in ("recall_at_10", "ndcg_at_10", "mrr"):
        assert body["metrics"][m] == cli["aggregates"][m]["mean"]
    assert body["per_query_type"]["exact_term"]["recall_at_10"] == cli["per_query_type"]["exact_term"]["recall_at_10"]
    assert body["metrics"]["recall_at_10"] == pytest.approx(recall_at_10_by_hand(run))
    assert body["num_queries"] == 50 and body["missing_queries"] == ["q05"]
    again = server.post({"test_set": sample_test_set(), "run": run, "system": "bow"})
    assert again.json()["cached"] is True and again.json()["metrics"] == body["metrics"]


def test_dict_run_and_missing_queries(server):
    first, second = relevant("q01")[:2]
    r = server.post({"test_set": sample_test_set(), "run": {"q01": {first: 2.0, second: 1.0}}})
    body = r.json()
    assert r.status_code == 200
    assert body["missing_queries"] == [f"q{i:02d}" for i in range(2, 51)]
    # q01: two of its relevant docs in the top 10; the 49 other queries score 0
    assert body["metrics"]["recall_at_10"] == pytest.approx((2 / len(relevant("q01"))) / 50)


def test_a_negated_run_is_answered_with_a_warning_and_its_fix_works(server):
    """Negated scores with rank 1 on the lowest: evaluated as trec_eval ranks them, with one warning in the
    response naming the counts and the request's own fix ("order": "asc"), which gives the baseline's numbers;
    the two orders of one run are cached apart."""
    baseline = server.post({"test_set": sample_test_set(), "run": BASELINE_RUN.read_text()}).json()
    assert baseline["warnings"] == []
    for sent in ({"run": negated(BASELINE_RUN.read_text())}, {"run_file": "negated.trec"}):
        as_read = server.post({"test_set": sample_test_set(), **sent})
        assert as_read.status_code == 200, as_read.text
        shown = sent.get("run_file", "run")
        [warning] = as_read.json()["warnings"]
        scores: dict[str, set] = {}
        for line in BASELINE_RUN.read_text().splitlines():
            scores.setdefault(line.split()[0], set()).add(line.split()[4])
        flagged = sum(len(s) >= 2 for s in scores.values())          # a query needs two distinct scores to tell
        assert warning.startswith(f"{shown}: in {flagged} of its {len(scores)} queries the rank column rises as "
                                  "the score rises")
        assert '"order": "asc"' in warning and "--order" not in warning and "/tmp" not in warning
        assert as_read.json()["metrics"] != baseline["metrics"]
        for order in ("asc", "given"):
            fixed = server.post({"test_set": sample_test_set(), **sent, "order": order})
            assert fixed.status_code == 200 and fixed.json()["warnings"] == []
            assert fixed.json()["metrics"] == baseline["metrics"]
    bad = server.post({"test_set": sample_test_set(), "run": BASELINE_RUN.read_text(), "order": "upwards"})
    assert bad.status_code == 400 and '"order"' in bad.json()["fix"]
    no_run = server.post({"test_set": sample_test_set(), "order": "asc"})
    assert no_run.status_code == 400 and "order" in no_run.json()["detail"]


def test_run_files_are_confined_to_the_data_directory(server):
    ok = server.post({"test_set": sample_test_set(), "run_file": "bow.trec"})
    assert ok.status_code == 200
    # outside the directory, a symlink leading out, missing, a symlink loop, a NUL, a name too long for the system
    for name in ("../secret.txt", "/etc/passwd", "escape.trec", "nope.trec", "loop.trec", "bow\x00.trec", "x" * 5000):
        r = server.post({"test_set": sample_test_set(), "run_file": name})
        assert r.status_code == 400, (name[:20], r.text[:300])
        assert "TOP-SECRET" not in r.text and "root:" not in r.text and len(r.text) < 1000


def test_the_configured_system_and_components(server):
    r = server.post({"test_set": sample_test_set()})
    body = r.json()
    assert r.status_code == 200 and list(body["components"]) == ["bm25", "bow", "fusion"]
    only = server.post({"test_set": sample_test_set()}, params={"components": "bm25"}).json()
    assert list(only["components"]) == ["bm25"]
    assert only["metrics"] == body["components"]["bm25"]["metrics"]
    bad = server.post({"test_set": sample_test_set()}, params={"components": "splade"})
    assert bad.status_code == 400 and "unknown components" in bad.json()["detail"]


def test_the_system_is_not_answered_from_the_cache_when_a_file_it_names_is_replaced(tmp_path):
    """The server's system names a run and a corpus: each replaced, the next answer is the new files' numbers
    (as evaluated without the cache), not the stored ones; unchanged, it is answered from the cache."""
    from treckit.testsets.systems import evaluate_system
    from treckit.retrieval.system import load_system
    from treckit.testsets import load_test_set
    shutil.copy(ROOT / "data/test_sets/documents.jsonl", tmp_path / "docs.jsonl")
    shutil.copy(BASELINE_RUN, tmp_path / "sys.trec")
    config = "corpus: docs.jsonl\ncomponents:\n  r: {run: sys.trec}\n  b: {method: bm25}\nfusion_method: rrf\n"
    server = Server(tmp_path, system=config)
    try:
        def answer() -> dict:
            r = server.post({"test_set": sample_test_set()})
            assert r.status_code == 200, r.text
            return r.json()

        def fresh() -> dict:
            stages = evaluate_system(load_system(tmp_path / "system.yaml"), load_test_set(SAMPLE), cache=False,
                                     measures=list(first["metrics"]))
            return {name: stages[name].metrics for name in ("r", "b", "fusion")}

        def components(body) -> dict:
            return {name: body["components"][name]["metrics"] for name in ("r", "b", "fusion")}
        first = answer()
        assert not first["cached"] and components(first) == fresh()
        assert answer()["cached"] is True
        lines = BASELINE_RUN.read_text().splitlines(keepends=True)
        (tmp_path / "new.trec").write_text("".join(lines[::2]))             # every other document
        (tmp_path / "new.trec").replace(tmp_path / "sys.trec")
        second = answer()
        assert not second["cached"] and components(second) == fresh()
        assert second["components"]["r"]["metrics"] != first["components"]["r"]["metrics"]
        docs = (tmp_path / "docs.jsonl").read_text().splitlines(keepends=True)
        (tmp_path / "docs.jsonl").write_text("".join(docs[: len(docs) // 2]))     # half the corpus, in place
        third = answer()
        assert not third["cached"] and components(third) == fresh()
        assert third["components"]["b"]["metrics"] != second["components"]["b"]["metrics"]
        assert answer()["cached"] is True
    finally:
        server.stop()


@pytest.mark.parametrize("body, status", [
    ({"test_set": {"name": "x"}}, 422),
    ({"test_set": "not an object"}, 422),
    ({"run": "1 Q0 d 1 1 t\n"}, 422),
    ({"test_set": None, "extra": 1}, 422),
])
def test_malformed_requests_are_4xx(server, body, status):
    assert server.post(body).status_code == status


def test_bad_runs_and_limits(server):
    ts = sample_test_set()
    r = server.post({"test_set": ts, "run": "q1 Q0 d1 1 notanumber t\n"})
    assert r.status_code == 400 and r.json()["line"] == 1
    dup = dict(ts, queries=ts["queries"] + [ts["queries"][0]])
    assert server.post({"test_set": dup, "run": "q1 Q0 a 1 1 t\n"}).status_code == 400
    many = dict(ts, queries=[dict(ts["queries"][0], query_id=f"x{i}") for i in range(60)])
    r = server.post({"test_set": many, "run": "x1 Q0 a 1 1 t\n"})
    assert r.status_code == 400 and "at most 50" in r.json()["detail"]
    big = server.post({"test_set": ts, "run": "q1 Q0 a 1 1 t\n" * 20000})
    assert big.status_code == 413
    assert httpx.get(server.url + "/v1/health").status_code == 200       # still up


def test_concurrent_requests_are_deterministic(server):
    body = {"test_set": sample_test_set(), "run": BASELINE_RUN.read_text().replace("bow", "c"), "system": "conc"}
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: server.post(body).json()["metrics"], range(8)))
    assert all(a == answers[0] for a in answers)


def test_metrics_endpoint_has_labelled_gauges_and_request_counters(server):
    from prometheus_client.parser import text_string_to_metric_families
    answer = server.post({"test_set": sample_test_set(), "run": BASELINE_RUN.read_text(), "system": "bow"}).json()
    text = httpx.get(server.url + "/metrics").text
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for f in text_string_to_metric_families(text) for s in f.samples}
    labels = (("component", "all"), ("system", "bow"), ("test_set", "clinical"))
    assert samples[("treckit_retrieval_recall_at_k", (labels[0], ("k", "10"), *labels[1:]))] == \
        pytest.approx(recall_at_10_by_hand(BASELINE_RUN.read_text()))
    assert samples[("treckit_retrieval_mrr", labels)] == answer["metrics"]["mrr"]
    assert "treckit_http_requests_total" in text and "treckit_http_request_duration_seconds_bucket" in text


@pytest.fixture(scope="module")
def token_server(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("token"), token=TOKEN, prefix="medicalkg")
    yield s
    s.stop()


def test_token_and_prefix(token_server):
    s = token_server
    assert httpx.get(s.url + "/v1/health").status_code == 200
    assert s.post({"test_set": sample_test_set(), "run": "q01 Q0 a 1 1 t\n"}, headers={}).status_code == 401
    assert httpx.get(s.url + "/metrics").status_code == 401
    assert s.post({"test_set": sample_test_set(), "run": "q01 Q0 a 1 1 t\n"},
                  headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert s.post({"test_set": sample_test_set(), "run": BASELINE_RUN.read_text()}).status_code == 200
    text = httpx.get(s.url + "/metrics", headers=s.headers).text
    assert 'medicalkg_retrieval_recall_at_k{' in text and "treckit_retrieval" not in text


class InProcessServer:
    """``create_app(token=...)`` served by uvicorn on a thread of this process, called over real HTTP."""

    def __init__(self, token: str):
        import threading
        import uvicorn
        from treckit.service.app import create_app
        self.url = f"http://127.0.0.1:{(port := free_port())}"
        self.server = uvicorn.Server(uvicorn.Config(create_app(token=token), host="127.0.0.1", port=port,
                                                    log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.time() + patience(30)
        while not self.server.started:
            if time.time() > deadline or not self.thread.is_alive():
                raise RuntimeError("the in-process server did not start")
            time.sleep(0.05)

    def stop(self):
        self.server.should_exit = True
        self.thread.join(10)


# the routes FastAPI adds itself (the schema, its two documentation pages and Swagger's OAuth2 helper) and ours
GUARDED_GETS = ("/openapi.json", "/docs", "/redoc", "/docs/oauth2-redirect", "/metrics")


@pytest.mark.parametrize("token_from", ["environment", "create_app"])
def test_every_route_but_health_needs_the_token(token_from, token_server, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    s = token_server if token_from == "environment" else InProcessServer(TOKEN)
    try:
        assert httpx.get(s.url + "/v1/health").status_code == 200
        good = {"Authorization": f"Bearer {TOKEN}"}
        for path in GUARDED_GETS:
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
                r = httpx.get(s.url + path, headers=headers)
                assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer", (path, headers)
                assert "openapi" not in r.text and "swagger" not in r.text.lower()
            assert httpx.get(s.url + path, headers=good).status_code == 200, path
        assert "/v1/evaluate" in httpx.get(s.url + "/openapi.json", headers=good).json()["paths"]
        assert "swagger-ui" in httpx.get(s.url + "/docs", headers=good).text
        assert httpx.post(s.url + "/v1/evaluate", json={}).status_code == 401
        assert httpx.get(s.url + "/no-such-route").status_code == 401           # nothing is said without the token
        assert httpx.get(s.url + "/no-such-route", headers=good).status_code == 404
    finally:
        if token_from == "create_app":
            s.stop()


def test_without_a_token_every_route_is_open(server):
    for path in ("/v1/health", *GUARDED_GETS):
        assert httpx.get(server.url + path).status_code == 200, path


def test_openapi_fuzz_never_500(server):
    """A small seeded schemathesis run (`make fuzz-service` runs 1,000 cases)."""
    pytest.importorskip("schemathesis", reason="schemathesis fuzzes the OpenAPI schema (dev extra)")
    from fuzz_service import fuzz
    statuses, failures = fuzz(server.url, 50, seed=7)
    assert failures == [] and sum(statuses.values()) >= 50


# ------------------------------------------------------------------ hostile requests: 4xx, never 5xx
def test_a_cutoff_too_large_is_a_bad_request(server):
    r = server.post({"test_set": sample_test_set(), "run": BASELINE_RUN.read_text(),
                     "measures": ["ndcg@99999999999999999999"]})
    assert r.status_code == 400 and "larger than 2147483647" in r.json()["detail"], r.text
    largest = server.post({"test_set": sample_test_set(), "run": BASELINE_RUN.read_text(), "measures": ["recall@2147483647"]})
    # every judged document the run retrieves counts at such a cutoff: recall over the whole run
    assert largest.status_code == 200
    assert largest.json()["metrics"]["recall_at_2147483647"] == pytest.approx(
        server.post({"test_set": sample_test_set(), "run": BASELINE_RUN.read_text(),
                     "measures": ["recall@1000"]}).json()["metrics"]["recall_at_1000"])


@pytest.mark.parametrize("where", ["run text", "dict key", "test set"])
def test_lone_surrogates_are_refused(server, where):
    """A lone surrogate escape is no Unicode character: 422 naming the byte, whether in the run's text, a dict
    run's key or the test set (a valid pair, an emoji, is read)."""
    ts = json.dumps(sample_test_set())
    lone = {"run text": r'"q01 Q0 \ud800x 1 1 t\n"', "dict key": r'{"q01": {"\udc00": 1.0}}',
            "test set": r'"q01 Q0 a 1 1 t\n"'}[where]
    if where == "test set":
        ts = ts.replace('"query_text": "', r'"query_text": "\ud83d', 1)
    r = httpx.post(server.url + "/v1/evaluate", content=f'{{"test_set": {ts}, "run": {lone}}}'.encode(),
                   headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text[:300]
    assert "lone surrogate" in r.json()["detail"][0]["msg"]
    paired = ts.replace(r"\ud83d", r"\ud83d\ude00") + r', "run": "q01 Q0 \ud83d\ude00 1 1 t\n"'
    pair = httpx.post(server.url + "/v1/evaluate", content=('{"test_set": ' + paired + "}").encode(),
                      headers={"content-type": "application/json"})
    assert pair.status_code == 200, pair.text[:300]


@pytest.mark.parametrize("score, json_text", [("true", "true"), ("string", '"1.5"'), ("huge", "1" + "0" * 400),
                                               ("null", "null")])
def test_dict_run_scores_are_read_as_the_api_reads_them(server, score, json_text):
    """Booleans and strings were coerced.  The service's answer is the Python API's own error for the same dict (one
    reading).  (NaN is no JSON number: test_hostile_service.py::test_numbers_that_are_not_finite_json_are_refused.)"""
    import treckit
    first = relevant("q01")[0]
    body = '{"test_set": %s, "run": {"q01": {"%s": %s, "other": 1.0}}}' % (json.dumps(sample_test_set()), first, json_text)
    r = httpx.post(server.url + "/v1/evaluate", content=body.encode(), headers={"content-type": "application/json"})
    assert r.status_code == 400, r.text[:300]
    with pytest.raises(treckit.InputError) as api:
        treckit.evaluate({"q01": {first: 1}}, json.loads(body)["run"], ["map"])
    assert r.json()["detail"] == api.value.reason and r.json()["fix"] == api.value.fix


def test_counts_are_checked_before_any_model_is_built():
    """A body with more queries than max_queries is refused from the parsed lists, before a model is built:
    its cost is the JSON parse (~7x the body); building the models, as the request handling did, costs ~18x.
    An accepted test set's parsed queries give way to their models one at a time (~14x)."""
    import tracemalloc

    from treckit.console.errors import InputError
    from treckit.service.evaluator import EvaluateRequest, read_request
    ts = sample_test_set()
    body = json.dumps({"test_set": dict(ts, queries=[dict(ts["queries"][0], query_id=f"x{i}") for i in range(1000)]),
                       "run": "x1 Q0 a 1 1 t\n"}).encode()

    def peak(f):
        tracemalloc.start()
        try:
            f()
        except InputError as exc:
            assert str(exc).startswith("1000 queries: this server takes at most 100")
        finally:
            top = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        return top / len(body)
    refused = peak(lambda: read_request(body, "evaluate", 100))
    accepted = peak(lambda: read_request(body, "evaluate", 10_000))
    built_at_once = peak(lambda: EvaluateRequest.model_validate(json.loads(body)))
    assert refused < 10 < 16 < built_at_once and accepted < 16, (refused, accepted, built_at_once)


# ------------------------------------------------------------------ the token
def test_the_token_is_checked_before_the_body_is_read(token_server):
    """Headers announcing a 10 MB body, and no body: answered 401 at once (nothing is read); with the token, a
    body over max_body_bytes is refused from its Content-Length alone (413)."""
    for auth, status in (("", 401), (f"Authorization: Bearer {TOKEN}\r\n", 413)):
        with socket.create_connection(("127.0.0.1", token_server.port), timeout=5) as sock:
            sock.sendall(f"POST /v1/evaluate HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\n"
                         "Content-Length: 10000000\r\n\r\n".encode())
            assert sock.recv(100).startswith(f"HTTP/1.1 {status} ".encode())


def test_the_token_is_not_in_a_workers_environment(token_server):
    """Evaluations (and the user code a system config names) run in worker processes, without the server's secret."""
    children = [int(c) for t in Path(f"/proc/{token_server.proc.pid}/task").iterdir()
                for c in (t / "children").read_text().split()]
    assert len(children) == 2
    for pid in children:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
        assert b"PYTHONPATH=" in environ and TOKEN_ENV.encode() not in environ and TOKEN.encode() not in environ
    assert TOKEN.encode() in Path(f"/proc/{token_server.proc.pid}/environ").read_bytes()


def test_the_bearer_scheme_is_case_insensitive(token_server):
    """RFC 6750: the scheme is case-insensitive, one or more spaces before the token."""
    for given, status in ((f"bearer {TOKEN}", 200), (f"BEARER {TOKEN}", 200), (f"Bearer   {TOKEN}", 200),
                          (f"Bearer {TOKEN}x", 401), ("Bearer", 401), (f"Basic {TOKEN}", 401), (TOKEN, 401)):
        assert httpx.get(token_server.url + "/metrics", headers={"Authorization": given}).status_code == status, given


# ------------------------------------------------------------------ metrics
def samples_of(text: str) -> dict:
    from prometheus_client.parser import text_string_to_metric_families
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in text_string_to_metric_families(text)
            for s in f.samples}


def test_metric_labels_come_from_a_bounded_set(server):
    """Systems and test sets outside the config's allow-lists are labelled 'other', methods outside HTTP's
    usual ones too: 20 new names add no series to /metrics."""
    ts = sample_test_set()
    run = f"q01 Q0 {relevant('q01')[0]} 1 1 t\n"

    def burst(names):
        for n in names:
            assert server.post({"test_set": dict(ts, name=f"set-{n}"), "run": run, "system": f"sys-{n}"}).status_code == 200
            httpx.request(f"M{n}", server.url + f"/v1/health/{n}")
        return httpx.get(server.url + "/metrics").text
    burst(range(3))
    before = burst(range(3, 6))
    after = burst(range(6, 26))
    assert "sys-" not in after and "set-" not in after and 'method="M' not in after
    samples = samples_of(after)
    assert set(samples) == set(samples_of(before))      # the same series, only their values moved
    # the last of the 'other' requests is what its gauge shows: q01's one relevant doc at rank 1 (recall 1/|rel|
    # of 1 of 50 queries)
    assert samples[("treckit_retrieval_recall_at_k", (("component", "all"), ("k", "10"), ("system", "other"),
                                                      ("test_set", "other")))] == pytest.approx(1 / len(relevant("q01")) / 50)
    assert samples[("treckit_http_requests_total", (("method", "other"), ("route", "other"), ("status", "404")))] >= 20


def test_5xx_answers_are_counted():
    """An exception in a route answers 500 with nothing of its text, and is counted like any answer."""
    from fastapi.testclient import TestClient

    from treckit.service.app import ServerSettings, create_app
    app = create_app(ServerSettings(cache=False), token="")

    @app.get("/boom")
    async def boom():
        raise RuntimeError("a secret in the message")
    client = TestClient(app, raise_server_exceptions=False)
    r = client.get("/boom")
    assert r.status_code == 500 and "RuntimeError" in r.text and "secret" not in r.text
    counted = samples_of(client.get("/metrics").text)
    assert counted[("treckit_http_requests_total", (("method", "GET"), ("route", "other"), ("status", "500")))] == 1


# ------------------------------------------------------------------ time, load and shutdown, on a slow system
SLOW_CALLABLE = """
import os, time

def search(text):
    with open({marks!r}, "a") as fh:
        fh.write(f"{{os.getpid()}} {{text}}\\n")
    time.sleep({seconds})
    return [("PMC2905704", 1.0)]
"""
CALLS_A_REQUEST = 53                  # 3 warm-up queries and the sample's 50


def slow_server(tmp: Path, config: str, seconds: float = 0.2, **kw) -> Server:
    """A server whose system takes ``seconds`` a query (CALLS_A_REQUEST calls a request), each call a line in
    tmp/marks (the worker's pid and the query)."""
    (tmp / "slow.py").write_text(SLOW_CALLABLE.format(marks=str(tmp / "marks"), seconds=seconds))
    return Server(tmp, system=f"components:\n  slow: {{callable: {tmp / 'slow.py'}:search}}\n",
                  config="cache: false\n" + config, **kw)


def calls(s: Server) -> list[str]:
    p = s.tmp / "marks"
    return p.read_text().splitlines() if p.exists() else []


def wait_metrics(s: Server, done, what: str) -> dict:
    """The server's metrics once ``done(metrics)`` holds (polled; the limit only catches a hang)."""
    deadline = time.time() + patience(60)
    while time.time() < deadline:
        m = samples_of(httpx.get(s.url + "/metrics", timeout=patience(10)).text)
        if done(m):
            return m
        time.sleep(0.05)
    raise AssertionError(f"{what}: not seen in {patience(60):.0f} s")


def wait_idle(s: Server, workers: int = 2) -> None:
    wait_metrics(s, lambda m: m[("treckit_evaluation_workers", ())] == workers
                 and m[("treckit_evaluations_running", ())] == 0, "the workers back and idle")


@pytest.fixture(scope="module")
def slow(tmp_path_factory):
    """Evaluations stopped at a time limit of 4 s on an idle machine, and its queries 0.2 s each: both stretched
    alike with the machine's load, so that a loaded machine still sees the evaluations run before the limit stops
    them, and the limit still comes long before a request's queries are all asked."""
    scale = patience(1.0)
    s = slow_server(tmp_path_factory.mktemp("slow"), f"evaluation_workers: 2\nmax_waiting_requests: 2\n"
                    f"request_timeout_s: {4 * scale:g}\n", seconds=0.2 * scale)
    s.time_limit = 4 * scale
    yield s
    s.stop()


def test_health_answers_while_45_slow_evaluations_are_asked(slow):
    """45 slow requests at once: 2 run, 2 wait, 41 are answered 503 with Retry-After at once; health and the
    metrics answer while both workers are busy (before either evaluation ends); the 2 running are stopped at the
    time limit (504), the 2 waiting answered 503."""
    wait_idle(slow)
    with ThreadPoolExecutor(45) as pool:
        asked = [pool.submit(slow.post, {"test_set": sample_test_set()}, timeout=patience(30)) for _ in range(45)]
        wait_metrics(slow, lambda m: m[("treckit_evaluations_running", ())] == 2, "both workers busy")
        health = httpx.get(slow.url + "/v1/health", timeout=patience(10))
        assert health.status_code == 200
        busy = samples_of(httpx.get(slow.url + "/metrics", timeout=patience(10)).text)
        assert busy[("treckit_evaluations_running", ())] == 2          # answered while both evaluations ran
        answers = [a.result() for a in asked]
    statuses = [a.status_code for a in answers]
    # (on a machine so busy that a request is sent after the first two were stopped, it meets a fresh worker: 504)
    assert set(statuses) == {503, 504} and statuses.count(503) >= 41 and statuses.count(504) >= 2, statuses
    assert all(a.headers["retry-after"] == "5" for a in answers if a.status_code == 503)
    counted = samples_of(httpx.get(slow.url + "/metrics").text)
    post = (("method", "POST"), ("route", "/v1/evaluate"))
    for status in (503, 504):
        assert counted[("treckit_http_requests_total", (*post, ("status", str(status))))] == statuses.count(status)


def test_an_evaluation_past_its_time_limit_is_stopped(slow):
    """Stopped at request_timeout_s (4 s on an idle machine), long before its 53 queries of 0.2 s each are all
    asked."""
    wait_idle(slow)
    before = len(calls(slow))
    t0 = time.monotonic()
    r = slow.post({"test_set": sample_test_set()})
    took = time.monotonic() - t0
    assert r.status_code == 504 and "request_timeout_s" in r.json()["fix"], r.text
    assert took > slow.time_limit - 0.1, took
    n = len(calls(slow))
    assert n - before < CALLS_A_REQUEST                # stopped, not run to its end
    time.sleep(1.0)                                    # (what must not happen has no signal to wait for)
    assert len(calls(slow)) == n                       # the worker was killed: no query is asked after the answer


def test_a_client_that_leaves_stops_its_evaluation(slow):
    wait_idle(slow)
    post = (("method", "POST"), ("route", "/v1/evaluate"))
    gone, limit = ("treckit_http_requests_total", (*post, ("status", "499"))), ("treckit_http_requests_total", (*post, ("status", "504")))
    before = samples_of(httpx.get(slow.url + "/metrics").text)
    with pytest.raises(httpx.ReadTimeout):
        slow.post({"test_set": sample_test_set()}, timeout=1.0)
    counted = wait_metrics(slow, lambda m: m.get(gone, 0) == before.get(gone, 0) + 1
                           and m[("treckit_evaluations_running", ())] == 0, "the evaluation stopped as its client left")
    assert counted.get(limit, 0) == before.get(limit, 0)          # stopped as the client left, not at the time limit
    n = len(calls(slow))
    time.sleep(1.0)                                    # (what must not happen has no signal to wait for)
    assert len(calls(slow)) == n                       # its worker was stopped: no query is asked after that


def test_sigterm_stops_within_the_grace_time_and_a_public_host_without_token_warns(tmp_path):
    """Bound to 0.0.0.0 with no token: a loud warning on stderr.  SIGTERM while an evaluation runs: the server
    gives it shutdown_grace_s (1 s), then stops it, its worker included, and exits -- where the evaluation had
    more than 100 s to go (53 queries of 2 s)."""
    s = slow_server(tmp_path, "shutdown_grace_s: 1\nrequest_timeout_s: 600\nevaluation_workers: 1\n", seconds=2.0,
                    host="0.0.0.0")
    try:
        assert "WARNING: serving on 0.0.0.0 with no token" in s.stderr_path.read_text()
        asked = threading.Thread(target=lambda: pytest.raises(httpx.HTTPError, s.post, {"test_set": sample_test_set()},
                                                              timeout=600), daemon=True)
        asked.start()
        deadline = time.time() + patience(30)
        while not calls(s) and time.time() < deadline:
            time.sleep(0.05)
        worker = int(calls(s)[0].split()[0])
        t0 = time.monotonic()
        s.proc.send_signal(signal.SIGTERM)
        s.proc.wait(patience(60))
        took = time.monotonic() - t0
        assert took > 0.9 and len(calls(s)) < CALLS_A_REQUEST, took     # the grace given, the evaluation not waited for
        assert not Path(f"/proc/{worker}").exists()
        asked.join(10)
    finally:
        s.stop()


def test_workers_do_not_outlive_a_killed_server_and_a_dead_worker_is_replaced(tmp_path):
    """A worker killed while idle is replaced before a request meets it; the workers stop within seconds of the
    server's SIGKILL, though no message tells them."""
    s = Server(tmp_path, config="evaluation_workers: 1\n")
    try:
        [worker] = children(s.proc.pid)
        os.kill(worker, signal.SIGKILL)
        deadline = time.time() + patience(30)
        while alive(worker) and time.time() < deadline:         # dead (a zombie until the server reaps it)
            time.sleep(0.02)
        assert s.post({"test_set": sample_test_set(), "run": BASELINE_RUN.read_text()}).status_code == 200
        [fresh] = children(s.proc.pid)
        assert fresh != worker
        own_tmp = next(Path(v.split(b"=", 1)[1].decode()) for v in Path(f"/proc/{fresh}/environ").read_bytes().split(b"\0")
                       if v.startswith(b"TMPDIR="))
        assert own_tmp.is_dir()
        s.proc.kill()
        s.proc.wait(patience(10))
        deadline = time.time() + patience(10)
        while Path(f"/proc/{fresh}").exists() and time.time() < deadline:
            time.sleep(0.1)
        assert not Path(f"/proc/{fresh}").exists()
        assert not own_tmp.exists()                 # nor its temporary files
    finally:
        s.stop()


@pytest.mark.parametrize("setting, said", [
    ("measures: [ndcg_at_10, bogus]", "measures: unknown test-set measure 'bogus'"),
    ("measures: ['ndcg@99999999999999999999']", "measures: the cutoff of 'ndcg@99999999999999999999' is larger"),
    ("data_dir: no/such/dir", "data_dir: "),
])
def test_a_bad_server_config_stops_the_start(tmp_path, setting, said):
    """Measures and data_dir are checked before the server starts (exit 2, the config named, the fix), not on the
    first request."""
    (tmp_path / "server.yaml").write_text(setting + "\n")
    try:
        res = subprocess.run([sys.executable, "-m", "treckit", "serve", "--port", str(free_port()), "--config",
                              str(tmp_path / "server.yaml")], capture_output=True, text=True, timeout=30,
                             env={**os.environ, "PYTHONPATH": str(ROOT / "code")})
    except subprocess.TimeoutExpired:
        pytest.fail("the server started with a bad config")
    assert res.returncode == 2 and said in res.stderr and str(tmp_path / "server.yaml") in res.stderr, res.stderr
    assert "fix:" in res.stderr and "Traceback" not in res.stderr


def test_only_loopback_hosts_are_quiet_without_a_token():
    from treckit.cli.service import exposure_warning, is_loopback
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LOCALHOST"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "10.1.2.3", "192.168.0.7", "example.org", ""))
    assert exposure_warning("0.0.0.0", None).startswith("treckit: WARNING: serving on 0.0.0.0 with no token")
    assert exposure_warning("0.0.0.0", "") is not None          # an empty token is no token
    assert exposure_warning("0.0.0.0", "t") is None and exposure_warning("::1", None) is None


# ------------------------------------------------------------------ metrics outside the server
def test_textfile_export_from_testset_eval(tmp_path, capsys):
    from prometheus_client.parser import text_string_to_metric_families
    code, _, err = run_cli(["testset", "eval", SAMPLE, "--run", BASELINE_RUN, "--prometheus-textfile", tmp_path / "q.prom",
                            "--system-name", "bow"], capsys)
    assert code == 0, err
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for f in text_string_to_metric_families((tmp_path / "q.prom").read_text()) for s in f.samples}
    assert samples[("treckit_retrieval_recall_at_k", (("component", "all"), ("k", "10"), ("system", "bow"),
                                                      ("test_set", "clinical")))] == \
        pytest.approx(recall_at_10_by_hand(BASELINE_RUN.read_text()))


def test_alert_rules_pass_promtool(tmp_path, capsys):
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed (Debian's prometheus package; .ci/run installs it)")
    code, out, _ = run_cli(["alert-rules", "--prefix", "medicalkg"], capsys)
    (tmp_path / "rules.yml").write_text(out)
    res = subprocess.run([promtool, "check", "rules", str(tmp_path / "rules.yml")], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert 'medicalkg_retrieval_recall_at_k{k="10"} < 0.75' in out


def test_real_prometheus_scrapes_the_gauge_and_fires_the_alert(tmp_path, capsys):
    if shutil.which("prometheus") is None:
        pytest.skip("prometheus not installed (Debian's prometheus package; .ci/run installs it)")
    s = Server(tmp_path, token=TOKEN)
    prom = None
    try:
        # one relevant doc of q01 and nothing else: recall@10 far below 0.75, so the alert (2 s for:) must fire
        weak = f"q01 Q0 {relevant('q01')[0]} 1 1 t\n"
        assert s.post({"test_set": sample_test_set(), "run": weak, "system": "weak"}).status_code == 200
        code, rules, _ = run_cli(["alert-rules", "--for", "2s"], capsys)
        prom = Prometheus(tmp_path, s, token=TOKEN, rules=rules)
        value, firing = None, False
        deadline = time.time() + patience(90)
        while time.time() < deadline and not (value is not None and firing):
            time.sleep(1)
            found = prom.query('treckit_retrieval_recall_at_k{k="10",system="weak"}')
            if found:
                value = float(found[0]["value"][1])
            firing = any(a["labels"]["alertname"] == "RetrievalRecallAt10Low" and a["state"] == "firing"
                         and a["labels"].get("system") == "weak" for a in prom.alerts())
        # one of q01's relevant docs; the 49 other queries have no results
        assert value == pytest.approx((1 / len(relevant("q01"))) / 50) and firing
    finally:
        if prom is not None:
            prom.stop()
        s.stop()


def test_every_query_of_the_grafana_dashboard_returns_series_from_a_real_prometheus(tmp_path, capsys):
    """treckit grafana-dashboard's PromQL, each asked of a real Prometheus scraping a real server that has evaluated
    a run and the configured system: each returns series (its variables set to their All, .*)."""
    if shutil.which("prometheus") is None:
        pytest.skip("prometheus not installed (Debian's prometheus package; .ci/run installs it)")
    code, out, _ = run_cli(["grafana-dashboard"], capsys)
    board = json.loads(out)
    exprs = [t["expr"] for p in board["panels"] for t in p["targets"]]
    assert code == 0 and len(exprs) >= 9 and {v["name"] for v in board["templating"]["list"]} == {"test_set", "system"}
    s = Server(tmp_path, token=TOKEN)
    prom = None
    try:
        assert s.post({"test_set": sample_test_set(), "run_file": "bow.trec", "system": "bow"}).status_code == 200
        prom = Prometheus(tmp_path, s, token=TOKEN)
        waiting = {e.replace("$test_set", ".*").replace("$system", ".*") for e in exprs}
        deadline = time.time() + patience(90)
        while waiting and time.time() < deadline:
            time.sleep(1)
            waiting = {e for e in waiting if not prom.query(e)}
        assert not waiting, f"no series for: {sorted(waiting)}"
        for variable in board["templating"]["list"]:          # the variables' own queries name real label values
            label = variable["name"]
            assert {r["metric"][label] for r in prom.query("treckit_retrieval_mrr")} >= {"clinical", "bow"} & {
                "clinical" if label == "test_set" else "bow"}
    finally:
        if prom is not None:
            prom.stop()
        s.stop()


def test_textfile_export_from_eval_and_gate(tmp_path, capsys):
    from prometheus_client.parser import text_string_to_metric_families
    qrels = tmp_path / "q"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    (tmp_path / "r").write_text("1 Q0 b 1 2.0 sys\n1 Q0 a 2 1.0 sys\n2 Q0 c 1 1.0 sys\n")
    code, out, err = run_cli(["eval", "-m", "recall.10", "-m", "recip_rank", "-m", "nDCG@5", "--metrics-prefix", "medicalkg",
                              "--prometheus-textfile", tmp_path / "e.prom", qrels, tmp_path / "r"], capsys)
    assert code == 0, err
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for f in text_string_to_metric_families((tmp_path / "e.prom").read_text()) for s in f.samples}
    labels = (("component", "all"), ("system", "sys"), ("test_set", "q"))
    # query 1: a (relevant) at rank 2 -> RR 1/2; query 2: RR 1; mean 0.75; recall@10 is 1 for both
    assert samples[("medicalkg_retrieval_mrr", labels)] == 0.75
    assert samples[("medicalkg_retrieval_recall_at_k", (("component", "all"), ("k", "10"), ("system", "sys"), ("test_set", "q")))] == 1.0
    # nDCG@5 is linear gain: trec_eval's ndcg_cut_5, never the gauge ndcg_at_k (exp gain, the test sets' ndcg_at_5)
    assert ("medicalkg_retrieval_ndcg_cut_5", labels) in samples
    assert not any(name == "medicalkg_retrieval_ndcg_at_k" for name, _ in samples)
    code, _, err = run_cli(["eval", "-m", "map", "--metrics-prefix", "9bad", "--prometheus-textfile", tmp_path / "x.prom",
                            qrels, tmp_path / "r"], capsys)
    assert code == 2 and "not a valid Prometheus metric prefix" in err
    stored = ROOT / "data/test_sets/baseline_results.json"
    code, _, err = run_cli(["gate", "--baseline", stored, "--current", stored, "--prometheus-textfile", tmp_path / "g.prom"], capsys)
    assert code == 0 and 'treckit_retrieval_recall_at_k{component="all",k="10"' in (tmp_path / "g.prom").read_text()


@pytest.mark.parametrize("target", ["run", "qrels", "zscores"])
def test_eval_textfile_never_overwrites_an_input(tmp_path, capsys, target):
    """`treckit eval --prometheus-textfile` naming the run, the qrels or the -Z file: refused before anything is
    read or written (it overwrote the run before), the input left byte for byte as it was."""
    (tmp_path / "qrels").write_text("1 0 a 1\n")
    (tmp_path / "run").write_text("1 Q0 a 1 2.0 sys\n")
    (tmp_path / "zscores").write_text("1 map 0.5 0.1\n")
    before = (tmp_path / target).read_bytes()
    code, out, err = run_cli(["eval", "-m", "map", "-Z", tmp_path / "zscores", "--prometheus-textfile", tmp_path / target,
                              tmp_path / "qrels", tmp_path / "run"], capsys)
    assert code == 2 and out == "" and "would overwrite an input" in err
    assert (tmp_path / target).read_bytes() == before


def test_rq_with_a_topk_beyond_any_cutoff_is_a_bad_request(server):
    ts = sample_test_set()
    ts["queries"][0]["topK"] = 2**63
    r = httpx.post(server.url + "/v1/rq", json={"test_set": ts, "run": BASELINE_RUN.read_text()}, timeout=60)
    assert r.status_code == 422 and "topK" in r.text, r.text


def test_a_request_s_problems_are_listed_up_to_the_threshold(monkeypatch):
    """thresholds.MAX_LISTED_PROBLEMS, for a request: five problems are all listed by default; lowered to 2, two are
    listed and the other three counted."""
    from treckit import thresholds
    from treckit.service import evaluator
    errors = [{"loc": ["body", "queries", i], "msg": "Field required", "type": "missing"} for i in range(5)]
    assert evaluator.listed_errors(errors) == errors
    monkeypatch.setattr(thresholds, "MAX_LISTED_PROBLEMS", 2)
    more = {"loc": ["body"], "msg": "... and 3 more problems", "type": "more"}
    assert evaluator.listed_errors(errors) == errors[:2] + [more]
