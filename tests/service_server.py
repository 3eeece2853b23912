"""A real `treckit serve` in a subprocess, on a free 127.0.0.1 port, over a copy of the sample data: for the
service tests and `make fuzz-service`."""
from __future__ import annotations

import functools
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from helpers import patience

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "test_sets" / "clinical_v1.yaml"
BASELINE_RUN = ROOT / "data" / "test_sets" / "baseline_bow.trec"
TOKEN_ENV = "TRECKIT_API_TOKEN"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sample_test_set() -> dict:
    """The sample test set as a request sends it (a fresh copy: callers change it)."""
    import copy
    return copy.deepcopy(_sample())


@functools.lru_cache(maxsize=1)
def _sample() -> dict:
    import yaml
    return yaml.safe_load(SAMPLE.read_text())


def negated(run_text: str) -> str:
    """A TREC run with its scores negated and its ranks kept: rank 1 on the lowest score."""
    out = []
    for line in run_text.splitlines():
        q, it, d, rank, score, tag = line.split()
        out.append(f"{q} {it} {d} {rank} {-float(score)} {tag}\n")
    return "".join(out)


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (its evaluation workers)."""
    return sorted(int(c) for t in Path(f"/proc/{pid}/task").iterdir() for c in (t / "children").read_text().split())


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (neither gone nor a zombie)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


class Server:
    """``config``: more lines of SERVER.yaml; ``system``: the systems config's text (default: BM25 and
    bag-of-words over the sample corpus, fused)."""

    def __init__(self, tmp: Path, token: str | None = None, prefix: str = "treckit", config: str = "",
                 system: str | None = None, host: str = "127.0.0.1", wait: bool = True):
        import httpx
        self.tmp, self.port = tmp, free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        data = tmp / "runs"
        data.mkdir()
        shutil.copy(BASELINE_RUN, data / "bow.trec")
        (data / "negated.trec").write_text(negated(BASELINE_RUN.read_text()))
        (tmp / "secret.txt").write_text("TOP-SECRET-LINE\n")
        (data / "escape.trec").symlink_to(tmp / "secret.txt")
        (data / "loop.trec").symlink_to(data / "loop.trec")                    # a symlink to itself
        (tmp / "system.yaml").write_text(system or (
            f"corpus: {ROOT / 'data/test_sets/documents.jsonl'}\n"
            "components:\n  bm25: {method: bm25}\n  bow: {method: bow}\nfusion_method: rrf\n"))
        cfg = tmp / "server.yaml"
        cfg.write_text(f"system: {tmp / 'system.yaml'}\ndata_dir: runs\nmetrics_prefix: {prefix}\n"
                       f"max_body_bytes: 200000\nmax_queries: 50\ncache_dir: {tmp / 'cache'}\n"
                       "metrics_systems: [bow, weak, conc]\nmetrics_test_sets: [clinical]\n" + config)
        env = {**os.environ, "PYTHONPATH": str(ROOT / "code")}
        env.pop(TOKEN_ENV, None)
        if token:
            env[TOKEN_ENV] = token
        self.stderr_path = tmp / "server.stderr"
        self.stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "treckit", "serve", "--host", host, "--port", str(self.port),
                                      "--config", str(cfg), "--log-level", "warning"], env=env,
                                     stdout=subprocess.DEVNULL, stderr=self.stderr)
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        if not wait:
            return
        limit = patience(90)
        deadline = time.time() + limit
        while time.time() < deadline:
            try:
                if httpx.get(self.url + "/v1/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
            if self.proc.poll() is not None:
                raise RuntimeError(self.stderr_path.read_text())
        raise RuntimeError(f"the server did not start in {limit:.0f} s")

    def post(self, body, params=None, headers=None, path="/v1/evaluate", **kw):
        import httpx
        return httpx.post(self.url + path, json=body, params=params,
                          headers=self.headers if headers is None else headers, timeout=kw.pop("timeout", 60), **kw)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()


class Prometheus:
    """A real Prometheus (Debian's package) on a free 127.0.0.1 port, scraping ``server`` every second (with its
    token), with ``rules`` (a rules file's text) evaluated every second; ``query(promql)`` asks its HTTP API."""

    def __init__(self, tmp: Path, server: Server, token: str | None = None, rules: str | None = None):
        import shutil as _shutil
        prom = _shutil.which("prometheus")
        if prom is None:
            raise FileNotFoundError("prometheus")
        self.port = free_port()
        self.api = f"http://127.0.0.1:{self.port}/api/v1"
        rule_files = ""
        if rules is not None:
            (tmp / "rules.yml").write_text(rules)
            rule_files = f"rule_files: [{tmp / 'rules.yml'}]\n"
        auth = f"    authorization: {{credentials: {token}}}\n" if token else ""
        (tmp / "prom.yml").write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n" + rule_files
            + "scrape_configs:\n  - job_name: treckit\n" + auth
            + f"    static_configs: [{{targets: ['127.0.0.1:{server.port}']}}]\n")
        self.proc = subprocess.Popen([prom, f"--config.file={tmp / 'prom.yml'}", f"--storage.tsdb.path={tmp / 'tsdb'}",
                                      f"--web.listen-address=127.0.0.1:{self.port}"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)

    def query(self, promql: str) -> list:
        """The series Prometheus answers ``promql`` with now ([] while it cannot answer yet)."""
        import httpx
        try:
            return httpx.get(self.api + "/query", params={"query": promql}).json()["data"]["result"]
        except (httpx.HTTPError, KeyError, ValueError):
            return []

    def alerts(self) -> list:
        import httpx
        try:
            return httpx.get(self.api + "/alerts").json()["data"]["alerts"]
        except (httpx.HTTPError, KeyError, ValueError):
            return []

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def metric_samples(url: str, headers: dict | None = None) -> dict:
    """The server's /metrics as {(name, ((label, value), ...)): value}."""
    import httpx
    from prometheus_client.parser import text_string_to_metric_families
    text = httpx.get(url + "/metrics", headers=headers or {}, timeout=patience(10)).text
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in text_string_to_metric_families(text)
            for s in f.samples}


class SlowClient:
    """A POST whose body goes out at ``rate`` bytes a second (0: none after ``burst``) on a raw socket, from a thread,
    after its first ``burst`` bytes at once; ``length``: the Content-Length said (None: the body's; -1: chunked,
    without one).  ``status`` and ``answer`` (the JSON) are the server's once it answers; ``sent`` counts the body's
    bytes sent."""

    TICK_S = 0.1

    def __init__(self, port: int, body: bytes, rate: float, *, burst: int = 0, length: int | None = None,
                 headers: str = "Content-Type: application/json\r\n", path: str = "/v1/evaluate"):
        import threading
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.chunked = length == -1
        said = "Transfer-Encoding: chunked" if self.chunked else f"Content-Length: {len(body) if length is None else length}"
        self.sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}{said}\r\n\r\n".encode())
        self.status: int | None = None
        self.answer = None
        self.sent = 0
        self.answered_at: float | None = None
        self.headers: dict[str, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(body, rate, burst), daemon=True)
        self._thread.start()

    def _send(self, part: bytes) -> None:
        if part:
            self.sock.sendall(b"%x\r\n%s\r\n" % (len(part), part) if self.chunked else part)
            self.sent += len(part)

    def _run(self, body: bytes, rate: float, burst: int) -> None:
        import math
        import select
        per_tick = max(1, math.ceil(rate * self.TICK_S)) if rate else 0
        tick = per_tick / rate if rate else 0.2
        try:
            self._send(body[:burst])
            while not select.select([self.sock], [], [], tick)[0]:
                if self._stop.is_set():
                    return                     # left without an answer
                if self.sent < len(body) and per_tick:
                    self._send(body[self.sent:self.sent + per_tick])
            self._read()
        except OSError:
            self._read()
        finally:
            self.sock.close()

    def _read(self) -> None:
        import json
        data = b""
        try:
            self.sock.settimeout(5)
            while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < self._length(data):
                got = self.sock.recv(65536)
                if not got:
                    break
                data += got
        except OSError:
            pass
        if data.startswith(b"HTTP/1.1 "):
            self.answered_at = time.monotonic()
            self.status = int(data[9:12])
            self.headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in
                            data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")[1:])}
            try:
                self.answer = json.loads(data.split(b"\r\n\r\n", 1)[1])
            except ValueError:
                self.answer = None

    @staticmethod
    def _length(data: bytes) -> int:
        for line in data.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                return int(line.split(b":", 1)[1])
        return 1 << 62

    def stop(self) -> None:
        """Stop sending (the connection closes) and wait for the thread."""
        self._stop.set()
        self._thread.join(30)

    def wait(self, timeout: float) -> int | None:
        """The server's status once it has answered, within ``timeout`` s (None: no answer yet)."""
        self._thread.join(timeout)
        return self.status
