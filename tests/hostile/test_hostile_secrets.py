"""Hostile secrets: credentials in URLs (``user:password@``, a presigned URL's signature) wherever a URL can be
printed -- the Pushgateway, URL inputs read through fsspec, a Dask scheduler's address, the results a command
writes -- and values of files that are no input: the service's ``data_dir`` files, and ``/proc/self/environ``
named as an input.

What must hold (tests/hostile/README.md): a URL is shown as ``user:***@``; a file that is not an input is named
with its line and field, never its text; the secret nowhere in stdout, stderr, the server's log or a file
written.  Basic-auth Pushgateway URLs work: a real little HTTP server checks the Authorization header."""
from __future__ import annotations

import base64
import http.server
import json
import os
import subprocess
import sys
import threading

import pytest

from helpers import ROOT, patience, run_cli

SAMPLE = ROOT / "data" / "test_sets" / "clinical_v1.yaml"
RESULTS = ROOT / "data" / "test_sets" / "baseline_results.json"
BOW_RUN = ROOT / "data" / "test_sets" / "baseline_bow.trec"
QRELS = ROOT / "data" / "ties" / "qrels.test"
SECRET = "s3cr3t-PW-d41e"
SECRET_ENV = "TRECKIT_TEST_SECRET"


class LittleServer:
    """A real HTTP server on a free local port: PUT (a Pushgateway) answers 200 only with the expected basic-auth
    header, GET serves ``files`` ({path: bytes}) the same way; every request's path and Authorization header is
    kept in ``seen``."""

    def __init__(self, user: str, password: str, files: dict[str, bytes] | None = None):
        expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        seen = self.seen = []
        served = files or {}

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self, body: bytes | None) -> None:
                seen.append((self.command, self.path, self.headers.get("Authorization")))
                status = 401 if self.headers.get("Authorization") != expected else (200 if body is not None else 404)
                self.send_response(status)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                if self.command != "HEAD" and status == 200:
                    self.wfile.write(body or b"")

            def do_PUT(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self._answer(b"")

            def do_GET(self):
                self._answer(served.get(self.path.split("?")[0]))

            def do_HEAD(self):
                self._answer(served.get(self.path.split("?")[0]))

            def log_message(self, *args):
                pass
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, userinfo: str, path: str = "/") -> str:
        return f"http://{userinfo}@127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def gateway():
    pytest.importorskip("prometheus_client")
    s = LittleServer("ci", f"{SECRET} @:/x")             # a password that must be percent-encoded in the URL
    yield s
    s.close()


def _no_secret(*texts: str) -> None:
    for t in texts:
        assert SECRET not in t, t


# ------------------------------------------------------------------ the Pushgateway
PUSHING = {
    "testset eval": lambda url: ["testset", "eval", SAMPLE, "--run", BOW_RUN, "--pushgateway", url],
    "gate": lambda url: ["gate", "--baseline", RESULTS, "--current", RESULTS, "--pushgateway", url],
    "eval": lambda url: ["eval", "-m", "P.10", QRELS, ROOT / "data" / "ties" / "rounded.run", "--pushgateway", url],
}


@pytest.mark.parametrize("command", list(PUSHING))
def test_a_pushgateway_with_basic_auth_is_pushed_to(gateway, capsys, command):
    from urllib.parse import quote
    code, out, err = run_cli(PUSHING[command](gateway.url(f"ci:{quote(SECRET + ' @:/x', safe='')}")), capsys)
    assert code in (0, 1) and "error" not in err, err           # gate: 0 (the same results), eval and testset: 0
    assert gateway.seen and gateway.seen[-1][0] == "PUT" and gateway.seen[-1][1] == "/metrics/job/treckit"
    assert gateway.seen[-1][2] == "Basic " + base64.b64encode(f"ci:{SECRET} @:/x".encode()).decode()
    _no_secret(out, err)


@pytest.mark.parametrize("command", list(PUSHING))
def test_a_pushgateway_password_is_never_printed(gateway, capsys, command):
    wrong = gateway.url(f"ci:{SECRET}")                       # refused: 401
    code, out, err = run_cli(PUSHING[command](wrong), capsys)
    assert code == 2 and f"http://ci:***@127.0.0.1:{gateway.port}/: cannot push to the Pushgateway (it answered " \
                         "HTTP 401)" in err and "user name and password" in err, err
    _no_secret(out, err)
    code, out, err = run_cli(PUSHING[command](f"http://ci:{SECRET}@127.0.0.1:1/"), capsys)     # refused connection
    assert code == 2 and "http://ci:***@127.0.0.1:1/: cannot push to the Pushgateway (connection refused)" in err, err
    _no_secret(out, err)
    code, out, err = run_cli(PUSHING[command](f"http://ci:{SECRET}@127.0.0.1:port/"), capsys)  # no address
    assert code == 2 and "--pushgateway 'http://ci:***@127.0.0.1:port/' is not a Pushgateway address" in err, err
    _no_secret(out, err)


# ------------------------------------------------------------------ URL inputs
@pytest.fixture
def store():
    pytest.importorskip("fsspec")
    pytest.importorskip("aiohttp")
    s = LittleServer("ci", SECRET, {"/run.trec": BOW_RUN.read_bytes(), "/bad.trec": b"q01 Q0 d1 one 1.0 r\n"})
    yield s
    s.close()


def test_a_url_inputs_credentials_are_never_printed_nor_written(store, tmp_path, capsys):
    good = store.url(f"ci:{SECRET}", "/run.trec")
    code, out, err = run_cli(["testset", "eval", SAMPLE, "--run", good, "--out", tmp_path / "res.json"], capsys)
    assert code == 0, err
    written = (tmp_path / "res.json").read_text()
    assert f"http://ci:***@127.0.0.1:{store.port}/run.trec" in written
    _no_secret(out, err, written)
    code, out, err = run_cli(["compare", SAMPLE, good, BOW_RUN, "--out", tmp_path / "cmp.json"], capsys)
    written = (tmp_path / "cmp.json").read_text()
    assert code == 0 and f'"run_path": "http://ci:***@127.0.0.1:{store.port}/run.trec"' in written, err
    _no_secret(out, err, written)
    for path, says in [("/bad.trec", "/bad.trec:1: rank 'one' is not an integer"),      # the user's own input: shown
                       ("/missing.trec", "/missing.trec: no such file or object")]:
        code, out, err = run_cli(["eval", QRELS, store.url(f"ci:{SECRET}", path)], capsys)
        assert code == 2 and f"http://ci:***@127.0.0.1:{store.port}{says}" in err, err
        _no_secret(out, err)
    for url in (f"http://ci:{SECRET}@127.0.0.1:1/run.trec", f"http://127.0.0.1:1/run.trec?X-Amz-Signature={SECRET}",
                f"http://{SECRET}@127.0.0.1:1/run.trec"):
        code, out, err = run_cli(["eval", QRELS, url], capsys)
        assert code == 2 and "cannot connect to the server (connection refused)" in err and "***" in err, err
        _no_secret(out, err)


def test_a_dask_schedulers_credentials_are_never_printed(tmp_path, capsys, monkeypatch):
    pytest.importorskip("distributed")
    from treckit.engines import dask as dask_engine
    monkeypatch.setattr(dask_engine, "SCHEDULER_TIMEOUT", "1s")
    code, out, err = run_cli(["testset", "eval", SAMPLE, "--run", BOW_RUN, "--engine", "dask", "--scheduler",
                              f"tcp://ci:{SECRET}@127.0.0.1:1"], capsys)
    assert code == 2 and "tcp://ci:***@127.0.0.1:1" in err, err
    _no_secret(out, err)


def test_every_message_hides_a_urls_credentials():
    """The one function every message goes through, and the errors that use it."""
    from treckit.console.errors import InputError, TreckitError, without_credentials
    assert without_credentials(f"see http://user:{SECRET}@h:9/x and s3://b/k") == "see http://user:***@h:9/x and s3://b/k"
    assert without_credentials(f"https://{SECRET}@github.com/o/r") == "https://***@github.com/o/r"
    assert without_credentials(f"'http://u:p@{SECRET}@h/'") == "'http://u:***@h/'"        # a raw '@' in a password
    assert without_credentials(f"https://h/x?a=1&sig={SECRET}&X-Amz-Credential={SECRET}") == \
        "https://h/x?a=1&sig=***&X-Amz-Credential=***"
    assert without_credentials("http://h/a@b and a=b, plain text") == "http://h/a@b and a=b, plain text"
    assert without_credentials(f"Cannot connect to host ci:{SECRET}@h ssl:default") == "Cannot connect to host ci:***@h ssl:default"
    assert without_credentials(f"x ci:{SECRET}@10.0.0.1:80") == "x ci:***@10.0.0.1:80"
    gains = "e.g. nDCG(gains={0:0,1:1,2:3})@10"          # a measure's cutoff is no host: the example stays whole
    assert without_credentials(gains) == gains
    err = InputError(f"cannot read http://u:{SECRET}@h/", path=f"http://u:{SECRET}@h/r", fix=f"try http://u:{SECRET}@h")
    assert SECRET not in str(err) and SECRET not in err.path and SECRET not in err.reason and SECRET not in err.fix
    assert SECRET not in str(TreckitError(f"http://u:{SECRET}@h: failed"))


# ------------------------------------------------------------------ files that are not inputs
DATA_DIR_FILES = {
    "rank.trec": f"q01 Q0 PMC2905704 {SECRET} 1.0 run\n",
    "score.trec": f"q01 Q0 PMC2905704 1 1.0 run\nq01 Q0 PMC3449609 2 {SECRET} run\n",
    "duplicate.trec": f"q01 Q0 {SECRET} 1 2.0 run\nq01 Q0 {SECRET} 2 1.0 run\n",
    "duplicate.jsonl": json.dumps({"qid": "q01", "docs": [SECRET, SECRET], "scores": [2, 1]}) + "\n",
    "fields.jsonl": json.dumps({"qid": SECRET, "docs": 5}) + "\n",
    "environ.trec": f"PATH=/bin\0TOKEN={SECRET}\0HOME=/root\0",
    "unjudged.trec": f"q01 Q0 {SECRET}-a 1 2.0 run\nq01 Q0 {SECRET}-b 2 1.0 run\n",     # a warning, not an error
    "tagged.trec": f"q01 Q0 PMC2905704 1 2.0 {SECRET}\n",                                 # the tag: the label
}


@pytest.mark.parametrize("kind", ["evaluate", "rq"])
@pytest.mark.parametrize("name", list(DATA_DIR_FILES))
def test_a_data_dir_files_content_is_never_in_an_answer(tmp_path, name, kind):
    """Through the worker's evaluator (what a worker does with a request): the answer names the run_file and the
    line, never a value of the file."""
    pytest.importorskip("fastapi")
    from service_server import sample_test_set
    from treckit.service.evaluator import Evaluator, ServerSettings
    for file, text in DATA_DIR_FILES.items():
        (tmp_path / file).write_text(text)
    evaluator = Evaluator(ServerSettings(data_dir=str(tmp_path), cache=False))
    status, payload, gauges = evaluator.answer(kind, json.dumps({"test_set": sample_test_set(), "run_file": name})
                                               .encode(), {})
    shown = json.dumps(payload) + json.dumps(gauges)
    assert SECRET not in shown, shown
    if name in ("unjudged.trec", "tagged.trec"):
        assert status == 200, shown
        if kind == "evaluate":
            assert payload["system"] == name
    else:
        assert status == 400 and "content not shown" in payload["detail"], shown
    if name == "rank.trec":
        assert payload["line"] == 1 and payload["detail"].startswith("run_file 'rank.trec', line 1: rank '…' is not "
                                                                     "an integer"), payload


def test_a_data_dir_files_content_is_in_no_answer_and_no_log_of_a_real_server(tmp_path):
    pytest.importorskip("httpx", reason="the service tests need the dev extra (httpx)")
    pytest.importorskip("fastapi", reason="the service tests need the service extra")
    import httpx

    from service_server import Server, sample_test_set
    s = Server(tmp_path, config="evaluation_workers: 1\ncache: false\n")
    try:
        for name, text in DATA_DIR_FILES.items():
            (tmp_path / "runs" / name).write_text(text)
        for name in DATA_DIR_FILES:
            for path in ("/v1/evaluate", "/v1/rq"):
                r = s.post({"test_set": sample_test_set(), "run_file": name}, path=path, timeout=patience(60))
                assert r.status_code in (200, 400) and SECRET not in r.text, r.text
        metrics = httpx.get(s.url + "/metrics", timeout=patience(30)).text
    finally:
        s.stop()
    log = s.stderr_path.read_text()
    _no_secret(log, metrics)


@pytest.mark.parametrize("argv", [            # more commands and spellings: fuzz_hostile_secrets.py
    ["eval", QRELS, "/proc/self/environ"],
    ["qrels", "/proc/self/environ", "-o", "out.qrels"],
    ["compare", QRELS, BOW_RUN, "/proc/self/environ"],
    ["testset", "eval", SAMPLE, "--run", "/proc/self/environ"],
    ["eval", QRELS, "/proc/self/environ", "--run-format", "jsonl"],
])
def test_the_environment_named_as_an_input_is_never_quoted(tmp_path, argv):
    """A process's environment (a mistyped path in CI) is named with its line, never quoted, even as an input."""
    env = {**os.environ, SECRET_ENV: SECRET, "PYTHONPATH": str(ROOT / "code")}
    p = subprocess.run([sys.executable, "-m", "treckit", *map(str, argv)], capture_output=True, text=True,
                       cwd=tmp_path, env=env, timeout=patience(120))
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "/proc/self/environ" in p.stderr and "Traceback" not in p.stderr, p.stderr
    _no_secret(p.stdout, p.stderr)
    assert not list(tmp_path.iterdir())


# a config's paths are local: a URL in one was joined to the config's folder as a path ('https:/user:pw@...'), a form
# no credential filter knows, so its password was printed -- and an index at such a "path" was built in folders
# named after it
CONFIG_URL = f"https://reader:{SECRET}@127.0.0.1:9/data?X-Amz-Signature={SECRET}"
URL_CONFIGS = {
    "system eval, corpus": ("system.yaml", f"corpus: '{CONFIG_URL}'\ncomponents:\n  bm25: {{method: bm25}}\n",
                            ["system", "eval", "system.yaml", "--test-set", SAMPLE, "--no-cache"], "corpus: is a URL"),
    "system eval, index": ("system.yaml", f"corpus: {ROOT / 'data' / 'test_sets' / 'documents.jsonl'}\ncomponents:\n"
                           f"  bm25: {{method: bm25, index: '{CONFIG_URL}'}}\n",
                           ["system", "eval", "system.yaml", "--test-set", SAMPLE, "--no-cache"],
                           "components.bm25.index: is a URL"),
    "system eval, run": ("system.yaml", f"components:\n  bow: {{run: '{CONFIG_URL}'}}\n",
                         ["system", "eval", "system.yaml", "--test-set", SAMPLE, "--no-cache"],
                         "components.bow.run: is a URL"),
    "compare --config": ("cmp.yaml", f"run: '{CONFIG_URL}'\n", ["compare", QRELS, BOW_RUN, "--config", "cmp.yaml"],
                         "'run' is a URL"),
    "serve --config": ("server.yaml", f"data_dir: '{CONFIG_URL}'\n", ["serve", "--config", "server.yaml"],
                       "data_dir: is a URL"),
}


@pytest.mark.parametrize("name", list(URL_CONFIGS))
def test_a_url_in_a_config_is_refused_without_its_credentials(name, tmp_path, capsys, monkeypatch):
    file, text, argv, said = URL_CONFIGS[name]
    monkeypatch.chdir(tmp_path)
    (tmp_path / file).write_text(text)
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and said in err and file in err, err
    assert SECRET not in out + err
    assert sorted(p.name for p in tmp_path.iterdir()) == [file]      # no folder named after the URL


def test_the_environment_named_by_a_system_config_is_said_once_per_reason(tmp_path, capsys):
    """The environment named as a system's corpus is hidden twice (a kernel file, a file of a config): each reason
    is said once and whole (the outer blanking paired the apostrophes of the inner note: "system'…'s", and the
    inner note came a second time)."""
    (tmp_path / "system.yaml").write_text("corpus: /proc/self/environ\ncomponents:\n  bm25: {method: bm25}\n")
    code, out, err = run_cli(["system", "eval", tmp_path / "system.yaml", "--test-set", SAMPLE, "--no-cache"], capsys)
    assert code == 2
    first = err.splitlines()[0]
    assert first == ("treckit: error: /proc/self/environ:1: not a JSON object (Expecting value) "
                     "(content not shown: the file holds the state of the system, such as the environment of a process) "
                     f"(content not shown: the file is named by the system config {tmp_path / 'system.yaml'})")
