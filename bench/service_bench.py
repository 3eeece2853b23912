"""Load test of the evaluation service on loopback: requests per second and latency percentiles.

    .venv/bin/python -m bench.service_bench [--requests 400] [--threads 4] [--seconds 60]
    .venv/bin/python -m bench.service_bench --slow-clients 50 [--rounds 3] [--min-rate N]

Starts `treckit serve` on a free 127.0.0.1 port with data/test_sets/server.yaml, then sends POST
/v1/evaluate with the sample test set and the stored baseline run (answered from the cache after the
first) and, separately, the same test set with a run that changes every request (evaluated each time).
Bounded: stops after --requests or --seconds, whichever comes first; only loopback is ever addressed.

--slow-clients N: the evaluated requests alone, then beside N clients that send a body at 2 bytes a second (one
connection each, opened again as soon as the server answers it), in --rounds alternating rounds; prints each
side's p50 and p95, the ratio of the p95s, what the slow clients were answered, and the load average.
--min-rate sets the server's body_min_rate_bytes_s (0: the slow clients trickle until body_read_timeout_s).
"""
from __future__ import annotations

import argparse
import json
import os
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class Trickle:
    """``n`` connections to ``port`` each sending a POST body at ``rate`` bytes a second, from one thread; a connection
    the server answers is counted by its status and opened again."""

    def __init__(self, port: int, n: int, rate: float = 2.0, length: int = 100_000):
        self.port, self.n, self.step, self.length = port, n, 1.0 / rate, length
        self.answered: dict[int, int] = {}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _open(self, sel) -> None:
        sock = socket.create_connection(("127.0.0.1", self.port))
        sock.sendall(f"POST /v1/evaluate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {self.length}\r\n\r\n".encode())
        sel.register(sock, selectors.EVENT_READ)

    def _run(self) -> None:
        sel = selectors.DefaultSelector()
        for _ in range(self.n):
            self._open(sel)
        next_byte = time.monotonic()
        while not self.done.is_set():
            for key, _ in sel.select(timeout=max(0.0, next_byte - time.monotonic())):
                head = key.fileobj.recv(64)
                status = int(head[9:12]) if head.startswith(b"HTTP/1.1 ") else 0
                self.answered[status] = self.answered.get(status, 0) + 1
                sel.unregister(key.fileobj)
                key.fileobj.close()
                self._open(sel)
            if time.monotonic() >= next_byte:
                for key in list(sel.get_map().values()):
                    try:
                        key.fileobj.send(b" ")
                    except OSError:
                        pass
                next_byte += self.step
        for key in list(sel.get_map().values()):
            key.fileobj.close()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join(30)


def percentiles(seconds: list[float]) -> dict:
    import numpy as np
    ms = np.array(seconds) * 1000
    return {"requests": len(ms), "p50_ms": round(float(np.percentile(ms, 50)), 2),
            "p95_ms": round(float(np.percentile(ms, 95)), 2)}


def timed(url: str, body_of, requests: int, threads: int, seconds: float) -> list[float]:
    """The latency of each of ``requests`` POSTs (``threads`` at once, for at most ``seconds``)."""
    import httpx
    client = httpx.Client(timeout=60)
    stop = time.time() + seconds

    def one(i):
        if time.time() > stop:
            return None
        t0 = time.perf_counter()
        r = client.post(url + "/v1/evaluate", json=body_of(i))
        assert r.status_code == 200, r.text
        return time.perf_counter() - t0
    with ThreadPoolExecutor(threads) as pool:
        lat = [x for x in pool.map(one, range(requests)) if x is not None]
    client.close()
    return lat


def beside_slow_clients(a, url: str, port: int, body_of) -> dict:
    """Evaluated requests alone and beside ``a.slow_clients`` slow clients, in alternating rounds."""
    alone, beside, answered = [], [], {}
    for r in range(a.rounds):
        alone += timed(url, lambda i: body_of(r * a.requests + i), a.requests, a.threads, a.seconds)
        with Trickle(port, a.slow_clients) as slow:
            time.sleep(1.0)                      # every slow connection open and sending
            beside += timed(url, lambda i: body_of((a.rounds + r) * a.requests + i), a.requests, a.threads, a.seconds)
        for status, count in slow.answered.items():
            answered[status] = answered.get(status, 0) + count
    out = {"alone": percentiles(alone), f"beside {a.slow_clients} slow clients": percentiles(beside)}
    out["p95 beside / alone"] = round(out[f"beside {a.slow_clients} slow clients"]["p95_ms"] / out["alone"]["p95_ms"], 2)
    out["slow clients answered"] = {str(k): v for k, v in sorted(answered.items())}
    out["load average"] = [round(x, 2) for x in os.getloadavg()]
    return out


def main() -> None:
    import httpx
    import numpy as np
    import yaml

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=400)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--slow-clients", type=int, default=0, help="measure beside this many clients at 2 bytes/s")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds alone / beside the slow clients")
    ap.add_argument("--min-rate", type=int, default=None, help="the server's body_min_rate_bytes_s")
    a = ap.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as cache:
        cfg = Path(cache) / "server.yaml"
        src = ROOT / "data" / "test_sets"
        cfg.write_text(f"system: {src / 'system.yaml'}\ndata_dir: {src}\ncache_dir: {cache}\n"
                       + (f"body_min_rate_bytes_s: {a.min_rate}\n" if a.min_rate is not None else ""))
        proc = subprocess.Popen([sys.executable, "-m", "treckit", "serve", "--port", str(port), "--config", str(cfg),
                                 "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 60
            while time.time() < deadline:
                try:
                    if httpx.get(url + "/v1/health", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.2)
            ts = yaml.safe_load((src / "clinical_v1.yaml").read_text())
            run = (src / "baseline_bow.trec").read_text()
            if a.slow_clients:
                print(json.dumps(beside_slow_clients(a, url, port, lambda i: {
                    "test_set": ts, "run": run.replace(" bow\n", f" r{i}\n")}), indent=2))
                return
            results = {}
            for label, body_of in (("cached (same run)", lambda i: {"test_set": ts, "run": run}),
                                   ("evaluated (a new run each time)",
                                    lambda i: {"test_set": ts, "run": run.replace(" bow\n", f" r{i}\n")})):
                t0 = time.perf_counter()
                lat = timed(url, body_of, a.requests, a.threads, a.seconds)
                wall = time.perf_counter() - t0
                ms = np.array(lat) * 1000
                results[label] = {"requests": len(lat), "rps": round(len(lat) / wall, 1),
                                  "p50_ms": round(float(np.percentile(ms, 50)), 2),
                                  "p99_ms": round(float(np.percentile(ms, 99)), 2)}
            print(json.dumps(results, indent=2))
        finally:
            proc.terminate()
            proc.wait(10)


if __name__ == "__main__":
    main()
