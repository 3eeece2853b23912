"""The evaluation service, as a real uvicorn server in a subprocess called over HTTP, and scraped by a
real Prometheus when one is installed."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import ROOT, run_cli

httpx = pytest.importorskip("httpx", reason="the service tests need the dev extra (httpx)")
pytest.importorskip("fastapi", reason="the service tests need the service extra")

SAMPLE = ROOT / "data" / "test_sets" / "clinical_v1.yaml"
BASELINE_RUN = ROOT / "data" / "test_sets" / "baseline_bow.trec"
TOKEN = "s3cret-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sample_test_set() -> dict:
    import yaml
    return yaml.safe_load(SAMPLE.read_text())


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


def negated(run_text: str) -> str:
    """A TREC run with its scores negated and its ranks kept: rank 1 on the lowest score."""
    out = []
    for line in run_text.splitlines():
        q, it, d, rank, score, tag = line.split()
        out.append(f"{q} {it} {d} {rank} {-float(score)} {tag}\n")
    return "".join(out)


class Server:
    def __init__(self, tmp: Path, token: str | None = None, prefix: str = "treckit", system_config: str | None = None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        data = tmp / "runs"
        data.mkdir()
        shutil.copy(BASELINE_RUN, data / "bow.trec")
        (data / "negated.trec").write_text(negated(BASELINE_RUN.read_text()))
        (tmp / "secret.txt").write_text("TOP-SECRET-LINE\n")
        (data / "escape.trec").symlink_to(tmp / "secret.txt")
        system = tmp / "system.yaml"
        system.write_text(system_config or f"corpus: {ROOT / 'data/test_sets/documents.jsonl'}\n"
                          "components:\n  bm25: {method: bm25}\n  bow: {method: bow}\nfusion_method: rrf\n")
        cfg = tmp / "server.yaml"
        cfg.write_text(f"system: {system}\ndata_dir: runs\nmetrics_prefix: {prefix}\nmax_body_bytes: 200000\n"
                       f"max_queries: 50\ncache_dir: {tmp / 'cache'}\n")
        env = {**os.environ, "PYTHONPATH": str(ROOT / "code")}
        env.pop(TOKEN_ENV, None)
        if token:
            env[TOKEN_ENV] = token
        self.proc = subprocess.Popen([sys.executable, "-m", "treckit", "serve", "--port", str(self.port), "--config",
                                      str(cfg), "--log-level", "warning"], env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if httpx.get(self.url + "/v1/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
            if self.proc.poll() is not None:
                raise RuntimeError(self.proc.stderr.read().decode())
        raise RuntimeError("the server did not start in 60 s")

    def post(self, body, params=None, headers=None, **kw):
        return httpx.post(self.url + "/v1/evaluate", json=body, params=params,
                          headers=self.headers if headers is None else headers,
                          timeout=60, **kw)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


TOKEN_ENV = "TRECKIT_API_TOKEN"


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
    for name in ("../secret.txt", "/etc/passwd", "escape.trec", "nope.trec"):
        r = server.post({"test_set": sample_test_set(), "run_file": name})
        assert r.status_code == 400, (name, r.text)
        assert "TOP-SECRET" not in r.text and "root:" not in r.text


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
    from treckit.retrieval.evaluate import evaluate_system
    from treckit.retrieval.system import load_system
    from treckit.testsets import load_test_set
    shutil.copy(ROOT / "data/test_sets/documents.jsonl", tmp_path / "docs.jsonl")
    shutil.copy(BASELINE_RUN, tmp_path / "sys.trec")
    config = "corpus: docs.jsonl\ncomponents:\n  r: {run: sys.trec}\n  b: {method: bm25}\nfusion_method: rrf\n"
    server = Server(tmp_path, system_config=config)
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
        deadline = time.time() + 30
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
    schemathesis = pytest.importorskip("schemathesis", reason="schemathesis fuzzes the OpenAPI schema (dev extra)")
    from hypothesis import HealthCheck, given, settings
    schema = schemathesis.openapi.from_url(server.url + "/openapi.json")
    failures = []
    for op in schema.get_all_operations():
        operation = op.ok()

        @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(case=operation.as_strategy())
        def check(case):
            resp = case.call(base_url=server.url, timeout=30)
            if resp.status_code >= 500:
                failures.append((operation.verbose_name, resp.status_code, resp.text[:200]))
        check()
    assert failures == []


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
    prom = shutil.which("prometheus")
    if prom is None:
        pytest.skip("prometheus not installed (Debian's prometheus package; .ci/run installs it)")
    s = Server(tmp_path, token=TOKEN)
    port = free_port()
    proc = None
    try:
        # one relevant doc of q01 and nothing else: recall@10 far below 0.75, so the alert (2 s for:) must fire
        weak = f"q01 Q0 {relevant('q01')[0]} 1 1 t\n"
        assert s.post({"test_set": sample_test_set(), "run": weak, "system": "weak"}).status_code == 200
        code, rules, _ = run_cli(["alert-rules", "--for", "2s"], capsys)
        (tmp_path / "rules.yml").write_text(rules)
        (tmp_path / "prom.yml").write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            f"rule_files: [{tmp_path / 'rules.yml'}]\n"
            "scrape_configs:\n  - job_name: treckit\n"
            f"    authorization: {{credentials: {TOKEN}}}\n"
            f"    static_configs: [{{targets: ['127.0.0.1:{s.port}']}}]\n")
        proc = subprocess.Popen([prom, f"--config.file={tmp_path / 'prom.yml'}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                                 f"--web.listen-address=127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        api = f"http://127.0.0.1:{port}/api/v1"
        value, firing = None, False
        deadline = time.time() + 90
        while time.time() < deadline and not (value is not None and firing):
            time.sleep(1)
            try:
                q = httpx.get(api + "/query", params={"query": 'treckit_retrieval_recall_at_k{k="10",system="weak"}'}).json()
                if q["data"]["result"]:
                    value = float(q["data"]["result"][0]["value"][1])
                alerts = httpx.get(api + "/alerts").json()["data"]["alerts"]
                firing = any(a["labels"]["alertname"] == "RetrievalRecallAt10Low" and a["state"] == "firing"
                             and a["labels"].get("system") == "weak" for a in alerts)
            except (httpx.HTTPError, KeyError, ValueError):
                continue
        # one of q01's relevant docs; the 49 other queries have no results
        assert value == pytest.approx((1 / len(relevant("q01"))) / 50) and firing
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(10)
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
    assert ("medicalkg_retrieval_ndcg_at_k", (("component", "all"), ("k", "5"), ("system", "sys"), ("test_set", "q"))) in samples
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
